"""The code fingerprint kept beside the bytecode (`agentrc.fingerprint`): taken again without
reading a file only while every file and directory of the package has the status recorded
with it, none of them recent then; anything else hashes the files again."""

from __future__ import annotations

import marshal
import os
import time

import pytest

from agentrc import fingerprint


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A small package of its own (old files), its kept fingerprint in a directory of its own."""
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "a.py").write_text("A = 1\n")
    (root / "sub" / "b.py").write_text("B = 2\n")
    (root / "sub" / "s.schema.json").write_text("{}\n")
    (root / "notes.txt").write_text("not hashed\n")
    old = time.time_ns() - 10 * 10 ** 9
    for path in (root / "a.py", root / "sub" / "b.py", root / "sub" / "s.schema.json", root / "sub", root):
        os.utime(path, ns=(old, old))
    monkeypatch.setattr(fingerprint, "PACKAGE", root)
    monkeypatch.setattr(fingerprint, "_KEPT", str(tmp_path / "cache" / "fingerprint.bin"))
    monkeypatch.setattr(fingerprint, "RACY_NS", 0)  # the files' change times are now: settled at once
    monkeypatch.setattr(fingerprint, "_CODE", [])
    return root


def _reads(monkeypatch) -> list:
    opened: list = []
    real = open

    def counting(path, *args, **kwargs):
        opened.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(fingerprint, "open", counting, raising=False)
    return opened


def test_a_kept_fingerprint_is_taken_without_reading_a_file(package, monkeypatch):
    first = fingerprint._hashed(always=True)
    assert os.path.exists(fingerprint._KEPT)
    opened = _reads(monkeypatch)
    assert fingerprint.code_fingerprint() == first and opened == []


def test_a_file_rewritten_with_its_size_and_mtime_is_seen(package):
    first = fingerprint._hashed(always=True)
    b = package / "sub" / "b.py"
    before = os.lstat(b)
    b.write_text("B = 3\n")  # the same size
    os.utime(b, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the same modification time
    assert fingerprint._kept() is None
    assert fingerprint._hashed() != first


@pytest.mark.parametrize("change", ["add", "remove", "rename"])
def test_a_file_added_removed_or_renamed_is_seen(package, change):
    fingerprint._hashed(always=True)
    if change == "add":
        (package / "sub" / "c.py").write_text("C = 3\n")
    elif change == "remove":
        (package / "a.py").unlink()
    else:
        (package / "sub" / "b.py").rename(package / "sub" / "d.py")
    assert fingerprint._kept() is None


def test_a_recent_file_keeps_nothing(package, monkeypatch):
    monkeypatch.setattr(fingerprint, "RACY_NS", 3 * 10 ** 9)
    (package / "a.py").write_text("A = 9\n")  # changed just now: the same timestamp could hide a second change
    fingerprint._hashed(always=True)
    assert not os.path.exists(fingerprint._KEPT)


def test_nothing_is_kept_where_bytecode_is_not(package, monkeypatch):
    monkeypatch.setattr(fingerprint.sys, "dont_write_bytecode", True)
    fingerprint._hashed()
    assert not os.path.exists(fingerprint._KEPT)
    fingerprint._hashed(always=True)
    assert fingerprint._kept() is not None


def test_another_version_is_not_taken(package, monkeypatch):
    fingerprint._hashed(always=True)
    monkeypatch.setattr(fingerprint, "__version__", "99.0.0")
    assert fingerprint._kept() is None


@pytest.mark.parametrize("content", [b"garbage", marshal.dumps([1, 2]), marshal.dumps(("0.1.0", "str", {}))])
def test_a_damaged_kept_file_is_ignored(package, content):
    os.makedirs(os.path.dirname(fingerprint._KEPT))
    with open(fingerprint._KEPT, "wb") as fh:
        fh.write(content)
    assert fingerprint._kept() is None
    assert fingerprint.code_fingerprint() == fingerprint._hashed()


def test_a_fifo_or_link_in_its_place_is_not_read(package, tmp_path, no_hang):
    os.makedirs(os.path.dirname(fingerprint._KEPT))
    os.mkfifo(fingerprint._KEPT)
    assert fingerprint._kept() is None
    os.unlink(fingerprint._KEPT)
    elsewhere = tmp_path / "elsewhere.bin"
    statuses: dict = {}
    fingerprint._code_parts(statuses)
    elsewhere.write_bytes(marshal.dumps((fingerprint.__version__, b"planted", statuses)))
    os.symlink(elsewhere, fingerprint._KEPT)
    assert fingerprint._kept() is None


def test_precompile_waits_out_a_recent_change(package, monkeypatch):
    monkeypatch.setattr(fingerprint, "RACY_NS", 300 * 10 ** 6)  # 0.3 s, for the test
    (package / "a.py").write_text("A = 5\n")
    assert fingerprint.precompile() is True
    assert fingerprint._kept() == fingerprint._hashed()
