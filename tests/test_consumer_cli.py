"""`agentrc add`, `list`, `install [--frozen | --check]` and `remove` end to end: the real CLI entry
point, real git on bare repositories served over file://, an isolated HOME and cache."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from sourcerepos import Repo, bundle, isolated_home, rule, skill

from agentrc.cli.main import main

LOCK = "agentrc.lock.json"


@pytest.fixture
def env(tmp_path, monkeypatch):
    cache = isolated_home(monkeypatch, tmp_path)
    repo = Repo(tmp_path)
    repo.v1 = repo.commit({
        "reg/skills/summary/SKILL.md": skill("summary", requires="requires:\n  rules:\n    - style\n"),
        "reg/skills/summary/refs/checklist.md": "- one\n",
        "reg/rules/style/RULE.md": rule("style"),
        "reg/rules/other/RULE.md": rule("other"),
        "reg/core.bundle.yaml": bundle("core", "  skills:\n    - summary\n"),
    }, tag="v1")
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return {"repo": repo, "project": project, "cache": cache, "tmp": tmp_path}


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def files(project: Path):
    return sorted(str(p.relative_to(project)) for p in project.rglob("*")
                  if p.is_file() and ".agentrc" not in p.parts)


def test_add_writes_the_closure_and_a_deterministic_lock(env, capsys):
    repo, project = env["repo"], env["project"]
    code, _, err = run(capsys, "add", f"{repo.url}@v1#reg", "--bundle", "core", "--client", "claude")
    assert code == 0, err
    assert files(project) == [".claude/rules/style.md", ".claude/skills/summary/SKILL.md",
                              ".claude/skills/summary/refs/checklist.md", LOCK]
    assert "added skill summary from " in err and "required by bundle:core" in err
    raw = (project / LOCK).read_bytes()
    lock = json.loads(raw)
    assert lock["clients"] == ["claude"]
    assert [(b["name"], b["ref"], b["commit"], b["direct"]) for b in lock["bundles"]] == [("core", "v1", repo.v1, True)]
    got = {(i["kind"], i["name"]): (i["required_by"], i["source"]) for i in lock["items"]}
    assert got == {("rule", "style"): (["skill:summary"], f"{repo.url}#reg"),
                   ("skill", "summary"): (["bundle:core"], f"{repo.url}#reg")}
    assert {f["path"] for f in lock["files"]} == {".claude/rules/style.md", ".claude/skills/summary/SKILL.md",
                                                 ".claude/skills/summary/refs/checklist.md"}
    # Adding the same again changes nothing: same bytes, nothing rewritten.
    code, _, err = run(capsys, "add", f"{repo.url}@v1#reg", "--bundle", "core")
    assert code == 0 and (project / LOCK).read_bytes() == raw
    assert "0 created, 0 updated, 0 deleted, 3 unchanged" in err


def test_list_shows_what_is_installed(env, capsys):
    repo = env["repo"]
    assert run(capsys, "list")[0] == 0
    run(capsys, "add", f"{repo.url}@v1#reg", "--item", "rule:other", "--client", "claude")
    code, out, _ = run(capsys, "list")
    assert code == 0 and out == f"rule other from {repo.url}@v1#reg ({repo.v1[:12]})\n"
    code, out, _ = run(capsys, "list", "--json")
    doc = json.loads(out)
    assert code == 0 and [(i["kind"], i["name"], i["direct"]) for i in doc["items"]] == [("rule", "other", True)]


def test_install_restores_the_locked_files_from_the_cache_without_git(env, capsys, monkeypatch):
    repo, project, tmp = env["repo"], env["project"], env["tmp"]
    assert run(capsys, "add", f"{repo.url}@v1#reg", "--bundle", "core", "--client", "claude,copilot")[0] == 0
    lock = (project / LOCK).read_bytes()
    shutil.rmtree(project / ".claude")
    shutil.rmtree(repo.bare)  # the remote is unreachable now: only the cache can serve the locked commit
    shim = tmp / "shim"
    shim.mkdir()
    log = tmp / "git.log"
    real = shutil.which("git")
    (shim / "git").write_text(f"#!/bin/sh\necho \"$@\" >> {log}\nexec {real} \"$@\"\n")
    (shim / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    code, _, err = run(capsys, "install", "--check")
    assert code == 1 and "AR204" in err and "missing" in err
    assert not (project / ".claude").exists()  # --check writes nothing
    code, _, err = run(capsys, "install")
    assert code == 0, err
    assert (project / ".claude" / "skills" / "summary" / "SKILL.md").exists()
    assert (project / LOCK).read_bytes() == lock
    assert run(capsys, "install", "--check")[0] == 0
    assert run(capsys, "install", "--frozen")[0] == 0
    assert not log.exists()  # git never ran: every locked commit was in the cache


def test_install_frozen_fails_on_an_edited_file_and_install_keeps_it_without_force(env, capsys):
    repo, project = env["repo"], env["project"]
    run(capsys, "add", f"{repo.url}@v1#reg", "--bundle", "core", "--client", "claude")
    target = project / ".claude" / "rules" / "style.md"
    target.write_text("my own edit\n")
    code, _, err = run(capsys, "install", "--frozen")
    assert code == 1 and "AR094" in err
    code, _, err = run(capsys, "install")
    assert code == 1 and "AR094" in err and target.read_text() == "my own edit\n"
    # Another add rebuilds the project: the edit is still not overwritten.
    code, _, err = run(capsys, "add", f"{repo.url}@v1#reg", "--item", "rule:other")
    assert code == 1 and "AR094" in err and not (project / ".claude" / "rules" / "other.md").exists()
    code, _, err = run(capsys, "install", "--force")
    assert code == 0 and "Always style." in target.read_text()


def test_a_source_whose_locked_content_changed_is_drift(env, capsys):
    """A lock whose digest no longer matches the locked commit's content (edited, or the
    content was not what was locked) is AR204; a tampered cache is no such thing: the entry
    is verified against its record, fetched again (AR228) and installs the original bytes."""
    repo, project, cache = env["repo"], env["project"], env["cache"]
    run(capsys, "add", f"{repo.url}@v1#reg", "--bundle", "core", "--client", "claude")
    installed = (project / ".claude" / "skills" / "summary" / "SKILL.md").read_text()
    tampered = next(cache.rglob("summary/SKILL.md"))
    tampered.chmod(stat.S_IWUSR | stat.S_IRUSR)
    tampered.write_text(tampered.read_text() + "\nInjected.\n")
    code, _, err = run(capsys, "install")
    assert code == 0 and "warning[AR228]" in err, err
    assert (project / ".claude" / "skills" / "summary" / "SKILL.md").read_text() == installed
    # The lock's own digest edited: the locked commit does not have the content it records.
    good = (project / LOCK).read_text()
    lock = json.loads(good)
    lock["items"][0]["sha256"] = "0" * 64
    (project / LOCK).write_text(json.dumps(lock))
    for argv in (("install", "--frozen"), ("install",)):
        code, _, err = run(capsys, *argv)
        assert code == 1 and "AR204" in err and "does not have the content the lock records" in err
    (project / LOCK).write_text(good)
    # Tampered again with the remote gone: it cannot be fetched again, so nothing is installed.
    tampered = next(cache.rglob("summary/SKILL.md"))
    tampered.chmod(stat.S_IWUSR | stat.S_IRUSR)
    tampered.write_text(tampered.read_text() + "\nInjected.\n")
    shutil.rmtree(repo.bare)
    code, _, err = run(capsys, "install", "--frozen")
    assert code == 1 and "error[AR228]" in err and "Injected" not in err


def test_remove_deletes_what_only_the_entry_required(env, capsys):
    repo, project = env["repo"], env["project"]
    run(capsys, "add", f"{repo.url}@v1#reg", "--bundle", "core", "--client", "claude")
    run(capsys, "add", f"{repo.url}@v1#reg", "--item", "rule:style")
    code, _, err = run(capsys, "remove", "core")
    assert code == 0, err
    assert files(project) == [".claude/rules/style.md", LOCK]  # style stays: it was also asked for directly
    lock = json.loads((project / LOCK).read_text())
    assert [(i["name"], i["direct"], i["required_by"]) for i in lock["items"]] == [("style", True, [])]
    code, _, err = run(capsys, "remove", "nope")
    assert code == 1 and "AR207" in err


def test_a_fresh_clone_without_agentrc_state_still_owns_the_locked_files(env, capsys):
    repo, project = env["repo"], env["project"]
    run(capsys, "add", f"{repo.url}@v1#reg", "--bundle", "core", "--client", "claude")
    shutil.rmtree(project / ".agentrc")  # what a clone of the project holds: the files and the lock
    assert run(capsys, "install", "--frozen")[0] == 0
    code, _, err = run(capsys, "remove", "core")
    assert code == 0, err
    assert files(project) == [LOCK]


def test_the_same_name_from_another_source_is_a_conflict(env, capsys, tmp_path):
    repo, project = env["repo"], env["project"]
    run(capsys, "add", f"{repo.url}@v1#reg", "--item", "rule:style", "--client", "claude")
    other = Repo(tmp_path, "other")
    other.commit({"rules/style/RULE.md": rule("style")}, tag="v1")
    before = (project / LOCK).read_bytes()
    code, _, err = run(capsys, "add", f"{other.url}@v1", "--item", "rule:style")
    assert code == 1 and "AR206" in err and (project / LOCK).read_bytes() == before


def test_a_local_directory_source_is_locked_relative_to_the_project(env, capsys, monkeypatch):
    project, tmp = env["project"], env["tmp"]
    reg = tmp / "vendor" / "reg" / "skills" / "local"
    reg.mkdir(parents=True)
    (reg / "SKILL.md").write_text(skill("local"))
    monkeypatch.chdir(tmp)
    code, _, err = run(capsys, "add", "./vendor/reg", "--dir", "project", "--client", "claude")
    assert code == 0, err
    lock = json.loads((project / LOCK).read_text())
    assert [(i["source"], i["ref"], i["commit"]) for i in lock["items"]] == [("../vendor/reg", None, None)]
    monkeypatch.chdir(project)
    # The lock names a directory outside the project: read only when named on the command line.
    code, _, err = run(capsys, "install", "--frozen")
    assert code == 1 and "AR226" in err and "--allow-local ../vendor/reg" in err
    assert run(capsys, "install", "--frozen", "--allow-local", "../vendor/reg")[0] == 0
    (reg / "SKILL.md").write_text(skill("local", "Edited upstream."))
    code, _, err = run(capsys, "install", "--frozen", "--allow-local", "../vendor")
    assert code == 1 and "AR204" in err
    # a local directory may change: install takes its new content
    assert run(capsys, "install", "--allow-local", "../vendor/reg")[0] == 0
    assert "Edited upstream." in (project / ".claude" / "skills" / "local" / "SKILL.md").read_text()


def test_hostile_sources_write_nothing(env, capsys):
    repo, project, tmp = env["repo"], env["project"], env["tmp"]
    secret = tmp / "secret.md"
    secret.write_text("TOP SECRET\n")
    os.symlink(str(secret), str(repo.work / "reg" / "skills" / "summary" / "refs" / "leak.md"))
    repo.commit({}, "a link out of the repository", tag="v2")
    code, _, err = run(capsys, "add", f"{repo.url}@v2#reg", "--bundle", "core", "--client", "claude")
    assert code == 1 and "AR050" in err
    assert files(project) == []
    code, _, err = run(capsys, "add", f"{repo.url}@v1#../../etc", "--client", "claude")
    assert code == 1 and "AR200" in err and files(project) == []


def test_usage_errors(env, capsys):
    assert run(capsys, "add", "owner/repo", "--item", "nokind")[0] == 2
    assert run(capsys, "add", "owner/repo", "--client", "nope")[0] == 2
    assert run(capsys, "list", "--dir", "missing-dir")[0] == 2
    code, _, err = run(capsys, "install")
    assert code == 1 and "AR203" in err and "no lock" in err


def _cross(name: str, source: str, kind: str = "rules") -> str:
    return f"requires:\n  {kind}:\n    - {{ name: {name}, source: \"{source}\" }}\n"


def test_cross_source_requires_are_fetched_and_locked_under_their_own_source(env, capsys, tmp_path):
    repo, project = env["repo"], env["project"]
    app = Repo(tmp_path, "app")
    app.v3 = app.commit({
        "skills/deploy/SKILL.md": skill("deploy", requires=_cross("style", f"{repo.url}@v1#reg")),
        "platform.bundle.yaml": bundle("platform", "  skills:\n    - deploy\n",
                                       f"requires:\n  - {{ name: core, source: \"{repo.url}@v1#reg\" }}\n"),
    }, tag="v3")
    code, _, err = run(capsys, "add", f"{app.url}@v3", "--bundle", "platform", "--client", "claude")
    assert code == 0, err
    lock = json.loads((project / LOCK).read_text())
    got = {(e.get("kind", "bundle"), e["name"]): (e["source"], e["commit"], e["direct"], e["required_by"])
           for e in lock["bundles"] + lock["items"]}
    assert got == {
        ("bundle", "platform"): (app.url, app.v3, True, []),
        ("bundle", "core"): (f"{repo.url}#reg", repo.v1, False, ["bundle:platform"]),
        ("skill", "deploy"): (app.url, app.v3, False, ["bundle:platform"]),
        ("skill", "summary"): (f"{repo.url}#reg", repo.v1, False, ["bundle:core"]),
        ("rule", "style"): (f"{repo.url}#reg", repo.v1, False, ["skill:deploy", "skill:summary"]),
    }
    assert (project / ".claude" / "rules" / "style.md").exists()
    assert (project / ".claude" / "skills" / "deploy" / "SKILL.md").exists()
    # Both sources are pinned in the cache: install --frozen needs neither remote.
    shutil.rmtree(repo.bare)
    shutil.rmtree(app.bare)
    assert run(capsys, "install", "--frozen")[0] == 0


def test_a_requires_cycle_through_sources_is_AR071(env, capsys, tmp_path):
    a, b = Repo(tmp_path, "a"), Repo(tmp_path, "b")
    a.commit({"skills/x/SKILL.md": skill("x", requires=_cross("y", f"{b.url}@v1", "skills"))}, tag="v1")
    b.commit({"skills/y/SKILL.md": skill("y", requires=_cross("x", f"{a.url}@v1", "skills"))}, tag="v1")
    code, _, err = run(capsys, "add", f"{a.url}@v1", "--item", "skill:x", "--client", "claude")
    assert code == 1 and "AR071" in err and "across sources" in err
    assert files(env["project"]) == []


def test_cross_source_conflicts_and_local_paths_from_git_are_refused(env, capsys, tmp_path):
    repo = env["repo"]
    dup = Repo(tmp_path, "dup")
    dup.commit({"rules/style/RULE.md": rule("style"),
                "skills/s/SKILL.md": skill("s", requires=_cross("summary", f"{repo.url}@v1#reg", "skills"))},
               tag="v1")
    code, _, err = run(capsys, "add", f"{dup.url}@v1", "--client", "claude")  # everything: style from both
    assert code == 1 and "AR206" in err
    local = Repo(tmp_path, "local")
    local.commit({"skills/s/SKILL.md": skill("s", requires=_cross("t", "../../home/secrets", "skills"))}, tag="v1")
    code, _, err = run(capsys, "add", f"{local.url}@v1", "--client", "claude")
    assert code == 1 and "AR226" in err and "leads outside the source's own tree" in err
    assert files(env["project"]) == []


def test_lint_and_build_still_report_cross_source_references(env, capsys, tmp_path):
    reg = tmp_path / "lintme"
    (reg / "skills" / "x").mkdir(parents=True)
    (reg / "skills" / "x" / "SKILL.md").write_text(skill("x", requires=_cross("y", "owner/repo@v1", "skills")))
    code, _, err = run(capsys, "lint", str(reg))
    assert code == 1 and "AR065" in err and "agentrc add" in err


def test_update_moves_a_branch_to_its_new_commit_and_dry_run_writes_nothing(env, capsys, tmp_path):
    repo, project = env["repo"], env["project"]
    other = Repo(tmp_path, "other")
    other.commit({"rules/extra/RULE.md": rule("extra")})
    assert run(capsys, "add", f"{repo.url}@main#reg", "--bundle", "core", "--client", "claude")[0] == 0
    assert run(capsys, "add", f"{other.url}@main", "--item", "rule:extra")[0] == 0
    code, _, err = run(capsys, "update")
    assert code == 0 and "every source is at the commit its ref names" in err
    new = repo.commit({"reg/skills/summary/SKILL.md": skill("summary", "Version two.",
                                                            "requires:\n  rules:\n    - style\n")})
    other_new = other.commit({"rules/extra/RULE.md": rule("extra").replace("Always", "Never")})
    lock_before = (project / LOCK).read_bytes()
    code, _, err = run(capsys, "update", "--dry-run")
    assert code == 0, err
    assert f"~ skill summary from {repo.url}@main#reg: {repo.v1[:12]} -> {new[:12]}" in err
    assert "would update: .claude/skills/summary/SKILL.md" in err
    assert (project / LOCK).read_bytes() == lock_before
    assert "Version two." not in (project / ".claude/skills/summary/SKILL.md").read_text()
    # Only the named entry's source moves; the other stays at its locked commit.
    code, _, err = run(capsys, "update", "core")
    assert code == 0, err
    assert "Version two." in (project / ".claude/skills/summary/SKILL.md").read_text()
    lock = json.loads((project / LOCK).read_text())
    commits = {i["name"]: i["commit"] for i in lock["items"]}
    assert commits["summary"] == new and commits["extra"] != other_new
    code, out, _ = run(capsys, "update", "--json")
    doc = json.loads(out)
    assert code == 0 and [u["id"] for u in doc["updates"]] == ["rule:extra"]
    assert doc["updates"][0]["new"]["commit"] == other_new
    assert "Never extra." in (project / ".claude/rules/extra.md").read_text()
    assert run(capsys, "update", "nope")[0] == 1


def test_a_cross_source_bundle_version_constraint_is_checked(env, capsys, tmp_path):
    repo, project = env["repo"], env["project"]
    repo.commit({"reg/core.bundle.yaml": bundle("core", "  skills:\n    - summary\n")
                 + "metadata:\n  version: \"1.4.0\"\n"}, tag="v1.4.0")
    app = Repo(tmp_path, "app")
    app.commit({"skills/deploy/SKILL.md": skill("deploy"),
                "too-new.bundle.yaml": bundle("too-new", "  skills:\n    - deploy\n",
                                              f"requires:\n  - {{ name: core, version: \"^2.0.0\", source: "
                                              f"\"{repo.url}@v1.4.0#reg\" }}\n"),
                "fits.bundle.yaml": bundle("fits", "  skills:\n    - deploy\n",
                                           f"requires:\n  - {{ name: core, version: \"~1.4.0\", source: "
                                           f"\"{repo.url}@v1.4.0#reg\" }}\n")}, tag="v1")
    code, _, err = run(capsys, "add", f"{app.url}@v1", "--bundle", "too-new", "--client", "claude")
    assert code == 1 and "AR073" in err and "it is at 1.4.0" in err and files(project) == []
    code, _, err = run(capsys, "add", f"{app.url}@v1", "--bundle", "fits", "--client", "claude")
    assert code == 0, err


def test_install_fetches_a_locked_commit_missing_from_the_cache_by_its_id(env, capsys):
    repo, project, cache = env["repo"], env["project"], env["cache"]
    assert run(capsys, "add", f"{repo.url}@v1#reg", "--bundle", "core", "--client", "claude")[0] == 0
    repo.commit({"reg/rules/style/RULE.md": rule("style").replace("Always", "Never")}, tag="v2")  # main moves on
    shutil.rmtree(cache)
    shutil.rmtree(project / ".claude")
    code, _, err = run(capsys, "install")
    assert code == 0, err
    assert "Always style." in (project / ".claude" / "rules" / "style.md").read_text()
    assert run(capsys, "install", "--frozen")[0] == 0


def test_another_client_set_is_not_taken_silently(env, capsys):
    """`--client` of a project installed for other clients would delete their files: refused
    (issue 31); `--set-clients` or an edit of agentrc.yaml changes the set
    (tests/test_consumer_safety.py)."""
    repo, project = env["repo"], env["project"]
    assert run(capsys, "add", f"{repo.url}@v1#reg", "--item", "rule:other", "--client", "claude")[0] == 0
    code, out, err = run(capsys, "add", f"{repo.url}@v1#reg", "--item", "rule:other", "--client", "copilot", "--json")
    assert code == 1, err
    doc = json.loads(out)
    assert [d["code"] for d in doc["diagnostics"]] == ["AR244"]
    assert "--set-clients" in doc["diagnostics"][0]["hint"]
    assert files(project) == [".claude/rules/other.md", LOCK]


def test_adding_a_moved_branch_again_points_at_update(env, capsys):
    repo = env["repo"]
    assert run(capsys, "add", f"{repo.url}@main#reg", "--item", "rule:style", "--client", "claude")[0] == 0
    repo.commit({"reg/rules/style/RULE.md": rule("style").replace("Always", "Never")})
    code, _, err = run(capsys, "add", f"{repo.url}@main#reg", "--item", "rule:style")
    assert code == 1 and "AR206" in err and "'agentrc update'" in err
    assert run(capsys, "update")[0] == 0


def test_fetched_content_is_shown_the_same_on_every_machine(env, capsys, monkeypatch):
    """Fetched files are shown as SOURCE@REF/PATH, not as the cache's path: diagnostics and
    what adapters embed (Hermes's hook command) are the same wherever the cache is, and so
    are the lock's bytes."""
    repo, tmp = env["repo"], env["tmp"]
    repo.commit({"reg/hooks/lint/HOOK.md": "---\nschema: 1\ndescription: Lint on stop\nevent: Stop\n"
                 "script: ./run.sh\n---\n\nRuns lint.\n", "reg/hooks/lint/run.sh": "#!/bin/sh\necho lint\n"},
                tag="v2")
    seen = []
    for machine in ("one", "two"):
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp / f"cache-{machine}"))
        project = tmp / f"project-{machine}"
        project.mkdir()
        code, _, err = run(capsys, "add", f"{repo.url}@v2#reg", "--item", "hook:lint", "--trust", "--client",
                           "hermes,claude",
                           "--dir", str(project))
        assert code == 0, err
        assert f"cache-{machine}" not in err
        assert f'"command": "{repo.url}@v2/reg/hooks/lint/run.sh"' in err  # Hermes's snippet
        seen.append(((project / LOCK).read_bytes(), files(project), err.replace(str(project), "PROJECT")))
    assert seen[0] == seen[1]


