"""A package replayed onto the last package of its shape (agentrc.building.replan, what the
Pants backend does with an edit) gives exactly what a full package gives: the files with
their bytes and modes, the report, the diagnostics and the count. Each edit goes the way
expected (`LastPackages.replayed`), so the test cannot pass by always packaging in full."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Tuple

import pytest

from agentrc.memo.cache import Memo, is_render_key
from agentrc.model import SourceFile, SourceTree
from agentrc.output import plan as planning
from agentrc.building import replan
from agentrc.pipeline import warm
from agentrc.pipeline import stages
from test_edit_cost import _generator
from test_incremental import EDITS, FULL, REPLAY


def _read(reg: Path) -> SourceTree:
    """The registry as the Pants backend's sources hold it: paths from the build root."""
    files = []
    for path in sorted(reg.rglob("*")):
        if path.is_file():
            files.append(SourceFile("reg/" + path.relative_to(reg).as_posix(), path.read_bytes(),
                                    os.access(path, os.X_OK)))
    return SourceTree(tuple(sorted(files, key=lambda f: f.path)))


def _entries(tree: SourceTree, clients: Tuple[str, ...], unpack: bool = False) -> Dict[str, tuple]:
    """Each item directory group's memo entries, made from its own files as the Pants backend's
    nodes make them (`unpack`: its renderings held unpacked, as its nodes in pantsd keep them)."""
    out = {}
    for key, files in sorted(warm.item_dir_groups(tree).items()):
        found = warm.entries(SourceTree(tuple(files)), clients).items()
        out[key] = tuple((k, (planning.unpacked(v) or v) if unpack and is_render_key(k) else v) for k, v in found)
    return out


def _full(tree: SourceTree, entries, clients):
    memo = Memo({k: v for part in entries.values() for k, v in part})
    plan, files = stages.package(tree, clients, memo=memo)
    return files, plan.diagnostics, len(plan.files)


@pytest.mark.parametrize("clients, unpack", [(("claude", "copilot", "opencode"), True),
                                             (("codex", "gemini", "cursor"), False)])
def test_each_edit_packages_alone_or_whole_to_exactly_what_a_full_package_gives(tmp_path, clients, unpack):
    reg = tmp_path / "reg"
    _generator().generate(str(reg), 60, seed=3)
    last = replan.LastPackages()
    tree = _read(reg)
    entries = _entries(tree, clients, unpack)
    assert last.package(tree, entries, clients) == _full(tree, entries, clients)
    ways: Dict[str, str] = {}
    for edit in EDITS:
        expected = edit(reg)
        if edit.__name__ == "remove_item":  # back to the shape of the package before add_item, kept
            expected = REPLAY
        tree = _read(reg)
        entries = _entries(tree, clients, unpack)
        before = last.replayed
        got = last.package(tree, entries, clients)
        assert got == _full(_read(reg), entries, clients), edit.__name__
        ways[edit.__name__] = REPLAY if last.replayed > before else FULL
        if expected:
            assert ways[edit.__name__] == expected, (edit.__name__, ways)
    assert list(ways.values()).count(REPLAY) >= 6, ways


def test_a_replay_keeps_the_report_and_parses_only_the_edited_directory(tmp_path):
    reg = tmp_path / "reg"
    _generator().generate(str(reg), 40, seed=5)
    clients = ("claude", "copilot")
    tree = _read(reg)
    last = replan.LastPackages()
    first = last.package(tree, _entries(tree, clients), clients)
    rule = sorted((reg / "rules").iterdir())[1] / "RULE.md"
    rule.write_text(rule.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    tree = _read(reg)
    entries = _entries(tree, clients)
    shape = next(iter(last.last))
    done = replan.replay(last.last[shape], shape[0], tree, entries)
    assert done is not None and done.dirs == 1
    changed = {p for (p, c, _), (_, was, _) in zip(done.files, first[0]) if c != was}
    assert changed and all(p.endswith(".md") for p in changed)
    assert dict((p, c) for p, c, _ in done.files)[stages.REPORT] == dict((p, c) for p, c, _ in first[0])[stages.REPORT]


def test_other_options_or_other_paths_are_another_shape(tmp_path):
    reg = tmp_path / "reg"
    _generator().generate(str(reg), 20, seed=7)
    tree = _read(reg)
    last = replan.LastPackages(kept=2)
    for clients in (("claude",), ("copilot",), ("claude",), ("opencode",)):
        last.package(tree, _entries(tree, clients), clients)
    assert last.replayed == 1  # the second claude package: no source changed
    assert [shape[0][0] for shape in last.last] == [("claude",), ("opencode",)]  # the oldest let go
    packaged = last.last[next(iter(last.last))]  # claude's
    assert replan.replay(packaged, packaged.options, tree, _entries(tree, ("claude",))) is not None
    assert replan.replay(packaged, ("other",), tree, {}) is None
    assert replan.replay(packaged, packaged.options, SourceTree(tree.files[:-1]), {}) is None  # a file gone
