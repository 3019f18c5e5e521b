"""A content-addressed memo of parsed item directories and rendered items.

Keys are digests of the inputs (an item directory's files, the client, the agentrc
version), so a stale entry can never be returned: an edit changes the key. The core only
sees a dict-like object; the CLI persists it between runs (outside the output tree, as
it is a pickle), and the Pants plugin relies on its own caching instead.

On disk (`<location>.memo/`) the memo is an index (each key's pack, offset and length)
and immutable pack files of pickled entries. A build loads the index alone and reads an
entry when it asks for it; renderings are kept as digests of their files, not their bytes
(`plan.digests_only`), so an unchanged item costs a small read, and a file that must be
written again is rendered again. A build's new entries go to one new pack (the `Spool`):
a worker's as they come (already pickled), and each put is pickled when it is put, so a
memo keeps no second, pickled copy of them in memory; the CLI's build defers its own
(`Memo.defer`: kept as they are, the parsed items its registry holds anyway and each
rendering as its plan holds it, rendered bytes spilled) and packs and pickles them when it
saves the memo, in a forked child while it writes its output (`save_aside`). The packs are compacted into one when
dead entries (or packs) pile up. Packs are written before the index that names them and
replaced atomically, so a killed build leaves at worst a pack no index names (removed by
the next save); an entry that cannot be read, or whose bytes do not match the checksum
the index keeps, is a miss, never an error.

A replayed edit (agentrc.building.incremental) reads a few entries and makes a few, and
drops none: `append` names its pack in an index addition of its own (`<pack>.index`, the
new keys alone) instead of rewriting the index of every entry and, every MAX_PACKS
replays, compacting the packs (at 5,000 items: 20,000 keys, a 1.4 MB index written in
0.035 s, and 36 MB copied every 8th replay). `load` reads the additions after the index;
after MAX_ADDITIONS of them, an `append` writes the index again with their entries copied
into its own pack, and the next full `save` folds them in (its index names every entry it
used) and removes them.
"""

from __future__ import annotations

import os

from agentrc import __version__, pickling
from agentrc.fdio import open_regular
from agentrc.memo import cpus
from agentrc.memo.packs import Spool, Store, _copy, _discard, _loads  # noqa: F401 - re-exported
from agentrc.memo.stamp import base, beside, load_stamp, location, save_stamp  # noqa: F401 - re-exported
from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Hashable, Optional, Set, Tuple

    from agentrc.fdio import StrPath
    from agentrc.memo.packs import Location


MAX_PACKS = 8  # more packs than this (many small builds) are compacted into one
MAX_ADDITIONS = 16  # index additions (`append`) read by `load` before one is folded into the index
ADDITION = ".index"  # an index addition's name: its pack's name and this


