"""The one writer of files outside an output tree (`output.atomic`): a planted link at the
destination, at any temporary name or on a directory between the root and the file is
never written through."""

from __future__ import annotations

import os
import stat

import pytest

from agentrc.output import atomic, writer


def _victim(tmp_path):
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious\n")
    return victim


def test_a_link_at_the_destination_is_refused_and_left_alone(tmp_path):
    victim = _victim(tmp_path)
    root = tmp_path / "project"
    root.mkdir()
    (root / "agentrc.lock.json").symlink_to(victim)
    with pytest.raises(atomic.UnsafeWrite) as err:
        atomic.write_atomic(root / "agentrc.lock.json", b"{}", root)
    assert err.value.code == "AR224" and "symbolic link" in str(err.value)
    assert victim.read_bytes() == b"precious\n"
    assert os.path.islink(root / "agentrc.lock.json")
    assert sorted(os.listdir(root)) == ["agentrc.lock.json"]


def test_links_at_every_temporary_name_are_never_followed(tmp_path):
    """The fixed temporary name of earlier versions, and guesses at the random one, planted
    as links: the write goes to the destination, the links stay links, the victim stays."""
    victim = _victim(tmp_path)
    root = tmp_path / "project"
    root.mkdir()
    planted = [".agentrc.lock.json.agentrc-tmp", ".agentrc.lock.json.agentrc-tmp-00000000", ".agentrc-tmp-00000000"]
    for name in planted:
        (root / name).symlink_to(victim)
    for _ in range(20):
        atomic.write_atomic(root / "agentrc.lock.json", b"{}\n", root)
    assert victim.read_bytes() == b"precious\n"
    assert (root / "agentrc.lock.json").read_bytes() == b"{}\n"
    assert not os.path.islink(root / "agentrc.lock.json")
    assert sorted(os.listdir(root)) == sorted(planted + ["agentrc.lock.json"])


def test_a_linked_directory_between_the_root_and_the_file_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "scope"
    root.mkdir()
    (root / ".agents").symlink_to(outside)
    with pytest.raises(atomic.UnsafeWrite) as err:
        atomic.write_atomic(root / ".agents" / "oas-lock.json", b"{}", root)
    assert ".agents is a symbolic link" in str(err.value)
    assert os.listdir(outside) == []
    # Without a root, only the file's own directory is its root: the link above it is the user's.
    atomic.write_atomic(root / ".agents" / "ok.json", b"{}")
    assert os.listdir(outside) == ["ok.json"]


def test_the_root_itself_may_be_a_link_and_missing_directories_are_made(tmp_path):
    real = tmp_path / "real-config"
    real.mkdir()
    (tmp_path / "config").symlink_to(real)
    atomic.write_atomic(tmp_path / "config" / "agentrc" / "agentrc.lock.json", b"x", tmp_path / "config")
    assert (real / "agentrc" / "agentrc.lock.json").read_bytes() == b"x"


def test_a_directory_at_the_destination_or_a_file_on_the_way_is_refused(tmp_path):
    (tmp_path / "report.json").mkdir()
    with pytest.raises(atomic.UnsafeWrite):
        atomic.write_atomic(tmp_path / "report.json", b"{}", tmp_path)
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(atomic.UnsafeWrite):
        atomic.write_atomic(tmp_path / "file" / "x.json", b"{}", tmp_path)


def test_the_mode_is_kept_and_nothing_is_left_behind(tmp_path):
    path = tmp_path / "tool.sh"
    path.write_bytes(b"old")
    os.chmod(path, 0o750)
    atomic.write_atomic(path, b"new", tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o750 and path.read_bytes() == b"new"
    assert os.listdir(tmp_path) == ["tool.sh"]


def test_the_writers_leftover_pattern_knows_every_temporary_name():
    for name in (atomic.temp_name("agentrc.lock.json"), atomic.temp_name("x" * 240), ".agentrc.lock.json.agentrc-tmp",
                 ".agentrc-ab_12cd9"):
        assert writer._LEFTOVER.fullmatch(name), name
    for name in ("agentrc.lock.json", ".agentrc", "notes.agentrc-tmp-1234"):
        assert not writer._LEFTOVER.fullmatch(name), name


def test_a_report_planted_as_a_link_is_ar224_and_nothing_is_written(tmp_path, capsys, monkeypatch):
    from agentrc.cli.main import main

    reg = tmp_path / "reg" / "rules" / "style"
    reg.mkdir(parents=True)
    (reg / "RULE.md").write_text("---\nschema: 1\nname: style\ndescription: The style rule.\n---\n\n## Rule\n\nBe kind.\n")
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (tmp_path / "report.json").symlink_to(victim)
    monkeypatch.chdir(tmp_path)
    code = main(["build", "reg", "--client", "claude", "--out", "out", "--report", "report.json"])
    err = capsys.readouterr().err
    assert code == 1 and "error[AR224]" in err and "report.json is a symbolic link" in err
    assert victim.read_text() == "precious\n" and not (tmp_path / "out" / ".claude").exists()


def test_fmt_never_writes_through_a_link(tmp_path, capsys, monkeypatch):
    """A skill whose SKILL.md is a link to another file of the registry: fmt refuses it
    (AR224) and writes nothing at all, the link and its target as they were."""
    from agentrc.cli.main import main

    reg = tmp_path / "reg"
    (reg / "skills" / "a").mkdir(parents=True)
    (reg / "skills" / "b").mkdir(parents=True)
    messy = "---\ndescription: Use when testing.\nschema: 1\nname: a\n---\n\n## Steps\n\nDo it.\n"
    (reg / "skills" / "a" / "SKILL.md").write_text(messy)
    (reg / "shared.md").write_text(messy.replace("name: a", "name: b"))
    (reg / "skills" / "b" / "SKILL.md").symlink_to("../../shared.md")
    monkeypatch.chdir(tmp_path)
    code = main(["fmt", "reg"])
    err = capsys.readouterr().err
    assert code == 1 and "reg/skills/b/SKILL.md: error[AR224]" in err and "fmt failed: nothing written" in err
    assert (reg / "skills" / "a" / "SKILL.md").read_text() == messy
    assert os.path.islink(reg / "skills" / "b" / "SKILL.md")
    (reg / "skills" / "b" / "SKILL.md").unlink()
    assert main(["fmt", "reg"]) == 0 and (reg / "skills" / "a" / "SKILL.md").read_text() != messy
