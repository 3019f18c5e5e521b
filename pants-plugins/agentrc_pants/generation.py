"""Running the core's generation, in the daemon or as a cached Process.

Both modes call `agentrc.pipeline.stages.package` on the same sources; the Process mode exists so
results land in Pants' local and remote caches (plain rule results live only in pantsd's
memory). Its cache key is made to travel between clones and machines: the interpreter is
found on a fixed system search path (not the per-clone Pants venv), runs with `-S -E` so
nothing from the host's site-packages or environment leaks in, and the agentrc core and
its pure-Python dependencies are shipped in the input digest, so a change to agentrc is a
change of key.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from pants.core.util_rules.system_binaries import BinaryPath, BinaryPathRequest, BinaryPaths, BinaryPathTest
from pants.engine.fs import (
    CreateDigest,
    Digest,
    DigestContents,
    DigestSubset,
    FileContent,
    PathGlobs,
)
from pants.engine.process import Process, ProcessResult
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.util.frozendict import FrozenDict
from pants.util.logging import LogLevel

from agentrc.building import replan
from agentrc.diagnostics import Diagnostic, count_summary
from agentrc.memo import codec as memocodec
from agentrc.memo.cache import is_render_key
from agentrc.model import IgnoreList, SourceFile, SourceTree
from agentrc.output import plan as plan_output
from agentrc.pipeline import nogc, warm
from agentrc.pipeline import stages as pipeline
from agentrc.text import markdown
from agentrc_pants import memory, merging
from agentrc_pants.merging import KeyedMergeRequest
from agentrc_pants.rounds import in_rounds
from agentrc_pants.subsystem import AgentrcSubsystem, Execution

REPORT = pipeline.REPORT
subsets_cut = 0  # SubsetRequests run in this process (tests count the work of an edit)
dirs_asked = 0  # item directories asked for by ItemDirBucketRequests run in this process (the same)
CODE_DIR = "__agentrc__"
# The core and what it imports, all pure Python (compiled speed-ups are left out; each has
# a pure fallback), so the sandbox needs nothing installed but a python3.
SHIPPED_PACKAGES = ("agentrc", "yaml", "jsonschema", "fastjsonschema", "pathspec", "attr", "attrs", "pyrsistent",
                    "tomli")  # tomli: ai.config.toml on Python < 3.11
BOOTSTRAP = (f"import sys; sys.path.insert(0, {CODE_DIR!r}); "
             "from agentrc.pipeline.sandbox import main; sys.exit(main(sys.argv[1:]))")


@dataclass(frozen=True)
class GenerationRequest:
    digest: Digest
    tree: SourceTree
    clients: Tuple[str, ...]
    bundles: Tuple[str, ...] = ()
    entrypoints: Optional[Tuple[str, ...]] = None
    strict: bool = False
    explicit: Tuple[str, ...] = ()
    description: str = ""
    cross_source: bool = False  # `source:` references are resolved by the caller (a lock)
    skip_servers: Tuple[str, ...] = ()  # MCP servers a lock's `remove-mcp` took out
    shared_copies: bool = True  # the project file's `shared-copies`
    ignore: IgnoreList = IgnoreList()  # the project file's `ignore:` (a registry's package only)


@dataclass(frozen=True)
class GenerationResult:
    digest: Digest
    diagnostics: Tuple[Diagnostic, ...]
    files: int

    def raise_on_error(self, where: str) -> None:
        if any(d.is_error for d in self.diagnostics):
            raise AgentrcBuildError(where, self.diagnostics)

    def summary_line(self, prefix: str) -> str:
        return f"Wrote {self.files} file(s) to {prefix} ({count_summary(self.diagnostics)})"


class AgentrcBuildError(Exception):
    def __init__(self, where: str, diagnostics: Tuple[Diagnostic, ...]):
        text = "\n".join(d.format() for d in diagnostics)
        super().__init__(f"agentrc found problems building {where}:\n{text}")


@dataclass(frozen=True)
class AgentrcCode:
    digest: Digest


@lru_cache(maxsize=None)
def _code_files() -> Tuple[Tuple[str, bytes], ...]:
    """The shipped packages' source files, read from where this process imported them."""
    out = []
    for name in SHIPPED_PACKAGES:
        module = importlib.import_module(name)
        module_file = module.__file__
        assert module_file is not None  # regular packages (namespace packages have no __file__)
        root = os.path.dirname(module_file)
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for fn in sorted(filenames):
                if fn.endswith((".py", ".json", ".typed", ".md")):
                    full = os.path.join(dirpath, fn)
                    rel = os.path.join(name, os.path.relpath(full, root))
                    with open(full, "rb") as fh:
                        out.append((rel, fh.read()))
    return tuple(out)


