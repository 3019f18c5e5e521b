"""Fetching sources (spec 001 §3.7): a `Source` in, a `SourceTree` of its registry out.

A git source is fetched with the real `git`, shallow (`--depth 1`, blobs on demand where
the server allows a filter) and sparse when a `#subpath` selects part of the repository,
into the user cache (`$AGENTRC_CACHE_DIR`, else `$XDG_CACHE_HOME/agentrc`, else
`~/.cache/agentrc`) under `sources/<digest of the URL>/<commit>[-<digest of the
subpath>]`. A checkout is moved into place whole (a rename), so a cache entry is complete
or absent. When the lock pins a commit that is in the cache, git is not run at all; a ref
(branch, tag) is resolved by one shallow fetch per resolution (`Fetcher` remembers it).

The fetched tree is untrusted input: it is read by `agentrc.inputs.tree` like any
registry (no symlink followed out of it, AR050; files bounded, AR054), and a `#subpath`
must be a directory inside the repository, not a link out of it. git runs with no
terminal prompt, no hook templates, only the https, ssh and file transports, and a time
limit (`AGENTRC_GIT_TIMEOUT` seconds, 600 by default). `AGENTRC_GIT` names the git binary
(the Pants backend's sandbox has no PATH). With `AGENTRC_NO_FETCH` set, only the cache is
read: a source that is not there at a pinned commit is AR223 (the Pants backend puts the
locked commits into a sandbox's cache with `entry_path` and builds from those only).
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, replace
from typing import Dict, List, Optional, Tuple

from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.inputs.tree import read_tree
from agentrc.model import SourceTree
from agentrc.sources.dsl import GIT, Source

GIT_TIMEOUT = 600.0
_GIT_CONFIG = ("-c", "protocol.allow=never", "-c", "protocol.https.allow=always", "-c", "protocol.ssh.allow=always",
               "-c", "protocol.file.allow=always", "-c", "core.symlinks=true", "-c", "core.hooksPath=/dev/null",
               "-c", "core.fsmonitor=false", "-c", "advice.detachedHead=false", "-c", "submodule.recurse=false",
               "-c", "fetch.recurseSubmodules=false")


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
    `git_runs` counts the git processes started (what the cache saves)."""

    def __init__(self, base: str = ".", cache: Optional[str] = None):
        self.base = base
        self.cache = cache or cache_dir()
        self.git_runs = 0
        self._done: Dict[Tuple[Tuple[str, str, str], Optional[str], Optional[str]], Fetched] = {}

    def fetch(self, source: Source, commit: Optional[str] = None) -> Fetched:
        """`source` at `commit` when given (what the lock pins), else at its ref."""
        key = (source.key, source.ref, commit)
        done = self._done.get(key)
        if done is None:
            done = self._git(source, commit) if source.kind == GIT else self._local(source)
            self._done[key] = done
        return done

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
        root = os.path.join(top, *source.subpath.split("/")) if source.subpath else top
        real_top = os.path.realpath(top)
        real = os.path.realpath(root)
        if real != real_top and not real.startswith(real_top.rstrip(os.sep) + os.sep):
            diags.error(source.label, (0, 0), "AR050", f"#{source.subpath} leads outside the source (a symlink)")
            return Fetched(source, commit, root, SourceTree(()), diags.sorted())
        if not os.path.isdir(root):
            diags.error(source.label, (0, 0), "AR208", f"#{source.subpath} is not a directory in the source")
            return Fetched(source, commit, root, SourceTree(()), diags.sorted())
        read = read_tree([root])
        diags.extend(read.diagnostics)
        if source.kind != GIT:
            return Fetched(source, commit, root, read.tree, diags.sorted(), root)
        # A fetched file is shown (in diagnostics, item directories, whatever an adapter
        # embeds) as SOURCE@REF/SUBPATH/FILE: the same on every machine, unlike the cache.
        shown = display_root(source, commit)
        prefix = read_tree_root(root)
        files = tuple(replace(f, path=shown + f.path[len(prefix):]) if f.path.startswith(prefix + "/") else f
                      for f in read.tree.files)
        return Fetched(source, commit, shown, SourceTree(files), diags.sorted(), root)

    # git

    def _git(self, source: Source, commit: Optional[str]) -> Fetched:
        diags = Diagnostics()
        repo_dir = os.path.join(self.cache, _repo_name(source))
        want = commit or (source.ref if source.pinned else None)
        if want is not None:
            hit = self._cached(repo_dir, want, source.subpath)
            if hit is not None:
                return self._read(source, want, hit, diags)
        if os.environ.get("AGENTRC_NO_FETCH"):
            diags.error(source.label, (0, 0), "AR223", "not fetched: this build reads locked commits only, and "
                        + (f"commit {want[:12]} is not among them" if want else "agentrc.lock.json pins no commit "
                           "for this source and ref"))
            return Fetched(source, None, repo_dir, SourceTree(()), diags.sorted())
        try:
            os.makedirs(repo_dir, exist_ok=True)
            work = tempfile.mkdtemp(prefix="tmp-", dir=repo_dir)
        except OSError as exc:
            diags.error(source.label, (0, 0), "AR201", f"cannot create the cache directory {repo_dir}: "
                        f"{exc.strerror or exc}")
            return Fetched(source, None, repo_dir, SourceTree(()), diags.sorted())
        try:
            got = self._checkout(source, want, work, repo_dir, diags)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        if got is None:
            return Fetched(source, None, repo_dir, SourceTree(()), diags.sorted())
        resolved, top = got
        if commit is not None and resolved != commit:  # pragma: no cover - git fetched another object
            diags.error(source.label, (0, 0), "AR201", f"asked for commit {commit}, git gave {resolved}")
            return Fetched(source, None, top, SourceTree(()), diags.sorted())
        return self._read(source, resolved, top, diags)

    def _cached(self, repo_dir: str, commit: str, subpath: str) -> Optional[str]:
        for name in (commit, _entry_name(commit, subpath)):
            path = os.path.join(repo_dir, name)
            if os.path.isdir(path) and not os.path.islink(path):
                return path
        return None

    def _checkout(self, source: Source, want: Optional[str], work: str, repo_dir: str,
                  diags: Diagnostics) -> Optional[Tuple[str, str]]:
        """Fetch `want` (a commit, else the ref, else HEAD) into `work`, check it out and move
        it into the cache; (commit, cache entry) or None with a diagnostic."""
        ref = want or source.ref or "HEAD"
        steps: List[Tuple[str, ...]] = [
            ("init", "-q", "--template=", work),
            ("-C", work, "remote", "add", "origin", "--", source.location),
            ("-C", work, "fetch", "-q", "--depth", "1", "--filter=blob:none", "--no-tags", "origin", ref),
            ("-C", work, "rev-parse", "--verify", "-q", "FETCH_HEAD^{commit}"),
        ]
        out: Optional[str] = ""
        for step in steps:
            out = self._run(source, step, diags)
            if out is None:
                return None
        resolved = (out or "").strip()
        cached = self._cached(repo_dir, resolved, source.subpath)
        if cached is not None:
            return resolved, cached
        tail: List[Tuple[str, ...]] = []
        if source.subpath:
            tail.append(("-C", work, "sparse-checkout", "set", "--cone", source.subpath))
        tail.append(("-C", work, "checkout", "-q", "--detach", resolved))
        for step in tail:
            if self._run(source, step, diags) is None:
                return None
        shutil.rmtree(os.path.join(work, ".git"), ignore_errors=True)
        final = os.path.join(repo_dir, _entry_name(resolved, source.subpath))
        try:
            os.rename(work, final)
        except OSError:
            if not os.path.isdir(final):  # another run put it there first: theirs is as good
                diags.error(source.label, (0, 0), "AR201", f"cannot move the checkout into the cache at {final}")
                return None
        return resolved, final

    def _run(self, source: Source, args: Tuple[str, ...], diags: Diagnostics) -> Optional[str]:
        env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_CONFIG_NOSYSTEM="1", LC_ALL="C")
        env.pop("GIT_DIR", None)
        env.pop("GIT_WORK_TREE", None)
        self.git_runs += 1
        try:
            proc = subprocess.run((os.environ.get("AGENTRC_GIT") or "git",) + _GIT_CONFIG + args,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=env, timeout=_timeout())
        except FileNotFoundError:
            diags.error(source.label, (0, 0), "AR202", "git is not on PATH")
            return None
        except subprocess.TimeoutExpired:
            diags.error(source.label, (0, 0), "AR201", f"git {args[2] if args[0] == '-C' else args[0]} took longer "
                        f"than {_timeout():g} s (AGENTRC_GIT_TIMEOUT)")
            return None
        except OSError as exc:
            diags.error(source.label, (0, 0), "AR201", f"cannot run git: {exc.strerror or exc}")
            return None
        if proc.returncode != 0:
            said = [line for line in proc.stderr.decode("utf-8", "replace").splitlines()
                    if line.strip() and not line.startswith("warning: filtering not recognized")]
            verb = args[2] if args[0] == "-C" else args[0]
            diags.error(source.label, (0, 0), "AR201", f"git {verb} failed: " + (" / ".join(said[-3:]) or
                                                                               f"exit {proc.returncode}"))
            return None
        return proc.stdout.decode("utf-8", "replace")


