"""Parsing and rendering on several cores for large cold builds (CLI only).

Parsing and rendering an item directory depends on that directory's files alone, so the
memo entries of disjoint groups of directories can be computed in separate processes; the
result is identical to a sequential build by construction: the same functions compute the
same entries, keyed by the same digests. The Pants plugin never uses the workers (Pants
schedules its own work); it uses `entries` and `item_dir_groups`.

How the work is shared (`warm`): the item directories, sorted, are cut into contiguous
shares by cost (`_cost`: bytes, not a count). The build's own process keeps the first (as
large: `OWN_SHARE`) and runs the ordinary pipeline at once; each forked worker
computes its share's entries in the order that pipeline asks for them (every directory
parsed, then every item rendered client by client) and appends them, pickled, to a file
of its own, a chunk at a time, telling the build through a pipe how long each chunk is.
It never waits for the build: the file takes whatever it writes (a pipe alone held 64
KiB, and the worker stopped there until the build had finished its own share). When the
build's pipeline asks the memo for an entry of a worker's share (`Memo.feed`), the memo
reads the worker's chunks up to that entry (waiting if the worker is behind) and adopts
it: the entry's bytes go to the memo's spool as the worker pickled them, and the build
loads those same bytes. A rendering is pickled once, as the memo keeps it (its files as
digests); beside it, for each file, where its bytes are: the worker's spill (a rendered
file), its item's entry (a supporting file, not sent again: named), or the bytes
themselves (a small file). A second pickle of each rendering, whole, with a Python call
for each object to name what it held, was an eighth of a worker's time.
So the build's process parses and renders its own share once, as a build without workers
does, and spends on the workers' shares only the reading: measured slower than one
process before, when the build computed its share apart, then planned everything again
from entries it had all unpickled, then pickled the workers' entries again for the memo,
and each worker ran the registry's reference checks (with their did-you-mean searches) on
a registry missing most items.

A worker that fails, or an entry it does not make (a key that depends on items of another
share), costs nothing but time: the build computes that entry itself.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import signal
import struct

from agentrc import pickling
from agentrc.clients import registry as client_registry
from agentrc.fdio import write_all
from agentrc.memo import cache
from agentrc.memo import cpus as cpus_free
from agentrc.memo.cache import Memo
from agentrc.model import ENTRYPOINTS, Kind, SourceFile, SourceTree
from agentrc.output import plan as build
from agentrc.output.spill import Ref, Spill, unnamed
from agentrc.portable.load import load_registry

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, Hashable, List, Optional, Sequence, Set, Tuple

# Item directories from which a cold build forks its workers whenever `--jobs` lets it (and no
# CPU is busy with other work: `cpus`). At 2,500 items on one core as fast as on two, or
# faster, for 0.3-0.6 s more CPU; at 5,000 (load 1) 3.7-4.5 s wall against 4.2-5.7 s.
MIN_ITEMS = 2000
# From this many, only when a CPU is idle right now (`memo.cpus.spare`): then a worker's
# fork and hand-over cost less than half the parsing and rendering saves; beside other work,
# more. Measured on 2 cores (`--jobs 0`, nine alternated cold builds each, medians), idle:
# 1,000 items 0.687 -> 0.588 s (registry corpus) and 0.746 -> 0.678 s (published), 500 items
# 0.370 -> 0.328 s and 0.466 -> 0.399 s, 250 items 0.249 -> 0.238 s; with one other process
# busy (load 1), 1,000 items 0.818 -> 0.865 s: slower. (Once this was 2,000 for all: the
# fork and the hand-over were most of a worker's gain at 1,000 items before start-up,
# parsing and rendering got cheaper.)
IDLE_MIN_ITEMS = 300
MAX_JOBS = 4  # `--jobs 0` (the default): one process per CPU, at most this many
# The build's own share, against each worker's: it also reads the workers' entries and does what no share can
# (discovery, the reference checks, the cross-client checks), but pickles its own entries only when the memo is saved,
# aside (`cache.save_aside`), while a worker pickles each as it makes it. Measured at 10,000 items with 2 jobs: 0.7
# left the build waiting 0.3 s for its worker, 1.0 about nothing (cold builds 4.71 -> 4.61 s, 5,000 items 2.31 -> 2.28
# s, 1,000 items 0.542 -> 0.534 s, medians of 7-9 alternated runs).
OWN_SHARE = 1.0
CHUNK = 1 << 17  # bytes a worker gathers before writing them: the build waits for no more
_NOTE = struct.Struct("<Q")  # a chunk's length, through the pipe


def cpus() -> int:
    """The processes `--jobs 0` means: one per CPU this process may run on, at most MAX_JOBS
    (measured on 2 cores; more workers each fork the build's memory and hand their
    entries to the one process that reads them all), and one alone when no CPU is idle
    (`memo.cpus.busy`: a worker would share a CPU, parse and render no sooner, and hand its
    entries over, pickled, read and spooled, for nothing)."""
    n = cpus_free.available()
    if n > 1 and cpus_free.busy(n):
        return 1
    return max(1, min(n, MAX_JOBS))


def warm(tree: SourceTree, clients: Sequence[str], memo: Memo, jobs: int,
         min_items: Optional[int] = None, spill: Optional[Spill] = None) -> Optional["Workers"]:
    """Workers for `jobs - 1` shares of `tree`'s item directories, started now and feeding
    `memo` (`Memo.feed`) as the build asks for their entries: the caller runs the build and
    then `close`s them. A memo without a spool (entries kept in memory, as in tests) is
    filled now instead, the first share computed here. None: no worker (one job, too few
    item directories, or no fork)."""
    if jobs < 2 or not hasattr(os, "fork"):
        return None
    if not _enough(_entrypoints(tree), min_items):  # (never fewer than the item directories)
        return None  # before grouping the files: 5 ms of a cold 1,000-item build, for nothing
    groups = _groups(tree)
    if not _enough(len(groups), min_items):
        return None
    client_registry.get(clients)  # the adapters imported once, before the workers are forked
    _prepare_validators(groups)
    workers = Workers(groups, clients, memo, _shares(groups, jobs), spill)
    if memo.spool is None:
        workers.fill()
        return None
    return workers


class Workers:
    """The forked workers of one build and what they have sent so far."""

    def __init__(self, groups: Dict[str, List[SourceFile]], clients: Sequence[str], memo: Memo,
                 shares: List[List[str]], spill: Optional[Spill] = None):
        self.memo = memo
        # The build's own share, as a tree only when `fill` computes it here.
        self.own = _subtree(groups, shares[0]) if memo.spool is None else None
        self.clients = list(clients)
        # Outermost item directory -> its worker (None: the build's own).
        self.by_top: Dict[str, Optional[_Worker]] = dict.fromkeys(shares[0])
        self.by_digest: Dict[str, _Worker] = {}  # item digest -> the worker that parsed it
        self.workers: List[_Worker] = []
        where = memo.spool.root if memo.spool is not None else None
        for share in shares[1:]:
            # The worker's rendered bytes go to a spill of its own, made before the fork and
            # closed with the build's (whose plan holds their files until the write).
            own_spill = None
            if spill is not None and memo.spool is not None:
                own_spill = Spill(spill.directory, limit=0)
                if own_spill.open_now():
                    spill.attach(own_spill)
                else:
                    own_spill = None
            worker = _Worker.start(_subtree(groups, share), self.clients, where, self, own_spill)
            self.by_top.update((top, worker) for top in share)  # None: no fork, no file: computed here
            if worker is not None:
                self.workers.append(worker)
        memo.feed = self

    def __call__(self, key: Hashable) -> Optional[Tuple[bytes, Any]]:
        worker = self._owner(key)
        return worker.take(key) if worker is not None else None

    def _owner(self, key: Hashable) -> Optional["_Worker"]:
        if not isinstance(key, tuple) or not key:
            return None
        if key[0] == "dir" and len(key) > 1 and isinstance(key[1], str):
            d = key[1]
            while True:  # the outermost item directory holding `d`
                if d in self.by_top:
                    return self.by_top[d]
                parent = posixpath.dirname(d)
                if parent == d:
                    return None
                d = parent
        if key[0] == "render":  # the item's digest is in the key: the worker that parsed it
            if len(key) > 5 and isinstance(key[5], str):
                # Where `plan.render_key` puts it: one lookup, and for an item of the build's
                # own share (no worker's) no look at the key's other parts either.
                return self.by_digest.get(key[5])
            for part in key:
                if isinstance(part, str):
                    worker = self.by_digest.get(part)
                    if worker is not None:
                        return worker
        return None

    def fill(self) -> None:
        """Every entry into the memo now: the first share computed here, then every entry
        the workers made adopted."""
        try:
            if self.own is not None:
                _compute(self.own, self.clients, self.memo)
            for worker in self.workers:
                while worker.more():
                    pass
                for key in list(worker.pending):
                    self.memo.get(key)
        finally:
            self.close()

    def close(self) -> None:
        """The workers stopped (a build that no longer asks for entries has what it needs)
        and reaped; what they sent and the build did not take is dropped."""
        if self.memo.feed is self:
            self.memo.feed = None
        for worker in self.workers:
            worker.close()
        self.workers = []
        self.by_top.clear()
        self.by_digest.clear()


class _Worker:
    """One forked worker, seen from the build: its process, its file and pipe, the entries
    read from it that the build has not asked for yet."""

    def __init__(self, pid: int, data: int, notes: int, owner: Workers, spill: Optional[Spill] = None):
        self.pid = pid
        self.spill = spill  # where the worker put its renderings' bytes (read from here)
        self.data = data  # the file the worker appends chunks to (read with pread)
        self.notes = notes  # the pipe: each chunk's length, then end of file when it is done
        self.offset = 0
        self.done = False
        self.owner = owner
        self.pending: Dict[Hashable, Tuple[bytes, Any]] = {}
        # Item digest -> the bytes of its directory's resources (`_resources`), as loaded
        # here: what the worker's renderings name instead of copying them (`_Sink.put`).
        self.resources: Dict[str, List[bytes]] = {}

    @classmethod
    def start(cls, subtree: SourceTree, clients: List[str], where: Any, owner: Workers,
              spill: Optional[Spill] = None) -> Optional["_Worker"]:
        fds: List[int] = []
        try:
            fds.append(_scratch(where))
            fds.extend(os.pipe())
            pid = os.fork()
        except OSError:
            for fd in fds:
                os.close(fd)
            return None
        data, read, write = fds
        if pid == 0:  # the worker: compute, write, exit without the parent's cleanup handlers
            code = 1
            try:
                os.close(read)
                sink = _Sink(data, write, spill)
                _compute(subtree, clients, sink)
                sink.flush()
                code = 0
            except BaseException:
                pass
            os._exit(code)
        os.close(write)
        return cls(pid, data, read, owner, spill)

    def take(self, key: Hashable) -> Optional[Tuple[bytes, Any]]:
        """The worker's entry for `key` (its bytes for the memo, its value), read (waiting
        for it) if need be; None when the worker ended without making it, or it cannot be
        loaded (the build computes it)."""
        while True:
            got = self.pending.pop(key, None)
            if got is not None or not self.more():
                break
        if got is None:
            return None
        packed, where = got
        try:
            value = pickling.loads(packed)
            if where is None:  # a directory's entry: its resources, for the renderings that name them
                items = value[0]
                if items and items[0].digest:
                    self.resources[items[0].digest] = _resources(items)
            else:  # a rendering, its files' digests replaced by their bytes (`plan._pack`'s form)
                files, report, frags = value
                if len(files) != len(where):
                    return None
                value = (tuple((f[0], self._content(w), *f[2:]) for f, w in zip(files, where)), report, frags)
        except Exception:
            return None
        return packed, value

    def _content(self, where: Any) -> Any:
        """A worker's file's bytes, from where it said they are (`_Sink.put`)."""
        if type(where) is bytes:
            return where
        if where[0] == SPILLED and self.spill is not None:
            return Ref(self.spill, where[1], where[2], where[3])
        if where[0] == RESOURCE:
            return self.resources[where[1]][where[2]]
        raise LookupError(where)

    def more(self) -> bool:
        """One more chunk read into `pending`; False when the worker has sent everything."""
        if self.done:
            return False
        note = b""
        while len(note) < _NOTE.size:
            try:
                part = os.read(self.notes, _NOTE.size - len(note))
            except InterruptedError:
                continue
            except OSError:
                part = b""
            if not part:
                self.done = True
                return False
            note += part
        (length,) = _NOTE.unpack(note)
        try:
            chunk = os.pread(self.data, length, self.offset)
            entries = pickling.loads(chunk) if len(chunk) == length else None
        except Exception:
            entries = None
        if entries is None:  # never short in practice: stop reading this worker
            self.done = True
            return False
        self.offset += length
        del chunk
        for key, packed, where, digests in entries:
            self.pending[key] = (packed, where)
            for d in digests:
                self.owner.by_digest[d] = self
        return True

    def close(self) -> None:
        if not self.done:  # still computing what the build did not ask for
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.waitpid(self.pid, 0)
        except OSError:
            pass
        for fd in (self.data, self.notes):
            try:
                os.close(fd)
            except OSError:
                pass
        self.pending.clear()
        self.resources.clear()
        self.done = True


class _Sink:
    """The memo a worker computes into: nothing to read; each entry put is pickled as the
    build's memo would spool it (renderings as digests) and sent with the next chunk, a
    rendering with where each of its files' bytes are (the build writes them). A
    directory's entry names its items' digests, by which the build knows whom to ask for
    their renderings."""

    digests = False  # renderings are put with their bytes: the build needs them

    def __init__(self, data: int, notes: int, spill: Optional[Spill] = None):
        self.data = data
        self.notes = notes
        self.spill = spill  # where a rendering's own files' bytes go (named, not sent), if anywhere
        self.chunk: List[Tuple[Hashable, bytes, Any, Tuple[str, ...]]] = []
        self.size = 0
        self.kind: Any = None
        self.shared: Dict[int, Tuple[str, str, int]] = {}  # id of a resource's bytes -> its name
        self.keep: List[bytes] = []  # those bytes, alive while their ids name them
        # Id of a resource's bytes -> their sha256 (hex): each rendering of its item names it
        # in the memo's entry, one digest taken instead of one per client (`plan.digests_only`).
        self.resource_digests: Dict[int, str] = {}

    def get(self, key: Hashable) -> Any:
        return None

    def put(self, key: Hashable, value: Any) -> None:
        kind = key[0] if isinstance(key, tuple) and key else None
        if kind != self.kind:  # every directory sent before the first rendering
            self.flush()
            self.kind = kind
        spilled = self._spilled(value) if kind == "render" else {}
        # A spilled file's digest, taken as it was spilled, serves the memo's entry too; a
        # resource's, taken once, every client's copy of it.
        known = self.resource_digests
        known.update((k, name[3]) for k, name in spilled.items())
        try:
            packed = cache.dumps(key, value, known)
        finally:
            for k in spilled:  # those bytes go with the rendering: their ids may name others next
                del known[k]
        where: Any = None
        digests: Tuple[str, ...] = ()
        if kind == "render":
            shared = self.shared
            where = tuple(spilled.get(id(f[1])) or shared.get(id(f[1])) or f[1] for f in value[0])
            self.size += sum(len(w) for w in where if type(w) is bytes)
        elif kind == "dir":
            items = value[0]
            digests = tuple({i.digest for i in items if i.digest})
            if items and items[0].digest:
                for n, content in enumerate(_resources(items)):
                    self.shared[id(content)] = (RESOURCE, items[0].digest, n)
                    self.resource_digests[id(content)] = hashlib.sha256(content).hexdigest()
                    self.keep.append(content)
        self.chunk.append((key, packed, where, digests))
        self.size += len(packed)
        if self.size >= CHUNK:
            self.flush()

    def _spilled(self, value: Any) -> Dict[int, Tuple[str, int, int, str]]:
        """The rendering's own plain files' bytes put in the spill, by the id of each: what
        the pickler names instead of copying (the build reads them back as it writes, and
        neither loads nor hashes them). Not its item's resources (named apart, shared) nor
        merged config files; none when there is no spill, or it fails."""
        spill = self.spill
        if spill is None or not isinstance(value, tuple) or not value:
            return {}
        names: Dict[int, Tuple[str, int, int, str]] = {}
        for f in value[0]:
            content = f[1]
            if type(content) is not bytes or f[4] or id(content) in self.shared or len(content) < SPILL_MIN:
                continue
            at = spill.append(content)
            if at is None:
                return names
            names[id(content)] = (SPILLED, at, len(content), hashlib.sha256(content).hexdigest())
        return names

    def flush(self) -> None:
        if self.spill is not None and not self.spill.flush():
            self.spill = None  # what was spilled is still there; nothing more goes to it
        if not self.chunk:
            return
        data = pickling.dumps(self.chunk, protocol=pickling.PROTOCOL)
        self.chunk = []
        self.size = 0
        write_all(self.data, data)
        write_all(self.notes, _NOTE.pack(len(data)))


SHARED_MIN = 64  # a resource shorter than this is copied: naming it saves nothing
SPILL_MIN = 256  # a rendered file shorter than this is sent as it is
SPILLED, RESOURCE = "spill", "resource"  # where a worker's file's bytes are (`_Sink.put`)


def _resources(items: Sequence[Any]) -> List[bytes]:
    """The bytes of a directory's resources (an item's supporting files, in its entry), in
    order: the same objects each rendering of the item writes as a file, for every client.
    Sent apart, each rendering of a worker's entry would bring its own copy of each (four
    where a build without workers holds one: at 5,000 items, 6 MB more at the peak)."""
    return [r.content for item in items for r in getattr(item, "resources", ())
            if isinstance(getattr(r, "content", None), bytes) and len(r.content) >= SHARED_MIN]


def _scratch(where: Any) -> int:
    """An unnamed file for a worker's chunks: beside the memo (whose spool they go to), else
    in the system's temporary directory."""
    if where is not None:
        try:
            os.makedirs(where, exist_ok=True)
            return unnamed(str(where))
        except OSError:
            pass
    return unnamed(None)


