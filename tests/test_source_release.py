"""A build lets go of each source's bytes once its item directory is parsed (issue 13: the
entrypoints' bytes stayed beside the parsed items, then beside the rendered files, until
the output was written, a tenth of a cold build's memory at 5,000 items). Counted: which
files still hold their bytes, and how many are read a second time (none in a build)."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
from pathlib import Path

import pytest
from helpers import ROOT

from agentrc.cli.main import main
from agentrc.inputs import read as readmod
from agentrc.inputs import tree as treeread
from agentrc.inputs.tree import SourcesChanged
from agentrc.memo import cache
from agentrc.model import ENTRYPOINTS
from agentrc.pipeline import stages


@pytest.fixture
def counted(monkeypatch):
    """The display paths of the source files read from disk."""
    reads = []
    real = treeread.read_file

    def read_file(path, display, *args, **kwargs):
        reads.append(display)
        return real(path, display, *args, **kwargs)

    monkeypatch.setattr(treeread, "read_file", read_file)
    return reads


def _registry(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "examples" / "registry", tmp_path / "reg")
    return tmp_path / "reg"


def _holding(tree) -> set:
    return {f.path for f in tree.files if "_bytes" in f.__dict__}


def test_a_build_releases_every_parsed_source_and_reads_none_again(tmp_path, counted):
    reg = _registry(tmp_path)
    inputs = readmod.read_inputs([str(reg)])
    sources = {f.path for f in inputs.tree.files}
    assert all(isinstance(f, readmod.Releasable) for f in inputs.tree.files)
    assert _holding(inputs.tree) == sources
    del counted[:]
    plan = stages.generate(inputs.tree, ["claude", "copilot", "opencode"], memo=cache.Memo())
    assert plan.ok
    entrypoints = {p for p in sources if p.rsplit("/", 1)[-1] in ENTRYPOINTS}
    assert entrypoints and not (_holding(inputs.tree) & entrypoints)  # every item directory's bytes let go
    assert counted == []  # and nothing asked for them again


def test_lint_keeps_the_bytes_it_checks_the_format_of(tmp_path, counted):
    reg = _registry(tmp_path)
    inputs = readmod.read_inputs([str(reg)])
    del counted[:]
    stages.lint(inputs.tree, inputs.explicit)
    assert counted == []  # no memo, nothing released: the formatting check reads them from memory


def test_a_released_source_is_read_again_and_must_not_have_changed(tmp_path, counted):
    reg = _registry(tmp_path)
    inputs = readmod.read_inputs([str(reg)])
    rule = next(f for f in inputs.tree.files if f.path.endswith("commit-style/RULE.md"))
    before = rule.content
    rule.release()
    del counted[:]
    assert rule.content == before and counted == [rule.path]  # read again, at the path it came from
    assert rule.sha256() == treeread.hashlib.sha256(before).digest()
    Path(rule.path).write_bytes(before + b"\nChanged.\n")
    with pytest.raises(SourcesChanged):
        rule.content


def test_a_source_changed_after_its_release_starts_the_build_over(tmp_path, monkeypatch):
    """Something that reads a released source after a change: the build reads everything
    again and plans again, so its output is the changed source's."""
    reg = _registry(tmp_path)
    rule = reg / "rules" / "commit-style" / "RULE.md"
    real = stages.generate
    calls = []

    def generate(tree, *args, **kwargs):
        calls.append(1)
        plan = real(tree, *args, **kwargs)
        if len(calls) == 1:
            rule.write_text(rule.read_text().replace("Conventional Commits form", "Conventional Commits 1.0 form"))
            next(f for f in tree.files if f.path.endswith("commit-style/RULE.md")).content
        return plan

    monkeypatch.setattr(stages, "generate", generate)
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        assert main(["build", str(reg), "--client", "claude", "--out", str(tmp_path / "out")]) == 0
    assert len(calls) == 2
    assert "Conventional Commits 1.0 form" in (tmp_path / "out" / ".claude" / "rules" / "commit-style.md").read_text()


def test_released_sources_pickle_as_ordinary_files(tmp_path):
    import pickle

    reg = _registry(tmp_path)
    inputs = readmod.read_inputs([str(reg)])
    f = inputs.tree.files[0]
    content = f.content
    f.release()
    back = pickle.loads(pickle.dumps(f))
    assert type(back) is readmod.SourceFile and back.content == content and back.path == f.path


def test_a_file_named_directly_or_below_dot_is_read_again_where_it_was(tmp_path, counted, monkeypatch):
    reg = _registry(tmp_path)
    monkeypatch.chdir(reg)
    for paths in (["rules/commit-style/RULE.md"], ["."]):
        inputs = readmod.read_inputs(paths)
        f = next(f for f in inputs.tree.files if f.path.endswith("commit-style/RULE.md"))
        assert isinstance(f, readmod.Releasable)
        before = f.content
        f.release()
        del counted[:]
        assert f.content == before and counted == [f.path]


def _rss_kb() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads the resident size from /proc")
def test_small_sources_are_held_at_their_size_not_a_page_each(tmp_path):
    """3,000 sources of 100 bytes: read with room for a megabyte each, the C library keeps
    every one in a page of its own (12 MB resident for 0.3 MB of bytes); the tree holds them
    at their size. Measured as the resident size after reading, with a bound far from both."""
    reg = tmp_path / "reg"
    for i in range(3000):
        d = reg / "rules" / f"rule-{i:04d}"
        d.mkdir(parents=True)
        (d / "notes.md").write_bytes(b"x" * 100)
    readmod.read_inputs([str(reg)])  # once: the interpreter's own first-time allocations
    before = _rss_kb()
    inputs = readmod.read_inputs([str(reg)])
    grown = _rss_kb() - before
    assert len(inputs.tree.files) == 3000
    assert grown < 6_000, grown
