"""Published layouts are sources (issue 31, item 2): a Claude Code plugin marketplace, a plugin
repository and a Copilot layout (in `.github/` or at the root), read by one reader per layout
(`importers.published`, made portable by `pipeline.published`) for `agentrc add`/`install`/
`update` and for `agentrc import`. Look-alikes written here: H1 bodies, bare fences, plugin
hooks with scripts, tool lists with permission patterns, two plugins with a skill of one name,
a plugin in another repository."""

from __future__ import annotations

import json

import pytest

from sourcerepos import Repo, isolated_home, write

from agentrc.cli.main import main
from agentrc.importers import published as layouts
from agentrc.model import SourceFile, SourceTree
from agentrc.pipeline import published

LOCK = "agentrc.lock.json"

AUDITOR = ("---\nname: auditor\ndescription: Audits changes for security problems\n"
           "tools: Read, Grep, Bash(git diff:*)\n---\n# Auditor\n\nLook at the diff:\n\n```\ngit diff\n```\n")
GUARD = ("---\nname: guard\ndescription: Guards secrets. Use when handling keys.\nlicense: MIT\n---\n"
         "# Guard\n\nKeep keys out.\n")
REV_GUARD = "---\nname: guard\ndescription: Guards reviews. Use when reviewing.\n---\n\nBe kind.\n"
HOOKS = {"description": "security hooks", "hooks": {
    "PreToolUse": [{"matcher": "Edit|Write", "hooks": [
        {"type": "command", "command": "python3 ${CLAUDE_PLUGIN_ROOT}/hooks/check.py"}]}]}}


def marketplace(far: str = "") -> dict:
    plugins = [{"name": "sec", "source": "./plugins/sec", "description": "Security guidance"},
               {"name": "rev", "source": "./plugins/rev", "description": "Review tools"}]
    if far:
        plugins.append({"name": "far", "source": {"source": "url", "url": far}})
    return {"name": "look-alike", "owner": {"name": "someone"}, "plugins": plugins}


def market_files(far: str = "") -> dict:
    return {
        "README.md": "# A marketplace\n",
        ".claude-plugin/marketplace.json": json.dumps(marketplace(far), indent=2),
        "plugins/sec/.claude-plugin/plugin.json": json.dumps({"name": "sec", "version": "1.0.0",
                                                             "description": "Security guidance"}),
        "plugins/sec/agents/auditor.md": AUDITOR,
        "plugins/sec/commands/sec-review.md": "---\ndescription: Run a security review\n---\n# Review\n\nReview it.\n",
        "plugins/sec/skills/guard/SKILL.md": GUARD,
        "plugins/sec/hooks/hooks.json": json.dumps(HOOKS),
        "plugins/sec/hooks/check.py": "print('checked')\n",
        "plugins/rev/.claude-plugin/plugin.json": json.dumps({"name": "rev", "description": "Review tools"}),
        "plugins/rev/agents/reviewer.md": "---\nname: reviewer\ndescription: Reviews pull requests\n---\n\nReview.\n",
        "plugins/rev/skills/guard/SKILL.md": REV_GUARD,
    }


def tree_of(files: dict, root: str = "src") -> SourceTree:
    return SourceTree(tuple(SourceFile(f"{root}/{rel}", text.encode()) for rel, text in sorted(files.items())))


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


# --- the reader ---------------------------------------------------------------------------

def test_a_marketplace_is_one_bundle_per_plugin_with_clashing_names_prefixed():
    got = published.portable(tree_of(market_files()), "src")
    assert got is not None and got.layout == "marketplace"
    paths = [f.path for f in got.tree.files]
    assert "src/sec/sec.bundle.yaml" in paths and "src/rev/rev.bundle.yaml" in paths
    assert "src/sec/agents/auditor/AGENT.md" in paths and "src/sec/commands/sec-review/COMMAND.md" in paths
    # both plugins have a skill `guard`: each is installed under its plugin's name, and said so
    assert "src/sec/skills/sec-guard/SKILL.md" in paths and "src/rev/skills/rev-guard/SKILL.md" in paths
    renamed = [d for d in got.diagnostics if "installed as" in d.message]
    assert len(renamed) == 2 and all(d.code == "AR130" for d in renamed)
    bundle = next(f for f in got.tree.files if f.path == "src/sec/sec.bundle.yaml").content.decode()
    assert "name: sec\n" in bundle and "description: Security guidance\n" in bundle and "sec-guard" in bundle
    # diagnostics speak of the files as published, not of where the reader placed them
    assert all(".claude/" not in d.path for d in got.diagnostics)
    assert any(d.path == "src/plugins/sec/agents/auditor.md" for d in got.diagnostics)


