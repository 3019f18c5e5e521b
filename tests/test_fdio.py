"""`fdio.write_all`: the one loop that finishes a short write (the writer, the spill, the
memo's spool and the workers' channels all write through it)."""

from __future__ import annotations

import os

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
