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

from agentrc import classcode, pycache
from helpers import ROOT, saved_then_counted


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """The file of this module's classes, in a directory of the test's own; nothing read or
    compiled yet."""
    monkeypatch.setattr(classcode, "_DIRECTORY", str(tmp_path / "pycache"))
    monkeypatch.setattr(classcode, "_known", {})
    monkeypatch.setattr(classcode, "_used", {})
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


def test_a_save_keeps_only_the_texts_its_classes_used(cache):
    """A class changed since leaves no stale text in its module's file."""
    stale = compile("x = 1", "<string>", "exec")
    assert pycache.write_kept(str(cache), {"x = 1": stale})
    _point_classes()
    added = classcode.save(always=True)
    kept = classcode._load(__name__)
    assert "x = 1" not in kept and len(kept) == added > 0


def _flipped(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-10] ^= 1
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", ["bytes", "no-magic", "flipped", "list", "values", "keys"])
def test_a_damaged_file_is_compiled_around(cache, monkeypatch, damage):
    code = compile("", "<string>", "exec")
    cache.parent.mkdir()
    if damage == "bytes":
        cache.write_bytes(b"not ours at all")
    elif damage == "no-magic":  # another interpreter's, or none's: a marshalled mapping, headless
        cache.write_bytes(marshal.dumps({"def f(): pass": code}))
    elif damage == "flipped":  # a byte inside a kept code object: the checksum says so
        _point_classes()
        classcode.save(always=True)
        _flipped(cache)
        monkeypatch.setattr(classcode, "_known", {})
    else:
        value = {"list": ["a", "list"], "values": {"def f(): pass": "a string"}, "keys": {1: code}}[damage]
        assert pycache.write_kept(str(cache), value)
    seen = _compiles(monkeypatch)
    plain, kept = _point_classes()
    assert len(seen) >= 5 and kept(1) == kept(1, 0)
    assert classcode._known == {__name__: {}}


def test_a_fifo_or_link_in_its_place_is_not_read(cache, monkeypatch, tmp_path, no_hang):
    cache.parent.mkdir()
    os.mkfifo(cache)
    assert classcode._load(__name__) == {}
    os.unlink(cache)
    elsewhere = tmp_path / "elsewhere.bin"
    assert pycache.write_kept(str(elsewhere), {"y = 2": compile("y = 2", "<string>", "exec")})
    os.symlink(elsewhere, cache)
    assert classcode._load(__name__) == {}


_COUNT = """
import json, sys
from agentrc import classcode, pycache
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
    first, second = saved_then_counted(_COUNT, str(tmp_path / "classes"))
    assert first > 150 and second == 0


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


def test_another_threads_dataclass_is_its_own(cache):
    """While one thread makes agentrc's classes, another's plain dataclasses (pantsd runs
    rules on several threads) are compiled as `dataclasses` compiles them: real annotations,
    no error, nothing filed under agentrc's module."""
    import threading

    errors: list = []
    stop = threading.Event()

    def ours():
        try:
            while not stop.is_set():
                _point_classes()
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def plain():
        @dataclasses.dataclass
        class Plain:
            z: int
        return Plain.__init__.__annotations__

    expected = plain()  # (this module's annotations are strings: 'int', not '_type_z')
    worker = threading.Thread(target=ours)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    worker.start()
    try:
        for _ in range(300):
            assert plain() == expected
    finally:
        stop.set()
        worker.join()
        sys.setswitchinterval(interval)
    assert not errors
    assert all("z:" not in text for text in classcode._used.get(__name__, ()))
    assert "exec" not in vars(dataclasses)


_COMPARE = """
import dataclasses, inspect, json, sys
from typing import Optional, Tuple
from agentrc import classcode
classcode._DIRECTORY = sys.argv[1]
made = []
for decorate in (dataclasses.dataclass, classcode.dataclass):
    @decorate(frozen=True, order=True)
    class Point:
        x: int
        y: int = 0
        tags: Tuple[str, ...] = dataclasses.field(default_factory=tuple)
    made.append(Point)
seen = {}
for cls in made:
    p = cls(1, 2, ("a",))
    seen.setdefault("repr", []).append(repr(p).rsplit(".", 1)[-1])
    seen.setdefault("sig", []).append(str(inspect.signature(cls)))
    seen.setdefault("ann", []).append(repr(cls.__init__.__annotations__))
    same = cls(1) < cls(2) and p == cls(1, 2, ("a",)) and hash(p) == hash(cls(1, 2, ("a",)))
    seen.setdefault("order", []).append(same)
compiled = len(classcode._added.get("__main__", {}))
if sys.argv[2] == "save":
    classcode.save(always=True)
print(json.dumps({"same": all(a == b for a, b in seen.values()), "compiled": compiled}))
"""