def test_the_digests_are_of_the_published_bytes_each_item_was_read_from():
    files = market_files()
    before = published.portable(tree_of(files), "src")
    files["plugins/sec/agents/auditor.md"] = AUDITOR.replace("Look at", "Read")
    after = published.portable(tree_of(files), "src")
    assert before is not None and after is not None

    def under(p, directory):
        return {f.path: f.content for f in p.digests.files if f.path.startswith(directory + "/")}

    assert under(before, "src/sec/agents/auditor") != under(after, "src/sec/agents/auditor")
    assert under(before, "src/sec/skills/sec-guard") == under(after, "src/sec/skills/sec-guard")
    assert under(before, "src/sec/agents/auditor") == {"src/sec/agents/auditor/agents/auditor.md": AUDITOR.encode()}


def test_a_plugin_repository_is_one_bundle_named_after_it():
    files = {".claude-plugin/plugin.json": json.dumps({"name": "solo", "description": "One plugin",
                                                       "agents": "./custom/agents/", "lspServers": "./.lsp.json"}),
             "custom/agents/helper.md": "---\nname: helper\ndescription: Helps\n---\n\nHelp.\n",
             "commands/go.md": "---\ndescription: Go\n---\n\nGo.\n",
             ".mcp.json": json.dumps({"mcpServers": {"docs": {"command": "npx", "args": ["-y", "docs-mcp"]}}})}
    got = published.portable(tree_of(files), "src")
    assert got is not None and got.layout == "plugin"
    paths = [f.path for f in got.tree.files]
    assert "src/solo/agents/helper/AGENT.md" in paths and "src/solo/commands/go/COMMAND.md" in paths
    bundle = next(f for f in got.tree.files if f.path == "src/solo/solo.bundle.yaml").content.decode()
    assert "docs" in bundle and "mcps:" in bundle
    assert any("lspServers has no portable form" in d.message for d in got.diagnostics)


def test_a_copilot_layout_at_the_root_is_read_like_one_in_github():
    files = {"agents/planner.agent.md": "---\ndescription: Plans work\ntools: ['*']\n---\n\nPlan.\n",
             "instructions/python.instructions.md": "---\napplyTo: '**/*.py'\n---\n\nUse type hints.\n",
             "prompts/explain.prompt.md": "---\ndescription: Explain code\n---\n\nExplain.\n",
             "README.md": "# Awesome look-alike\n"}
    got = published.portable(tree_of(files), "src")
    assert got is not None and got.layout == "copilot"
    paths = [f.path for f in got.tree.files]
    assert paths == ["src/agents/planner/AGENT.md", "src/commands/explain/COMMAND.md", "src/rules/python/RULE.md"]
    github = published.portable(tree_of({".github/" + k: v for k, v in files.items() if k != "README.md"}), "src")
    assert github is not None and [f.path for f in github.tree.files] == paths


def test_portable_registries_and_agent_skills_repositories_have_no_layout():
    assert layouts.read(tree_of({"skills/pdf/SKILL.md": GUARD}), "src") is None
    assert layouts.read(tree_of({"rules/a/RULE.md": "---\nschema: 1\ndescription: A\n---\n\nA.\n",
                                 "agents/planner.agent.md": "x"}), "src") is None
    plain = layouts.plain(tree_of({"skills/pdf/SKILL.md": GUARD, ".github/skills/x/SKILL.md": GUARD}), "src")
    assert [f.path for f in plain.files] == ["src/skills/pdf/SKILL.md"]


