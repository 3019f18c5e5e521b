"""`fdio.write_all`: the one loop that finishes a short write (the writer, the spill, the
memo's spool and the workers' channels all write through it); `fdio.read_regular`: the one
read of a file input may have planted (sources, a project's files and lock, a journal, a
fetched checkout)."""

from __future__ import annotations

import errno
import os

import pytest

from agentrc import fdio


def test_a_short_write_is_finished_piece_by_piece(tmp_path, monkeypatch):
    calls = []
    real = os.write

    def short(fd, data):  # at most 1,000 bytes a call, as a pipe or a signal may give
        calls.append(len(data))
        return real(fd, bytes(data[:1000]))

    monkeypatch.setattr(fdio.os, "write", short)
    data = bytes(range(256)) * 10  # 2,560 bytes
    for buffer in (data, bytearray(data), memoryview(data)):
        path = tmp_path / f"out-{type(buffer).__name__}"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            calls.clear()
            fdio.write_all(fd, buffer)
        finally:
            os.close(fd)
        assert path.read_bytes() == data
        assert calls == [2560, 1560, 560]


def test_one_write_when_it_takes_everything(tmp_path, monkeypatch):
    calls = []
    real = os.write
    monkeypatch.setattr(fdio.os, "write", lambda fd, data: calls.append(len(data)) or real(fd, data))
    fd = os.open(tmp_path / "out", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        fdio.write_all(fd, b"x" * 100)
    finally:
        os.close(fd)
    assert calls == [100] and (tmp_path / "out").read_bytes() == b"x" * 100


def test_a_regular_file_is_read_with_its_status(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    path.chmod(0o755)
    data, st = fdio.read_regular(str(path), 10)
    assert data == b"abc" and st.st_size == 3 and st.st_mode & 0o100


def test_a_file_over_the_limit_is_read_one_byte_past_it(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 1000)
    assert fdio.read_regular(str(path), 10)[0] == b"x" * 11
    assert fdio.read_regular(str(path), 1000)[0] == b"x" * 1000


def test_a_fifo_is_refused_without_blocking(tmp_path, no_hang):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    with pytest.raises(fdio.NotRegular) as info:
        fdio.read_regular(str(path), 10)
    assert info.value.status is not None and not os.path.isfile(path)
    with pytest.raises(fdio.NotRegular):
        fdio.read_regular(str(path), 10, follow=True)


def test_a_directory_is_not_a_regular_file(tmp_path):
    with pytest.raises(OSError):  # NotRegular, or EISDIR where a directory cannot be opened so
        fdio.read_regular(str(tmp_path), 10)


def test_a_link_is_followed_only_when_asked(tmp_path, no_hang):
    target = tmp_path / "target"
    target.write_bytes(b"t")
    link = tmp_path / "link"
    link.symlink_to(target)
    with pytest.raises(OSError) as info:
        fdio.read_regular(str(link), 10)
    assert info.value.errno == errno.ELOOP
    assert fdio.read_regular(str(link), 10, follow=True)[0] == b"t"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link.unlink()
    link.symlink_to(fifo)
    with pytest.raises(fdio.NotRegular):  # a link to a FIFO: refused, not blocked on
        fdio.read_regular(str(link), 10, follow=True)


def test_a_file_that_grew_since_its_status_is_read_on_to_the_bound(tmp_path, monkeypatch):
    path = tmp_path / "f"
    path.write_bytes(b"y" * 100)
    real = os.fstat
    monkeypatch.setattr(fdio.os, "fstat", lambda fd: os.stat_result((*real(fd)[:6], 40, *real(fd)[7:])))
    assert fdio.read_regular(str(path), 60)[0] == b"y" * 61
    assert fdio.read_regular(str(path), 500)[0] == b"y" * 100
