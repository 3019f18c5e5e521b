"""`agentrc.classcode.dataclass`: the standard library's dataclasses, their generated methods'
code kept beside the modules (as bytecode is) so that a process does not compile them again."""

from __future__ import annotations

import ast
import dataclasses
import json
import marshal
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Optional, Tuple

import pytest

from agentrc import classcode
from helpers import ROOT


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """The file of this module's classes, in a directory of the test's own; nothing read or
    compiled yet."""
    monkeypatch.setattr(classcode, "_DIRECTORY", str(tmp_path / "pycache"))
    monkeypatch.setattr(classcode, "_known", {})
    monkeypatch.setattr(classcode, "_added", {})
    return Path(classcode._path(__name__))


def _compiles(monkeypatch) -> list:
    """The texts `classcode` compiles from now on."""
    seen: list = []

    def counting(source, *args, **kwargs):
        seen.append(source)
        return compile(source, *args, **kwargs)

    monkeypatch.setattr(classcode, "compile", counting, raising=False)
    return seen


def _point_classes():
    """The same class made by both decorators (a fresh class each call)."""
    made = []
    for decorate in (dataclasses.dataclass, classcode.dataclass):
        @decorate(frozen=True)
        class Point:
            x: int
            y: int = 0
            tags: Tuple[str, ...] = dataclasses.field(default_factory=tuple)
            note: Optional[str] = dataclasses.field(default=None, compare=False)
        made.append(Point)
    return made


def test_a_class_behaves_as_the_standard_librarys(cache):
    plain, kept = _point_classes()
    for cls in (plain, kept):
        p = cls(1, 2, ("a",), "n")
        assert [f.name for f in dataclasses.fields(cls)] == ["x", "y", "tags", "note"]
        assert repr(p).endswith("Point(x=1, y=2, tags=('a',), note='n')")
        assert p == cls(1, 2, ("a",), "other") and hash(p) == hash(cls(1, 2, ("a",)))
        assert dataclasses.replace(p, y=5).y == 5 and cls(3).tags == ()
        with pytest.raises(dataclasses.FrozenInstanceError):
            p.x = 9  # type: ignore[misc]
    assert kept.__doc__ == plain.__doc__
    assert "exec" not in vars(dataclasses)  # `dataclasses` looks up the builtin again


def test_instances_pickle_as_before(cache):
    from agentrc.diagnostics import Diagnostic

    d = Diagnostic("a.md", 1, 2, "error", "AR001", "m", "a hint")
    assert pickle.loads(pickle.dumps(d)) == d


def test_a_text_is_compiled_once_and_kept(cache, monkeypatch):
    seen = _compiles(monkeypatch)
    _point_classes()
    first = len(seen)
    assert first >= 5  # __init__, __repr__, __eq__, __hash__, __setattr__, __delattr__
    _point_classes()
    assert len(seen) == first  # the same texts: this process's own copies
    assert classcode.save(always=True) == first and cache.exists()
    monkeypatch.setattr(classcode, "_known", {})
    _point_classes()
    assert len(seen) == first and len(classcode._known[__name__]) == first
    assert not any(classcode._added.values())


def test_nothing_is_written_where_bytecode_is_not(cache, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    _point_classes()
    assert classcode.save() == 0 and not cache.exists()
    assert classcode.save(always=True) > 0 and cache.exists()


def test_a_save_keeps_what_another_process_added(cache, monkeypatch):
    cache.parent.mkdir()
    other = compile("x = 1", "<string>", "exec")
    cache.write_bytes(marshal.dumps({"x = 1": other}))
    _point_classes()
    added = classcode.save(always=True)
    assert "x = 1" in classcode._load(__name__) and len(classcode._load(__name__)) == added + 1


@pytest.mark.parametrize("content", [
    b"not marshal at all",
    marshal.dumps(["a", "list"]),
    marshal.dumps({"def f(): pass": "a string, not code"}),
    marshal.dumps({1: compile("", "<string>", "exec")}),
])
def test_a_damaged_cache_is_compiled_around(cache, monkeypatch, content):
    cache.parent.mkdir()
    cache.write_bytes(content)
    seen = _compiles(monkeypatch)
    plain, kept = _point_classes()
    assert seen and kept(1) == kept(1, 0)
    assert classcode._known == {__name__: {}}


def test_a_fifo_or_link_in_its_place_is_not_read(cache, monkeypatch, tmp_path, no_hang):
    cache.parent.mkdir()
    os.mkfifo(cache)
    assert classcode._load(__name__) == {}
    os.unlink(cache)
    elsewhere = tmp_path / "elsewhere.bin"
    elsewhere.write_bytes(marshal.dumps({"y = 2": compile("y = 2", "<string>", "exec")}))
    os.symlink(elsewhere, cache)
    assert classcode._load(__name__) == {}


_COUNT = """
import json, sys
from agentrc import classcode
classcode._DIRECTORY = sys.argv[1]
seen = []
def counting(source, *args, **kwargs):
    seen.append(source)
    return compile(source, *args, **kwargs)
classcode.compile = counting
import agentrc.cli.main, agentrc.cli.build, agentrc.building.build, agentrc.building.incremental
import agentrc.pipeline.stages, agentrc.output.writer, agentrc.portable.items
from agentrc.clients import registry
if sys.argv[2] == "save":
    classcode.save(always=True)
print(json.dumps(len(seen)))
"""


def test_a_second_process_compiles_none_of_the_builds_classes(tmp_path):
    """The work a build's imports do, counted: the first process compiles every class's
    methods (about 250 texts), the next one none."""
    path = str(tmp_path / "classes")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))

    def run(mode: str) -> int:
        out = subprocess.run([sys.executable, "-c", _COUNT, path, mode], env=env, capture_output=True,
                             text=True, check=True)
        return json.loads(out.stdout)

    assert run("save") > 150
    assert run("count") == 0


def test_every_dataclass_of_agentrc_is_made_here():
    """A module that imported `dataclasses.dataclass` itself would compile its methods on
    every start again."""
    wrong = []
    for path in sorted((ROOT / "src" / "agentrc").rglob("*.py")):
        if path.name == "classcode.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "dataclasses" and \
                    any(a.name == "dataclass" for a in node.names):
                wrong.append(str(path.relative_to(ROOT)))
            elif isinstance(node, ast.Attribute) and node.attr == "dataclass" and \
                    isinstance(node.value, ast.Name) and node.value.id == "dataclasses":
                wrong.append(str(path.relative_to(ROOT)))
    assert not wrong, "use `from agentrc.classcode import dataclass`: " + ", ".join(wrong)


def test_precompile_keeps_every_modules_classes(tmp_path):
    """What the benchmark (and a read-only installation) runs once, as `compileall`: in a
    process of its own, which has imported none of the modules yet."""
    script = f"from agentrc import classcode; classcode._DIRECTORY = {str(tmp_path)!r}; print(classcode.precompile())"
    out = subprocess.run([sys.executable, "-c", script], env=dict(os.environ, PYTHONPATH=str(ROOT / "src")),
                         capture_output=True, text=True, check=True)
    assert int(out.stdout) > 300
    kept = os.listdir(tmp_path)
    tag = sys.implementation.cache_tag
    assert f"agentrc.model.classes.{tag}.bin" in kept and f"agentrc.capabilities.model.classes.{tag}.bin" in kept