@pytest.mark.parametrize("manifest, message", [
    ("{not json", "not a JSON document"),
    ("[]", "expected a JSON object"),
    (json.dumps({"plugins": {"a": 1}}), "plugins: expected a list"),
])
def test_an_unreadable_marketplace_is_an_error_at_its_file(manifest, message):
    got = layouts.read(tree_of({".claude-plugin/marketplace.json": manifest}), "src")
    assert got is not None
    assert [(d.path, d.code) for d in got.diagnostics if d.is_error] == [("src/.claude-plugin/marketplace.json",
                                                                         "AR131")]
    assert message in got.diagnostics[0].message


def test_plugin_sources_and_component_paths_never_leave_the_tree():
    market = {"plugins": [{"name": "up", "source": "../elsewhere"}, {"name": "abs", "source": {"source": "npm"}},
                          {"name": "inner", "source": "./p"}]}
    files = {".claude-plugin/marketplace.json": json.dumps(market),
             "p/.claude-plugin/plugin.json": json.dumps({"name": "inner", "agents": ["../../etc/"]}),
             "p/agents/a.md": "---\nname: a\ndescription: A\n---\n\nA.\n"}
    got = layouts.read(tree_of(files), "src")
    assert got is not None and [p.name for p in got.parts] == ["inner"] and not got.redirects
    messages = " | ".join(d.message for d in got.diagnostics)
    assert "outside the marketplace's tree" in messages and "is not a directory or git repository" in messages
    assert "outside the plugin" in messages
    assert all(not f.path.startswith("src/p/../") for f in got.parts[0].files)


# --- as a consumed source -------------------------------------------------------------------

@pytest.fixture
def market(tmp_path, monkeypatch):
    isolated_home(monkeypatch, tmp_path)
    far = Repo(tmp_path, "far")
    far.commit({".claude-plugin/plugin.json": json.dumps({"name": "far", "description": "Far away"}),
                "agents/distant.md": "---\nname: distant\ndescription: Lives elsewhere\n---\n\nHi.\n"})
    repo = Repo(tmp_path, "market")
    repo.commit(market_files(far.url))
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return repo, far, project


def test_add_one_plugin_of_a_marketplace(market, capsys):
    repo, _, project = market
    code, out, err = run(capsys, "add", repo.url, "--bundle", "sec", "--client", "claude", "--trust")
    assert code == 0, err
    assert (project / ".claude/agents/auditor.md").is_file()
    assert (project / ".claude/skills/sec-guard/SKILL.md").is_file()
    assert "license: MIT" in (project / ".claude/skills/sec-guard/SKILL.md").read_text()
    assert not (project / ".claude/skills/rev-guard").exists()
    assert "rev-guard" not in err  # what nobody selected is not reported
    lock = json.loads((project / LOCK).read_text())
    assert [b["name"] for b in lock["bundles"]] == ["sec"]
    assert {i["name"] for i in lock["items"]} >= {"auditor", "sec-review", "sec-guard"}


def test_add_one_item_of_a_marketplace_and_install_frozen_in_a_fresh_clone(market, capsys, tmp_path, monkeypatch):
    repo, _, project = market
    code, _, err = run(capsys, "add", repo.url, "--item", "agent:reviewer", "--client", "claude")
    assert code == 0, err
    assert (project / ".claude/agents/reviewer.md").is_file()
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / LOCK).write_bytes((project / LOCK).read_bytes())
    monkeypatch.chdir(clone)
    code, _, err = run(capsys, "install", "--frozen")
    assert code == 0, err
    assert (clone / ".claude/agents/reviewer.md").read_bytes() == (project / ".claude/agents/reviewer.md").read_bytes()


def test_update_sees_an_upstream_change_of_one_item_only(market, capsys):
    repo, _, project = market
    assert run(capsys, "add", repo.url, "--bundle", "rev", "--client", "claude")[0] == 0
    before = {i["name"]: i["sha256"] for i in json.loads((project / LOCK).read_text())["items"]}
    repo.commit({"plugins/rev/agents/reviewer.md": "---\nname: reviewer\ndescription: Reviews PRs\n---\n\nNew.\n",
                 "README.md": "# Renamed\n"})
    code, _, err = run(capsys, "update")
    assert code == 0, err
    after = {i["name"]: i["sha256"] for i in json.loads((project / LOCK).read_text())["items"]}
    assert after["reviewer"] != before["reviewer"] and after["rev-guard"] == before["rev-guard"]
    assert "New." in (project / ".claude/agents/reviewer.md").read_text()