def _shares(groups: Dict[str, List[SourceFile]], jobs: int) -> List[List[str]]:
    """The sorted outermost item directories cut into `jobs` contiguous runs, the first
    (the build's own) `own` times the cost of each of the others (`_cost`): the build asks
    for entries in that order, so each worker's come in the order they are wanted."""
    own = OWN_SHARE
    tops = sorted(groups)
    costs = [_cost(groups[t]) for t in tops]
    total = sum(costs) or 1
    bounds = [(own + i) / (own + jobs - 1) * total for i in range(jobs - 1)]  # where shares 1.. start
    shares: List[List[str]] = [[] for _ in range(jobs)]
    done = share = 0
    for top, cost in zip(tops, costs):
        while share < jobs - 1 and done >= bounds[share]:
            share += 1
        shares[share].append(top)
        done += cost
    return shares


def _prepare_validators(groups: Dict[str, List[SourceFile]]) -> None:
    """The schema validators of the item kinds the tree holds, compiled before the workers
    fork: each worker compiled them again otherwise (12 ms each), while the build waited for
    its first entries."""
    from agentrc import schemas

    kinds: Set[Kind] = set()
    for files in groups.values():
        kinds.update(k for k in (ENTRYPOINTS.get(posixpath.basename(f.path)) for f in files) if k is not None)
        if len(kinds) == len(ENTRYPOINTS):
            break
    blocks = client_registry.client_names().blocks
    for kind in sorted(kinds, key=lambda k: k.value):
        schemas.prepare("item", kind.value, blocks)


