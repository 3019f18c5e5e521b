"""The consumer commands and the project file's `sources:`: `add`, `remove` and `update`
write it from the lock they wrote (so the two never disagree), and `install` installs what
it declares (adding what the lock lacks) or, with `--frozen` and `--check`, fails when the
lock does not match it. A project without `agentrc.yaml` is left as it is."""

from __future__ import annotations

import os

from agentrc.cli.common import UsageError, say
from agentrc.fdio import read_regular
from agentrc.project import FILE_NAME

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Optional, Tuple


def _path(args, project: str) -> Optional[str]:
    if getattr(args, "user", False):
        return None
    path = os.path.join(project, FILE_NAME)
    return path if os.path.isfile(path) and not os.path.islink(path) else None


MAX_TEXT = 16 << 20  # bytes of a project file (or lock) these commands rewrite or point into


def read_text(path: str) -> Optional[str]:
    """The text of the project file (or lock) at `path` as the commands that rewrite it
    read it: a regular file, not through a link, never blocking on a FIFO swapped in since
    it was looked at, at most MAX_TEXT bytes, UTF-8, line ends as Python's text mode reads
    them; None otherwise: nothing is rewritten (a file read only up to the bound, as before,
    would have been written back cut)."""
    try:
        data = read_regular(path, MAX_TEXT)[0]
        if len(data) > MAX_TEXT:
            return None
        return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except (OSError, UnicodeDecodeError):
        return None


def sync(args, project: str, result) -> None:
    """After a successful `add`, `remove` or `update`: the project file's sources are the
    lock's direct entries'."""
    path = _path(args, project)
    if path is None or result.lock is None or not result.ok or getattr(args, "dry_run", False):
        return
    from agentrc.output import atomic
    from agentrc.project.sources import declared_from, with_sources

    text = read_text(path)
    if text is None:
        return
    new = with_sources(text, declared_from(result.lock.entries))
    if new != text:
        atomic.write_atomic(path, new.encode("utf-8"), project)
        say(f"{os.path.normpath(path)}: sources updated")


def declared(args, project: str) -> Optional[Tuple]:
    """The sources the project file declares (None: no project file here)."""
    path = _path(args, project)
    if path is None:
        return None
    from agentrc.inputs import projectfile

    loaded, problems = projectfile.load(path)
    if loaded is None:
        from agentrc.cli.common import print_diags

        print_diags(problems, "text")
        raise UsageError(f"{path} cannot be used (fix it first)")
    return loaded.sources