def test_a_plugin_in_another_repository_is_read_from_it(market, capsys):
    repo, far, project = market
    code, _, err = run(capsys, "add", repo.url, "--bundle", "far", "--client", "claude")
    assert code == 0, err
    assert (project / ".claude/agents/distant.md").is_file()
    lock = json.loads((project / LOCK).read_text())
    assert [(b["name"], b["source"]) for b in lock["bundles"]] == [("far", far.url)]


def test_remove_a_plugin(market, capsys):
    repo, _, project = market
    assert run(capsys, "add", repo.url, "--bundle", "rev", "--client", "claude")[0] == 0
    code, _, err = run(capsys, "remove", "rev")
    assert code == 0, err
    assert not (project / ".claude/agents/reviewer.md").exists()


# --- as an import input ------------------------------------------------------------------------

def test_import_of_a_marketplace_writes_a_bundle_per_plugin_that_lints(tmp_path, capsys):
    src = tmp_path / "market"
    write(src, market_files())
    out = tmp_path / "registry"
    code, _, err = run(capsys, "import", str(src), "--from", "claude", "--out", str(out))
    assert code == 0, err
    assert "imported the marketplace layout: 2 bundles" in err + _
    assert (out / "sec/sec.bundle.yaml").is_file() and (out / "rev/agents/reviewer/AGENT.md").is_file()
    assert run(capsys, "lint", str(out))[0] == 0


def test_import_of_a_plugin_directory_no_longer_says_nothing(tmp_path, capsys):
    src = tmp_path / "plugin"
    write(src, {".claude-plugin/plugin.json": json.dumps({"name": "solo", "description": "One"}),
                "agents/helper.md": "---\nname: helper\ndescription: Helps\n---\n\n# Helper\n\nHelp.\n"})
    out = tmp_path / "registry"
    code, stdout, err = run(capsys, "import", str(src), "--from", "claude", "--out", str(out))
    assert code == 0, err
    assert "1 bundles, 1 agents" in stdout + err
    assert (out / "solo/agents/helper/AGENT.md").is_file() and (out / "solo/solo.bundle.yaml").is_file()


def test_plugins_listing_skills_of_one_shared_directory_share_them():
    """A marketplace over a skills repository (plugins with `source: ./`, `strict: false` and
    the skill directories each one has): each bundle lists its skills, each skill is written
    once under its own name, and the skills nobody lists are not in any plugin."""
    market = {"name": "skills", "plugins": [
        {"name": "docs", "source": "./", "strict": False, "skills": ["./skills/pdf", "./skills/xlsx"]},
        {"name": "examples", "source": "./", "strict": False, "skills": ["./skills/xlsx"]}]}
    files = {".claude-plugin/marketplace.json": json.dumps(market),
             "skills/pdf/SKILL.md": GUARD.replace("name: guard", "name: pdf"),
             "skills/pdf/scripts/fill.py": "print(1)\n",
             "skills/xlsx/SKILL.md": GUARD.replace("name: guard", "name: xlsx"),
             "skills/unlisted/SKILL.md": GUARD.replace("name: guard", "name: unlisted")}
    got = published.portable(tree_of(files), "src")
    assert got is not None
    paths = [f.path for f in got.tree.files]
    assert paths == ["src/docs/docs.bundle.yaml", "src/docs/skills/pdf/SKILL.md", "src/docs/skills/pdf/scripts/fill.py",
                     "src/docs/skills/xlsx/SKILL.md", "src/examples/examples.bundle.yaml"]
    examples = next(f for f in got.tree.files if f.path.endswith("examples.bundle.yaml")).content.decode()
    assert "- xlsx" in examples and "installed as" not in " ".join(d.message for d in got.diagnostics)


