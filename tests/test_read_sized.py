"""`read_file` sizes its read by the file's status, and still reads what `read(max + 1)`
would: all of a file that grew after the status was taken, and never more than the bound."""

from __future__ import annotations

import os

from agentrc.diagnostics import Diagnostics
from agentrc.inputs import tree


def _stat_saying(size: int):
    real = os.fstat

    def fstat(fd: int) -> os.stat_result:
        st = real(fd)
        fields = list(st)
        fields[6] = size  # st_size
        return os.stat_result(fields)
    return fstat


def _read(path, max_size=tree.MAX_FILE_BYTES):
    diags = Diagnostics()
    root = tree.Root(str(path.parent))
    f = tree.read_file(str(path), path.name, root, diags, max_size)
    return f, [d.format() for d in diags.items]


def test_a_file_larger_than_its_status_said_is_read_whole(tmp_path, monkeypatch):
    p = tmp_path / "RULE.md"
    p.write_bytes(b"x" * 10_000)
    monkeypatch.setattr(tree.os, "fstat", _stat_saying(10))  # as if it grew after the status
    f, diags = _read(p)
    assert diags == [] and f is not None and f.content == b"x" * 10_000


def test_a_file_over_the_bound_is_refused_whatever_its_status_said(tmp_path, monkeypatch):
    p = tmp_path / "RULE.md"
    p.write_bytes(b"x" * 101)
    monkeypatch.setattr(tree.os, "fstat", _stat_saying(3))
    f, diags = _read(p, max_size=100)
    assert f is None and len(diags) == 1 and "is larger than 100 bytes" in diags[0]


def test_files_read_as_they_are(tmp_path):
    for size in (0, 1, 99, 100):
        p = tmp_path / f"f{size}"
        p.write_bytes(b"y" * size)
        f, diags = _read(p, max_size=100)
        assert diags == [] and f is not None and f.content == b"y" * size
    p = tmp_path / "big"
    p.write_bytes(b"y" * 101)
    f, diags = _read(p, max_size=100)
    assert f is None and "is larger than 100 bytes" in diags[0]


def test_a_file_cut_after_its_status_was_taken_is_read_as_it_is(tmp_path, monkeypatch):
    p = tmp_path / "RULE.md"
    p.write_bytes(b"z" * 10)
    monkeypatch.setattr(tree.os, "fstat", _stat_saying(10_000))  # as if it was cut since
    f, diags = _read(p)
    assert diags == [] and f is not None and f.content == b"z" * 10