class Memo:
    """The entries a build reads and makes. With a `spool` (a memo loaded from disk), an
    entry put is pickled into it at once and not kept in memory; without one (Pants, the
    warming workers, tests), entries stay in `data`."""

    def __init__(self, data: Optional[Dict[Hashable, Any]] = None, store: Optional[Store] = None,
                 spool: Optional[Spool] = None):
        self.data: Dict[Hashable, Any] = data or {}  # entries handed in, or computed without a spool
        self.store = store  # entries of earlier builds, on disk
        self.spool = spool  # entries computed by this build, on their way to disk
        self.used: Set[Hashable] = set()
        self.made: Dict[str, int] = {}  # entries put, by the kind of key ("dir", "render")
        self.hits = 0
        self.misses = 0
        # Entries this build's workers compute (agentrc.pipeline.warm): a key's pickled entry
        # for the memo and the value this build uses (a rendering's with its files' bytes,
        # where the memo keeps their digests); None when no worker makes it.
        self.feed: Optional[Callable[[Hashable], Optional[Tuple[bytes, Any]]]] = None
        # Entries put are kept as they are, in `data`, and pickled when the memo is saved
        # (`save_aside`: in a child, while the build writes its output), not as they are put.
        self.defer = False
        # Parsed item directories ("dir" entries) this process read or made, kept as they
        # are when set (`keep_parsed`): a consumer's command reads a source, then plans
        # what it selected from it, parsing the same directories twice; the second read
        # takes these instead of unpickling every entry again (1,000 items: 90 ms of `add`).
        self.parsed: Optional[Dict[Hashable, Any]] = None

    @property
    def empty(self) -> bool:
        return not self.data and (self.store is None or not self.store.index) and \
            (self.spool is None or not self.spool.index)

    @property
    def digests(self) -> bool:
        """Whether renderings are kept as their files' digests (a memo saved to disk): a
        renderer may then put each file's `OutputFile.sha256()`, computed once for the memo
        and the output manifest both, where its bytes would be (`plan.digests_only`)."""
        return self.spool is not None

    @property
    def computed(self) -> Set[Hashable]:
        """The keys of the entries this process computed or was handed."""
        return set(self.data) | (set(self.spool.index) if self.spool is not None else set())

    def keep_parsed(self) -> "Memo":
        """Keep the parsed item directories read or made from now on (`parsed`)."""
        if self.parsed is None:
            self.parsed = {}
        return self

    def get(self, key: Hashable) -> Any:
        parsed = self.parsed
        if parsed is not None and key in parsed:
            self.hits += 1
            return parsed[key]
        value = self._get(key)
        if parsed is not None and value is not None and _kind(key) == "dir":
            parsed[key] = value
        return value

    def _get(self, key: Hashable) -> Any:
        value = self.data.get(key)
        if value is None and self.spool is not None and key in self.spool.index:
            value = _loads(self.spool.raw(key))
        if value is None and self.store is not None:
            value = self.store.read(key)
        if value is None and self.feed is not None:
            value = self._adopt(key)
            if value is not None:
                return value
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
            self.used.add(key)
        return value

    def _adopt(self, key: Hashable) -> Any:
        """A worker's entry for `key`, as if this process had computed and put it: counted as
        made (a miss: computed by this build), its pickled bytes spooled as they came, never
        pickled again; None when no worker makes it (this process computes it)."""
        assert self.feed is not None
        got = self.feed(key)
        if got is None:
            return None
        packed, found = got
        if found is None:  # damaged on its way: computed here instead
            return None
        kind = _kind(key)
        self.made[kind] = self.made.get(kind, 0) + 1
        self.misses += 1
        if self.spool is not None:
            self.spool.add(key, packed)
        else:
            self.data[key] = found
        self.used.add(key)
        return found

    def put(self, key: Hashable, value: Any) -> None:
        kind = _kind(key)
        if self.parsed is not None and kind == "dir":
            self.parsed[key] = value
        self.made[kind] = self.made.get(kind, 0) + 1
        if self.spool is not None and not self.defer:
            self.spool.add(key, _dumps(key, value))
            self.data.pop(key, None)
        else:
            self.data[key] = value
        self.used.add(key)

    def live(self) -> Dict[Hashable, Any]:
        """Entries used by this run: what the next run can reuse (old ones are dropped)."""
        return {k: self.get(k) for k in self.used}


def _kind(key: Hashable) -> str:
    """The kind of entry `key` names: its first element ("dir", "render"), else ""."""
    return str(key[0]) if isinstance(key, tuple) and key else ""


def _dir(path: StrPath) -> str:
    return beside(path, ".memo")


def load(path: StrPath) -> Memo:
    """The memo's index; entries are read when a build asks for them, and the entries it
    makes go to a new pack as they are made."""
    root = _dir(path)
    try:
        with open_regular(os.path.join(root, "index")) as f:
            version, index = pickling.load(f)
        if version == __version__ and isinstance(index, dict):
            store = Store(root, index)
            _read_additions(store)
            return Memo(store=store, spool=Spool(root))
    except Exception:  # a missing, corrupt or foreign memo is simply a cold start
        pass
    return Memo(spool=Spool(root))


def _read_additions(store: Store) -> None:
    """The index additions `append` left, into `store.index`. An addition never overrides
    the index (one a full save has folded in already may be left by a save killed before it
    removed it: its pack may be gone); one that cannot be read is left out (misses)."""
    with os.scandir(store.root) as entries:
        names = sorted(e.name for e in entries if e.name.endswith(ADDITION))
    for name in names:
        try:
            with open_regular(os.path.join(store.root, name)) as f:
                version, added = pickling.load(f)
        except Exception:
            continue
        if version != __version__ or not isinstance(added, dict):
            continue
        for key, where in added.items():
            if key not in store.index:
                store.index[key] = store.added[key] = where