def precompile_validators() -> int:
    """The schema validators agentrc uses (each item kind with every registered client's
    block, and every other schema whole: bundles, registry markers, the lock, the project
    file, the canonical document, the capability packages' files), compiled beside the
    schemas (`schemas.precompile`), as `compileall` compiles bytecode: `python -c "from
    agentrc.pipeline import warm; warm.precompile_validators()"`. How many are there. (The
    lock's alone was compiled again by every `install` and `add`: 30 ms at 1,000 entries.)"""
    from agentrc import schemas

    blocks = client_registry.client_names().blocks
    wanted: List[Tuple[str, str, Sequence[str]]] = [("item", kind.value, blocks) for kind in Kind]
    wanted += [(name, "", ()) for name in schemas.names() if name != "item"]
    return schemas.precompile(wanted)


def _cost(files: List[SourceFile]) -> int:
    """A directory's parse and renderings, in about bytes: its entrypoints' bytes, a quarter
    of its other files' (copied, not parsed), and a fixed cost of about 2 KB. By count, a
    share of skills (with references) and one of agents differ by a quarter; by all their
    bytes, by half the other way (measured per kind at 5,000 items: 0.75, 0.59 and 0.63 ms a
    directory of agents, rules and skills, with 3.8 KB of entrypoint each and 1.7 KB of
    other files a skill)."""
    cost = 2048
    for f in files:
        size = _size(f)
        cost += size if posixpath.basename(f.path) in ENTRYPOINTS else size // 4
    return cost