def test_a_class_from_kept_code_behaves_as_a_compiled_one(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))

    def run(mode: str) -> dict:
        out = subprocess.run([sys.executable, "-c", _COMPARE, str(tmp_path), mode], env=env, capture_output=True,
                             text=True, check=True)
        return json.loads(out.stdout)

    first = run("save")
    assert first["same"] and first["compiled"] >= 5
    second = run("count")
    assert second == {"same": True, "compiled": 0}  # every method from the kept code


def test_the_files_are_written_when_the_process_ends(tmp_path):
    """Where bytecode is written, a process that compiled a text saves it as it exits."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT / "src")
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "bytecode")  # the checkout's own __pycache__ left alone
    script = f"from agentrc import classcode; classcode._DIRECTORY = {str(tmp_path)!r}; import agentrc.model"
    subprocess.run([sys.executable, "-c", script], env=env, check=True)
    assert f"agentrc.model.classes.{sys.implementation.cache_tag}.bin" in os.listdir(tmp_path)
    subprocess.run([sys.executable, "-B", "-c", script.replace("model", "diagnostics")], env=env, check=True)
    assert not any("diagnostics" in name for name in os.listdir(tmp_path))  # -B: no bytecode, no file


def test_a_pycache_prefix_is_followed(monkeypatch, tmp_path):
    tag = sys.implementation.cache_tag
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"), raising=False)
    where = pycache.cache_path("/some/where/mod.py", "mod.classes")
    assert where == str(tmp_path / "prefix" / "some" / "where" / f"mod.classes.{tag}.bin")
    monkeypatch.setattr(sys, "pycache_prefix", None, raising=False)
    assert pycache.cache_path("/some/where/mod.py", "x") == f"/some/where/__pycache__/x.{tag}.bin"


def test_threads_making_classes_at_once_share_the_kept_code(cache):
    """Each text is compiled once however many threads make classes at once: `exec` stays
    ours until the last of them is done (a count, not one thread's stack)."""
    import threading

    made: list = []

    def work():
        for _ in range(300):
            made.extend(_point_classes()[1:])

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        workers = [threading.Thread(target=work) for _ in range(3)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    finally:
        sys.setswitchinterval(interval)
    for method in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__"):
        # Identity, not equality: code objects compare equal by value.
        assert len({id(getattr(c, method).__code__) for c in made}) == 1, method
    assert "exec" not in vars(dataclasses) and classcode._making == {} and classcode._users == [0]


def test_a_class_that_fails_leaves_nothing_installed(cache):
    with pytest.raises(TypeError):
        @classcode.dataclass
        class Wrong:
            x: int = 0
            y: int  # a field without a default after one with

    assert "exec" not in vars(dataclasses) and classcode._making == {} and classcode._users == [0]


def test_another_interpreters_file_is_refused(cache):
    """The magic number is checked on its own: a file whose checksum holds but whose
    bytecode is another interpreter's is compiled around."""
    import hashlib

    code = compile("", "<string>", "exec")
    blob = marshal.dumps({"def f(): pass": code})
    cache.parent.mkdir()
    cache.write_bytes(b"\x00\x00\r\n" + hashlib.sha256(blob).digest() + blob)
    assert pycache.read_kept(str(cache)) is None


def test_a_temporary_file_left_by_a_killed_run_is_replaced(tmp_path):
    import _thread

    path = tmp_path / "x.bin"
    (tmp_path / f"x.bin.{os.getpid()}.{_thread.get_ident()}.tmp").write_bytes(b"left over")
    assert pycache.write_kept(str(path), {"a": 1})
    assert pycache.read_kept(str(path)) == {"a": 1} and os.listdir(tmp_path) == ["x.bin"]


_PREFIXED = """
import importlib.util, json, os, sys
from agentrc import classcode, fingerprint, schemas
import agentrc.model
def where(module):
    return os.path.dirname(importlib.util.cache_from_source(module.__file__))
print(json.dumps([classcode._path("agentrc.model"), where(agentrc.model), fingerprint._KEPT, where(fingerprint),
                  schemas._PACKAGE_CACHE, where(schemas)]))
"""


def test_every_kept_file_goes_where_the_bytecode_goes(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), PYTHONPYCACHEPREFIX=str(tmp_path / "prefix"))
    out = subprocess.run([sys.executable, "-c", _PREFIXED], env=env, capture_output=True, text=True, check=True)
    model, model_dir, kept, kept_dir, schemas_dir, schemas_bytecode = json.loads(out.stdout)
    assert os.path.dirname(model) == model_dir and model_dir.startswith(str(tmp_path / "prefix"))
    assert os.path.dirname(kept) == kept_dir and schemas_dir == schemas_bytecode


def test_every_dataclass_of_agentrc_has_a_docstring():
    """`dataclasses` asks `inspect` only for a class without a docstring (its signature becomes
    one); agentrc imports `dataclasses` without `inspect` (agentrc.deferred), so a class of
    its own without one would import `inspect` again in every process."""
    missing = []
    for path in sorted((ROOT / "src" / "agentrc").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.ClassDef) and ast.get_docstring(node) is None
                    and any("dataclass" in ast.dump(d) for d in node.decorator_list)):
                missing.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert missing == []


