"""Fetching sources (spec 001 §3.7): a `Source` in, a `SourceTree` of its registry out.

A git source is fetched with the real `git`, shallow (`--depth 1`, blobs on demand where
the server allows a filter) and sparse when a `#subpath` selects part of the repository,
into the user cache (`$AGENTRC_CACHE_DIR`, else `$XDG_CACHE_HOME/agentrc`, else
`~/.cache/agentrc`) under `sources/<digest of the URL>/<commit>[-<digest of the
subpath>]`. A checkout is moved into place whole (a rename), so a cache entry is complete
or absent, and a failed fetch leaves nothing (no temporary or empty directory). When the
lock pins a commit that is in the cache, git is not run at all; a ref (branch, tag) is
resolved by one shallow fetch per resolution (`Fetcher` remembers it).

The cache is someone else's content on the user's disk, so it is verified on every use:
each entry's files are recorded when it is made (`agentrc.inputs.fetchcache`) and hashed
against that record whenever it is read; an entry that differs is discarded and fetched
again (AR228, a warning), or refused when it cannot be (an error). A checkout is bounded
before it is made, from git's listing of the commit (`bounds`: the number of files, each
file's size and their total, AR227), so a small repository cannot expand into a huge tree.

The fetched tree is untrusted input: it is read by `agentrc.inputs.tree` like any
registry (no symlink followed out of it, AR050; files bounded, AR054), and a `#subpath`
must be a directory inside the repository, not a link out of it. git runs with no
terminal prompt, no hook templates, only the https, ssh and file transports, and a time
limit (`AGENTRC_GIT_TIMEOUT` seconds, 600 by default). `AGENTRC_GIT` names the git binary
(the Pants backend's sandbox has no PATH). With `AGENTRC_NO_FETCH` set, only the cache is
read: a source that is not there at a pinned commit is AR223 (the Pants backend puts the
locked commits into a sandbox's cache with `entry_path` and `entry_record`, and builds from
those only).

Fetched files, and every diagnostic about them, are shown as `SOURCE@REF/PATH`, never by
their path in the cache (which differs between machines and says where the cache is).
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import replace

from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.inputs import fetchcache
from agentrc.inputs.checkout import (  # noqa: F401 - re-exported: callers import them from here
    _GIT_CONFIG,
    GIT_TIMEOUT,
    LEFTOVER_AGE,
    MAX_CHECKOUT_BYTES,
    MAX_FILE_BYTES,
    MAX_FILES,
    Checkouts,
    _claim,
    _entry,
    _entry_name,
    _release,
    _repo_name,
    _text,
    _timeout,
    bounds,
    display_root,
    sweep_killed,
)
from agentrc.inputs.tree import read_tree
from agentrc.model import SourceTree
from agentrc.sources.dsl import GIT, Source

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, Iterable, List, Optional, Tuple


@dataclass(frozen=True)
class Fetched:
    """A source's registry as read: the commit it is at (None for a local directory), the
    directory read, its files, and the problems (AR050, AR054, AR201, AR202, AR208)."""

    source: Source
    commit: Optional[str]
    root: str  # the prefix of the files' display paths (`display_root` for a git source)
    tree: SourceTree
    diagnostics: Tuple[Diagnostic, ...]
    directory: str = ""  # where the files were read (for a git source, in the cache)

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)


def cache_dir() -> str:
    base = os.environ.get("AGENTRC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "agentrc")
    return os.path.join(base, "sources")


class Fetcher:
    """The fetches of one resolution: each (source, ref or commit) is fetched once.
    `base` is the directory local sources are relative to (the consumer project).
    `git_runs` counts the git processes started (what the cache saves): the checkouts' own
    (`inputs.checkout.Checkouts`, which runs git)."""

    def __init__(self, base: str = ".", cache: Optional[str] = None):
        self.base = base
        self.cache = cache or cache_dir()
        self._checkouts = Checkouts(self.cache)
        self._done: Dict[Tuple[Tuple[str, str, str], Optional[str], Optional[str]], Fetched] = {}

    @property
    def git_runs(self) -> int:
        return self._checkouts.runs

    # What a command on a project adds (consumer.reading.ProjectFetcher): a memo of parsed
    # and rendered items, forked workers for a cold read, local sources confined to the
    # project. A bare fetcher (`agentrc outdated`'s reads, tests) has none of them, so every
    # caller asks the fetcher instead of asking which fetcher it has.
    memo: Any = None

    def outside(self, source: Source) -> Optional[str]:
        """Why `source` may not be read; None if it may."""
        return None

    def warm_up(self, tree: Any) -> None:
        """Start helpers for a cold read of `tree` (none here)."""

    def settle(self) -> None:
        """Stop what `warm_up` started (nothing here)."""

    def save_memo(self) -> None:
        """Keep what this command parsed and rendered (nothing here)."""

    def fetch(self, source: Source, commit: Optional[str] = None) -> Fetched:
        """`source` at `commit` when given (what the lock pins), else at its ref."""
        key = (source.key, source.ref, commit)
        done = self._done.get(key)
        if done is None:
            done = self._git(source, commit) if source.kind == GIT else self._local(source)
            self._done[key] = done
            if commit is None and done.commit and done.ok:
                # The commit the ref resolved to, asked for next (an `add` fetches at the ref,
                # then renders what it locked): read once, not twice (0.17 s at 1,000 items).
                self._done.setdefault((source.key, source.ref, done.commit), done)
        return done

    def remote_refs(self, source: Source, diags: Diagnostics) -> Optional[Dict[str, str]]:
        """The branches and tags a git source's remote has now (`git ls-remote`, through the
        same hardened runner as a fetch: no prompt, no hooks, https/ssh/file only, a time
        limit): ref name (`HEAD`, `refs/heads/X`, `refs/tags/X`) -> commit, an annotated tag
        by the commit it names. None, with the problem in `diags`, when git fails."""
        out = self._checkouts.run(source, ("ls-remote", "--", source.location), diags)
        if out is None:
            return None
        refs: Dict[str, str] = {}
        for line in out.decode("utf-8", "replace").splitlines():
            commit, _, name = line.partition("\t")
            if name.endswith("^{}"):
                refs[name[:-3]] = commit  # the peeled tag: the commit, not the tag object
            elif name not in refs:
                refs[name] = commit
        return refs

    # local directories

    def _local(self, source: Source) -> Fetched:
        path = os.path.expanduser(source.location)
        if not os.path.isabs(path):
            path = os.path.join(self.base, path)
        diags = Diagnostics()
        if not os.path.isdir(path):
            diags.error(source.label, (0, 0), "AR208", f"{source.location} is not a directory")
            return Fetched(source, None, path, SourceTree(()), diags.sorted())
        return self._read(source, None, path, diags)

    def _read(self, source: Source, commit: Optional[str], top: str, diags: Diagnostics) -> Fetched:
        """The registry of `source` in the directory `top`. For a git source `top` is a cache
        entry, verified against its record on the way (`fetchcache.Changed` when it differs;
        nothing is added to `diags` then): the files read are checked by the bytes read."""
        root = os.path.join(top, *source.subpath.split("/")) if source.subpath else top
        cached = source.kind == GIT
        shown = display_root(source, commit) if cached else root
        real_top, real = _realpath(top), _realpath(root)
        problem = None
        if real is None or real_top is None:
            problem = ("AR054", f"#{source.subpath} is a symlink chain too long to follow")
        elif real != real_top and not real.startswith(real_top.rstrip(os.sep) + os.sep):
            problem = ("AR050", f"#{source.subpath} leads outside the source (a symlink)")
        elif not os.path.isdir(root):
            problem = ("AR208", f"#{source.subpath} is not a directory in the source")
        read = None
        # An entry this process has just made: its files as they were recorded, not read again.
        record, made = self._checkouts.made.pop(top, (None, None)) if cached else (None, None)
        if problem is None:
            try:
                read = read_tree([root], published=True, known=_by_real_path(made, real_top) if made else None)
            except RecursionError:  # os.path.realpath recurses once per link of a chain
                problem = ("AR054", "a symlink chain too long to follow: nothing is read from this source")
        if cached:
            fetchcache.verify(top, record, _as_read(read, root, source.subpath) if read is not None else None, made)
        if problem is not None or read is None:
            diags.error(source.label, (0, 0), *(problem or ("AR054", "cannot be read")))
            return Fetched(source, commit, shown, SourceTree(()), diags.sorted())
        if not cached:
            diags.extend(read.diagnostics)
            return Fetched(source, commit, root, read.tree, diags.sorted(), root)
        # A fetched file is shown (in diagnostics, item directories, whatever an adapter
        # embeds) as SOURCE@REF/SUBPATH/FILE: the same on every machine, unlike the cache.
        shows = self._shows(source, commit, top, root)
        diags.extend(replace(d, path=shows(d.path), message=shows(d.message)) for d in read.diagnostics)
        files = tuple(replace(f, path=shows(f.path), link=shows(f.link) if f.link else f.link)
                      for f in read.tree.files)
        return Fetched(source, commit, shown, SourceTree(files), diags.sorted(), root)

    def _shows(self, source: Source, commit: Optional[str], top: str, root: str):
        """Text about the checkout at `top` as the user sees it: its registry `root` as
        SOURCE@REF/SUBPATH, the rest of the checkout as SOURCE@REF/PATH, and any other
        path in the cache as `$AGENTRC_CACHE_DIR/...` (a link's target may name one)."""
        pairs = [(read_tree_root(root), display_root(source, commit)),
                 (read_tree_root(top), display_root(replace(source, subpath=""), commit))]
        for path, label in list(pairs):
            real = _realpath(path)
            if real is not None and real != path:
                pairs.append((real, label))
        for cache in (self.cache, _realpath(self.cache)):
            if cache:
                pairs.append((cache.rstrip(os.sep), "$AGENTRC_CACHE_DIR/sources"))

        def shows(text: str) -> str:
            for path, label in pairs:
                if path in text:
                    text = text.replace(path, label)
            return text
        return shows

    # git

    def _git(self, source: Source, commit: Optional[str]) -> Fetched:
        diags = Diagnostics()
        repo_dir = os.path.join(self.cache, _repo_name(source))
        want = commit or (source.ref if source.pinned else None)
        changed: List[str] = []  # what the check of each discarded cache entry found (AR228)
        for _ in range(3):  # a changed entry is discarded and made again (twice, if it changes again)
            hit = _entry(repo_dir, want, source.subpath) if want is not None else None
            resolved = want
            if hit is None and os.environ.get("AGENTRC_NO_FETCH"):
                if not changed:
                    diags.error(source.label, (0, 0), "AR223", "not fetched: this build reads locked commits only, "
                                "and " + (f"commit {want[:12]} is not among them" if want else "agentrc.lock.json "
                                          "pins no commit for this source and ref"))
                break
            if hit is None:
                got = self._checkouts.fetch(source, want, repo_dir, diags)
                if got is None:
                    break
                resolved, hit = got
            if resolved is None or (commit is not None and resolved != commit):  # pragma: no cover
                diags.error(source.label, (0, 0), "AR201", f"asked for commit {commit}, git gave {resolved}")
                break
            try:
                fetched = self._read(source, resolved, hit, diags)
            except fetchcache.Changed as exc:
                where = display_root(replace(source, subpath=""), resolved)
                changed.append(f"the cached checkout of {source.label} at {resolved[:12]} is not what was fetched: "
                               + (where if exc.path == "." else f"{where}/{_text(exc.path)}") + f" {exc.how}")
                if not fetchcache.discard(hit):
                    changed.append(f"the cached checkout of {source.label} at {resolved[:12]} cannot be removed")
                    break
                want = resolved
                continue
            for what in changed:
                diags.warning(source.label, (0, 0), "AR228", f"{what}; it was discarded and fetched again")
            return replace(fetched, diagnostics=diags.sorted())
        for what in changed:
            diags.error(source.label, (0, 0), "AR228", f"{what}; it could not be fetched again, so nothing is read "
                        "from it")
        return Fetched(source, None, display_root(source, commit), SourceTree(()), diags.sorted())

def read_tree_root(root: str) -> str:
    """The display path `read_tree` gives the directory `root` (its files' prefix)."""
    return posixpath.normpath(root.replace(os.sep, "/")).rstrip("/")


def entry_path(source: Source, commit: str) -> str:
    """Where a git source's registry sits at `commit`, relative to the cache's `sources/`
    directory: what a sandbox lays out for a fetcher that must not fetch."""
    return posixpath.join(_repo_name(source), _entry_name(commit, source.subpath), source.subpath)


def entry_record(source: Source, commit: str, files: Iterable[Tuple[str, bytes, bool]]) -> Tuple[str, bytes]:
    """The record a cache entry laid out by someone else than git needs (the Pants backend's
    sandbox): `files` as (path relative to `entry_path(source, commit)`, content, executable)
    in, (the record's path relative to the cache's `sources/` directory, its bytes) out.
    Without it the entry is not trusted (AR228), as it could not be verified."""
    entry = posixpath.join(_repo_name(source), _entry_name(commit, source.subpath))
    inside = [(posixpath.join(source.subpath, path) if source.subpath else path, content, executable)
              for path, content, executable in files]
    return fetchcache.record_path(entry), fetchcache.dumps(fetchcache.record_of(inside))


def _as_read(read, root: str, subpath: str) -> Dict[str, Tuple[bytes, bool]]:
    """The regular files `read_tree` read below `root` (a link's bytes are its target's: not
    among them), by their path in the cache entry, for `fetchcache.verify`."""
    prefix = read_tree_root(root) + "/"
    above = subpath + "/" if subpath else ""
    return {above + f.path[len(prefix):]: (f.content, f.executable) for f in read.tree.files
            if f.link is None and f.path.startswith(prefix)}


def _by_real_path(files: Dict[str, Tuple[bytes, bool]], top: Optional[str]) -> Optional[Dict[str, Tuple[bytes, bool]]]:
    """`files` (posix paths in the entry) by their real path below the entry's real path
    `top`, as the walk of `read_tree` names them."""
    if top is None:
        return None
    prefix = top.rstrip(os.sep) + os.sep
    return {prefix + rel.replace("/", os.sep): value for rel, value in files.items()}


def _realpath(path: str) -> Optional[str]:
    """`os.path.realpath`, or None for a symlink chain it cannot follow (it recurses once
    per link: a chain of 1,000 is a RecursionError on Python before 3.13)."""
    try:
        return os.path.realpath(path)
    except (RecursionError, OSError, ValueError):
        return None
