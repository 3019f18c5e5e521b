"""`read_project`: the files of a project as `agentrc import` reads them, through the same walk
as the sources (`inputs.tree.walk`: inside the project, no link followed out, bounded)."""

from __future__ import annotations

from agentrc.diagnostics import Diagnostics
from agentrc.inputs.tree import Root, walk
from agentrc.model import SourceFile, SourceTree

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import List, Tuple

    from agentrc.diagnostics import Diagnostic

# Directories a project walk for `agentrc import` never enters: version control, dependency
# and tool caches. Hidden directories are entered (the clients' files live in .claude/,
# .github/, .cursor/ ...), and so are agentrc output trees, which are what is imported.
PROJECT_SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache",
                     ".pytest_cache", ".pants.d", ".agentrc"}


def read_project(root: str, wanted, max_size: int = 1 << 20) -> Tuple[SourceTree, Tuple[Diagnostic, ...]]:
    """The files below `root` whose root-relative posix path `wanted(rel)` accepts (files over
    `max_size` bytes are left out), with display paths `root/rel`, and the problems with
    what could not be read (AR050 for a symlink out of `root`, AR054)."""
    files: List[SourceFile] = []
    diags = Diagnostics()
    walk(Root(root, bare_dot=True), files, diags, lambda entry: entry.name not in PROJECT_SKIP_DIRS,
         lambda rel, name: bool(wanted(rel)), max_size, skip_large=True)
    return SourceTree(tuple(sorted(files, key=lambda f: f.path))), diags.sorted()
