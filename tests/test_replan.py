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


def _skill(root: str, name: str, description: str, body: str, extra=None) -> Dict[str, str]:
    files = {f"{root}/skills/{name}/SKILL.md": f"---\nschema: 1\ndescription: {description}\n---\n\n## Steps\n\n{body}"}
    files.update({f"{root}/skills/{name}/{p}": t for p, t in (extra or {}).items()})
    return files


def _tree(files: Dict[str, str]) -> SourceTree:
    return SourceTree(tuple(SourceFile(p, t.encode(), p.endswith(".sh")) for p, t in sorted(files.items())))


@pytest.mark.parametrize("select", [{"bundles": ("core",)}, {"entrypoints": ("reg/skills/foo/SKILL.md",)}])
def test_an_item_not_built_with_the_name_of_one_built_is_not_replayed_into_it(select):
    """A registry nested in another holds a skill of the same name, not selected: its edit
    leaves the selected skill's files as they were (the replay took an item by kind and name
    and swapped the other's bytes into the selected one's path; the Pants backend's nodes
    render every item of a directory, selected or not)."""
    files = {"reg/agentrc-registry.yaml": "schema: 1\n", "reg/vendor/acme/agentrc-registry.yaml": "schema: 1\n",
             "reg/core.bundle.yaml": "schema: 1\nname: core\ndescription: Core.\nitems:\n  skills:\n    - foo\n"}
    files.update(_skill("reg", "foo", "Use when it is ours", "Ours.\n"))
    files.update(_skill("reg/vendor/acme", "foo", "Use when it is theirs", "Theirs.\n"))
    clients = ("claude",)
    last = replan.LastPackages()
    for edit in ("", "Vendor edit.\n"):
        files["reg/vendor/acme/skills/foo/SKILL.md"] += edit
        tree = _tree(files)
        entries = _entries(tree, clients, unpack=True)
        got = last.package(tree, entries, clients, **select)
        memo = Memo({k: v for part in entries.values() for k, v in part})
        plan, full = stages.package(_tree(files), clients, memo=memo, **select)
        assert got == (full, plan.diagnostics, len(plan.files))
        assert b"Ours." in dict((p, c) for p, c, _ in got[0])[".claude/skills/foo/SKILL.md"]
    assert last.replayed == 1


def test_a_file_two_clients_plan_replays_after_other_full_packages_over_the_same_entries():
    """codex and gemini both plan .agents/skills/<name>/: the plan counts its producers
    itself (`Plan.shared`). Counted on the files, which pantsd's nodes keep across plans, each
    full plan counted them again, and a later edit of the skill never replayed."""
    files = {"reg/agentrc-registry.yaml": "schema: 1\n",
             "reg/rules/style/RULE.md": "---\nschema: 1\ndescription: House style\n---\n\n## Style\n\nA style rule.\n"}
    files.update(_skill("reg", "alpha", "Use when alpha", "Use [ref](ref.md).\n", {"ref.md": "Ref text.\n"}))
    clients = ("codex", "gemini")
    kept: Dict[Tuple[str, ...], tuple] = {}

    def entries(tree: SourceTree) -> Dict[str, tuple]:  # each directory's entries kept, as pantsd's nodes are
        out = {}
        for key, group in sorted(warm.item_dir_groups(tree).items()):
            content = tuple(f.content.decode() for f in group)
            out[key] = kept.setdefault(content, _entries(SourceTree(tuple(group)), clients, unpack=True)[key])
        return out

    last = replan.LastPackages()
    steps = [("", "", False), ("reg/rules/style/RULE.md", "description: Changed", False),
             ("reg/skills/alpha/SKILL.md", "More.\n", True)]
    for path, change, replays in steps:
        if path.endswith("RULE.md"):
            files[path] = files[path].replace("description: House style", change)
        elif path:
            files[path] += change
        before = last.replayed
        tree = _tree(files)
        got = last.package(tree, entries(tree), clients)
        assert got == _full(_tree(files), entries(tree), clients)
        assert (last.replayed > before) == replays, path
    plan, _ = stages.package(_tree(files), clients, memo=Memo({k: v for p in entries(tree).values() for k, v in p}))
    assert plan.shared[".agents/skills/alpha/SKILL.md"] == 2
