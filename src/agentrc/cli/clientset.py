"""The project's client set (issue 31, item 7): which clients `add`, `install`, `update` and
`remove` install for, and who may change it.

The set lives in the project file (`agentrc.yaml`'s `clients:`), and the lock records what
was installed for it. Before, `agentrc add SRC --client cursor` in a project installed for
five clients made the set [cursor] and deleted the other four clients' files ("148
deleted"). Now a `--client` that differs from the project's set is refused, with the two
ways to change it named (edit `clients:`, or say so with `--set-clients`), the way `npm`
refuses a lockfile change under `ci` and `cargo` under `--locked`: a flag that narrows
one command never silently rewrites what the whole project holds. Without a project file
and a lock, `--client` chooses the set as it always did.

An edit of `clients:` is the explicit change: the next `add`, `install`, `update` or
`remove` installs for the edited set (`install --frozen` and `--check` report it instead).
"""

from __future__ import annotations

import os
import re

from agentrc.cli.projectsources import read_text
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.patterns import pattern
from agentrc.project import FILE_NAME

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Optional, Sequence, Tuple

FLAG = "--set-clients"
_CLIENTS_LINE = pattern(r"^clients\s*:")
_TOP_KEY = pattern(r"^[A-Za-z_][A-Za-z0-9_-]*\s*:")


def project_file(args, project: str) -> Optional[str]:
    """The project's own `agentrc.yaml` (in `project`, a regular file: what `sources:` is
    kept in too), None for a global installation or a project without one."""
    if getattr(args, "user", False):
        return None
    path = os.path.join(project, FILE_NAME)
    return path if os.path.isfile(path) and not os.path.islink(path) else None


def declared(args, project: str) -> Tuple[str, ...]:
    """The clients the project file declares (empty: no file, or no `clients:`). A broken
    file is left to the command that reads it whole (projectsources, projectargs)."""
    path = project_file(args, project)
    if path is None:
        return ()
    from agentrc.inputs import projectfile

    loaded, _ = projectfile.load(path)
    return loaded.clients if loaded is not None else ()


def choose(args, project: str, requested: Sequence[str], locked: Optional[Sequence[str]]
           ) -> Tuple[Tuple[str, ...], Tuple[Diagnostic, ...]]:
    """The clients `add` installs for: `requested` (`--client`) when there is nothing yet to
    differ from or `--set-clients` says so; else the project file's set, else the lock's
    (`locked`). A `requested` set that differs is refused (AR244 at the `clients:` that
    holds the set, with both fixes in the hint); nothing is chosen then."""
    file_set = declared(args, project)
    current = tuple(file_set) or tuple(locked or ())
    if not requested:
        return current, ()
    if not current or set(requested) == set(current):
        return (current if current and set(requested) == set(current) else tuple(requested)), ()
    if getattr(args, "set_clients", False):
        return tuple(requested), ()
    where, pos = _where(project, bool(file_set), getattr(args, "user", False))
    d = Diagnostics()
    what = "agentrc.yaml's clients:" if file_set else "the clients the lock was installed for"
    d.error(where, pos, "AR244", f"--client {','.join(requested)} differs from the project's client set "
            f"({', '.join(current)}, {what}): installing would delete the other clients' files",
            f"to change the set, edit clients: in {FILE_NAME} (then run 'agentrc install'), or repeat the command "
            f"with {FLAG}; to keep it, drop --client")
    return (), d.sorted()


def _where(project: str, in_file: bool, user: bool) -> Tuple[str, Tuple[int, int]]:
    """The file and position of the `clients` key that holds the set."""
    from agentrc.consumer.consume import lock_path

    path = os.path.join(project, FILE_NAME) if in_file else lock_path(project, user)
    pattern = _CLIENTS_LINE if in_file else re.compile(r'^\s*"clients"\s*:')
    for number, line in enumerate((read_text(path) or "").splitlines(), 1):
        if pattern.match(line):
            return path, (number, len(line) - len(line.lstrip()) + 1)
    return path, (1, 1)


def with_clients(text: str, clients: Sequence[str]) -> str:
    """`text` (the project file) with its top-level `clients:` replaced by `clients` (added
    after a `schema:` line, else first, when it has none); the rest stays as written."""
    line = f"clients: [{', '.join(clients)}]\n"
    lines = text.splitlines(keepends=True)
    start = next((i for i, x in enumerate(lines) if _CLIENTS_LINE.match(x)), None)
    if start is None:
        at = next((i + 1 for i, x in enumerate(lines) if x.startswith("schema:")), 0)
        if at and not lines[at - 1].endswith("\n"):
            lines[at - 1] += "\n"
        return "".join(lines[:at] + [line] + lines[at:])
    end = start + 1
    while end < len(lines) and not _TOP_KEY.match(lines[end]) and lines[end][:1] in (" ", "\t", "-"):
        end += 1
    return "".join(lines[:start]) + line + "".join(lines[end:])


def record(args, project: str, clients: Sequence[str]) -> Optional[str]:
    """After `add --set-clients` worked: the project file's `clients:` made `clients`, so the
    file and the lock agree; the path written (None: no project file, or nothing to change)."""
    path = project_file(args, project)
    if path is None or tuple(declared(args, project)) == tuple(clients):
        return None
    from agentrc.output import atomic

    text = read_text(path)
    if text is None:
        return None
    new = with_clients(text, clients)
    if new == text:
        return None
    atomic.write_atomic(path, new.encode("utf-8"), project)
    return path
