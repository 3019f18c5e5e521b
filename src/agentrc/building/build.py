"""The `agentrc build` transaction: inputs read, memo, warm rendering, plan, report, write.

Enters: `BuildOptions` (what the command line asked for). Leaves: a `BuildResult` (the
diagnostics, the per-client summary, the changes to the output directory) for the shell
to print. Reads the sources and the memo, writes the output directory (atomically, under
its ownership manifest), the report and the memo: all or nothing, as `output.writer`
guarantees. When the sources, the options and the output are as the last build left them,
the recorded result stands and nothing is parsed (the no-change stamp); when only the bytes
of a few items' files changed, those items are built alone and compared with the last
build (agentrc.building.incremental), else everything is planned again.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace

from agentrc import pycache
from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostic, Diagnostics, said_again
from agentrc.fingerprint import digest
from agentrc.inputs.read import Inputs, read_inputs, stamped
from agentrc.inputs.stamp import recorded_files
from agentrc.inputs.tree import SourcesChanged
from agentrc.memo import stamp as stampfile
from agentrc.model import IgnoreList
from agentrc.output.directory import Changes
from agentrc.output.recorded import untouched
from agentrc.output.totals import summary
from agentrc.pipeline import nogc

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Callable, Dict, FrozenSet, List, Optional, Tuple

    from agentrc.memo import cache
    from agentrc.output import writer
    from agentrc.output.spill import Spill
    from agentrc.pipeline import stages

if TYPE_CHECKING:
    Totals = Dict[str, Dict[str, int]]  # per client: items, skipped, servers and fields per status


@dataclass(frozen=True)
class BuildOptions:
    """What `agentrc build` was asked for: the command line and the project file, resolved."""
    paths: Tuple[str, ...]
    out: str
    clients: Tuple[str, ...]
    bundles: Tuple[str, ...] = ()
    strict: bool = False
    layout: str = "project"
    plugin_name: str = ""
    check: bool = False  # write nothing; report what would change
    report: Optional[str] = None  # where to write the fidelity report
    # Processes for a cold build of 2,000 item directories or more, or 300 with a CPU idle (agentrc.pipeline.warm):
    # 1, none (the default here); 0, one per CPU, at most 4, none while every CPU is busy
    # (the command line's default).
    jobs: int = 1
    cache: bool = True  # keep the memo and the no-change stamp
    # The project's other clients, when --client narrowed the build: their files stay as they
    # are (not deleted, not rewritten), unless --prune (`agentrc.cli.build`).
    keep_clients: Tuple[str, ...] = ()
    adopt: bool = False  # take over the hand-written files the build replaces (the first build after import)
    shared_copies: bool = True  # the project file's `shared-copies` (one copy for clients that read each other's)
    ignore: IgnoreList = IgnoreList()  # the project file's `ignore:` (each client's ignore file)


@dataclass(frozen=True)
class BuildResult:
    """What a build leaves for the shell to print: its diagnostics, the totals per client and the changes."""
    diagnostics: Tuple[Diagnostic, ...]
    summary: Optional[Totals]  # None when the build stopped before rendering
    changes: Optional[Changes]  # None when nothing could be compared with the output

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)

    @property
    def up_to_date(self) -> bool:
        return self.changes is None or self.changes.empty


def build(options: BuildOptions, notify: Optional[Callable[[str], None]] = None) -> BuildResult:
    """`notify` gets the messages a waiting run prints (another build holds the output).
    The cyclic garbage collector is off while it runs (`nogc`)."""
    if not options.out:  # as `pathlib.Path("")` named it: the working directory
        options = replace(options, out=".")
    try:
        with nogc.paused():
            return _build(options, notify)
    finally:
        pycache.code_dir = None  # the build's code cache is its own (`_memo`)


def _key(options: BuildOptions, sources: str, explicit: Tuple[str, ...]) -> str:
    """The no-change stamp's key: the sources' digest and every option that shapes the outputs."""
    return digest([sources.encode(), json.dumps(
        [list(options.clients), list(options.bundles), options.strict, list(explicit), options.layout,
         options.plugin_name] + ([list(options.keep_clients)] if options.keep_clients else [])
        + ([] if options.shared_copies else ["no-shared-copies"]) + options.ignore.key()).encode()])


def _stamp_path(memo_path: str, options: BuildOptions) -> str:
    """Where the no-change stamp and the replay record of this build live (their suffixes
    added): the memo's own name when every path was given absolute and normalised, else that
    name with a digest of the paths as typed. The memo is shared by every spelling of the same
    directories (`stampfile.location` keys it by absolute paths); the stamp cannot be: diagnostics
    and the source record name files as typed, so one stamp for `reg` and `/abs/reg` made
    every build that alternated the two a full one."""
    typed = [options.out, *options.paths]
    if all(os.path.isabs(p) and os.path.normpath(p) == p for p in typed):
        return memo_path
    stem, suffix = os.path.splitext(memo_path)
    return f"{stem}-{digest([p.encode() for p in typed])[:12]}{suffix}"


def _build(options: BuildOptions, notify: Optional[Callable[[str], None]]) -> BuildResult:
    out = options.out
    memo_path = stampfile.location(options.out, options.paths) if options.cache else None
    stamp_path = _stamp_path(memo_path, options) if memo_path else None
    stamp = stampfile.load_stamp(stamp_path) if stamp_path and not options.report else None
    last, inputs, key = _read(options, out, stamp_path, stamp)
    if last is not None:
        return last
    replayed, memo, spill = _memo(options, memo_path, stamp_path, stamp, inputs, key, notify)
    if replayed is not None:
        return replayed
    # Imported here, past the no-change check (with pickle: 2 ms of a build with nothing to do).
    from agentrc.memo import cache

    saving: Optional[cache.Saving] = None
    try:
        try:
            plan = _plan(options, inputs, memo, spill)
        except SourcesChanged:  # a source changed while the build ran: read them all, and plan again
            inputs = read_inputs(options.paths)
            key = _key(options, inputs.digest, inputs.explicit)
            plan = _plan(options, inputs, memo, spill)
        if memo_path and memo is not None and plan.ok:
            # In a child while the output is written (`cache.save_aside`), finished before
            # the stamp and the replay record name its entries.
            saving = cache.save_aside(memo_path, memo)
        trim_heap(len(plan.files))
        diags = list(plan.diagnostics)
        totals = summary(plan.reports)
        changes, written = _output(options, inputs, memo, plan, stamp, notify, diags) if plan.ok else (None, None)
        ok = not any(d.is_error for d in diags)
        if ok and not options.check and changes is not None:
            diags.extend(_record_capabilities(inputs.capabilities, options.clients))
            ok = not any(d.is_error for d in diags)
        if saving is not None:
            saving.wait()
        if ok and memo_path and stamp_path and not options.check and changes is not None:
            _save_stamp(options, stamp_path, key, inputs, plan, diags, totals, changes, written)
        return BuildResult(tuple(sorted(set(diags))), totals if plan.ok else None, changes)
    finally:
        _release(saving, spill, memo)


def _release(saving: Optional[cache.Saving], spill: Optional[Spill], memo: Optional[cache.Memo]) -> None:
    """What a build holds, let go when it ends however it ends: the memo's save finished, the
    spill's file and the memo's packs closed (a --watch process builds again and again)."""
    if saving is not None:
        saving.wait()
    if spill is not None:
        spill.close()
    if memo is not None and memo.store is not None:
        memo.store.close()


def _memo(options: BuildOptions, memo_path: Optional[str], stamp_path: Optional[str], stamp: Optional[dict],
          inputs: Inputs, key: str, notify: Optional[Callable[[str], None]]
          ) -> Tuple[Optional[BuildResult], Optional[cache.Memo], Optional[Spill]]:
    """Past the no-change check, with a memo: the result of a replayed edit when the sources'
    change reaches only a few outputs, else the memo the build plans with and, when it keeps
    renderings as digests, the spill its rendered bytes go to past `spill.LIMIT` (16 MiB)."""
    if not memo_path:
        return None, None, None
    # Compiled schema validators kept beside the memo (`agentrc.schemas.use_code_cache`).
    pycache.code_dir = os.path.dirname(memo_path)
    memo = None
    if stamp_path and stamp:
        # Sources changed: an edit that reaches only a few outputs is built alone.
        from agentrc.building import incremental
        replayed, memo = incremental.replay(options, memo_path, stamp, inputs, key, notify, stamp_path)
        if replayed is not None:
            return BuildResult(replayed.diagnostics, replayed.summary, replayed.changes), None, None
    if memo is None:
        from agentrc.memo import cache

        memo = cache.load(memo_path)
    spill = None
    if memo.digests:
        from agentrc.output.spill import Spill
        spill = Spill(os.path.dirname(memo_path))
        memo.defer = True  # this process's entries pickled when the memo is saved, aside
    return None, memo, spill


def _read(options: BuildOptions, out: str, stamp_path: Optional[str], stamp: Optional[dict]
          ) -> Tuple[Optional[BuildResult], Inputs, str]:
    """The no-change check, then the inputs: the last result when the sources and options
    (the key) and the outputs are as the stamp recorded (then no inputs: the third and
    second items are not used), else the inputs and their key."""
    quick = None
    if stamp_path and stamp:
        # The sources' statuses against the last build's record: an unchanged file is neither
        # read nor hashed (agentrc.inputs.tree, "the source stamp").
        quick = stamped(options.paths, stamp.get("sources"))
        if quick and _still(stamp, _key(options, quick.digest, quick.explicit), out):
            if quick.fresh:  # files re-read (racy, touched): vouched for next time
                # Only then: the record's walk start alone is always new, and rewriting the
                # stamp was a tenth of every no-change build at 5,000 items.
                stampfile.save_stamp(stamp_path, dict(stamp, sources=quick.signature))
            return _last_result(stamp), quick, ""
    # With a stamp, the files it vouches for are read only if the build needs their bytes (an
    # item directory the memo does not hold); otherwise everything is read now.
    inputs = quick or read_inputs(options.paths)
    key = _key(options, inputs.digest, inputs.explicit)
    if stamp_path and stamp and quick is None:
        if _still(stamp, key, out):
            if inputs.signature is not None and inputs.signature != stamp.get("sources"):
                stampfile.save_stamp(stamp_path, dict(stamp, sources=inputs.signature))
            return _last_result(stamp), inputs, key
    return None, inputs, key


def _still(stamp: dict, key: str, out: str) -> bool:
    """Same sources and options (`key`), outputs as last written: the last result stands."""
    return stamp.get("key") == key and untouched(out, stamp.get("manifest", ""), stamp.get("outputs"))


def _last_result(stamp: dict) -> BuildResult:
    """The result the stamp recorded, for a build with nothing to do."""
    return BuildResult(tuple(Diagnostic(**d) for d in stamp["diagnostics"]), stamp["summary"],
                       Changes((), (), (), stamp["files"]))


def _output(options: BuildOptions, inputs: Inputs, memo: Optional[cache.Memo], plan, stamp: Optional[dict],
            notify: Optional[Callable[[str], None]], diags: List[Diagnostic]
            ) -> Tuple[Optional[writer.Changes], Optional[writer.Output]]:
    """The plan compared with the output directory and, unless `--check`, written: (the
    changes, the output written, or None); problems go to `diags`. Locked and recovered
    before anything in the directory is read; errors of the disk (a full one, a read-only
    one, a link in the way) are diagnostics."""
    from agentrc.output import writer  # here: a build with nothing to do never imports the writer

    try:
        with writer.session(options.out, write=not options.check, notify=notify) as tree:
            tree.jobs = _jobs(options)
            if stamp:
                tree.expect(stamp.get("manifest", ""), stamp.get("outputs"))
            changes, _, wdiags = tree.diff(plan.files, keep=_kept(options, inputs, memo), take_over=options.adopt)
            diags.extend(wdiags)
            if not any(d.is_error for d in diags) and not options.check:
                diags.extend(_write(tree, options, plan, changes))
                return changes, tree
            return changes, None
    except writer.OutputError as exc:
        diags.extend(exc.diagnostics)
        return None, None


def _save_stamp(options: BuildOptions, stamp_path: str, key: str, inputs: Inputs, plan, diags: List[Diagnostic],
                totals: Totals, changes: writer.Changes, written: Optional[writer.Output]) -> None:
    """What the next build needs to know this one: the replay record of an edit, and the
    no-change stamp (the sources, the options, the outputs as written and the result)."""
    from agentrc.building import incremental
    from agentrc.output import parents, writer
    after = _sources_after_write(options, inputs, changes) if written else None
    if after is not None:  # agentrc wrote into its own sources (`--out .`): as they are now
        inputs, key = after, _key(options, after.digest, after.explicit)
    if incremental.eligible(options, inputs):  # what the next edit needs to be built alone
        incremental.save_record(stamp_path, key, options, inputs, plan)
    else:
        incremental.forget_record(stamp_path)
    manifest = writer.manifest_digest(options.out)
    outputs = writer.recorded_statuses(written, manifest) if written else None
    held = parents.verified(options.out, outputs[0]) if outputs else None
    stampfile.save_stamp(stamp_path, {"key": key, "manifest": manifest, "outputs": outputs, "parents": held,
                                     "diagnostics": [d.to_json() for d in sorted(set(diags)) if said_again(d)],
                                     "summary": totals, "files": len(plan.files), "sources": inputs.signature,
                                     "replay": key})  # the replay record's, kept by the edits it replays


def _sources_after_write(options: BuildOptions, inputs: Inputs, changes: writer.Changes) -> Optional[Inputs]:
    """The sources as this build's write left them, when the output lies inside a source
    directory (`agentrc build . --out .`) and the write created, changed or deleted files
    that the source walk takes (agentrc's own `opencode.json`, `.mcp.json` at the root):
    recorded as they were before the write, they would make the next build find its sources
    changed, and build in full instead of the no-change result or a replayed edit. Only
    those files may differ from the record taken before the build; any other difference (a
    source edited while the build ran) keeps that record, so the next build reads it. None:
    keep `inputs`."""
    written = changes.create + changes.update + changes.delete
    if not written or inputs.signature is None:
        return None
    out = os.path.realpath(options.out)
    if not any(os.path.isdir(p) and (out == os.path.realpath(p) or out.startswith(os.path.join(
            os.path.realpath(p), ""))) for p in options.paths):
        return None
    from agentrc.building import incremental
    before = recorded_files(inputs.signature)
    now = stamped(options.paths, inputs.signature)
    if now is None or now.signature is None or before is None or now.explicit != inputs.explicit:
        return None
    # Compared as absolute paths from the same working directory (a source named through
    # another link than the output is not recognised: the record is kept, which is safe).
    base = os.path.abspath(options.out)
    ours = {os.path.join(base, *p.split("/")) for p in written}
    after = recorded_files(now.signature)
    if after is None:
        return None
    for path in set(before.paths) | set(after.paths):
        if os.path.abspath(path) in ours:
            continue
        was = incremental._recorded_file(before, path)
        if was is None or was != incremental._recorded_file(after, path):
            return None
    return now


# Outputs from which the heap is trimmed before the write (about 2,000 items): below, the
# memory it gives back is a few MiB, and `ctypes` alone took 4 ms to import (of a cold
# build of 1,000 items, 0.6 s).
TRIM_FROM = 6000


def trim_heap(outputs: int = TRIM_FROM) -> bool:
    """Hand the memory the plan freed (renderings, parsed sources, memo entries) back to the
    system before writing, which needs more: glibc keeps freed arenas for reuse otherwise, and
    a cold build of 5,000 items peaked 12 MiB higher. Only here, in the CLI's one-shot build:
    pantsd reuses its heap from request to request, and trimming it there would only make it
    ask again; and only for a plan of `TRIM_FROM` outputs or more. Whether anything ran (not
    glibc, or a small plan: nothing to do)."""
    if outputs < TRIM_FROM:
        return False
    import ctypes

    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        return False
    return True


def _record_capabilities(projects, clients: Tuple[str, ...]) -> List[Diagnostic]:
    """Each canonical project's capability references, as they resolved, into its
    agentrc.lock.json (`capabilities`), so the next build reads the same commits. The lock
    is written only when that changes; a project without one gets a lock that holds only
    these records (its clients are the build's)."""
    if not projects:
        return []  # portable items only: no canonical project, nothing to record
    # Imported here, past that check: a build of portable items never needs the lock code
    # (a project whose references are all gone still has its old records cleared below).
    from agentrc.inputs import lockread as lock_io
    from agentrc.output import atomic, writer
    from agentrc.sources import lock as lockfile
    d = Diagnostics()
    for root, records in projects:
        lock, problems = lock_io.read_lock(root)
        if problems:
            d.extend(problems)
            continue
        if (lock.capabilities if lock is not None else ()) == lockfile.Lock((), capabilities=records).capabilities:
            continue
        new = replace(lock, capabilities=records) if lock is not None else lockfile.Lock(tuple(clients),
                                                                                        capabilities=records)
        where = lock_io.lock_path(root)
        try:
            writer.write_atomic(where, lockfile.dumps(new), root)
        except OSError as exc:
            d.error(where, (0, 0), atomic.code_of(exc, "AR142"), f"cannot write the lock: {exc.strerror or exc}")
    return d.items


def _plan(options: BuildOptions, inputs: Inputs, memo: Optional[cache.Memo], spill: Optional[Spill] = None
          ) -> stages.Plan:
    # Imported here, past the no-change check: a build with nothing to do never needs the
    # parsers and adapters' pipeline (docs/architecture.md).
    from agentrc.pipeline import stages
    workers = None
    # Workers compute what this build asks for: every item, in the project layout's renderings.
    if memo is not None and memo.empty and options.jobs != 1 and not options.bundles and options.layout == "project":
        from agentrc.pipeline import warm
        workers = warm.warm(inputs.tree, list(options.clients), memo, _jobs(options), spill=spill)
    try:
        return stages.generate(inputs.tree, list(options.clients), list(options.bundles), options.strict,
                               inputs.explicit, memo, layout=options.layout, plugin_name=options.plugin_name,
                               canonical=inputs.canonical, spill=spill, shared_copies=options.shared_copies,
                               ignore=options.ignore)
    finally:
        if workers is not None:
            workers.close()


def _kept(options: BuildOptions, inputs: Inputs, memo: Optional[cache.Memo]) -> FrozenSet[str]:
    """The paths the project's other clients' renderings hold (`keep_clients`): a build
    narrowed by --client leaves them as they are (issue 17: a flag that narrows the clients
    never deletes another client's files)."""
    if not options.keep_clients:
        return frozenset()
    from agentrc.pipeline import stages
    other = stages.generate(inputs.tree, list(options.keep_clients), list(options.bundles), options.strict,
                            inputs.explicit, memo, layout=options.layout, canonical=inputs.canonical,
                            shared_copies=options.shared_copies, ignore=options.ignore)
    return frozenset(f.path for f in other.files)


def _jobs(options: BuildOptions) -> int:
    """The processes `options.jobs` allows (0: one per CPU, at most `warm.MAX_JOBS`)."""
    if options.jobs:
        return options.jobs
    from agentrc.pipeline import warm
    return warm.cpus()


def _write(tree: writer.Output, options: BuildOptions, plan, changes: writer.Changes) -> List[Diagnostic]:
    """The report first (a failure there writes nothing into the output), then the output."""
    from agentrc.output import atomic, writer
    if options.report:
        from agentrc.pipeline import stages
        try:
            writer.write_atomic(options.report, stages.report_bytes(options.clients, plan))
        except OSError as exc:
            d = Diagnostics()
            d.error(options.report, (0, 0), atomic.code_of(exc, "AR142"), f"cannot write the report: "
                    f"{exc.strerror or exc}")
            return d.items
    return list(tree.apply(plan.files, changes))
