"""The shape of the code, enforced (issue 20): no import cycle between modules at run time,
and no module, class or function longer than the limits docs/architecture.md gives.

An import cycle counts every import a module runs, at its top or inside a function, and
leaves out imports under `if TYPE_CHECKING:` (never run). Lengths are counted from the AST
(ruff has no length rule). What is longer today is listed with its length in `KNOWN`: a
ratchet, where an entry may only shrink or go (the test says when one can be dropped), and
nothing new may join it.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

from helpers import ROOT

SRC = ROOT / "src"
PANTS = ROOT / "pants-plugins"
MODULE_LINES, CLASS_LINES, FUNCTION_LINES = 600, 320, 60
# Larger by design (docs/architecture.md): byte-preserving editors and the error-code table.
EXEMPT = {"agentrc/text/jsonedit.py", "agentrc/text/tomledit.py", "agentrc/codes.py"}
# Run-time import cycles still to untangle: none (the capability workflow's last one, install and
# migrate calling each other, went with install's split: migrate imports the modules that do the
# work, and a killed migrate is recovered through a hook). A new cycle fails.
KNOWN_CYCLES: List[Set[str]] = []


def _modules(base: Path) -> Dict[str, Path]:
    found = {}
    for path in sorted(base.rglob("*.py")):
        if path.name.endswith("_test.py") or "testutil" in path.parts:
            continue
        name = ".".join(path.relative_to(base).with_suffix("").parts)
        found[name[:-len(".__init__")] if name.endswith(".__init__") else name] = path
    return found


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _imported(node: ast.AST, module: str, is_package: bool, known: Dict[str, Path]) -> Iterator[str]:
    """The modules of `known` an import node names."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name in known:
                yield alias.name
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            package = module.split(".") if is_package else module.split(".")[:-1]
            package = package[:len(package) - (node.level - 1)]
            base = ".".join(package + ([base] if base else []))
        for alias in node.names:
            name = f"{base}.{alias.name}"
            if name in known:
                yield name
            elif base in known:
                yield base


def _run_time_imports(path: Path, module: str, known: Dict[str, Path]) -> Set[str]:
    found: Set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if _type_checking(child):
                for other in getattr(child, "orelse", []):
                    visit(other)
                continue
            found.update(_imported(child, module, path.name == "__init__.py", known))
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    found.discard(module)
    return found


def _cycles(graph: Dict[str, Set[str]]) -> List[Set[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    out: List[Set[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, edges = work[-1]
            w = next(edges, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    component.add(w)
                    if w == v:
                        break
                if len(component) > 1:
                    out.append(component)
    return out


def test_no_new_import_cycle():
    for base in (SRC, PANTS):
        known = _modules(base)
        graph = {m: _run_time_imports(p, m, known) for m, p in known.items()}
        cycles = _cycles(graph)
        new = [sorted(c) for c in cycles if not any(c <= k for k in KNOWN_CYCLES)]
        assert not new, f"import cycles at run time (break them; TYPE_CHECKING imports do not count): {new}"
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [{"a", "b"}]  # the finder finds one


def _lengths(path: Path, rel: str) -> Iterator[Tuple[str, int, int]]:
    """(what, length, limit) of the module and of each class and function in it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = len(path.read_text(encoding="utf-8").splitlines())
    yield rel, lines, MODULE_LINES
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            limit = CLASS_LINES if isinstance(node, ast.ClassDef) else FUNCTION_LINES
            yield f"{rel}:{node.name}", node.end_lineno - node.lineno + 1, limit


def _too_long() -> Dict[str, int]:
    found = {}
    for base in (SRC, PANTS):
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base).as_posix()
            if rel in EXEMPT or path.name.endswith("_test.py"):
                continue
            for what, length, limit in _lengths(path, rel):
                if length > limit:
                    found[what] = max(found.get(what, 0), length)
    return found


def test_nothing_grows_past_the_length_limits():
    from code_shape_known import KNOWN

    found = _too_long()
    new = {w: n for w, n in found.items() if w not in KNOWN}
    grew = {w: (KNOWN[w], n) for w, n in found.items() if w in KNOWN and n > KNOWN[w]}
    assert not new, (f"over the limits (module {MODULE_LINES}, class {CLASS_LINES}, function {FUNCTION_LINES} "
                     f"lines): split them: {new}")
    assert not grew, f"longer than when they were listed in tests/code_shape_known.py (was, is): {grew}"
    gone = sorted(w for w in KNOWN if w not in found)
    assert not gone, f"within the limits now: drop them from tests/code_shape_known.py: {gone}"