@rule(desc="Collect the agentrc core for sandboxed generation", level=LogLevel.DEBUG)
async def agentrc_code() -> AgentrcCode:
    digest = await Get(Digest, CreateDigest(FileContent(p, c) for p, c in _code_files()))
    return AgentrcCode(digest)


@dataclass(frozen=True)
class AgentrcPython:
    path: BinaryPath


@rule(desc="Find a python3 for sandboxed agentrc generation", level=LogLevel.DEBUG)
async def agentrc_python(subsystem: AgentrcSubsystem) -> AgentrcPython:
    paths = await Get(BinaryPaths, BinaryPathRequest(
        binary_name="python3", search_path=tuple(subsystem.process_python_search_path),
        # Exits non-zero (so is skipped) below 3.9; prints the full version, which Pants
        # fingerprints and we put in the Process environment: a different interpreter version
        # at the same path is a different cache key.
        test=BinaryPathTest(["-c", "import sys; sys.exit(sys.version_info < (3, 9)) or print(sys.version)"])))
    first = paths.first_path
    if first is None:
        raise ValueError("No python3 (>= 3.9) found on [agentrc].process_python_search_path "
                         f"{list(subsystem.process_python_search_path)}; set it, or use "
                         "[agentrc].execution = \"in-process\".")
    return AgentrcPython(first)


def _drop_text_caches() -> None:
    """The core memoises markdown scans and formatted bodies (`markdown.TEXT_CACHE_ENTRIES`
    each); in pantsd they would live as long as the daemon, holding the last bodies seen. Each call into the core here
    runs without an `await` inside, so clearing after it loses no sharing between rules."""
    markdown.scan.cache_clear()
    markdown.format_body.cache_clear()


@dataclass(frozen=True)
class ItemDirRequest:
    """One item directory's files (nested item directories included) and the clients."""

    files: Tuple[SourceFile, ...]
    clients: Tuple[str, ...]


@dataclass(frozen=True)
class ItemDirEntries:
    entries: Tuple[Tuple[Any, Any], ...]  # agentrc build-memo entries: parsed items and renders
    # The directory's own rendered files, (path, bytes, executable), and their digest: None
    # when it has none, or two renderings disagree about one path.
    files: Tuple[Tuple[str, bytes, bool], ...] = ()
    digest: Optional[Digest] = None


def own_files(entries: Tuple[Tuple[Any, Any], ...]) -> Optional[Tuple[Tuple[str, bytes, bool], ...]]:
    """The plain files (not merged into a shared config) an item directory's renderings
    write, by path; None when two of them write one path differently (the plan decides)."""
    found: Dict[str, Tuple[str, bytes, bool]] = {}
    for key, value in entries:
        if not is_render_key(key):
            continue
        for path, content, executable, _owner, merge, *_ in value[0]:
            if merge or not isinstance(content, bytes):
                continue
            known = found.get(path)
            if known is None:
                found[path] = (path, content, executable)
            elif known[1] != content or known[2] != executable:
                return None
    return tuple(found[p] for p in sorted(found))