def _subtree(groups: Dict[str, List[SourceFile]], tops: List[str]) -> SourceTree:
    return SourceTree(tuple(sorted((f for top in tops for f in groups[top]), key=lambda f: f.path)))


def _size(f: SourceFile) -> int:
    """A source's bytes, without reading it (a file the source stamp vouched for is not)."""
    held = vars(f)
    content = held.get("content", held.get("_bytes"))
    return len(content) if isinstance(content, bytes) else 4096


def _compute(tree: SourceTree, clients: Sequence[str], memo: Any) -> None:
    """The memo entries of the item directories in `tree` put into `memo`, in a build's order:
    each directory parsed, then each item rendered client by client. Not the reference checks
    (a share is not the whole registry: most references missing, every name searched for a
    suggestion), nor the rest of the plan (`plan.render_all`); nothing rendered when a file
    fails validation, as in a build (the adapters take valid items only: an unknown tool was
    a KeyError, a traceback in the Pants plugin's node for the directory)."""
    registry, diags = load_registry(tree, client_registry.client_names(), (), memo)
    if any(d.is_error for d in diags):
        return
    build.render_all(registry, client_registry.get(clients), memo)


def item_dir_groups(tree: SourceTree) -> Dict[str, List[SourceFile]]:
    """Files grouped by outermost item directory: the unit whose parse and renders depend
    on nothing else (the Pants plugin caches one graph node per group)."""
    return _groups(tree)