def test_a_plugin_hook_whose_arguments_name_its_files_runs_after_install(tmp_path, monkeypatch, capsys):
    """`bash "${CLAUDE_PLUGIN_ROOT}/hooks/run.sh" "${CLAUDE_PLUGIN_ROOT}/hooks/check.py"` (as
    published plugins wrap their Python): both files travel with the hook, modes kept, and the
    installed command, run as Claude Code runs it, finds them in the project's layout."""
    import subprocess

    isolated_home(monkeypatch, tmp_path)
    repo = Repo(tmp_path, "plugin")
    hooks = {"hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command":
             'bash "${CLAUDE_PLUGIN_ROOT}/hooks/run.sh" "${CLAUDE_PLUGIN_ROOT}/hooks/check.py"'}]}]}}
    repo.commit({".claude-plugin/plugin.json": json.dumps({"name": "guard", "description": "Guards"}),
                 "hooks/hooks.json": json.dumps(hooks),
                 "hooks/run.sh": '#!/bin/sh\nexec python3 "$1"\n',
                 "hooks/check.py": "print('checked by guard')\n"})
    git_mode = ["update-index", "--chmod=+x", "hooks/run.sh"]
    from sourcerepos import git
    git(repo.work, *git_mode)
    git(repo.work, "commit", "-qm", "x")
    git(repo.work, "push", "-q", "origin", "main")
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    code, _, err = run(capsys, "add", repo.url, "--client", "claude", "--trust")
    assert code == 0, err
    settings = json.loads((project / ".claude/settings.json").read_text())
    command = settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
    assert "check.py" in command and "${CLAUDE_PLUGIN_ROOT}" not in command
    hook_dir = next((project / ".claude").rglob("run.sh")).parent
    assert (hook_dir / "check.py").is_file() and (hook_dir / "run.sh").stat().st_mode & 0o111
    ran = subprocess.run(["bash", "-c", command], cwd=str(project), capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "CLAUDE_PROJECT_DIR": str(project)})
    assert ran.returncode == 0 and "checked by guard" in ran.stdout, (command, ran.stderr)


def test_a_reference_to_a_sibling_plugins_item_is_rewritten_to_its_installed_name():
    files = market_files()
    files["plugins/rev/agents/reviewer.md"] = ("---\nname: reviewer\ndescription: Reviews pull requests\n---\n\n"
                                               "Use the sec:guard skill and /sec:sec-review first.\n")
    got = published.portable(tree_of(files), "src")
    assert got is not None
    body = next(f for f in got.tree.files if f.path == "src/rev/agents/reviewer/AGENT.md").content.decode()
    assert "sec-guard" in body and "sec:guard" not in body and "sec:sec-review" not in body
    assert not [d for d in got.diagnostics if "sec:guard" in d.message]


SKILLS_MARKET = {"name": "skills", "plugins": [
    {"name": "docs", "source": "./", "strict": False, "skills": ["./skills/pdf", "./skills/xlsx"]},
    {"name": "examples", "source": "./", "strict": False, "skills": ["./skills/art"]}]}


@pytest.mark.parametrize("selection, written", [
    (["--item", "skill:pdf"], ".claude/skills/pdf/SKILL.md"),
    (["--bundle", "examples"], ".claude/skills/art/SKILL.md"),  # the second plugin over the same root
])
def test_plugins_at_the_marketplaces_root_install_what_is_asked(tmp_path, monkeypatch, capsys, selection, written):
    """Plugins whose source is the marketplace's own root (`./`, as skills repositories
    publish them): an item or any plugin asked for is written (the corpus run found both
    silently writing nothing, and a second plugin not found)."""
    isolated_home(monkeypatch, tmp_path)
    repo = Repo(tmp_path, "skills")
    repo.commit({".claude-plugin/marketplace.json": json.dumps(SKILLS_MARKET),
                 "skills/pdf/SKILL.md": GUARD.replace("name: guard", "name: pdf"),
                 "skills/xlsx/SKILL.md": GUARD.replace("name: guard", "name: xlsx"),
                 "skills/art/SKILL.md": GUARD.replace("name: guard", "name: art")})
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    code, out, err = run(capsys, "add", repo.url, *selection, "--client", "claude")
    assert code == 0, err
    assert (project / written).is_file(), out + err
    assert " 0 created" not in out + err


