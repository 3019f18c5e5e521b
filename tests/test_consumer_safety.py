"""Consumer safety (issue 31, item 7): `add --client X` in a project whose client set differs
no longer rewrites the set (and deletes the other clients' files) silently; changing the set
is an edit of agentrc.yaml's `clients:` or `--set-clients`. `remove` prunes the directories it
emptied, in a fresh clone too (whose directories git made), and only those. The real CLI,
real git repositories over file://, real files."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess

import pytest

from sourcerepos import Repo, isolated_home, skill
from test_consumer_cli import LOCK, files, run

from agentrc.cli import main as cli_main
from agentrc.cli import projectargs
from agentrc.cli.common import UsageError, say

FIVE = "claude,copilot,opencode,cursor,codex"


@pytest.fixture
def env(tmp_path, monkeypatch):
    isolated_home(monkeypatch, tmp_path)
    repo = Repo(tmp_path, "skills")
    repo.commit({"skills/a/SKILL.md": skill("a"), "skills/b/SKILL.md": skill("b"),
                 "skills/a/scripts/run.sh": "#!/bin/sh\necho a\n"})
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return repo, project


def tree(project):
    """Every file and directory (with the lock's and manifest's bytes): what 'nothing written' keeps."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(project):
        rel = os.path.relpath(dirpath, project)
        out[rel] = None
        for name in filenames:
            out[os.path.join(rel, name)] = (project / rel / name).read_bytes()
    return out


def empty_dirs(project):
    return sorted(os.path.relpath(d, project) for d, ds, fs in os.walk(project) if not ds and not fs)


def set_clients(capsys, *argv):
    return flagged(capsys, "--set-clients", *argv)


def flagged(capsys, flag, *argv):
    """`agentrc ARGV FLAG`, through main when the parser has the flag; else the same parsed
    command line with the flag's value set (cli/main.py registers it)."""
    try:
        return run(capsys, *argv, flag)
    except SystemExit:
        capsys.readouterr()
    args = cli_main._parser(argv[0]).parse_args(list(argv))
    setattr(args, flag[2:].replace("-", "_"), True)
    args.json = args.format == "json"
    try:
        code = importlib.import_module(f"agentrc.cli.{args.command_module}").run(projectargs.fill(args))
    except UsageError as exc:
        say(f"agentrc: error: {exc}")
        code = 2
    out = capsys.readouterr()
    return code, out.out, out.err


def test_add_with_another_client_set_is_refused_and_writes_nothing(env, capsys):
    repo, project = env
    assert run(capsys, "add", repo.url, "--item", "skill:a", "--client", FIVE, "--trust")[0] == 0
    before = tree(project)
    code, _, err = run(capsys, "add", repo.url, "--item", "skill:b", "--client", "cursor", "--trust")
    assert code == 1, err
    lock_text = (project / LOCK).read_text().splitlines()
    line = next(i for i, x in enumerate(lock_text, 1) if x.strip().startswith('"clients"'))
    col = lock_text[line - 1].index('"clients"') + 1
    assert f"./{LOCK}:{line}:{col}: error[AR244] --client cursor differs from the project's client set " \
           "(claude, copilot, opencode, cursor, codex" in err
    assert "edit clients: in agentrc.yaml" in err and "--set-clients" in err
    assert "add failed: nothing written" in err
    assert tree(project) == before


def test_the_same_set_in_another_order_is_not_a_change(env, capsys):
    repo, project = env
    assert run(capsys, "add", repo.url, "--item", "skill:a", "--client", "claude,cursor", "--trust")[0] == 0
    code, _, err = run(capsys, "add", repo.url, "--item", "skill:b", "--client", "cursor,claude", "--trust")
    assert code == 0, err
    assert json.loads((project / LOCK).read_text())["clients"] == ["claude", "cursor"]


def test_add_without_client_keeps_the_locked_set(env, capsys):
    repo, project = env
    assert run(capsys, "add", repo.url, "--item", "skill:a", "--client", "claude,cursor", "--trust")[0] == 0
    assert run(capsys, "add", repo.url, "--item", "skill:b", "--trust")[0] == 0
    assert json.loads((project / LOCK).read_text())["clients"] == ["claude", "cursor"]
    assert (project / ".claude/skills/b/SKILL.md").is_file()


