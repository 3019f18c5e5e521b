"""`agentrc.patterns.pattern`: `re.compile` for agentrc's modules' constant patterns, their
compiled programs kept beside the bytecode so that a process does not compile them again."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import types

import pytest

from agentrc import patterns, pycache
from helpers import ROOT, saved_then_counted

SAMPLES = [
    (r"^( *)(?:-( +)(.+)|([A-Za-z_][A-Za-z0-9_-]{0,127}):(?:( +)(.+))?)$", re.MULTILINE),
    (r"(?P<name>[a-z]+)-(?P<num>\d{2,5})(?=\.md$)", 0),
    (r"(?<![\w/])@([\w.-]+)", re.IGNORECASE),
    ("[\x00-\x1f\x7f-\x9f\u200b-\u200f\ud800-\udfff]", 0),  # lone surrogates, as diagnostics' own
    (r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)", re.DOTALL),
    (r"(a|b)*?c{0,}", re.VERBOSE),
]
TEXTS = ["  - item", "key: value", "abc-123.md", "see @Foo.bar", "x\x01y\u200cz", "---\na: 1\n---\n", "ababc"]


@pytest.fixture
def kept(tmp_path):
    """The programs' file in a directory of the test's own; nothing read or made yet."""
    path = str(tmp_path / "patterns.bin")
    patterns.reset(path)
    yield path
    patterns.reset()


def _same(a: re.Pattern, b: re.Pattern) -> bool:
    """Equal (flags, text, program) and alike on every text."""
    def found(p: re.Pattern, t: str):
        m = p.search(t)
        return m and (m.span(), m.groups())
    return a == b and a.groupindex == b.groupindex and a.groups == b.groups and all(
        found(a, t) == found(b, t) and a.findall(t) == b.findall(t) for t in TEXTS)


def _compiled() -> int:
    """The patterns made since the file was read that it does not hold (compiled here)."""
    return patterns._added[0]


def test_a_pattern_is_re_compiles_own(kept):
    for text, flags in SAMPLES:
        assert _same(patterns.pattern(text, flags), re.compile(text, flags))


def test_a_kept_program_makes_the_same_pattern_without_compiling(kept):
    first = [patterns.pattern(t, f) for t, f in SAMPLES]
    assert patterns.save(always=True) == len(SAMPLES)
    patterns.reset(kept)  # as a new process: the file read again
    second = [patterns.pattern(t, f) for t, f in SAMPLES]
    assert _compiled() == 0
    assert all(_same(a, b) for a, b in zip(first, second))
    assert patterns.save(always=True) == 0  # nothing new: not written again


def test_nothing_is_written_where_bytecode_is_not(kept, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    patterns.pattern("abc+")
    assert patterns.save() == 0 and not os.path.exists(kept)


@pytest.mark.parametrize("damage", ["flip", "truncate", "magic", "interpreter", "not-a-mapping", "bad-program"])
def test_a_damaged_file_is_compiled_around(kept, monkeypatch, damage):
    text, flags = SAMPLES[1]
    patterns.pattern(text, flags)
    patterns.save(always=True)
    data = open(kept, "rb").read()
    if damage == "flip":
        data = data[:-5] + bytes([data[-5] ^ 0xFF]) + data[-4:]
    elif damage == "truncate":
        data = data[:len(data) // 2]
    elif damage == "magic":
        data = b"\0\0\0\0" + data[4:]
    if damage in ("flip", "truncate", "magic"):
        with open(kept, "wb") as fh:
            fh.write(data)
    else:
        value = pycache.read_kept(kept)
        if damage == "interpreter":
            value["interpreter"] = ("2.7.18",) + value["interpreter"][1:]
        elif damage == "not-a-mapping":
            value = ["a", "list"]
        else:  # a program _sre refuses: the right shape, nonsense inside
            value["modules"][__name__][(False, text, flags)] = (0, [1, 2, 3], 0, {}, (None,))
        assert pycache.write_kept(kept, value)
    patterns.reset(kept)
    assert _same(patterns.pattern(text, flags), re.compile(text, flags))
    assert _compiled() == 1


def test_a_program_that_does_not_make_the_same_pattern_is_not_kept(kept, monkeypatch):
    """The standard library's compiler is asked how it compiles; what it answers is kept
    only if the pattern made from it is `re.compile`'s equal."""
    real = patterns._sre_compile._code
    monkeypatch.setattr(patterns, "_sre_compile", types.SimpleNamespace(
        _code=lambda p, flags: real(p, flags)[:-1] + [0]))  # (re.compile keeps the real one)
    made = patterns.pattern("(ab)+c")
    assert _same(made, re.compile("(ab)+c"))
    assert patterns.save(always=True) == 0 and not os.path.exists(kept)


def test_a_save_keeps_other_modules_programs(kept):
    """One file for every module: a process saves the modules it imported and keeps what
    the file held for the others."""
    patterns.pattern("only-here")
    patterns.save(always=True)
    held = pycache.read_kept(kept)["modules"]
    held["agentrc.elsewhere"] = dict(held[__name__])
    assert set(held[__name__]) == {(False, "only-here", 0)}
    assert pycache.write_kept(kept, dict(pycache.read_kept(kept), modules=held))
    patterns.reset(kept)
    patterns.pattern("new-here")
    assert patterns.save(always=True) == 1
    after = pycache.read_kept(kept)["modules"]
    assert set(after) == {__name__, "agentrc.elsewhere"}
    assert set(after[__name__]) == {(False, "new-here", 0)}  # this module's, as this process used them


