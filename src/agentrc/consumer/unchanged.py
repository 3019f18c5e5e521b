"""A consumer command with nothing to do (issue 36): `install` of an installed project, and
`update` when every locked source's ref still names its locked commit, answered from a stamp
of the last command's result, as `agentrc build` answers a build with nothing to do
(`building.build`): nothing parsed, rendered, fetched or written; a stat per installed file
and per file of the locked checkouts, and for `update` one `git ls-remote` per repository.
At 1,000 items `install` took 0.95 s and `update` 1.5 s where a no-op build takes 0.16 s.

The stamp lives in the user's cache beside the project's memo. It is written after a command
that worked, and holds what that command's result depends on: the lock's bytes and the
project file's as the command left them (their digest is salted with agentrc's own code),
the manifest's digest and the installed files' statuses (`output.writer.untouched`), the
statuses of the locked commits' checkouts in the cache (a tampered cache is read again, and
warned about, by the full command), and the diagnostics to say again. It answers only when
no other state can differ: every locked source is a git commit (a local directory may have
changed since), no plugin and no MCP server registered through a client's CLI (their state
is the client's, not the project's files), and Claude Code's CLI absent when the lock
configures MCP servers for it (a full install would move them to the CLI). `update` also needs
the lock's entries to be what resolving its direct entries at those commits gives (`resolved`:
an `update` resolved them all, or an `add` into a lock with no entries, and what it said is
kept to be said again).
"""

from __future__ import annotations

import contextlib
import os
import shutil

from agentrc import pickling
from agentrc.consumer.result import Result
from agentrc.diagnostics import Diagnostic, said_again
from agentrc.fdio import read_regular
from agentrc.fingerprint import digest
from agentrc.inputs import fetchcache
from agentrc.inputs.checkout import _entry, _repo_name
from agentrc.inputs.fetch import cache_dir
from agentrc.memo import stamp as stampfile
from agentrc.output import writer
from agentrc.sources.dsl import GIT, SourceError, parse

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple

    from agentrc.inputs.fetch import Fetcher
    from agentrc.sources.lock import Entry, Lock

LOCK = "agentrc.lock.json"  # sources.lock.LOCK_FILE, without importing the lock's schema
PROJECT_FILE = "agentrc.yaml"  # project.FILE_NAME
VERSION = 1
_MAX = 16 << 20  # sources.lock.MAX_LOCK_BYTES: a larger file is the full command's to refuse
TAGS, HEADS = "refs/tags/", "refs/heads/"


def memo_path(project: str) -> str:
    """The project's own memo (`reading.ProjectFetcher`), which the stamp sits beside."""
    return stampfile.location(project, [os.path.join(project, LOCK)])


def _bytes(path: str, follow: bool) -> Tuple[bool, Optional[bytes]]:
    """(readable as the full command reads it, the bytes: None when there is no file).
    The lock is never read through a link (`inputs.lockread`): one is no answer here; nor
    is anything but a regular file (`fdio.read_regular` does not block on a FIFO)."""
    try:
        data, _ = read_regular(path, _MAX, follow=follow)
    except FileNotFoundError:
        return True, None
    except OSError:
        return False, None
    return len(data) <= _MAX, data


def _key(project: str) -> Optional[str]:
    """The digest of the lock's and the project file's bytes; None without a readable lock."""
    ok, lock = _bytes(os.path.join(project, LOCK), False)
    if not ok or lock is None:
        return None
    ok, own = _bytes(os.path.join(project, PROJECT_FILE), True)
    if not ok:
        return None
    return digest([lock, b"-" if own is None else b"+" + own])


def _checkouts(groups: Sequence[Tuple[str, Optional[str], Optional[str]]]) -> Optional[Tuple[str, ...]]:
    """The locked commits' cache entries as they are on disk: each file's and directory's
    path, then their size, mtime and mode in a row (a file changed, added or removed changes
    them or its directory's); None when a source is no git commit or an entry is not there
    (the full command reads, or fetches, it)."""
    paths: List[str] = []
    for name, ref, commit in groups:
        try:
            source = parse(name).at(ref)
        except SourceError:
            return None
        if source.kind != GIT or not commit:
            return None
        top = _entry(os.path.join(cache_dir(), _repo_name(source)), commit, source.subpath)
        if top is None or not _walk(top, paths):
            return None
        paths.append(fetchcache.record_path(top))
    return tuple(paths)


def _walk(top: str, paths: List[str]) -> bool:
    stack = [top]
    while stack:
        where = stack.pop()
        paths.append(where)
        try:
            with os.scandir(where) as it:
                for e in it:
                    if e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
                    else:
                        paths.append(e.path)
        except OSError:
            return False
    return True


def _statuses(paths: Sequence[str]) -> Optional[Tuple[int, ...]]:
    """Size, mtime and mode of each of `paths` in a row; None when one is gone."""
    lstat = os.lstat
    numbers: List[int] = []
    try:
        for path in paths:
            st = lstat(path)
            numbers += (st.st_size, st.st_mtime_ns, st.st_mode)
    except OSError:
        return None
    return tuple(numbers)