def test_import_shortens_a_description_over_the_limit_and_says_so(tmp_path, capsys):
    """What `add` installs (shortened for every client), `import` writes too, instead of
    leaving the skill out (AR132): the registry lints clean and keeps the skill."""
    long = "Use when " + "the description goes on about one more thing " * 30
    write(tmp_path / "plugin", {".claude-plugin/plugin.json": json.dumps({"name": "solo", "description": "One"}),
                                "skills/long/SKILL.md": f"---\nname: long\ndescription: {long}\n---\n\nDo it.\n"})
    out = tmp_path / "registry"
    code, stdout, err = run(capsys, "import", str(tmp_path / "plugin"), "--from", "claude", "--out", str(out))
    assert code == 0, err
    assert (out / "solo/skills/long/SKILL.md").is_file() and "AR132" not in err
    assert "shortened to the Agent Skills limit" in err
    assert run(capsys, "lint", str(out))[0] == 0


def test_an_argument_hint_written_as_a_yaml_list_is_a_string_for_every_client():
    """`argument-hint: [project-name]` (a YAML list, as published plugins write it) reaches
    every client as the string `[project-name]`: the Copilot CLI refuses a list in the copy
    of Claude's it reads (found by the corpus run)."""
    files = {".claude-plugin/plugin.json": json.dumps({"name": "solo", "description": "One"}),
             "commands/new-app.md": "---\ndescription: Make an app\nargument-hint: [project-name]\n---\n\nMake it.\n"}
    got = published.portable(tree_of(files), "src")
    assert got is not None
    command = next(f for f in got.tree.files if f.path.endswith("COMMAND.md")).content.decode()
    assert "argument-hint: '[project-name]'" in command or 'argument-hint: "[project-name]"' in command, command


@pytest.mark.parametrize("argv", [[], ["--from", "claude,copilot"]])
def test_import_without_from_reads_a_marketplace_as_published(tmp_path, capsys, argv):
    """A marketplace that also holds .claude/rules of its own (as published repositories do)
    is read as the marketplace, with or without --from (the corpus run found only the rules
    and the context imported, the plugins' agents and skills dropped without a word)."""
    files = dict(market_files(), **{".claude/rules/house.md": "Keep it tidy.\n", "CLAUDE.md": "# House\n\nRules.\n"})
    write(tmp_path / "market", files)
    out = tmp_path / "registry"
    code, stdout, err = run(capsys, "import", str(tmp_path / "market"), *argv, "--out", str(out))
    assert code == 0, err
    assert "imported the marketplace layout: 2 bundles" in stdout + err
    assert (out / "sec/agents/auditor/AGENT.md").is_file()


def test_import_without_from_reads_copilot_files_at_the_root_beside_a_github_of_workflows(tmp_path, capsys):
    write(tmp_path / "awesome", {"agents/planner.agent.md": "---\ndescription: Plans work\n---\n\nPlan.\n",
                                 "instructions/py.instructions.md": "---\napplyTo: '**/*.py'\n---\n\nTyped.\n",
                                 ".github/workflows/ci.yml": "on: push\n"})
    out = tmp_path / "registry"
    code, stdout, err = run(capsys, "import", str(tmp_path / "awesome"), "--out", str(out))
    assert code == 0, err
    assert (out / "agents/planner/AGENT.md").is_file() and (out / "rules/py/RULE.md").is_file()


def test_the_whole_marketplace_is_its_own_plugins_and_names_the_others(market, capsys):
    repo, _, project = market
    code, out, err = run(capsys, "add", repo.url, "--client", "claude", "--trust")
    assert code == 0, err
    lock = json.loads((project / LOCK).read_text())
    assert sorted(b["name"] for b in lock["bundles"]) == ["rev", "sec"]
    assert "1 plugin(s) of this marketplace live in other repositories" in err and "--bundle far" in err


def test_a_git_subdir_plugin_source_is_a_locator_at_its_pinned_commit():
    sha = "30287f5e3f122a646d1ac5ca3ab96e130c52a3ad"
    assert layouts._locator({"source": "git-subdir", "url": "https://example.com/team/plugins.git",
                             "path": "plugins/api", "ref": "v1.5.5", "sha": sha}) == \
        f"https://example.com/team/plugins.git@{sha}#plugins/api"
