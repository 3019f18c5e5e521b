"""The output writer's roll-forward as a plan of `output.steps` steps: one executor for every
transaction, the writer's included.

What enters: a staged write, its data (`plan`: the puts, staged trees, deletions, directories
to prune and the new manifest, the shape the writer's journal had before this executor) written
once as the payload chunk `CHUNK` beside the executor's journal in `DIR/.agentrc/txn/`. What
leaves: the plan `out-commit` (the point, which does nothing: staging changed nothing visible),
then `out-trees`, `out-put-range`, `out-delete`, `out-prune` and `out-manifest`, each calling
the writer's own code (`commit._Committing`) and each idempotent (it checks what is done), so
the executor journals only the point and the next run does again every step after it. The
records name the chunk, never a path: the chunk is checked as the writer's journal always was
(`manifest._parse_journal`: every path safe, every digest well formed).

A journal an earlier agentrc wrote (the writer's version 1 or 2, its existence the commit) is
converted by `legacy` into the same plan with the data inline, and completed the same way.
"""

from __future__ import annotations

import contextlib
import os

from agentrc.output import steps
from agentrc.output.manifest import _parse_journal
from agentrc.output.tree import TXN

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

CHUNK = "journal-0.json"  # the plan's data, beside the journal (`steps.PAYLOAD`)
LABEL = "agentrc output"
INLINE = "plan"  # a legacy record's key: the data of a journal of the earlier shape, inline
ORDER = ("out-commit", "out-trees", "out-put-range", "out-delete", "out-prune", "out-manifest")


class NotCommitted(Exception):
    """The write failed before its commit point: nothing visible changed (`cause`)."""

    def __init__(self, cause: BaseException):
        super().__init__(str(cause))
        self.cause = cause


class Context:
    """What the steps of one roll-forward share: the `Output` (`out`), the plan's data, the
    staged names still there (None: all of them, in the run that staged them), the
    directories changed and not yet fsync'd, and the files that appeared meanwhile."""

    def __init__(self, out: Any, plan: Optional[dict] = None, fresh: bool = False):
        self.out, self.plan, self.fresh = out, plan, fresh
        self.started = False
        self.staged: Optional[set] = None
        self.unsynced: set = set()
        self.touched: set = set()
        self.conflicts: List[str] = []

    def adopt(self, data: Any) -> dict:
        """The plan's data from a record (a recovery): checked once, and one for all steps."""
        if self.plan is None:
            try:
                self.plan = _parse_journal(data)
            except ValueError as exc:
                raise steps.JournalError(f"the write's plan: {exc}") from None
        elif data is not self.plan:
            raise steps.JournalError("the steps name different plans")
        return self.plan

    @contextlib.contextmanager
    def changing(self) -> Iterator[int]:
        """The staging directory's descriptor, with the directories a step changes noted for
        their fsync (`_Tree.unsynced`); the staged names listed at the first step of a
        recovery (a kill may have moved some: not a stat per file)."""
        tree = self.out.tree
        txn = tree.dir(TXN)
        assert txn is not None
        if not self.started:
            self.started = True
            tree.absent.clear()
            self.out.where = TXN
            self.staged = None if self.fresh else set(os.listdir(txn))
        tree.unsynced = self.unsynced
        try:
            yield txn
        finally:
            tree.unsynced = None


class _Step(steps.Step):
    idempotent = True

    def __init__(self, ctx: Context, record: Dict[str, Any]):
        self.ctx, self.extra = ctx, {k: v for k, v in record.items() if k not in (steps.PAYLOAD, INLINE)}
        data = record[steps.PAYLOAD] if steps.PAYLOAD in record else record.get(INLINE)
        if ctx.plan is None or data is not ctx.plan:
            ctx.adopt(data)

    def record(self) -> Dict[str, Any]:
        return {steps.PAYLOAD: CHUNK, **self.extra}

    @property
    def plan(self) -> dict:
        assert self.ctx.plan is not None
        return self.ctx.plan


class Commit(_Step):
    """The commit point. Nothing to do: everything before it was staged, nothing visible."""

    kind = "out-commit"
    point = True
    idempotent = False

    def __init__(self, ctx: Context, record: Dict[str, Any]):
        if record:
            raise steps.JournalError("the commit point carries no record")
        self.ctx, self.extra = ctx, {}

    def record(self) -> Dict[str, Any]:
        return {}

    def do(self) -> None:
        pass


class Trees(_Step):
    """The staged trees (new directories, staged whole) moved into place."""

    kind = "out-trees"

    def do(self) -> None:
        ctx, out = self.ctx, self.ctx.out
        with ctx.changing():
            for entry in self.plan.get("trees", ()):
                out.where = entry["path"]
                if ctx.staged is None or entry["tmp"] in ctx.staged:  # else placed before the interruption
                    out._place(f"{TXN}/{entry['tmp']}", entry["path"], ctx.unsynced, ctx.touched, ctx.conflicts)