def test_the_project_files_set_is_where_the_refusal_points(env, capsys):
    repo, project = env
    (project / "agentrc.yaml").write_text("schema: 1\n# the clients\nclients: [claude, copilot]\n")
    assert run(capsys, "add", repo.url, "--item", "skill:a", "--trust")[0] == 0
    assert json.loads((project / LOCK).read_text())["clients"] == ["claude", "copilot"]
    before = tree(project)
    code, _, err = run(capsys, "add", repo.url, "--item", "skill:b", "--client", "cursor", "--trust")
    assert code == 1
    assert "agentrc.yaml:3:1: error[AR244] --client cursor differs from the project's client set (claude, " \
           "copilot, agentrc.yaml's clients:)" in err
    assert tree(project) == before


def test_set_clients_changes_the_set_and_the_project_file(env, capsys):
    repo, project = env
    (project / "agentrc.yaml").write_text("schema: 1\nclients:\n  - claude\n  - copilot\nsources: []\n")
    assert run(capsys, "add", repo.url, "--item", "skill:a", "--trust")[0] == 0
    code, _, err = set_clients(capsys, "add", repo.url, "--item", "skill:b", "--client", "cursor", "--trust")
    assert code == 0, err
    assert json.loads((project / LOCK).read_text())["clients"] == ["cursor"]
    text = (project / "agentrc.yaml").read_text()
    assert text.startswith("schema: 1\nclients: [cursor]\nsources:\n"), text
    assert (project / ".cursor/skills/a/SKILL.md").is_file() and (project / ".cursor/skills/b/SKILL.md").is_file()
    assert not (project / ".claude").exists() and not (project / ".github").exists()  # emptied: pruned
    assert run(capsys, "install", "--frozen", "--trust")[0] == 0  # the file and the lock agree


def test_set_clients_needs_client(env, capsys):
    repo, _ = env
    code, _, err = set_clients(capsys, "add", repo.url, "--item", "skill:a")
    assert code == 2 and "--set-clients: name the new set with --client LIST" in err


def test_editing_the_project_files_clients_is_the_explicit_change(env, capsys):
    repo, project = env
    (project / "agentrc.yaml").write_text("schema: 1\nclients: [claude, copilot]\n")
    assert run(capsys, "add", repo.url, "--item", "skill:a", "--trust")[0] == 0
    (project / "agentrc.yaml").write_text("schema: 1\nclients: [claude]\n" + (project / "agentrc.yaml").read_text()
                                          .split("\n", 2)[2])
    before = tree(project)
    code, _, err = run(capsys, "install", "--frozen", "--trust")
    assert code == 1 and "AR204" in err and "clients: claude are declared but the lock was installed for " \
                                            "claude, copilot" in err, err
    assert tree(project) == before
    code, _, err = run(capsys, "install", "--trust")
    assert code == 0, err
    assert json.loads((project / LOCK).read_text())["clients"] == ["claude"]
    assert not (project / ".github").exists()
    assert (project / ".claude/skills/a/SKILL.md").is_file()


def test_without_a_project_file_or_lock_client_chooses(env, capsys):
    repo, project = env
    assert run(capsys, "add", repo.url, "--item", "skill:a", "--client", "opencode", "--trust")[0] == 0
    assert json.loads((project / LOCK).read_text())["clients"] == ["opencode"]


def test_remove_in_a_fresh_clone_prunes_what_it_emptied(env, capsys):
    repo, project = env
    assert run(capsys, "add", repo.url, "--item", "skill:a", "--item", "skill:b", "--client", FIVE,
               "--trust")[0] == 0
    shutil.rmtree(project / ".agentrc")  # a fresh clone: git made the directories
    (project / "notes").mkdir()  # the user's empty directory: agentrc did not empty it
    (project / ".claude/skills/b/mine.md").write_text("the user's\n")
    assert run(capsys, "install", "--frozen", "--trust")[0] == 0
    code, _, err = run(capsys, "remove", "a", "b")
    assert code == 0, err
    assert empty_dirs(project) == [".agentrc", "notes"] or empty_dirs(project) == ["notes"]
    assert sorted(files(project)) == [".claude/skills/b/mine.md", LOCK]
    assert (project / ".claude/skills/b").is_dir()  # holds the user's file: kept, and its parents


