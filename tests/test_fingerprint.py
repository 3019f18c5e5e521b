"""The code fingerprint kept beside the bytecode (`agentrc.fingerprint`): taken again without
reading a file only while every file and directory of the package has the status recorded
with it, none of them recent then; anything else hashes the files again."""

from __future__ import annotations

import os
import time

import pytest

from agentrc import fingerprint, pycache


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
    _after_ctime(root / "sub" / "b.py")  # what is written next has a later timestamp, on any clock
    monkeypatch.setattr(fingerprint, "_KEPT", str(tmp_path / "cache" / "fingerprint.bin"))
    monkeypatch.setattr(fingerprint, "RACY_NS", 0)  # the files' change times are now: settled at once
    monkeypatch.setattr(fingerprint, "_CODE", [])
    return root


def _after_ctime(path) -> None:
    """Wait until a file written now gets a change time later than `path`'s: file systems
    stamp from a clock that ticks every few milliseconds on older kernels, and a rewrite in
    the same tick keeps every status (the racy case `RACY_NS`, 0 in these tests, guards).
    The probe is written beside the package, never in it (its directory's times would change)."""
    probe = os.path.join(os.path.dirname(fingerprint.PACKAGE), ".probe")
    then = os.lstat(path).st_ctime_ns
    for _ in range(1000):
        with open(probe, "w") as fh:
            fh.write("x")
        if os.lstat(probe).st_ctime_ns > then:
            break
        time.sleep(0.001)
    os.unlink(probe)


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
    _after_ctime(fingerprint._KEPT)
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


def test_a_recent_change_time_alone_keeps_nothing(package, monkeypatch):
    """`cp -p` or `touch -d` give an old modification time; the change time is still now."""
    monkeypatch.setattr(fingerprint, "RACY_NS", 3 * 10 ** 9)
    a = package / "a.py"
    before = os.lstat(a)
    a.write_text("A = 8\n")
    os.utime(a, ns=(before.st_atime_ns, before.st_mtime_ns))
    fingerprint._hashed(always=True)
    assert not os.path.exists(fingerprint._KEPT)


def test_an_edit_through_a_link_is_seen(package, tmp_path):
    """A module that is a link: its status is the file `open` reads, not the link's."""
    store = tmp_path / "store"
    store.mkdir()
    shared = store / "shared.py"
    shared.write_text("S = 1\n")
    old = time.time_ns() - 10 * 10 ** 9
    os.utime(shared, ns=(old, old))
    os.symlink(shared, package / "sub" / "shared.py")
    _after_ctime(package / "sub")
    first = fingerprint._hashed(always=True)
    assert fingerprint._kept() == first
    _after_ctime(fingerprint._KEPT)
    shared.write_text("S = 2\n")
    os.utime(shared, ns=(old, old))
    assert fingerprint._kept() is None and fingerprint._hashed() != first


def test_precompile_does_not_wait_for_a_file_dated_in_the_future(package, monkeypatch):
    future = time.time_ns() + 3600 * 10 ** 9
    os.utime(package / "a.py", ns=(future, future))
    monkeypatch.setattr(fingerprint.time, "sleep", lambda seconds: pytest.fail(f"slept {seconds} s"))
    assert fingerprint.precompile() is False
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


@pytest.mark.parametrize("content", [b"garbage", [1, 2], ("0.1.0", "str", {}), "flipped"])
def test_a_damaged_kept_file_is_ignored(package, content):
    if content == "flipped":  # a byte of a kept file changed: its checksum no longer matches
        fingerprint._hashed(always=True)
        data = bytearray(open(fingerprint._KEPT, "rb").read())
        data[-5] ^= 1
        with open(fingerprint._KEPT, "wb") as fh:
            fh.write(bytes(data))
    elif isinstance(content, bytes):
        os.makedirs(os.path.dirname(fingerprint._KEPT))
        with open(fingerprint._KEPT, "wb") as fh:
            fh.write(content)
    else:
        assert pycache.write_kept(fingerprint._KEPT, content)
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
    assert pycache.write_kept(str(elsewhere), (fingerprint.__version__, b"planted", statuses))
    os.symlink(elsewhere, fingerprint._KEPT)
    assert fingerprint._kept() is None


def test_precompile_waits_out_a_recent_change(package, monkeypatch):
    monkeypatch.setattr(fingerprint, "RACY_NS", 300 * 10 ** 6)  # 0.3 s, for the test
    (package / "a.py").write_text("A = 5\n")
    assert fingerprint.precompile() is True
    assert fingerprint._kept() == fingerprint._hashed()


def test_raciness_is_judged_by_the_file_systems_clock(package, monkeypatch):
    """A machine whose clock runs ahead of the file system's does not make a fresh change
    look settled: the kept file's own time is the reference."""
    monkeypatch.setattr(fingerprint, "RACY_NS", 3 * 10 ** 9)
    (package / "a.py").write_text("A = 7\n")
    ahead = time.time_ns() + 3600 * 10 ** 9
    monkeypatch.setattr(fingerprint.time, "time_ns", lambda: ahead)
    fingerprint._hashed(always=True)
    assert not os.path.exists(fingerprint._KEPT)
