"""One executor for a transaction made of small steps, with one journal and one recovery.

Poetry's installer runs a plan of operations with one executor; agentrc's output writer has
the model for surviving a kill: a journal of intent, a commit point, and a next run that
completes or undoes from the journal alone. This module joins the two for every workflow whose
steps change more than one output tree (a client's CLI registration, a capability's hook, a
worktree, a lock written after the files):

- **A plan** is a sequence of `Step`s. Each does one thing (`do`), knows how to take it back
  (`undo`), and says in a small JSON record (`record`) what a later run needs to undo or redo
  it without the objects of this run.
- **The executor** (`run`) writes the journal before each step starts and after it ends, so a
  kill leaves a journal naming every step that may have begun. A step marked `point` is the
  commit point: before it is done the transaction is undone, after it is done completed.
- **On failure** before the point the steps begun are undone in reverse (the one that failed
  included: an `undo` is written to be harmless when its `do` did nothing); after the point
  the remaining steps are retried once and the failure is reported. An undo that fails leaves
  the journal in place, so the next run tries again; `Failed.incomplete` lists them.
- **Recovery** (`recover`), run by the next run under the same lock before it reads anything,
  rebuilds the steps from their records through the workflow's `kinds` and undoes (before the
  point) or completes (after it) them, then deletes the journal.

The journal is a single file written whole and renamed over (`output.atomic`: never through a
link, fsync'd), bounded in size when read back, and checked: a record of an unknown kind or a
malformed journal is a `JournalError` and nothing is done. Two things keep it small when a plan
carries much data (the output writer's: a put per file and the new manifest, tens of thousands
of entries):

- **Payload chunks.** A record may name (`"payload": "NAME-N.json"`) a chunk written once
  beside the journal before `begin` (`Journal.chunk`, or the workflow's own writer), so a
  state change rewrites only the small list of steps. `load` checks each name (no path, not
  the journal) and bounds each chunk's size; `recover` reads each chunk once and hands the
  kind its record with the parsed chunk in place of the name.
- **Idempotent steps.** A step that can be done again harmlessly (`idempotent`) is not
  journaled after the commit point: the next run does again each one not marked done, so its
  start and end need no write (the writer's roll-forward is five such steps).
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import field

from agentrc.classcode import dataclass
from agentrc.fdio import NotRegular, read_regular
from agentrc.output import atomic
from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

VERSION = 1
MAX_JOURNAL = 1 << 22  # bytes read back: a plan is steps, not content
TODO, DOING, DONE, UNDONE = "todo", "doing", "done", "undone"
_STATES = (TODO, DOING, DONE, UNDONE)
PAYLOAD = "payload"  # a record's key naming a chunk beside the journal
_CHUNK_NAME = pattern(r"[a-z][a-z0-9]{0,30}-[0-9]{1,9}\.json")  # a name in the journal's directory, no path


class Step:
    """One thing a transaction does. `kind` names its class in the journal (the recovery's
    `kinds` maps it back); `record` is JSON; `point` marks the commit point."""

    kind = "step"
    point = False
    # Doing it again is harmless (it checks what is done): after the commit point its start
    # and end are not journaled, and the next run does it again unless it is marked done.
    idempotent = False

    def record(self) -> Dict[str, Any]:
        return {}

    def do(self) -> None:
        raise NotImplementedError

    def undo(self) -> None:
        """Take back what `do` did; harmless when `do` did nothing or only part."""

    def describe(self) -> str:
        return self.kind


class JournalError(Exception):
    """A journal that cannot be trusted (unreadable, malformed, an unknown kind): nothing done."""


class Failed(Exception):
    """A step failed. `cause` is its exception. `undone`: the steps begun were undone (the
    failure came before the commit point); else the plan went on past the failing step and
    the journal is kept for the next run to complete. `incomplete`: the steps whose undo (or,
    after the point, whose do) failed."""

    def __init__(self, step: Step, cause: BaseException, undone: bool, incomplete: Sequence[Step] = ()):
        super().__init__(f"{step.describe()}: {cause}")
        self.step, self.cause, self.undone, self.incomplete = step, cause, undone, tuple(incomplete)


if TYPE_CHECKING:
    Kinds = Mapping[str, Callable[[Dict[str, Any]], Step]]
# A whole plan checked before recovery runs any of it (its entries, its steps); raises JournalError.
if TYPE_CHECKING:
    Check = Callable[[Sequence[Dict[str, Any]], Sequence[Step]], None]
# The parsed JSON of a journal of an earlier shape, as entries (or JournalError).
if TYPE_CHECKING:
    Legacy = Callable[[Any], List[Dict[str, Any]]]


@dataclass
class Journal:
    """The journal file at `path`, inside `root` (written only below it, never through a
    link). `entries` mirrors the file: one {kind, record, state, point} per step of the plan."""

    path: str
    root: str
    label: str = ""
    entries: List[Dict[str, Any]] = field(default_factory=list)

    def save(self) -> None:
        data = {"version": VERSION, "label": self.label, "steps": self.entries}
        atomic.write_atomic(self.path, (json.dumps(data, sort_keys=True) + "\n").encode("utf-8"), self.root)

    def delete(self) -> None:
        """The journal, then the chunks its records name (a kill between the two leaves chunks
        no journal names: the workflow's staging directory, deleted whole)."""
        names = {e["record"].get(PAYLOAD) for e in self.entries
                 if isinstance(e.get("record"), dict) and isinstance(e["record"].get(PAYLOAD), str)}
        for path in [self.path] + [os.path.join(os.path.dirname(self.path), n) for n in sorted(names)
                                   if _CHUNK_NAME.fullmatch(n)]:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    def chunk(self, name: str, data: bytes) -> None:
        """A payload chunk `name` written beside the journal (fsync'd, never through a link),
        before `begin`; a record names it under `PAYLOAD`. Deleted with the journal."""
        if not _CHUNK_NAME.fullmatch(name):
            raise ValueError(f"not a chunk's name: {name!r}")
        atomic.write_atomic(os.path.join(os.path.dirname(self.path), name), data, self.root)

    def begin(self, plan: Sequence[Step]) -> None:
        """The whole plan written before its first step (the journal of intent)."""
        self.entries = [{"kind": s.kind, "record": s.record(), "state": TODO, "point": s.point} for s in plan]
        self.save()

    def mark(self, index: int, state: str) -> None:
        self.entries[index]["state"] = state
        self.save()


def run(plan: Sequence[Step], journal: Optional[Journal] = None,
        progress: Optional[Callable[[Step], None]] = None, undo_failed: bool = True,
        interrupts: bool = True, go_on: bool = True) -> None:
    """Run `plan` in order, journaled. Raises `Failed` (see its fields); the journal is gone
    when the plan ran or was fully undone, and kept when a step is still to be undone or done.
    `undo_failed`: the step that raised is undone too (its `undo` is harmless after a partial
    `do`); False when a step cleans up after itself. `interrupts`: an interrupt (Ctrl-C) is a
    failure like any other; False lets it through with nothing undone (a verb whose steps run
    other people's hooks leaves them as they are and says so in its own record). `go_on`:
    after the point, the steps after a failing one are tried once; False stops there (a later
    step records what the earlier ones did: the writer's manifest), for the next run."""
    if journal is not None:
        journal.begin(plan)
    catch = BaseException if interrupts else Exception
    committed = False
    for index, step in enumerate(plan):
        if progress is not None:
            progress(step)
        quiet = committed and step.idempotent
        if not quiet:
            _mark(journal, index, DOING)
        try:
            step.do()
        except catch as exc:
            if committed:
                left = [step] + (_complete(plan, index + 1, journal) if go_on else list(plan[index + 1:]))
                raise Failed(step, exc, undone=False, incomplete=left) from exc
            incomplete = _undo_all(plan[:index + 1] if undo_failed else plan[:index], journal)
            if not incomplete:
                _finish(journal)
            raise Failed(step, exc, undone=True, incomplete=incomplete) from exc
        if not quiet:
            _mark(journal, index, DONE)
        committed = committed or step.point
    _finish(journal)


def _mark(journal: Optional[Journal], index: int, state: str) -> None:
    if journal is not None:
        journal.mark(index, state)


def _finish(journal: Optional[Journal]) -> None:
    if journal is not None:
        journal.delete()


def _undo_all(begun: Sequence[Step], journal: Optional[Journal]) -> List[Step]:
    """Undo `begun` in reverse; the steps whose undo failed (left as they were in the journal,
    for the next run's recovery to undo again)."""
    failed: List[Step] = []
    for index in range(len(begun) - 1, -1, -1):
        try:
            begun[index].undo()
        except Exception:  # noqa: BLE001 - reported through Failed.incomplete, retried by recover
            failed.append(begun[index])
            continue
        _mark(journal, index, UNDONE)
    return failed


def _complete(plan: Sequence[Step], start: int, journal: Optional[Journal]) -> List[Step]:
    """After the commit point, the steps from `start` each tried once; those that failed (the
    journal is kept: the next run's recovery tries them again)."""
    failed: List[Step] = []
    for index in range(start, len(plan)):
        try:
            plan[index].do()
        except Exception:  # noqa: BLE001 - reported through Failed.incomplete
            failed.append(plan[index])
            continue
        if not plan[index].idempotent:
            _mark(journal, index, DONE)
    return failed


def load(path: str, kinds: Kinds, legacy: Optional[Legacy] = None,
         limit: int = MAX_JOURNAL) -> Optional[List[Dict[str, Any]]]:
    """The checked entries of the journal at `path`, None when there is none. Raises
    JournalError for a journal that is not one this workflow wrote. `legacy` converts the
    parsed JSON of a journal of another shape (one an earlier agentrc wrote) into entries,
    or raises JournalError; the entries are then checked like any. `limit` bounds the
    journal's size and each payload chunk's; a chunk must be named as `Journal.chunk` names
    one and be a regular file there."""
    try:
        raw = _read(path, limit)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise JournalError(f"cannot read the journal: {exc.strerror or exc}") from None
    data = _parse(raw, "the journal")
    if isinstance(data, dict) and data.get("version") == VERSION and isinstance(data.get("steps"), list):
        entries = data["steps"]
    elif legacy is not None:
        entries = legacy(data)
    else:
        raise JournalError("not a journal of agentrc's steps")
    for entry in entries:
        if not (isinstance(entry, dict) and entry.get("kind") in kinds and isinstance(entry.get("record"), dict)
                and entry.get("state") in _STATES and isinstance(entry.get("point"), bool)):
            raise JournalError(f"a step this workflow does not know: {str(entry)[:120]}")
        if PAYLOAD in entry["record"]:
            _check_chunk(path, entry["record"][PAYLOAD], limit)
    return list(entries)


def _parse(raw: bytes, what: str) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise JournalError(f"{what} is not JSON") from None


def _check_chunk(path: str, name: Any, limit: int) -> None:
    """A record's payload chunk: a name `Journal.chunk` would write (no path, not the journal
    itself), a regular file beside the journal (not a link), at most `limit` bytes."""
    if not (isinstance(name, str) and _CHUNK_NAME.fullmatch(name) and name != os.path.basename(path)):
        raise JournalError(f"a payload that is not a chunk's name: {str(name)[:120]}")
    try:
        st = os.lstat(os.path.join(os.path.dirname(path), name))
    except OSError as exc:
        raise JournalError(f"cannot read the payload {name}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
        raise JournalError(f"the payload {name} is not a regular file of at most {limit} bytes")


def _read(path: str, limit: int) -> bytes:
    """The file at `path`, at most `limit` bytes, never through a link (a link or a special
    file there is an OSError: ELOOP, or `fdio.NotRegular`)."""
    try:
        data, _ = read_regular(path, limit)
    except NotRegular:
        raise JournalError("the journal is not a regular file") from None
    if len(data) > limit:
        raise JournalError("the journal is larger than any plan agentrc writes")
    return data


def _built(path: str, entries: Sequence[Dict[str, Any]], kinds: Kinds, limit: int) -> List[Step]:
    """Each entry's step, built from its record; a record naming a payload chunk gets the
    chunk's parsed JSON in its place (each chunk read once)."""
    payloads: Dict[str, Any] = {}
    plan = []
    for e in entries:
        record = e["record"]
        name = record.get(PAYLOAD)
        if isinstance(name, str):
            if name not in payloads:
                try:
                    raw = _read(os.path.join(os.path.dirname(path), name), limit)
                except OSError as exc:
                    raise JournalError(f"cannot read the payload {name}: {exc.strerror or exc}") from None
                payloads[name] = _parse(raw, f"the payload {name}")
            record = dict(record, **{PAYLOAD: payloads[name]})
        plan.append(kinds[e["kind"]](record))
    return plan


def recover(path: str, root: str, kinds: Kinds, check: Optional[Check] = None,
            legacy: Optional[Legacy] = None, limit: int = MAX_JOURNAL) -> str:
    """Finish the journal at `path` left by a killed run: "completed" (the commit point was
    done: the steps not done are done), "rolled back" (the steps begun undone in reverse), or
    "" (no journal). Raises JournalError (nothing done) or the exception of a step that still
    fails (the journal kept, for the next run). Every step is built from its record (a kind
    refuses a record it would not write) and `check` sees the whole plan, before any step
    runs; `legacy` and `limit` as for `load`."""
    entries = load(path, kinds, legacy, limit)
    if entries is None:
        return ""
    journal = Journal(path, root, entries=[dict(e) for e in entries])
    steps = _built(path, entries, kinds, limit)
    if check is not None:
        check(entries, steps)
    if any(e["point"] and e["state"] == DONE for e in entries):
        for index, step in enumerate(steps):
            if entries[index]["state"] != DONE:
                step.do()
                if not step.idempotent:
                    journal.mark(index, DONE)
        journal.delete()
        return "completed"
    for index in range(len(steps) - 1, -1, -1):
        if entries[index]["state"] in (DOING, DONE):
            steps[index].undo()
            journal.mark(index, UNDONE)
    journal.delete()
    return "rolled back"