def entries(tree: SourceTree, clients: Sequence[str]) -> Dict:
    """Memo entries (parsed items, renders per client) for the item directories in `tree`."""
    return _entries(tree, clients)


def _entries(tree: SourceTree, clients: Sequence[str]) -> Dict:
    memo = Memo()
    _compute(tree, clients, memo)
    return memo.data


def _enough(count: int, min_items: Optional[int]) -> bool:
    """Whether `count` item directories call for a worker: `min_items` or more when the
    caller says, else `MIN_ITEMS`, or `IDLE_MIN_ITEMS` with a CPU idle right now."""
    if min_items is not None:
        return count >= min_items
    return count >= MIN_ITEMS or (count >= IDLE_MIN_ITEMS and cpus_free.spare(cpus_free.available()))


def _entrypoints(tree: SourceTree) -> int:
    """The item entrypoints of `tree`: at least as many as its outermost item directories."""
    return sum(1 for f in tree.files if f.path.rpartition("/")[2] in ENTRYPOINTS)


def _groups(tree: SourceTree) -> Dict[str, List[SourceFile]]:
    """Files grouped by their outermost item directory (nested item dirs stay together).
    Each directory's answer is kept for the directories below it: a file's own directory
    is looked up, and walked up from only once (at 10,000 items, walking up from every
    file to the root was a tenth of what the build spent before forking its workers)."""
    item_dirs = {posixpath.dirname(f.path) for f in tree.files if posixpath.basename(f.path) in ENTRYPOINTS}
    tops: Dict[str, Optional[str]] = {}  # directory -> its outermost item directory (None: none)
    groups: Dict[str, List[SourceFile]] = {}
    for f in tree.files:
        top = _top(posixpath.dirname(f.path), item_dirs, tops)
        if top is not None:
            groups.setdefault(top, []).append(f)
    return groups


def _top(d: str, item_dirs: Set[str], tops: Dict[str, Optional[str]]) -> Optional[str]:
    below: List[str] = []  # `d` and the directories above it not looked up yet, innermost first
    above: Optional[str] = None
    while d not in tops:
        below.append(d)
        parent = posixpath.dirname(d)
        if parent == d:
            break
        d = parent
    else:
        above = tops[d]
    for c in reversed(below):  # outermost first: the outermost item directory wins
        if above is None and c in item_dirs:
            above = c
        tops[c] = above
    return above