class PutRange(_Step):
    """The staged files `start` to `end` linked (new) or renamed (updated) into place; in a
    large fresh write a forked child does the second half (`forked.run`)."""

    kind = "out-put-range"

    def __init__(self, ctx: Context, record: Dict[str, Any]):
        super().__init__(ctx, record)
        start, end = record.get("start"), record.get("end")
        if not (type(start) is int and type(end) is int and 0 <= start <= end <= len(self.plan["put"])):
            raise steps.JournalError(f"a range of puts out of bounds: {start!r}, {end!r}")
        self.start, self.end = start, end

    def do(self) -> None:
        ctx = self.ctx
        with ctx.changing() as txn:
            ctx.conflicts.extend(ctx.out._put_all(self.plan["put"], self.start, self.end, txn, ctx.staged,
                                                  ctx.unsynced, ctx.touched, ctx.fresh))


class Delete(_Step):
    """The deletions: each file that still has the digest it had when planned."""

    kind = "out-delete"

    def do(self) -> None:
        with self.ctx.changing():
            self.ctx.out._delete(self.plan["delete"], self.ctx.unsynced, self.ctx.touched)


class Prune(_Step):
    """The directories agentrc made and no longer needs, removed when empty."""

    kind = "out-prune"

    def do(self) -> None:
        with self.ctx.changing():
            self.ctx.out._prune(self.plan["prune"], self.ctx.unsynced, self.ctx.touched)


class Manifest(_Step):
    """Every change made durable, then the new manifest (without the files kept), last."""

    kind = "out-manifest"

    def do(self) -> None:
        ctx, out = self.ctx, self.ctx.out
        with ctx.changing() as txn:
            pass
        tree = out.tree
        tree.flush()
        out._fsync_dirs(sorted(ctx.unsynced))  # every rename durable before the new manifest records it
        tree.absent.clear()
        manifest = self.plan["manifest"]
        if manifest is not None:
            for path in ctx.conflicts:
                manifest["files"].pop(path, None)
                manifest["stat"].pop(path, None)
                manifest.get("merged", {}).pop(path, None)
            out._write_manifest(txn, manifest, ctx.conflicts)


_CLASSES = (Commit, Trees, PutRange, Delete, Prune, Manifest)


def plan_of(ctx: Context) -> List[steps.Step]:
    """The steps of the staged write `ctx.plan`: those with something to do, the manifest's
    always (it makes the changes durable)."""
    data = ctx.plan
    assert data is not None
    plan: List[steps.Step] = [Commit(ctx, {})]
    if data.get("trees"):
        plan.append(Trees(ctx, {steps.PAYLOAD: data}))
    if data["put"]:
        plan.append(PutRange(ctx, {steps.PAYLOAD: data, "start": 0, "end": len(data["put"])}))
    for cls, key in ((Delete, "delete"), (Prune, "prune")):
        if data[key]:
            plan.append(cls(ctx, {steps.PAYLOAD: data}))
    plan.append(Manifest(ctx, {steps.PAYLOAD: data}))
    return plan


def kinds(ctx: Context) -> Dict[str, Callable[[Dict[str, Any]], steps.Step]]:
    """The writer's step kinds for `steps.recover`, each built into the one `ctx`."""
    def kind(cls: Callable[[Context, Dict[str, Any]], steps.Step]) -> Callable[[Dict[str, Any]], steps.Step]:
        return lambda record: cls(ctx, record)
    return {cls.kind: kind(cls) for cls in _CLASSES}


def check(entries: Sequence[Dict[str, Any]], plan: Sequence[steps.Step]) -> None:
    """The whole plan, as `plan_of` writes one: the point first and only there, each other
    kind at most once in its order, the manifest's last, and nothing begun before the point
    is done."""
    kinds_seen = [e["kind"] for e in entries]
    positions = [ORDER.index(k) for k in kinds_seen]
    if (not entries or kinds_seen[0] != Commit.kind or kinds_seen[-1] != Manifest.kind
            or positions != sorted(set(positions)) or any(e["point"] != (i == 0) for i, e in enumerate(entries))):
        raise steps.JournalError("not a plan the writer makes")
    if entries[0]["state"] != steps.DONE and any(e["state"] != steps.TODO for e in entries[1:]):
        raise steps.JournalError("steps begun before the commit point")


def legacy(data: Any) -> List[Dict[str, Any]]:
    """A journal of the writer's earlier shape (version 1 or 2, committed by its existence) as
    the same plan, its data inline in each record (checked by the steps as a chunk is)."""
    if not (isinstance(data, dict) and data.get("version") in (1, 2) and "put" in data):
        raise steps.JournalError("not a journal of agentrc's writer")
    try:
        data = _parse_journal(data)
    except ValueError as exc:
        raise steps.JournalError(str(exc)) from None
    entries = [{"kind": Commit.kind, "record": {}, "state": steps.DONE, "point": True}]
    if data.get("trees"):
        entries.append(_entry(Trees.kind, {INLINE: data}))
    if data["put"]:
        entries.append(_entry(PutRange.kind, {INLINE: data, "start": 0, "end": len(data["put"])}))
    for cls, key in ((Delete, "delete"), (Prune, "prune")):
        if data[key]:
            entries.append(_entry(cls.kind, {INLINE: data}))
    entries.append(_entry(Manifest.kind, {INLINE: data}))
    return entries


def _entry(kind: str, record: Dict[str, Any]) -> Dict[str, Any]:
    return {"kind": kind, "record": record, "state": steps.TODO, "point": False}