_BUILDS = """
import builtins, json, sys
compiled = []
real = builtins.compile
builtins.compile = lambda source, *args, **kwargs: compiled.append(str(source)[:80]) or real(source, *args, **kwargs)
from agentrc.cli.main import main
code = main(["build", sys.argv[1], "--client", "claude,copilot,opencode", "--out", sys.argv[2]])
print(json.dumps([code, [m for m in ("inspect", "ast", "dis", "pickle", "_pickle") if m in sys.modules], compiled]))
"""


@pytest.mark.parametrize("kind", ["cold", "no change", "edit"])
def test_a_build_imports_no_inspect_and_compiles_nothing(tmp_path, kind):
    """A build (cold, with nothing to do, after an edit) never imports `inspect` and what it
    alone brings (`ast`, `dis`): 8 ms of every start (agentrc.deferred); one with nothing to
    do not pickle's C module either (the memo's: 2 ms; agentrc.memo.stamp), and none imports
    `pickle` itself (agentrc.pickling takes `_pickle`'s functions); and, once a first
    process has kept its classes' code, compiles nothing as it imports (a `typing.NamedTuple`
    compiles its annotations: `incremental.Replayed` is a dataclass)."""
    import shutil

    reg = tmp_path / "registry"
    shutil.copytree(ROOT / "examples" / "registry", reg)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), AGENTRC_CACHE_DIR=str(tmp_path / "cache"), NO_COLOR="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)

    def run() -> list:
        out = subprocess.run([sys.executable, "-c", _BUILDS, str(reg), str(tmp_path / "out")],
                             env=env, capture_output=True, text=True, check=True, cwd=tmp_path)
        return json.loads(out.stdout.splitlines()[-1])

    # From Python 3.12 `dataclasses` asks `inspect` for every class's annotations (agentrc.deferred).
    expected = [] if sys.version_info < (3, 12) else ["inspect", "ast", "dis"]
    if kind == "cold":
        code, imported, _ = run()
        assert code == 0 and imported == expected + ["_pickle"]
        return
    run()
    if kind == "edit":
        rule = next(reg.glob("rules/*/RULE.md"))
        rule.write_text(rule.read_text(encoding="utf-8") + "One more line.\n", encoding="utf-8")
    code, imported, compiled = run()
    # With nothing to do, no pickler either (agentrc.memo.stamp: the stamp is marshalled).
    assert code == 0 and imported == expected + (["_pickle"] if kind == "edit" else []) and compiled == []


def test_a_class_without_a_docstring_gets_the_standard_librarys_from_the_real_inspect():
    """Someone else's dataclass made after agentrc is imported: `inspect` imported then, and
    the docstring `dataclasses` always gave it."""
    script = """
import sys
import agentrc.model
from dataclasses import dataclass
before = "inspect" in sys.modules
@dataclass(frozen=True)
class Plain:
    a: int = 1
    b: str = "x"
import inspect
print(before, Plain.__doc__, type(sys.modules["inspect"]).__name__,
      inspect.signature is sys.modules["dataclasses"].inspect.signature)
"""
    out = subprocess.run([sys.executable, "-c", script], env=dict(os.environ, PYTHONPATH=str(ROOT / "src")),
                         capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(sys.version_info >= (3, 12)), "Plain(a:", "int", "=", "1,", "b:", "str", "=",
                                  "'x')", "module", "True"]
