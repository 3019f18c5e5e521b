"""`cap migrate`'s apply as a plan of the steps executor (`output.steps`): its steps, each
with how it is undone and the record a later run rebuilds it from, and the recovery of a
killed migration (`recover`, run under the scope's lock before anything reads the scope)."""

from __future__ import annotations

import base64
import contextlib
import json
import os

from agentrc.capabilities.model import LOCK_FILE
from agentrc.capops import acquire as capacquire
from agentrc.capops import safe as capsafe
from agentrc.capops import scope as capscope
from agentrc.capops import txn as captxn
from agentrc.capops.failure import Outcome, fail
from agentrc.output import steps as executor
from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence

EMPTY_V2 = (json.dumps({"lockfileVersion": 2, "packages": {}, "capabilities": {}}, indent=2) + "\n").encode()


def _provided(lock_path: str, spec: str, steps: List[Dict[str, Any]], outcome: Outcome) -> List[Dict[str, Any]]:
    """The migrated rows of `steps` from the install of `spec` (AR178 for a capability it
    did not export)."""
    out = []
    for s in steps:
        provider = next((i for i in outcome.result["installed"] if s["capabilityId"] in i["capabilities"]), None)
        if provider is None:
            raise fail(lock_path, "AR178", f"the migrated source {spec} does not export capability "
                       f"{s['capabilityId']!r}", "capability-list-mismatch")
        out.append({"capability": s["capabilityId"], "package": provider["package"], "version": provider["version"]})
    return out


# --- the migration as a plan of steps ------------------------------------------------------
#
# A migration is several transactions (the ignore file, the v1 artifacts set aside, the empty
# version 2 lock, one install per package), so it runs as one plan of the steps executor
# (`output.steps`), journaled in `installed/.migrate-*/journal.json` before its first change:
# each step's record says what undoes it (the original lock's bytes, the ignore file's previous
# bytes, the capabilities set aside and the store's entries before). Its last step is the commit
# point. A failure before it undoes the steps begun in reverse; a run killed before it is rolled
# back the same way by the next run under the scope's lock (`recover`, `executor.recover`).

MIGRATE_PREFIX = ".migrate-"
JOURNAL = "journal.json"
_PLAIN = pattern(r"[^./][^/]*")


def _plan(scope: str, lock_path: str, aside: str, original: bytes, plan_steps: List[Dict[str, Any]], notify,
          migrated: List[Dict[str, Any]], trust: List[Dict[str, Any]]) -> List[executor.Step]:
    """The migration's steps; `migrated` and `trust` receive the rows of the installs."""
    store = capscope.store_dir(scope)
    ignore = capscope.Ignore(scope)
    wanted = ignore.wanted()
    previous = capsafe.read_bounded(ignore.file, scope) if wanted is not None and os.path.isfile(ignore.file) \
        else None
    groups: Dict[str, List[Dict[str, Any]]] = {}
    for st in plan_steps:
        groups.setdefault(st["package"]["spec"], []).append(st)
    installs: List[executor.Step] = [_Install(scope, lock_path, spec, group, notify, migrated, trust)
                                  for spec, group in groups.items()]
    return [_IgnoreFile(scope, wanted is not None, previous, wanted),
            _SetAside(scope, aside, sorted({st["capabilityId"] for st in plan_steps}),
                      sorted(n for n in os.listdir(store) if not n.startswith("."))),
            _EmptyLock(scope, lock_path, original)] + installs + [_Done()]


def _b64(value: Any) -> bytes:
    if not isinstance(value, str):
        raise executor.JournalError("not the journal of a migration: bytes that are not base64")
    try:
        return base64.b64decode(value, validate=True)
    except ValueError:
        raise executor.JournalError("not the journal of a migration: bytes that are not base64") from None


def _names(value: Any) -> List[str]:
    if not (isinstance(value, list) and all(isinstance(n, str) and _PLAIN.fullmatch(n) for n in value)):
        raise executor.JournalError("not the journal of a migration: a name that is not an entry of the store")
    return list(value)


class _IgnoreFile(executor.Step):
    """The capabilities' ignore file ensured (as the kernel does, first); undone: its bytes back."""

    kind = "ignore"

    def __init__(self, scope: str, changed: bool, previous: Optional[bytes], wanted: Optional[bytes] = None):
        self.scope, self.changed, self.previous, self.wanted = scope, changed, previous, wanted

    def record(self) -> Dict[str, Any]:
        return {"changed": self.changed,
                "previous": None if self.previous is None else base64.b64encode(self.previous).decode("ascii")}

    def do(self) -> None:
        if self.wanted is not None:
            capscope.write_in(self.scope, capscope.Ignore(self.scope).file, self.wanted)

    def undo(self) -> None:
        ignore = capscope.Ignore(self.scope).file
        if self.changed and self.previous is None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(ignore)
        elif self.changed:
            capsafe.write(self.scope, ignore, self.previous or b"")