def test_remove_never_prunes_through_a_link(env, capsys, tmp_path):
    repo, project = env
    assert run(capsys, "add", repo.url, "--item", "skill:a", "--item", "skill:b", "--client", "claude",
               "--trust")[0] == 0
    outside = tmp_path / "outside"
    (outside / "kept").mkdir(parents=True)
    os.symlink(outside, project / ".claude" / "elsewhere")
    code, _, err = run(capsys, "remove", "a")
    assert code == 0, err
    assert (outside / "kept").is_dir() and (project / ".claude/elsewhere").is_symlink()
    assert not (project / ".claude/skills/a").exists()
    assert (project / ".claude/skills/b/SKILL.md").is_file()


H1 = "---\nname: {0}\ndescription: Use when testing {0}.\n---\n\n# Title\n\n```\nmake\n```\n"


def test_warnings_are_one_line_per_code_unless_verbose(tmp_path, monkeypatch, capsys):
    isolated_home(monkeypatch, tmp_path)
    repo = Repo(tmp_path, "styled")
    repo.commit({f"skills/s{i}/SKILL.md": H1.format(f"s{i}") for i in range(3)})
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    code, _, err = run(capsys, "add", repo.url, "--client", "claude")
    assert code == 0, err
    assert "warning[AR020] 3 warnings in 3 files: A body contains an H1 heading (--verbose lists them)" in err
    assert "warning[AR022] 3 warnings in 3 files: A fenced code block has no language (--verbose lists them)" in err
    assert "SKILL.md:6:1: warning[AR020]" not in err  # not listed one by one
    code, _, err = flagged(capsys, "--verbose", "install", "--dir", str(project))
    assert code == 0, err
    assert err.count("warning[AR020]") == 3 and "--verbose lists them" not in err
    assert "skills/s0/SKILL.md" in err
    code, out, _ = run(capsys, "install", "--json")
    assert [d["code"] for d in json.loads(out)["diagnostics"]].count("AR020") == 3  # JSON: every one


def test_errors_are_always_listed_in_full(env, capsys):
    repo, project = env
    assert run(capsys, "add", repo.url, "--item", "skill:a", "--client", "claude")[0] == 0
    code, _, err = run(capsys, "remove", "x", "y")
    assert code == 1
    assert err.count("error[AR207]") == 2 and "--verbose" not in err


LONG = ("Use when " + "the description goes on about many things a skill could do " * 22).strip()
AGENTSKILLS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".tools", "skills-ref-venv",
                           "bin", "agentskills")


def long_skill(name="long"):
    return f"---\nname: {name}\ndescription: {LONG}\n---\n\n## Steps\n\nGo.\n"


def description_of(path):
    line = next(x for x in path.read_text(encoding="utf-8").splitlines() if x.startswith("description:"))
    return line.split(":", 1)[1].strip().strip("'\"")


