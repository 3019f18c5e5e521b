"""Reading input paths from disk into a SourceTree: the only disk reads of the core.

Display paths are the paths as the user typed them joined with each file's path below
them, so diagnostics point where the user looks. Hidden directories, node_modules,
agentrc output trees (those holding .agentrc/manifest.json) and BUILD files are not sources.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, List, Tuple

from agentrc.model import SourceFile, SourceTree

SKIP_DIRS = {"node_modules", "__pycache__", "dist"}


def is_build_file(name: str) -> bool:
    """Pants/Bazel BUILD files sit in item directories to declare targets; they are not content."""
    return name == "BUILD" or name.startswith("BUILD.")


def read_tree(paths: Iterable[str]) -> Tuple[SourceTree, Tuple[str, ...]]:
    """Returns the tree and the explicit file paths (files named directly by the user)."""
    files: List[SourceFile] = []
    explicit: List[str] = []
    for arg in paths:
        p = Path(arg)
        if p.is_file():
            display = _posix(os.path.normpath(arg))
            files.append(_read(p, display))
            explicit.append(display)
            continue
        for dirpath, dirnames, filenames in os.walk(p):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS
                                 and not os.path.exists(os.path.join(dirpath, d, ".agentrc", "manifest.json")))
            for name in sorted(n for n in filenames if not is_build_file(n)):
                full = os.path.join(dirpath, name)
                files.append(_read(Path(full), _posix(os.path.normpath(full))))
    unique = {f.path: f for f in files}
    return SourceTree(tuple(unique[k] for k in sorted(unique))), tuple(explicit)


def _read(path: Path, display: str) -> SourceFile:
    link = None
    if path.is_symlink():
        # Same form as display paths (relative stays relative), so the core can tell whether
        # the target lies inside the item directory.
        real = os.path.realpath(path)
        link = real if os.path.isabs(display) else _posix(os.path.relpath(real))
    st = path.stat()
    return SourceFile(display, path.read_bytes(), bool(st.st_mode & 0o100), link)


def _posix(p: str) -> str:
    return p.replace(os.sep, "/")
