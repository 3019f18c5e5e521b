"""The consumer workflow as other ecosystems have it: `update NAME --ref REF` re-pins a source
(v1 -> v2 without remove and add), `outdated` lists sources with newer commits or tags, and
`add`, `remove`, `update --dry-run` print the plan (files, MCP servers, plugins, hooks) and
write nothing, run no client CLI. The real CLI, real git repositories over file://."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from sourcerepos import Repo, bundle, git, rule, skill
from test_consent import HOOK
from test_consumer_cli import LOCK, files, run
from test_consumer_frozen import consumer_env, snapshot

MCP = "mcps:\n  lint-server:\n    local:\n      command: npx\n      args: [\"-y\", \"@example/lint-mcp\"]\n"


@pytest.fixture
def env(tmp_path, monkeypatch):
    return consumer_env(tmp_path, monkeypatch, "v1.0.0")


def logging_cli(tmp, monkeypatch, *names):
    """Client CLIs on PATH that only log their arguments: whatever runs them is seen."""
    shim = tmp / "shim"
    shim.mkdir(exist_ok=True)
    log = tmp / "cli.log"
    for name in names:
        (shim / name).write_text(f"#!/bin/sh\necho {name} \"$@\" >> {log}\nexit 0\n")
        (shim / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    return log


def test_update_ref_moves_a_source_to_another_tag(env, capsys):
    repo, project = env["repo"], env["project"]
    assert run(capsys, "add", f"{repo.url}@v1.0.0#reg", "--bundle", "core", "--client", "claude")[0] == 0
    v2 = repo.commit({"reg/skills/summary/SKILL.md": skill("summary", "Version two.",
                                                           "requires:\n  rules:\n    - extra\n"),
                      "reg/rules/extra/RULE.md": rule("extra")}, tag="v2.0.0")
    # add @v2 of an installed source is a conflict (AR206): moving needs update --ref.
    assert "AR206" in run(capsys, "add", f"{repo.url}@v2.0.0#reg", "--bundle", "core")[2]
    before = snapshot(project)
    code, _, err = run(capsys, "update", "core", "--ref", "v2.0.0", "--dry-run")
    assert code == 0, err
    assert snapshot(project) == before
    assert f"~ bundle core from {repo.url}@v2.0.0#reg (was @v1.0.0): {repo.v1[:12]} -> {v2[:12]}" in err
    assert "would create: .claude/rules/extra.md" in err and "would delete: .claude/rules/style.md" in err
    code, _, err = run(capsys, "update", "core", "--ref", "v2.0.0")
    assert code == 0, err
    lock = json.loads((project / LOCK).read_text())
    entries = {(e.get("kind", "bundle"), e["name"]): (e["ref"], e["commit"]) for e in lock["bundles"] + lock["items"]}
    assert entries == {("bundle", "core"): ("v2.0.0", v2), ("skill", "summary"): ("v2.0.0", v2),
                       ("rule", "extra"): ("v2.0.0", v2)}
    assert "Version two." in (project / ".claude" / "skills" / "summary" / "SKILL.md").read_text()
    assert (project / ".claude" / "rules" / "extra.md").exists()
    assert not (project / ".claude" / "rules" / "style.md").exists()
    assert run(capsys, "install", "--frozen")[0] == 0
    # And back: the old ref is one more re-pin.
    assert run(capsys, "update", "core", "--ref", "v1.0.0")[0] == 0
    assert (project / ".claude" / "rules" / "style.md").exists()


def test_update_ref_asks_consent_for_what_changes(env, capsys):
    repo, project = env["repo"], env["project"]
    assert run(capsys, "add", f"{repo.url}@v1.0.0#reg", "--bundle", "core", "--client", "claude")[0] == 0
    repo.commit({"reg/hooks/guard/HOOK.md": HOOK, "reg/hooks/guard/check.sh": "#!/bin/sh\nexit 0\n",
                 "reg/core.bundle.yaml": bundle("core", "  skills:\n    - summary\n  hooks:\n    - guard\n")},
                tag="v2.0.0")
    before = snapshot(project)
    code, _, err = run(capsys, "update", "core", "--ref", "v2.0.0")
    assert code == 1 and "error[AR229]" in err and "hook guard: runs `./check.sh`" in err
    assert snapshot(project) == before
    code, _, err = run(capsys, "update", "core", "--ref", "v2.0.0", "--trust")
    assert code == 0, err
    lock = json.loads((project / LOCK).read_text())
    assert {i["name"]: i.get("trusted") is not None for i in lock["items"]} == {"guard": True, "summary": False,
                                                                               "style": False}


def test_update_ref_refusals(env, capsys, tmp_path):
    repo, project = env["repo"], env["project"]
    assert run(capsys, "add", f"{repo.url}@v1.0.0#reg", "--bundle", "core", "--client", "claude")[0] == 0
    other = Repo(tmp_path, "other")
    other.commit({"rules/lone/RULE.md": rule("lone")}, tag="v1")
    assert run(capsys, "add", f"{other.url}@v1", "--client", "claude")[0] == 0
    local = project / "vendor" / "skills" / "mine"
    local.mkdir(parents=True)
    (local / "SKILL.md").write_text(skill("mine"))
    assert run(capsys, "add", "./vendor", "--client", "claude")[0] == 0
    before = snapshot(project)
    assert run(capsys, "update", "--ref", "v2")[0] == 2  # re-pin what? a NAME is needed
    code, _, err = run(capsys, "update", "core", "lone", "--ref", "v2")
    assert code == 1 and "AR207" in err and "one source" in err
    code, _, err = run(capsys, "update", "core", "--ref=-upload-pack=evil")
    assert code == 1 and "AR200" in err
    code, _, err = run(capsys, "update", "mine", "--ref", "v2")
    assert code == 1 and "local directory, which has no refs" in err
    code, _, err = run(capsys, "update", "core", "--ref", "v9")
    assert code == 1 and "AR201" in err
    assert snapshot(project) == before


def test_add_dry_run_plans_files_servers_hooks_and_runs_no_cli(env, capsys, monkeypatch):
    repo, project, tmp = env["repo"], env["project"], env["tmp"]
    repo.commit({"reg/hooks/guard/HOOK.md": HOOK, "reg/hooks/guard/check.sh": "#!/bin/sh\nexit 0\n",
                 "reg/tools.bundle.yaml": bundle("tools", "  hooks:\n    - guard\n") + MCP}, tag="v1.1.0")
    log = logging_cli(tmp, monkeypatch, "claude", "copilot")
    code, _, err = run(capsys, "add", f"{repo.url}@v1.1.0#reg", "--bundle", "tools", "--client", "claude",
                       "--dry-run")
    assert code == 0, err
    assert "would create: .claude/settings.json" in err
    assert "would register MCP server lint-server (claude, project, via its CLI)" in err
    assert "would add hook guard: runs `./check.sh` at PreToolUse on bash" in err
    assert "would need consent (--trust): hook guard" in err
    assert "would be added bundle tools from" in err
    assert os.listdir(project) == [] and not log.exists()
    code, out, _ = run(capsys, "add", f"{repo.url}@v1.1.0#reg", "--bundle", "tools", "--client", "claude",
                       "--dry-run", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["dry_run"] is True and ".claude/settings.json" in doc["changes"]["create"]
    assert doc["mcp_servers"]["register"] == ["lint-server (claude, project, via its CLI)"]
    assert doc["hooks"]["add"] and doc["needs_consent"]
    assert os.listdir(project) == [] and not log.exists()


def test_remove_dry_run_plans_what_goes_and_writes_nothing(env, capsys, monkeypatch):
    repo, project, tmp = env["repo"], env["project"], env["tmp"]
    repo.commit({"reg/tools.bundle.yaml": bundle("tools", "  rules:\n    - style\n") + MCP}, tag="v1.1.0")
    assert run(capsys, "add", f"{repo.url}@v1.1.0#reg", "--bundle", "tools", "--client", "claude,opencode",
               "--trust")[0] == 0
    before = snapshot(project)
    agentrc_state = sorted(os.listdir(project / ".agentrc"))
    log = logging_cli(tmp, monkeypatch, "claude", "opencode")
    code, _, err = run(capsys, "remove", "tools", "--dry-run")
    assert code == 0, err
    assert "would delete: .claude/rules/style.md" in err
    assert "would remove MCP server lint-server (claude, project, .mcp.json)" in err
    assert "would remove MCP server lint-server (opencode, project, opencode.json)" in err
    assert "would be removed bundle tools" in err
    assert snapshot(project) == before and sorted(os.listdir(project / ".agentrc")) == agentrc_state
    assert not log.exists()
    assert run(capsys, "remove", "tools")[0] == 0 and files(project) == [LOCK]


def test_update_dry_run_prints_the_plan(env, capsys):
    repo, project = env["repo"], env["project"]
    assert run(capsys, "add", f"{repo.url}@main#reg", "--bundle", "core", "--client", "claude")[0] == 0
    repo.commit({"reg/rules/style/RULE.md": rule("style").replace("Always", "Never")})
    before = snapshot(project)
    code, out, _ = run(capsys, "update", "--dry-run", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["changes"]["update"] == [".claude/rules/style.md"] and doc["dry_run"] is True
    assert doc["mcp_servers"] == {"register": [], "remove": []} and snapshot(project) == before


def test_outdated_lists_newer_tags_semver_sorted_and_writes_nothing(env, capsys):
    repo, project, cache = env["repo"], env["project"], env["cache"]
    assert run(capsys, "add", f"{repo.url}@v1.0.0#reg", "--bundle", "core", "--client", "claude")[0] == 0
    code, out, err = run(capsys, "outdated")
    assert code == 0 and out == "" and "every source is at the newest commit" in err
    for tag in ("v1.10.0", "v1.2.0", "v0.9.0", "v2.0.0-rc.1", "not-a-version"):
        repo.commit({"reg/rules/style/RULE.md": rule("style") + tag + "\n"}, tag=tag)
    before = snapshot(project)
    cached = sorted(p.name for p in cache.rglob("*"))
    code, out, err = run(capsys, "outdated")
    assert code == 0, err
    assert out == f"{repo.url}@v1.0.0#reg ({repo.v1[:12]}): newer tags v1.2.0, v1.10.0\n"
    code, out, _ = run(capsys, "outdated", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["outdated"] == 1
    [src] = doc["sources"]
    assert (src["kind"], src["newer_tags"], src["entries"]) == ("tag", ["v1.2.0", "v1.10.0"],
                                                                ["bundle:core", "rule:style", "skill:summary"])
    assert snapshot(project) == before and sorted(p.name for p in cache.rglob("*")) == cached


def test_outdated_lists_a_branch_with_newer_commits_through_the_hardened_git(env, capsys, monkeypatch):
    repo, project, tmp = env["repo"], env["project"], env["tmp"]
    assert run(capsys, "add", f"{repo.url}@main#reg", "--bundle", "core", "--client", "claude")[0] == 0
    new = repo.commit({"reg/rules/style/RULE.md": rule("style").replace("Always", "Never")})
    shim = tmp / "gitshim"
    shim.mkdir()
    log = tmp / "git.log"
    real = shutil.which("git")
    (shim / "git").write_text(f"#!/bin/sh\necho \"$@\" >> {log}\nexec {real} \"$@\"\n")
    (shim / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    code, out, err = run(capsys, "outdated")
    assert code == 0, err
    assert out == f"{repo.url}@main#reg ({repo.v1[:12]}): branch now at {new[:12]}\n"
    calls = log.read_text().splitlines()
    assert len(calls) == 1 and "protocol.allow=never" in calls[0] and "core.hooksPath=/dev/null" in calls[0]
    assert calls[0].endswith(f"ls-remote -- {repo.url}")
    assert run(capsys, "update")[0] == 0
    code, out, _ = run(capsys, "outdated")
    assert code == 0 and out == ""


def test_outdated_reports_a_remote_it_cannot_list(env, capsys):
    repo = env["repo"]
    assert run(capsys, "add", f"{repo.url}@v1.0.0#reg", "--bundle", "core", "--client", "claude")[0] == 0
    git(repo.work, "push", "-q", "origin", ":refs/tags/v1.0.0")
    code, _, err = run(capsys, "outdated")
    assert code == 0 and "warning[AR201]" in err and "no branch or tag 'v1.0.0'" in err
    shutil.rmtree(repo.bare)
    code, _, err = run(capsys, "outdated")
    assert code == 1 and "error[AR201]" in err and "ls-remote failed" in err
    assert run(capsys, "outdated", "--dir", "nowhere")[0] == 2
