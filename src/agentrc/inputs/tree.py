"""Reading input paths from disk into a SourceTree: the only disk reads of the core.

Display paths are the paths as the user typed them joined with each file's path below
them, so diagnostics point where the user looks. Hidden directories, node_modules,
agentrc output trees (those holding .agentrc/manifest.json) and BUILD files are not sources.
"""

from __future__ import annotations

import os
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
        if os.path.isfile(arg):
            display = _posix(os.path.normpath(arg))
            files.append(_read(arg, display, os.path.islink(arg), os.stat(arg).st_mode))
            explicit.append(display)
            continue
        _walk(os.path.normpath(arg), files)
    unique = {f.path: f for f in files}
    return SourceTree(tuple(unique[k] for k in sorted(unique))), tuple(explicit)


def _walk(directory: str, out: List[SourceFile]) -> None:
    # os.scandir: the entry type and the symlink bit come with the listing, one stat per file.
    with os.scandir(directory) as it:
        entries = sorted(it, key=lambda e: e.name)
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):  # like os.walk: symlinked directories are not entered
            if (entry.name.startswith(".") or entry.name in SKIP_DIRS
                    or os.path.exists(os.path.join(entry.path, ".agentrc", "manifest.json"))):
                continue
            _walk(entry.path, out)
        elif entry.is_file() and not is_build_file(entry.name):
            out.append(_read(entry.path, _posix(entry.path), entry.is_symlink(), entry.stat().st_mode))


def _read(path: str, display: str, is_link: bool, mode: int) -> SourceFile:
    link = None
    if is_link:
        # Same form as display paths (relative stays relative), so the core can tell whether
        # the target lies inside the item directory.
        real = os.path.realpath(path)
        link = real if os.path.isabs(display) else _posix(os.path.relpath(real))
    with open(path, "rb") as fh:
        return SourceFile(display, fh.read(), bool(mode & 0o100), link)


def _posix(p: str) -> str:
    return p.replace(os.sep, "/")


# Directories a project walk for `agentrc import` never enters: version control, dependency
# and tool caches. Hidden directories are entered (the clients' files live in .claude/,
# .github/, .cursor/ ...), and so are agentrc output trees, which are what is imported.
PROJECT_SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache",
                     ".pytest_cache", ".pants.d", ".agentrc"}


def read_project(root: str, wanted, max_size: int = 1 << 20) -> SourceTree:
    """The files below `root` whose root-relative posix path `wanted(rel)` accepts (at most
    `max_size` bytes each), with display paths `root/rel`."""
    files: List[SourceFile] = []
    base = os.path.normpath(root)

    def walk(directory: str, rel: str) -> None:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            sub = f"{rel}/{entry.name}" if rel else entry.name
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in PROJECT_SKIP_DIRS:
                    walk(entry.path, sub)
            elif entry.is_file() and wanted(sub) and entry.stat().st_size <= max_size:
                display = sub if base == "." else _posix(base) + "/" + sub
                files.append(_read(entry.path, display, entry.is_symlink(), entry.stat().st_mode))

    walk(base, "")
    return SourceTree(tuple(sorted(files, key=lambda f: f.path)))