def _write_index(root: str, name: str, index: Dict[Hashable, Location]) -> None:
    """`index` as file `name` of `root`, replaced atomically."""
    tmp = os.path.join(root, f"{name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        pickling.dump((__version__, index), f, protocol=pickling.PROTOCOL)
    os.replace(tmp, os.path.join(root, name))


def append(path: StrPath, memo: Memo) -> None:
    """Save a memo that drops nothing (a replayed edit: it read a few entries of the last
    build and keeps them all): its new entries' pack, and an index addition naming them,
    written beside the rest, which is neither read nor rewritten; after MAX_ADDITIONS
    additions, the index is written again with them folded in (`_fold`). A memo not
    loaded from `path`'s index (or holding entries handed in) is saved by `save`, keeping
    every entry. The memo lets go of its keys as `save`'s does."""
    store, spool = memo.store, memo.spool
    root = _dir(path)
    if store is None or spool is None or spool.root != root or memo.data:
        if store is not None:
            memo.used.update(store.index)
        save(path, memo)
        return
    try:
        _append(root, store, spool)
    except OSError:  # as `save`: the cache is an optimisation
        spool.discard()
    finally:
        memo.used = set()
        spool.index = {}
        store.index = {}
        store.added = {}


def _append(root: str, store: Store, spool: Spool) -> None:
    new = {k: where for k, where in spool.index.items() if k not in store.index}
    if not new:
        spool.discard()
        return
    additions = {where[0] for where in store.added.values()}
    if len(additions) + 1 > MAX_ADDITIONS:
        _fold(root, store, spool)
        return
    name = spool.finish()
    _write_index(root, name + ADDITION, {k: (name,) + where for k, where in new.items()})


def _fold(root: str, store: Store, spool: Spool) -> None:
    """The index written again with every entry: the index additions' entries copied into
    the new entries' pack (a few entries each), their packs and files removed."""
    _copy(store.raw, [k for k in store.added if k not in spool.index], spool)
    index = {k: where for k, where in store.index.items() if k not in store.added}
    name = spool.finish()
    index.update((k, (name,) + where) for k, where in spool.index.items())
    _write_index(root, "index", index)
    store.close()
    _remove_unnamed(root, index)


def _remove_unnamed(root: str, index: Dict[Hashable, Location]) -> None:
    """Packs no index names, index additions (folded in), and what a killed save left. A
    temporary file of a process still running (`spool.PID.N.tmp`, `NAME.PID.tmp`: a second
    build of the same output, spooling as it goes) is left to it; removing it cost that
    build its cache save."""
    referenced = {loc[0] for loc in index.values()}
    for name in os.listdir(root):
        if name != "index" and name not in referenced and not _running_writer(name):
            try:
                os.unlink(os.path.join(root, name))
            except OSError:
                pass


def _running_writer(name: str) -> bool:
    """Whether `name` is a temporary file of another process that is still running."""
    match = _TEMPORARY.fullmatch(name)
    if match is None:
        return False
    pid = int(match.group(1) or match.group(2))
    if pid == os.getpid() or pid <= 0:
        return False  # ours are finished or abandoned by the time a save removes anything
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, as another user's process
    return True


_TEMPORARY = pattern(r"(?:spool\.([0-9]+)\.[0-9]+|.+\.([0-9]+))\.tmp")


def save(path: StrPath, memo: Memo) -> None:
    """`_save`, after which the memo lets go of what only the save needed: the keys it used
    and where its entries are (20,000 keys and their locations, 6 MB at 5,000 items, held
    while the output is written otherwise). A memo is saved once, at the end of its build;
    saved again, it has nothing new and nothing to forget."""
    try:
        _save(path, memo)
    finally:
        _saved(memo)


def _saved(memo: Memo) -> None:
    memo.used = set()
    if memo.spool is not None:
        memo.spool.index = {}
    if memo.store is not None:
        memo.store.index = {}
        memo.store.added = {}


# Entries to pickle (`Memo.defer`) from which `save_aside` saves in a child: at 10,000 items
# the build's own 16,000 took 0.2 s to pickle as they were made, with its second core idle
# while it then wrote the output. Below, the fork (its page tables, the pages both processes
# then write) costs more CPU than the pickling and gains no wall time: a cold 1,000-item build
# (4,000 entries, one process) took 0.92-0.99 s of CPU and 0.84-0.92 s wall aside against
# 0.86-1.00 s and 0.88-1.01 s here (registry corpus; published 1.00-1.13 / 0.92-1.10 s against
# 0.93-1.14 / 0.95-1.18 s; six alternated runs, load 1.5).
ASIDE_MIN = 8000
# From this many, when a CPU is idle right now (`cpus.spare`): the child then runs beside the
# write, not in its way. A cold 1,000-item build (4,000 entries) on an idle machine, six
# alternated runs: 0.75-0.84 s wall (median 0.78) and 0.82-0.95 s of CPU aside, against
# 0.80-0.97 s (0.86) and 0.79-0.97 s here.
SPARE_MIN = 1000


class Saving:
    """A memo's save under way in a forked child (`save_aside`), or already done (no child)."""

    def __init__(self, pid: Optional[int] = None):
        self.pid = pid
        self.ok = pid is None

    def wait(self) -> bool:
        """The save finished (reaped once); whether it succeeded."""
        pid, self.pid = self.pid, None
        if pid is not None:
            try:
                _, status = os.waitpid(pid, 0)  # retried by Python itself when a signal interrupts it
                self.ok = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
            except OSError:  # not our child any more: whether it saved is unknown
                self.ok = False
        return self.ok


def save_aside(path: StrPath, memo: Memo) -> Saving:
    """`save`, in a forked child when the memo holds `ASIDE_MIN` entries or more to pickle
    (`Memo.defer`), or `SPARE_MIN` with a CPU idle: the build writes its output meanwhile and
    `wait`s for it before it records anything that names the memo's entries (the stamp, an
    edit's replay record). Here otherwise (few entries, or no fork). The child owns the spool's file from the fork
    on: this process forgets it, so that its cleanup cannot remove the file before the
    child names it; a child killed before it does leaves it to the next save's cleanup
    (`_remove_unnamed`). A save that fails saves nothing, as `save`: the next build
    computes the entries again."""
    deferred = len(memo.data) if memo.defer else 0
    aside = deferred >= ASIDE_MIN or (deferred >= SPARE_MIN and cpus.spare(cpus.available()))
    if not aside or memo.spool is None or not hasattr(os, "fork"):
        save(path, memo)
        return Saving()
    try:
        pid = os.fork()
    except OSError:
        save(path, memo)
        return Saving()
    if pid == 0:  # the child: save, and leave without the parent's cleanup handlers
        code = 1
        try:
            _save(path, memo)
            code = 0
        except BaseException:  # noqa: B036 - the exit code says it; the build goes on without the memo
            pass
        os._exit(code)
    memo.spool.disown()
    memo.data = {}
    _saved(memo)
    return Saving(pid)


def _save(path: StrPath, memo: Memo) -> None:
    """This build's new entries become a new pack (the spool they were written to as they
    were made, and any entry handed in) and the index names every entry it used; the packs
    are rewritten as one when a quarter of what they hold is dead, or when there are more
    than MAX_PACKS of them. Entries are copied one at a time, never gathered in memory."""
    store = memo.store
    old = store.index if store is not None else {}
    root = _dir(path)
    spool = memo.spool
    spooled = [k for k in spool.index if k in memo.used] if spool is not None else []
    handed = [k for k in memo.used if k in memo.data and k not in old and (spool is None or k not in spool.index)]
    new = set(spooled).union(handed)
    kept = {k: old[k] for k in memo.used if k in old and k not in new}
    dead = len(old) - len(kept)
    if not new and not dead and os.path.exists(os.path.join(root, "index")) and (store is None or not store.added):
        if spool is not None:
            spool.discard()
        return  # nothing new and nothing to forget: the files on disk are already this memo
    used = max(len(memo.used), 1)
    packs: Dict[str, int] = {}  # pack -> entries kept in it
    for loc in kept.values():
        packs[loc[0]] = packs.get(loc[0], 0) + 1
    target = spool if spool is not None and spool.root == root else Spool(root)
    try:
        os.makedirs(root, exist_ok=True)
        if target is not spool and spool is not None:  # a memo loaded from elsewhere
            _copy(spool.raw, spooled, target)
        for key in handed:
            target.add(key, _dumps(key, memo.data[key]))
        # Compact (everything used, in one pack) when a quarter is dead, or when MAX_PACKS
        # packs each hold a real share of the entries. The small packs replayed edits add
        # (a few entries each) count only past 4 x MAX_PACKS: a full build after 8 replays
        # copied every entry (36 MB at 5,000 items) to gather 8 packs of 4 entries.
        big = sum(1 for n in packs.values() if n * 4 * MAX_PACKS >= used)
        if dead * 4 > used or big >= MAX_PACKS or len(packs) >= 4 * MAX_PACKS:
            assert store is not None  # something is dead or packed, so there was a store
            _copy(store.raw, kept, target)
            index: Dict[Hashable, Location] = {}
        else:
            index = dict(kept)
        if target.index:
            name = target.finish()
            index.update((k, (name,) + where) for k, where in target.index.items())
        else:
            target.discard()
        _write_index(root, "index", index)
        if store is not None:
            store.close()
        _remove_unnamed(root, index)
        for legacy in (os.fspath(path), beside(path, ".delta")):  # the single-pickle memo of earlier versions
            if os.path.exists(legacy):
                os.unlink(legacy)
    except OSError:  # the cache is an optimisation; failing to save it is not an error
        target.discard()


def dumps(key: Hashable, value: Any, known: Optional[Dict[int, str]] = None) -> bytes:
    """An entry as the memo pickles it into its spool (a worker's entries are pickled so).
    `known`: its files' digests already taken (`plan.digests_only`)."""
    return _dumps(key, value, known)


def is_render_key(key: Hashable) -> bool:
    """Whether `key` is a rendering's (`plan.render_key`), whose value holds output files."""
    return isinstance(key, tuple) and bool(key) and key[0] == "render"


def _dumps(key: Hashable, value: Any, known: Optional[Dict[int, str]] = None) -> bytes:
    if is_render_key(key):
        from agentrc.output.plan import as_packed, digests_only  # putting follows a rendering: already imported

        value = digests_only(as_packed(value), known)
    return pickling.dumps(value, protocol=pickling.PROTOCOL)