def reused(parts: Sequence[ItemDirEntries], files: Sequence[Tuple[str, bytes, bool]]
           ) -> Tuple[List[Digest], List[Tuple[str, bytes, bool]], List[Tuple[Digest, Tuple[str, ...]]]]:
    """How a target's tree is made from its item directories' digests: the digests of the
    directories whose own files are all in `files` as they rendered them, and the files no
    such digest holds (merged configs, the report, anything the plan changed), for one
    CreateDigest. Merged, they are exactly `files`: an edit creates the edited directory's
    files and the rest, not every file of the registry again (2.2 s of a 5,000-item edit).
    The third list: (digest, paths) of the directories the plan took only some files of, as
    rendered (a client that reads another's copy of a skill gets none of its own:
    shared-copies), whose digests serve those paths through a DigestSubset."""
    planned = {p: (c, x) for p, c, x in files}
    digests: List[Digest] = []
    subsets: List[Tuple[Digest, Tuple[str, ...]]] = []
    covered: Set[str] = set()
    for part in parts:
        if part.digest is None:
            continue
        taken = [p for p, c, x in part.files if planned.get(p) == (c, x)]
        if len(taken) == len(part.files):
            digests.append(part.digest)
        elif taken and all(p not in planned for p, c, x in part.files if planned.get(p) != (c, x)):
            subsets.append((part.digest, tuple(taken)))  # the rest dropped, none changed
        else:
            continue
        covered.update(taken)
    return digests, [f for f in files if f[0] not in covered], subsets


def _kept_unpacked(entries: Tuple[Tuple[Any, Any], ...]) -> Tuple[Tuple[Any, Any], ...]:
    """The directory's render entries as the Renderings a plan takes as they are: this node
    lives as long as pantsd and the directory, and each plan over the registry unpacked
    every directory's entries again (15,000 at 5,000 items: 0.08 s of an edit's 0.8 s plan)."""
    out = []
    for key, value in entries:
        if is_render_key(key):
            value = plan_output.unpacked(value) or value
        out.append((key, value))
    return tuple(out)


async def _with_digest(entries: Tuple[Tuple[Any, Any], ...]) -> ItemDirEntries:
    files = own_files(entries)
    entries = _kept_unpacked(entries)
    if not files:
        return ItemDirEntries(entries)
    digest = await Get(Digest, CreateDigest(FileContent(p, c, is_executable=x) for p, c, x in files))
    return ItemDirEntries(entries, files, digest)


@rule(desc="Parse and render one agentrc item directory", level=LogLevel.DEBUG)
async def item_dir_entries(request: ItemDirRequest) -> ItemDirEntries:
    # An item directory parses and renders from its own files alone (the CLI memo is keyed
    # the same way), so this node is shared by every target whose closure holds the
    # directory, and an edit reruns only the edited directory's node.
    with nogc.paused():
        found = warm.entries(SourceTree(request.files), request.clients)
    _drop_text_caches()
    return await _with_digest(tuple(found.items()))


@dataclass(frozen=True)
class ItemDirProcessRequest:
    """Keyed by the directory's own files, like ItemDirRequest, so every target whose
    closure holds the directory shares one node (and the process's result)."""

    files: Tuple[SourceFile, ...]
    clients: Tuple[str, ...]


