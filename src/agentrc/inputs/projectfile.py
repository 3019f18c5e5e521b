"""Finding and reading the project file (`agentrc.yaml`, `agentrc.project.model`).

It is found by walking up from the working directory (as git finds `.git` and npm
`package.json`), stopping at the first directory that holds one, at a git repository's top
(a directory holding `.git`) or at the file system's root. It is read by the bounded reader
(`inputs.tree.read_file`: a regular file, not through a link out of its directory, at most
16 MiB), so a hostile checkout's `agentrc.yaml` is data like any other input.
"""

from __future__ import annotations

import os

from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.project import FILE_NAME

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Optional, Tuple

    from agentrc.project.model import ProjectFile

MAX_DEPTH = 64  # directories walked up at most


def find(start: str = ".") -> Optional[str]:
    """The project file above `start` (itself included), as a path relative to the working
    directory when it is below it; None when there is none."""
    here = os.path.abspath(start)
    for _ in range(MAX_DEPTH):
        candidate = os.path.join(here, FILE_NAME)
        if os.path.lexists(candidate):
            rel = os.path.relpath(candidate)
            return rel if not rel.startswith(os.pardir) else candidate
        if os.path.exists(os.path.join(here, ".git")):
            return None
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
    return None


def load(path: str) -> Tuple[Optional["ProjectFile"], Tuple[Diagnostic, ...]]:
    """The project file at `path`, or None and its problems. (The model, its schema and YAML
    are imported here: a build that finds no project file never loads them.)"""
    from agentrc.clients import names as client_names
    from agentrc.codes import CODES
    from agentrc.inputs.tree import Root, read_file
    from agentrc.project.model import parse_file

    diags = Diagnostics()
    f = read_file(path, path, Root(os.path.dirname(path) or "."), diags)
    if f is None:
        return None, diags.sorted()
    try:
        text = f.content.decode("utf-8")
    except UnicodeDecodeError as exc:
        diags.error(path, (1, 1), "AR243", f"not UTF-8 (byte {exc.start})")
        return None, diags.sorted()
    return parse_file(text, path, client_names.CLIENTS, tuple(CODES))
