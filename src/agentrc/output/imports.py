"""What each client's import wrote into a registry: `.agentrc/imports.json` beside the
output manifest, so that an import of other clients adds to a registry (never deleting what
those brought) while a new import of the same clients replaces what they wrote last time
(a rule deleted from `.claude/rules` leaves the registry too).

The record is the output directory's own file, so it may be hostile like the manifest: it is
read bounded and never through a link, and a path it names counts only when the manifest
owns it (`kept` intersects with what the writer owns). A record that cannot be read is none:
the import then adds to everything agentrc wrote there.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from agentrc.diagnostics import Diagnostic
from agentrc.fdio import read_regular
from agentrc.output import atomic, steps

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import AbstractSet, Callable, Dict, Iterable, Optional, Sequence, Set

RECORD = ".agentrc/imports.json"
MAX_RECORD = 8 << 20
# The import's transaction (output.steps): its files (the writer's own all-or-nothing write,
# the commit point), then the record. A run killed between them leaves this journal; the next
# import, under the writer's lock, writes the record it names before reading the record.
JOURNAL = ".agentrc/import-journal.json"


def read(out: Path) -> Dict[str, Set[str]]:
    """{client: paths its last import wrote}, or {} when there is no readable record."""
    path = os.path.join(os.fspath(out), *RECORD.split("/"))
    try:
        raw, _ = read_regular(path, MAX_RECORD)  # no link, no blocking on a FIFO planted there
        if len(raw) > MAX_RECORD:
            return {}
        data = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return _parsed(data)


def kept(record: Dict[str, Set[str]], clients: Sequence[str], owned: AbstractSet[str]) -> Set[str]:
    """The owned paths an import of `clients` leaves as they are: all but those only these
    clients' last import wrote (without a record, all)."""
    others: Set[str] = set()
    mine: Set[str] = set()
    for client, paths in record.items():
        (mine if client in clients else others).update(paths)
    return {p for p in owned if p not in mine or p in others}


def shared_with_others(record: Dict[str, Set[str]], clients: Sequence[str], path: str) -> bool:
    """Whether another client's import wrote `path` too (then its text is joined, not replaced)."""
    return any(path in paths for client, paths in record.items() if client not in clients) or not record


def recorded(record: Dict[str, Set[str]], clients: Sequence[str], paths: Iterable[str]) -> Dict[str, Set[str]]:
    """The record after an import of `clients` wrote `paths`."""
    new = {c: set(p) for c, p in record.items()}
    for client in clients:
        new[client] = set(paths)
    return new


def _parsed(data: object) -> Dict[str, Set[str]]:
    clients = data.get("clients") if isinstance(data, dict) else None
    if not isinstance(clients, dict):
        return {}
    return {c: {p for p in paths if isinstance(p, str)} for c, paths in clients.items()
            if isinstance(c, str) and isinstance(paths, list)}


def write(out: Path, record: Dict[str, Set[str]]) -> None:
    """The record, written whole or not at all, never through a link (a failure is not the
    import's: the files are written; the next import then adds to everything)."""
    data = json.dumps({"version": 1, "clients": {c: sorted(p) for c, p in sorted(record.items())}},
                      indent=1, sort_keys=True) + "\n"
    try:
        atomic.write_atomic(Path(out) / RECORD, data.encode("utf-8"), root=out)
    except OSError:
        pass


class _Files(steps.Step):
    """The import's files, written by the output writer (the commit point). After a kill the
    writer's own journal has already been finished when the session opened: nothing to redo."""

    kind = "files"
    point = True

    def __init__(self, apply: Optional[Callable[[], Sequence[Diagnostic]]] = None):
        self.apply = apply
        self.diagnostics: Sequence[Diagnostic] = ()

    def do(self) -> None:
        if self.apply is None:
            return
        self.diagnostics = tuple(self.apply())
        if any(d.is_error for d in self.diagnostics):
            raise _NotWritten()


class _NotWritten(Exception):
    """The writer reported errors: the files are not (or not all) written."""


class _Record(steps.Step):
    """The record of what each client's import wrote, written after the files."""

    kind = "record"

    def __init__(self, out: Path, record: Dict[str, Set[str]]):
        self.out, self.data = out, record

    def record(self) -> Dict[str, object]:
        return {"clients": {c: sorted(p) for c, p in sorted(self.data.items())}}

    def do(self) -> None:
        write(self.out, self.data)


def _kinds(out: Path) -> steps.Kinds:
    return {"files": lambda _r: _Files(), "record": lambda r: _Record(out, _parsed(r))}


def recover(out: Path) -> None:
    """Under the writer's lock, before the record is read: an import killed after its files
    were written gets its record; a journal that cannot be trusted is deleted (the record then
    stays as it was: the next import adds to everything the manifest owns)."""
    path = os.path.join(os.fspath(out), *JOURNAL.split("/"))
    try:
        steps.recover(path, os.fspath(out), _kinds(Path(out)))
    except (steps.JournalError, OSError):
        with contextlib.suppress(OSError):
            if not os.path.islink(path):
                os.unlink(path)


def commit(out: Path, apply: Callable[[], Sequence[Diagnostic]], record: Dict[str, Set[str]]
           ) -> Sequence[Diagnostic]:
    """The import's files written (`apply`, the writer's transaction) and then its record, as
    one plan of the steps executor; the writer's diagnostics."""
    files = _Files(apply)
    path = os.path.join(os.fspath(out), *JOURNAL.split("/"))
    try:
        steps.run([files, _Record(Path(out), record)], steps.Journal(path, os.fspath(out), "import"))
    except steps.Failed as exc:
        if not isinstance(exc.cause, _NotWritten):
            raise exc.cause from None
    return files.diagnostics