@rule(desc="Parse and render one agentrc item directory in a sandbox", level=LogLevel.DEBUG)
async def item_dir_entries_process(request: ItemDirProcessRequest) -> ItemDirEntries:
    code, python = await MultiGet(Get(AgentrcCode), Get(AgentrcPython))
    payload = json.dumps({"files": [f.path for f in request.files],
                          "executable": [f.path for f in request.files if f.executable],
                          "clients": list(request.clients)}, sort_keys=True).encode()
    # The directory's own files and the request: the cache key depends on nothing else.
    input_digest = await Get(Digest, CreateDigest(
        [*(FileContent(f.path, f.content, is_executable=f.executable) for f in request.files),
         FileContent("__request__.json", payload)]))
    top = os.path.commonpath([f.path for f in request.files]) if request.files else ""
    result = await Get(ProcessResult, Process(
        argv=(python.path.path, "-S", "-E", "-c", BOOTSTRAP, "__request__.json"),
        input_digest=input_digest,
        # The code is an immutable input: Pants links it into each sandbox instead of copying
        # 3 MB per process, and it is still part of the cache key.
        immutable_input_digests=FrozenDict({CODE_DIR: code.digest}),
        env={"AGENTRC_PYTHON": python.path.fingerprint},
        output_files=("__entries__.json",),
        description=f"agentrc parse and render {top}",
        level=LogLevel.DEBUG,
    ))
    contents = await Get(DigestContents, Digest, result.output_digest)
    return await _with_digest(tuple(memocodec.loads(contents[0].content).items()))


class _Payload:
    """The bytes of a `FilesDigestRequest`, outside its key, let go once their digest is made.

    The request stays in pantsd's graph as its node's key for the daemon's life: holding a
    registry's report there for every version of it would grow pantsd by the report's size
    (15 MB at 5,000 items) each time it changes."""

    __slots__ = ("files",)

    def __init__(self, files: Optional[Tuple[Tuple[str, bytes, bool], ...]]):
        self.files = files


@dataclass(frozen=True)
class FilesDigestRequest:
    """Files to make a Digest of, keyed by their paths, SHA-256 and modes.

    Pants 2.17 memoises a rule by its request but not an intrinsic `Get(Digest,
    CreateDigest(...))` awaited inside one: each such Get hashes and stores every byte
    again, 0.33 s for a 5,000-item registry's 14.8 MB report in every edit though the
    report had not changed. Behind this rule an unchanged set of files costs its SHA-256
    (about 10 ms for the report) and a lookup."""

    key: Tuple[Tuple[str, str, bool], ...]
    payload: _Payload = field(compare=False, hash=False, repr=False)

    @classmethod
    def of(cls, files: Sequence[Tuple[str, bytes, bool]]) -> "FilesDigestRequest":
        files = tuple(files)
        return cls(tuple((p, hashlib.sha256(c).hexdigest(), x) for p, c, x in files), _Payload(files))


@rule(desc="Digest agentrc files", level=LogLevel.DEBUG)
async def files_digest(request: FilesDigestRequest) -> Digest:
    files = request.payload.files
    if files is None:
        # Only a node that completed let its bytes go, and Pants runs a completed node
        # again only if something it depends on changed: nothing here does.
        raise AssertionError(f"agentrc: the files of {[p for p, _, _ in request.key]} were already digested")
    digest = await Get(Digest, CreateDigest(FileContent(p, c, is_executable=x) for p, c, x in files))
    request.payload.files = None
    return digest


@dataclass(frozen=True)
class ItemDirBucketRequest:
    """Some item directories (a bucket of `merging.buckets`, by directory) whose nodes are
    asked for together: `generate` asks for a hundred buckets, not for 5,000 directories in
    every edit (0.1-0.4 s of Gets at 5,000 items), and only the edited directory's bucket
    asks its directories again, all but one answered from their nodes."""

    dirs: Tuple[Tuple[SourceFile, ...], ...]
    clients: Tuple[str, ...]
    process: bool = False  # `[agentrc].execution = "process"`: each directory a sandboxed Process


@dataclass(frozen=True)
class ItemDirBucket:
    parts: Tuple[ItemDirEntries, ...]  # in the order of the request's directories


@rule(desc="Parse and render a bucket of agentrc item directories", level=LogLevel.DEBUG)
async def item_dir_bucket(request: ItemDirBucketRequest) -> ItemDirBucket:
    global dirs_asked
    dirs_asked += len(request.dirs)
    if request.process:
        parts = await MultiGet(Get(ItemDirEntries, ItemDirProcessRequest(files, request.clients))
                               for files in request.dirs)
    else:
        parts = await MultiGet(Get(ItemDirEntries, ItemDirRequest(files, request.clients)) for files in request.dirs)
    return ItemDirBucket(tuple(parts))