def test_concurrent_adds_both_land_in_the_lock(env, capsys):
    """Real processes: each `add` reads the lock under the project's writer lock, so two
    at once are serialized and neither loses the other's entries."""
    import subprocess
    import sys

    repo, project = env["repo"], env["project"]
    src = str(Path(__file__).resolve().parent.parent / "src")
    cmd = [sys.executable, "-m", "agentrc", "add", f"{repo.url}@v1#reg", "--client", "claude", "--dir", str(project)]
    for attempt in range(3):  # a race: run it a few times
        for p in project.iterdir():
            shutil.rmtree(p) if p.is_dir() else p.unlink()
        procs = [subprocess.Popen(cmd + ["--item", item], env=dict(os.environ, PYTHONPATH=src),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for item in ("rule:other", "skill:summary")]
        results = [p.communicate(timeout=120) for p in procs]
        assert all(p.returncode == 0 for p in procs), results
        lock = json.loads((project / LOCK).read_text())
        assert sorted(i["name"] for i in lock["items"] if i["direct"]) == ["other", "summary"], attempt
        assert sorted(f["path"] for f in lock["files"]) == [".claude/rules/other.md", ".claude/rules/style.md",
                                                              ".claude/skills/summary/SKILL.md",
                                                              ".claude/skills/summary/refs/checklist.md"]