_COUNT = r"""
import json, re, sys
from agentrc import patterns
patterns.reset(sys.argv[1])
from agentrc import classcode
classcode.import_all()
print(json.dumps(patterns._added[0]))
if sys.argv[2] == "save":
    patterns.save(always=True)
"""


def test_a_second_process_compiles_none_of_agentrcs_patterns(tmp_path):
    """The work imports do, counted: the first process compiles every module's patterns
    (about 140), the next one none."""
    first, second = saved_then_counted(_COUNT, str(tmp_path / "patterns.bin"))
    assert first > 120 and second == 0


def test_the_file_is_written_when_the_process_ends(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT / "src")
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "bytecode")  # the checkout's own __pycache__ left alone
    script = "import agentrc.diagnostics"
    subprocess.run([sys.executable, "-B", "-c", script], env=env, check=True)
    package = os.path.join(str(tmp_path / "bytecode"), os.path.abspath(str(ROOT / "src" / "agentrc")).lstrip(os.sep))

    def files() -> list:
        tag = sys.implementation.cache_tag
        return [n for n in os.listdir(package) if n.startswith("patterns-") and n.endswith(f".{tag}.bin")] \
            if os.path.isdir(package) else []

    assert files() == []  # -B: no bytecode, no file
    subprocess.run([sys.executable, "-c", script], env=env, check=True)
    [name] = files()
    assert "agentrc.diagnostics" in pycache.read_kept(os.path.join(package, name))["modules"]


def _module_level_compiles(tree: ast.AST):
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inside.update(id(n) for n in ast.walk(node))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            is_re = isinstance(f, ast.Attribute) and f.attr == "compile" and \
                isinstance(f.value, ast.Name) and f.value.id == "re"
            is_ours = isinstance(f, ast.Name) and f.id == "pattern"
            yield node, is_re, is_ours, id(node) in inside


def test_every_module_level_pattern_is_kept_and_only_those():
    """A module that compiled its constant patterns with `re.compile` would compile them on
    every start again; one that called `pattern` inside a function could keep a pattern made
    from input, without end."""
    wrong = []
    for path in sorted((ROOT / "src" / "agentrc").rglob("*.py")):
        if path.name == "patterns.py":
            continue
        for node, is_re, is_ours, in_function in _module_level_compiles(ast.parse(path.read_text(encoding="utf-8"))):
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            if is_re and not in_function:
                wrong.append(f"{where}: re.compile at module level (use agentrc.patterns.pattern)")
            if is_ours and in_function:
                wrong.append(f"{where}: pattern() inside a function (use re.compile)")
    assert not wrong, "\n".join(wrong)


def test_every_module_pattern_is_kept_by_precompile(tmp_path):
    """Each constant pattern agentrc defines has a program that makes `re.compile`'s equal
    here (none is compiled around on every start)."""
    path = str(tmp_path / "patterns.bin")
    script = (f"from agentrc import patterns; patterns.reset({path!r}); n = patterns.precompile(); "
              "print(n, sum(len(p) for p in patterns._kept.values()))")
    out = subprocess.run([sys.executable, "-c", script], env=dict(os.environ, PYTHONPATH=str(ROOT / "src")),
                         capture_output=True, text=True, check=True)
    added, kept = map(int, out.stdout.split())
    sites = sum(1 for p in (ROOT / "src" / "agentrc").rglob("*.py") if p.name != "patterns.py"
                for _, _, ours, inside in _module_level_compiles(ast.parse(p.read_text(encoding="utf-8")))
                if ours and not inside)
    assert added == kept and sites - 5 <= kept <= sites  # (a pattern defined twice in a module is kept once)


def test_no_program_is_made_where_none_can_be_kept(kept, monkeypatch, tmp_path):
    """Where bytecode is not written, or the file's directory cannot be made, a pattern is
    compiled once, by `re.compile`, and its program never asked for (which would compile it
    a second time for nothing)."""
    def refused(*args):
        raise AssertionError("a program made for nothing")

    monkeypatch.setattr(patterns, "_program", refused)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert _same(patterns.pattern(r"(\w+)@(\w+)"), re.compile(r"(\w+)@(\w+)"))
    assert patterns.save() == 0
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    (tmp_path / "file").write_text("in the way")
    patterns.reset(str(tmp_path / "file" / "__pycache__" / "patterns.bin"))
    patterns.pattern(r"(\w+)@(\w+)")
    assert patterns.save() == 0 and _compiled() == 1


def test_a_str_and_a_bytes_pattern_of_the_same_letters_do_not_meet(tmp_path):
    """They hash alike: keyed as they are, comparing them would warn (an error under -bb)."""
    script = ("import re, sys; from agentrc import patterns; patterns.reset(sys.argv[1]); "
              "a = patterns.pattern('abc'); b = patterns.pattern(b'abc'); patterns.save(always=True); "
              "patterns.reset(sys.argv[1]); c = patterns.pattern(b'abc'); d = patterns.pattern('abc'); "
              "assert (a, b) == (d, c) == (re.compile('abc'), re.compile(b'abc')) and patterns._added[0] == 0")
    subprocess.run([sys.executable, "-bb", "-c", script, str(tmp_path / "patterns.bin")], check=True,
                   env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))


def test_each_interpreter_keeps_a_file_of_its_own(monkeypatch):
    """Two builds of one Python version share a cache tag, not a file: each would otherwise
    throw the other's away on every run."""
    patterns.reset()
    try:
        first = patterns._path()
        monkeypatch.setattr(sys, "version", sys.version + " (another build)")
        assert patterns._path() != first and os.path.dirname(patterns._path()) == os.path.dirname(first)
    finally:
        patterns.reset()