@dataclass(frozen=True)
class SubsetRequest:
    """Some files of an item directory's digest: the copies a plan keeps of a skill whose other
    clients read that copy (shared-copies). A rule, so that the subset is memoised by its
    request: an intrinsic `DigestSubset` awaited inside `generate` is not (see
    `FilesDigestRequest`), and every edit cut the subset of each such directory again (1,600
    at 5,000 items); now the edited directory's alone."""

    digest: Digest
    paths: Tuple[str, ...]


@rule(desc="Subset an agentrc item directory's digest", level=LogLevel.DEBUG)
async def digest_subset(request: SubsetRequest) -> Digest:
    global subsets_cut
    subsets_cut += 1
    return await Get(Digest, DigestSubset(request.digest, PathGlobs(request.paths)))


@rule(desc="Generate agentrc client trees", level=LogLevel.DEBUG)
async def generate(request: GenerationRequest, subsystem: AgentrcSubsystem) -> GenerationResult:
    if subsystem.release_memory:
        memory.watch()
    # Parsing and rendering happen per item directory (a node each, shared by every target
    # whose closure holds it, in the daemon or as a cached sandboxed Process); the global
    # part (references, selection, conflicts, project files) runs here on those results.
    groups = sorted(warm.item_dir_groups(request.tree).items())
    order = merging.buckets([key for key, _ in groups])
    process = subsystem.execution is not Execution.in_process
    found = await in_rounds([Get(ItemDirBucket, ItemDirBucketRequest(
        tuple(tuple(groups[i][1]) for i in bucket), request.clients, process)) for bucket in order],
        [len(bucket) for bucket in order])
    parts: List[ItemDirEntries] = [ItemDirEntries(())] * len(groups)
    for bucket, got in zip(order, found):
        for i, part in zip(bucket, got.parts):
            parts[i] = part
    # pantsd's heap is walked by each full collection (0.1-0.2 s at 5,000 items), and the
    # allocations from the memo to the reuse check (tens of thousands of tuples) set one
    # off: none of them makes a cycle, so the collector waits until the next `await`.
    with nogc.paused():
        files, diagnostics, count = _package(request, {key: part.entries for (key, _), part in zip(groups, parts)})
        digests, rest, subsets = reused(parts, files)
        rest_request = FilesDigestRequest.of(rest)
    _drop_text_caches()
    digest = await Get(Digest, FilesDigestRequest, rest_request)
    # Each directory's digest keyed by its directory, so an edit merges its bucket again and
    # not the registry's 5,000 digests (merging.py).
    key_of = {part.digest: key for (key, _), part in zip(groups, parts)}
    keyed = [(key_of[d], d) for d in digests]
    if subsets:
        taken = await MultiGet(Get(Digest, SubsetRequest(d, paths)) for d, paths in subsets)
        keyed += [(key_of[d], t) for (d, _), t in zip(subsets, taken)]
    if keyed:
        digest = await Get(Digest, KeyedMergeRequest(tuple(keyed), (digest,)))
    return GenerationResult(digest, diagnostics, count)


# The last package of each shape, for the next edit to replay onto (agentrc.building.replan).
LAST = replan.LastPackages()


def _package(request: GenerationRequest, entries: Dict[str, Any]
             ) -> Tuple[Tuple[Tuple[str, bytes, bool], ...], Tuple[Diagnostic, ...], int]:
    return LAST.package(request.tree, entries, request.clients, request.bundles, request.entrypoints,
                        request.strict, request.explicit, request.cross_source, request.skip_servers,
                        request.shared_copies, request.ignore)


def rules():
    return collect_rules()