def save(project: str, lock: Optional[Lock], diagnostics: Sequence[Diagnostic], changes: Optional[writer.Changes],
         out: Optional[writer.Output], found: Optional[Sequence[Diagnostic]] = None) -> None:
    """After a command that worked: the stamp of what it left, or none when the next command
    could not be answered from one (see the module's docstring). `found`: what resolving the
    lock's direct entries said, when the command (an update) resolved them all again, which
    is also what vouches that the entries are what resolving gives (an add into a lock with
    no entries resolved them all too); kept by the commands that keep the entries (install,
    remove-mcp), else unknown and the next update is a full one."""
    if lock is None:  # a global installation: its files are the user's, no manifest vouches for them
        return
    path = memo_path(project)
    previous = stampfile.load_stamp(path) or {}
    groups = sorted({(e.source, e.ref, e.commit) for e in lock.entries}, key=lambda g: tuple(x or "" for x in g))
    key = _key(project)
    checkouts = _checkouts(groups) if key is not None and _eligible(lock) else None
    numbers = _statuses(checkouts) if checkouts is not None else None
    if key is None or checkouts is None or numbers is None or changes is None:
        if previous:  # what it vouched for is no more
            with contextlib.suppress(OSError):
                os.unlink(stampfile.beside(path, ".stamp"))
        return
    entries = digest([repr(lock.entries).encode()])
    manifest = writer.manifest_digest(project)
    outputs = writer.recorded_statuses(out, manifest) if out is not None else None
    if outputs is None and previous.get("manifest") == manifest:
        outputs = previous.get("outputs")  # a write that changed nothing wrote no manifest
    if found is None and previous.get("entries") == entries:
        found = previous.get("found")
    said = tuple(d for d in sorted(set(diagnostics)) if _recurs(d))
    stampfile.save_stamp(path, {
        "consumer": VERSION, "key": key, "manifest": manifest, "outputs": outputs,
        "checkouts": ("\0".join(checkouts), numbers), "diagnostics": said,
        "files": len(changes.create) + len(changes.update) + changes.unchanged, "entries": entries,
        "found": None if found is None else tuple(d for d in sorted(set(found)) if _recurs(d)),
        "clients": tuple(lock.clients), "mcps": bool(lock.mcps), "capabilities": bool(lock.capabilities),
        "groups": groups,
        # pickled apart: unpickling 1,000 entries imports the lock's module, for a check that needs
        # them only when the project file declares sources
        "direct": pickling.dumps(tuple(e for e in lock.entries if e.direct), protocol=pickling.PROTOCOL)})


def _eligible(lock: Lock) -> bool:
    """No state outside the project's files: no plugin, no server a client's CLI holds."""
    return not lock.plugins and all("config" in dict(m) for m in lock.mcps)


def _recurs(d: Diagnostic) -> bool:
    """Whether the same command would say `d` again: a warning the build's rule keeps
    (`diagnostics.said_again`); a command with an error saves no stamp."""
    return not d.is_error and said_again(d)


def installed(project: str, clients: Sequence[str] = ()) -> Optional[Dict[str, Any]]:
    """The stamp, when an `install` of `project` for the project file's `clients` (empty:
    none declared) has nothing to do; else None."""
    stamp = stampfile.load_stamp(memo_path(project))
    if not stamp or stamp.get("consumer") != VERSION:
        return None
    if clients and set(clients) != set(stamp["clients"]):
        return None
    if stamp["mcps"] and "claude" in stamp["clients"] and shutil.which("claude") is not None:
        return None
    if stamp["key"] != _key(project) or _statuses(stamp["checkouts"][0].split("\0")) != stamp["checkouts"][1]:
        return None
    if not writer.untouched(project, stamp["manifest"], stamp["outputs"]):
        return None
    return stamp


def direct(stamp: Dict[str, Any]) -> Tuple[Entry, ...]:
    """The lock's direct entries, as the stamp recorded them."""
    return pickling.loads(stamp["direct"])  # type: ignore[no-any-return]


def answer(stamp: Dict[str, Any], lock: Optional[Lock] = None, update: bool = False) -> Result:
    """The result the stamp recorded, for a command with nothing to do (`update`: with what
    resolving the sources said, as `consume.update` joins them)."""
    said = tuple(sorted(set(stamp["diagnostics"] + stamp["found"]))) if update else tuple(stamp["diagnostics"])
    return Result(said, lock, writer.Changes((), (), (), stamp["files"]))


def up_to_date(stamp: Dict[str, Any], fetcher: Fetcher) -> bool:
    """`update`: whether every locked (source, ref) still names its locked commit, as the
    remote lists its refs now (one `git ls-remote` per repository), and the lock's entries
    are what resolving them gives (an update's `found`). A ref that could name two commits (a tag and
    a branch of the same name) must name the locked one both ways."""
    if stamp["capabilities"] or stamp["found"] is None:
        return False
    from agentrc.diagnostics import Diagnostics

    listed: Dict[str, Optional[Dict[str, str]]] = {}
    for name, ref, commit in stamp["groups"]:
        source = parse(name).at(ref)  # parsed when the stamp was made
        if source.pinned:
            if ref != commit:
                return False
            continue
        if source.location not in listed:
            listed[source.location] = fetcher.remote_refs(source, Diagnostics())
        refs = listed[source.location]
        if refs is None:
            return False
        names = ("HEAD",) if ref is None else (ref, "refs/" + ref, TAGS + ref, HEADS + ref)
        named = {refs[n] for n in names if n in refs}
        if named != {commit}:
            return False
    return True