class _SetAside(executor.Step):
    """The version 1 artifacts moved into `aside`; undone: put back, and what the migration
    installed beside them removed (the store's entries before it are `store`)."""

    kind = "aside"

    def __init__(self, scope: str, aside: str, moved: List[str], store: List[str]):
        self.scope, self.aside, self.moved, self.store = scope, aside, moved, store

    def record(self) -> Dict[str, Any]:
        return {"moved": self.moved, "store": self.store}

    def do(self) -> None:
        store = capscope.store_dir(self.scope)
        for cid in self.moved:
            if os.path.lexists(os.path.join(store, cid)):
                os.rename(os.path.join(store, cid), os.path.join(self.aside, cid))

    def undo(self) -> None:
        store = capscope.store_dir(self.scope)
        for cid in self.moved:
            if os.path.lexists(os.path.join(self.aside, cid)):
                capscope.rmtree(os.path.join(store, cid))
                os.rename(os.path.join(self.aside, cid), os.path.join(store, cid))
        for name in os.listdir(store):
            if not name.startswith(".") and name not in self.store:
                capscope.rmtree(os.path.join(store, name))


class _EmptyLock(executor.Step):
    """The empty version 2 lock written; undone: the version 1 lock's bytes back."""

    kind = "lock"

    def __init__(self, scope: str, lock_path: str, original: bytes):
        self.scope, self.lock_path, self.original = scope, lock_path, original

    def record(self) -> Dict[str, Any]:
        return {"lock": base64.b64encode(self.original).decode("ascii")}

    def do(self) -> None:
        capscope.write_in(self.scope, self.lock_path, EMPTY_V2)

    def undo(self) -> None:
        capsafe.write(self.scope, os.path.join(self.scope, LOCK_FILE), self.original)


class _Install(executor.Step):
    """One mapped package installed (its own journaled transaction, `capops/txn`); undone: a
    committed install carried out first, so nothing rolls forward after the steps before it
    are undone (they remove what it installed and put the lock back)."""

    kind = "install"

    def __init__(self, scope: str, lock_path: str = "", spec: str = "", group: Sequence[Dict[str, Any]] = (),
                 notify=None, migrated: Optional[List[Dict[str, Any]]] = None,
                 trust: Optional[List[Dict[str, Any]]] = None):
        self.scope, self.lock_path, self.spec, self.group, self.notify = scope, lock_path, spec, group, notify
        self.migrated = migrated if migrated is not None else []
        self.trust = trust if trust is not None else []

    def do(self) -> None:
        self.notify(f"acquiring {self.spec}")
        outcome = capacquire.install(self.scope, self.spec, self.notify)
        self.migrated += _provided(self.lock_path, self.spec, list(self.group), outcome)
        for c in outcome.result["capabilities"]:
            surface = c["executableSurface"]
            if (surface["commands"] or surface["hooks"]) and not any(t["capability"] == c["capability"]
                                                                    for t in self.trust):
                self.trust.append({"capability": c["capability"], "package": c["package"], "level": self.scope})

    def undo(self) -> None:
        captxn.recover(self.scope)


class _Done(executor.Step):
    """The commit point: once it is recorded done, nothing rolls the migration back."""

    kind = "done"
    point = True

    def do(self) -> None:
        pass


def _kinds(scope: str, aside: str) -> executor.Kinds:
    """How a later run rebuilds each step from its record (checked: JournalError)."""
    def ignore(r: Dict[str, Any]) -> executor.Step:
        if not isinstance(r.get("changed"), bool):
            raise executor.JournalError("not the journal of a migration")
        return _IgnoreFile(scope, r["changed"], None if r.get("previous") is None else _b64(r["previous"]))

    return {"ignore": ignore,
            "aside": lambda r: _SetAside(scope, aside, _names(r.get("moved")), _names(r.get("store"))),
            "lock": lambda r: _EmptyLock(scope, os.path.join(scope, LOCK_FILE), _b64(r.get("lock"))),
            "install": lambda r: _Install(scope),
            "done": lambda r: _Done()}


def recover(scope: str) -> List[str]:
    """Under the scope's lock: every `.migrate-*` a killed `cap migrate` left, rolled back
    by its journal (`executor.recover`) and deleted; the ones that were, for a warning. Raises
    ValueError or OSError for a journal that cannot be trusted (nothing done)."""
    store = capscope.store_dir(scope)
    try:
        names = sorted(n for n in os.listdir(store) if n.startswith(MIGRATE_PREFIX))
    except OSError:
        return []
    undone = []
    for n in names:
        aside = os.path.join(store, n)
        if os.path.islink(aside) or not os.path.isdir(aside):
            os.unlink(aside)
            continue
        try:
            outcome = executor.recover(os.path.join(aside, JOURNAL), scope, _kinds(scope, aside))
        except executor.JournalError as exc:
            raise ValueError(str(exc)) from None
        if outcome == "rolled back":
            undone.append(aside)
        capscope.rmtree(aside)
    return undone