def test_a_long_description_does_not_block_consuming(tmp_path, monkeypatch, capsys):
    """AR014 is a warning for consumed content: the skill installs; Codex and opencode, which
    would not load it, get it shortened at a word boundary (what skills-ref accepts); the
    others get it whole. An author's lint of the same source is still an error."""
    assert len(LONG) > 1024
    isolated_home(monkeypatch, tmp_path)
    repo = Repo(tmp_path, "long")
    repo.commit({"skills/long/SKILL.md": long_skill()})
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    code, _, err = run(capsys, "add", repo.url, "--client", "claude,codex,opencode")
    assert code == 0, err
    assert f"warning[AR014] description has {len(LONG)} characters (at most 1024): installed" in err
    assert "error[" not in err
    short = description_of(project / ".claude/skills/long/SKILL.md")  # every copy cut alike (copies are shared)
    assert len(short) <= 1024 and short.endswith("\u2026")
    assert LONG.startswith(short[:-1]) and LONG[len(short) - 1] == " "  # cut at a word boundary
    copies = list(project.rglob("SKILL.md"))
    assert len(copies) >= 2 and all(description_of(p) == short for p in copies)
    if os.path.exists(AGENTSKILLS):  # the reference validator accepts what is installed
        ok = subprocess.run([AGENTSKILLS, "validate", str(project / ".claude/skills/long")],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert ok.returncode == 0, ok.stdout
    assert run(capsys, "install", "--frozen")[0] == 0  # the lock's digests are of the fetched bytes
    code, _, err = run(capsys, "lint", str(repo.work))
    assert code == 1 and "error[AR014]" in err  # for its author, still an error


def test_the_fidelity_report_names_each_client_that_rejects_it(tmp_path):
    from agentrc.model import SourceFile, SourceTree
    from agentrc.pipeline import stages
    from agentrc.portable import checks

    tree = SourceTree((SourceFile("skills/long/SKILL.md", long_skill().encode()),))
    assert not stages.generate(tree, ["claude", "codex"]).ok  # an author's build: AR014 an error
    with checks.consuming():
        plan = stages.generate(tree, ["claude", "codex", "opencode", "copilot"])
    assert plan.ok, plan.diagnostics
    outcome = {r.client: next(f for f in r.fields if f.field == "description") for r in plan.reports}
    assert outcome["codex"].status == "degraded" and "Codex CLI does not load a skill" in outcome["codex"].detail
    # one copy for all (shared, and the Copilot CLI refuses a longer one too): each report says why
    for client in ("claude", "copilot", "opencode"):
        assert outcome[client].status == "degraded" and "shortened from" in outcome[client].detail
    assert "skills-ref and clients that load the copies other clients read reject" in outcome["claude"].detail


def test_the_project_file_is_found_from_dir_not_from_where_the_command_runs(env, capsys, monkeypatch, tmp_path):
    repo, project = env
    (project / "agentrc.yaml").write_text("schema: 1\nclients: [claude, copilot]\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "agentrc.yaml").write_text("schema: 1\nclients: [cursor]\n")
    monkeypatch.chdir(elsewhere)
    assert run(capsys, "add", repo.url, "--item", "skill:a", "--trust", "--dir", str(project))[0] == 0
    assert json.loads((project / LOCK).read_text())["clients"] == ["claude", "copilot"]
    assert not (elsewhere / LOCK).exists()


@pytest.mark.parametrize("name", ["agentrc.yaml", LOCK])
def test_a_fifo_planted_in_an_installed_project_does_not_hang_install(env, capsys, name, no_hang):
    """The no-change check of `install` read the project file and the lock with a blocking
    open: a FIFO named agentrc.yaml (or the lock) hung the command until a writer came.
    Every planted file is read through `fdio.read_regular` now. A FIFO lock is refused as
    the full command refuses it (AR054, nothing written); a FIFO project file is no project
    file, as a directory there is (the consumer reads only a regular one)."""
    repo, project = env
    assert run(capsys, "add", repo.url, "--client", "claude")[0] == 0
    path = project / name
    if path.exists():
        path.unlink()
    os.mkfifo(path)
    code, out, err = run(capsys, "install")
    if name == LOCK:
        assert code == 1 and "error[AR054] is a FIFO, not a file" in err and "nothing written" in err, err
    else:
        assert code == 0, err


def test_the_project_file_is_rewritten_only_from_a_whole_regular_file(tmp_path, no_hang, monkeypatch):
    """`add`/`remove`/`update` and `--set-clients` rewrite agentrc.yaml from what
    `projectsources.read_text` gives: nothing for a FIFO swapped in (no hang), a link, or a
    file past the bound (one read only up to it was written back cut); CRLF read as text
    mode reads it."""
    from agentrc.cli import projectsources

    path = tmp_path / "agentrc.yaml"
    path.write_bytes(b"schema: 1\r\nclients: [claude]\r\n")
    assert projectsources.read_text(str(path)) == "schema: 1\nclients: [claude]\n"
    monkeypatch.setattr(projectsources, "MAX_TEXT", 10)
    assert projectsources.read_text(str(path)) is None
    monkeypatch.undo()
    (tmp_path / "real.yaml").write_text("schema: 1\n")
    path.unlink()
    path.symlink_to(tmp_path / "real.yaml")
    assert projectsources.read_text(str(path)) is None
    path.unlink()
    os.mkfifo(path)
    assert projectsources.read_text(str(path)) is None
