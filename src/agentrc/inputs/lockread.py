"""A project's `agentrc.lock.json` (or the user's, for a global installation) as read from
the disk: bounded, never through a link (`inputs.tree.read_file`), parsed by
`agentrc.sources.lock`. Read by the consumer workflow and by `agentrc build`, which records a
canonical project's capability references there."""

from __future__ import annotations

import os

from agentrc.clients import names as client_names
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.inputs.tree import Root, read_file
from agentrc.sources import lock as lockfile
from agentrc.sources.lock import Lock

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Optional, Tuple

LOCK = lockfile.LOCK_FILE


def lock_path(project: str, user: bool = False) -> str:
    """The project's `agentrc.lock.json`; for a global installation (`user`), the user's:
    `$XDG_CONFIG_HOME/agentrc/agentrc.lock.json` (default `~/.config/agentrc/`)."""
    if not user:
        return os.path.join(project, LOCK)
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(config, "agentrc", LOCK)


def read_lock(project: str, user: bool = False) -> Tuple[Optional[Lock], Tuple[Diagnostic, ...]]:
    """The project's lock (the user's when `user`); (None, ()) when it has none."""
    path = lock_path(project, user)
    if not os.path.lexists(path):
        return None, ()
    diags = Diagnostics()
    f = read_file(path, path, Root(os.path.dirname(path)), diags)
    if f is None:
        return None, diags.sorted()
    return lockfile.loads(f.content, path, client_names.CLIENTS)