def display_root(source: Source, commit: Optional[str]) -> str:
    """Where the files of `source` are shown: `SOURCE@REF[/SUBPATH]` for a git source (the
    commit's first 12 digits when no ref is named); a directory's own path."""
    if source.kind != GIT:
        return posixpath.join(source.location, source.subpath) if source.subpath else source.location
    head = source.written + (f"@{source.ref}" if source.ref else (f"@{commit[:12]}" if commit else ""))
    return head + (f"/{source.subpath}" if source.subpath else "")


def read_tree_root(root: str) -> str:
    """The display path `read_tree` gives the directory `root` (its files' prefix)."""
    return posixpath.normpath(root.replace(os.sep, "/")).rstrip("/")


def entry_path(source: Source, commit: str) -> str:
    """Where a git source's registry sits at `commit`, relative to the cache's `sources/`
    directory: what a sandbox lays out for a fetcher that must not fetch."""
    return posixpath.join(_repo_name(source), _entry_name(commit, source.subpath), source.subpath)


def _repo_name(source: Source) -> str:
    return hashlib.sha256(source.location.encode()).hexdigest()[:24]


def _entry_name(commit: str, subpath: str) -> str:
    return commit + ("-" + hashlib.sha256(subpath.encode()).hexdigest()[:12] if subpath else "")


def _timeout() -> float:
    try:
        value = float(os.environ.get("AGENTRC_GIT_TIMEOUT", GIT_TIMEOUT))
    except ValueError:
        return GIT_TIMEOUT
    return value if value > 0 else GIT_TIMEOUT
