"""Warming the build memo on several cores for large cold builds (CLI only).

Parsing and rendering an item directory depends on that directory's files alone, so the
memo entries of disjoint groups of directories can be computed in separate processes and
merged; the ordinary pipeline then runs on a memo that already holds every entry. The
result is identical to a sequential build by construction: the same functions compute the
same entries, keyed by the same digests. The Pants plugin never uses this (Pants schedules
its own work).
"""

from __future__ import annotations

import os
import pickle
import posixpath
from typing import Dict, List, Sequence

from agentrc.clients import registry as client_registry
from agentrc.memo.cache import Memo
from agentrc.model import ENTRYPOINTS, SourceFile, SourceTree
from agentrc.output import plan as build
from agentrc.pipeline import stages as pipeline

MIN_ITEMS = 300  # below this, forking costs more than it saves


def warm(tree: SourceTree, clients: Sequence[str], memo: Memo, jobs: int, min_items: int = MIN_ITEMS) -> None:
    """Fill `memo` for every item directory of `tree`, using up to `jobs` processes."""
    groups = _groups(tree)
    if jobs < 2 or len(groups) < min_items or not hasattr(os, "fork"):
        return
    shares: List[List[SourceFile]] = [[] for _ in range(jobs)]
    for i, (_, files) in enumerate(sorted(groups.items())):
        shares[i % jobs].extend(files)
    children = []
    for share in shares[1:]:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: compute, send the entries, exit without cleanup handlers
            os.close(read)
            code = 0
            try:
                entries = _entries(SourceTree(tuple(sorted(share, key=lambda f: f.path))), clients)
                with os.fdopen(write, "wb") as out:
                    pickle.dump(entries, out, protocol=pickle.HIGHEST_PROTOCOL)
            except BaseException:
                code = 1
            os._exit(code)
        os.close(write)
        children.append((pid, read))
    memo.data.update(_entries(SourceTree(tuple(sorted(shares[0], key=lambda f: f.path))), clients))
    for pid, read in children:
        with os.fdopen(read, "rb") as inp:
            try:
                memo.data.update(pickle.load(inp))
            except Exception:
                pass  # a failed worker only means its items are computed in the main process
        os.waitpid(pid, 0)


def item_dir_groups(tree: SourceTree) -> Dict[str, List[SourceFile]]:
    """Files grouped by outermost item directory: the unit whose parse and renders depend
    on nothing else (the Pants plugin caches one graph node per group)."""
    return _groups(tree)


def entries(tree: SourceTree, clients: Sequence[str]) -> Dict:
    """Memo entries (parsed items, renders per client) for the item directories in `tree`."""
    return _entries(tree, clients)


def _entries(tree: SourceTree, clients: Sequence[str]) -> Dict:
    memo = Memo()
    loaded = pipeline.load(tree, (), memo)
    build.plan(loaded.registry, client_registry.get(clients), None, False, memo)
    return memo.data


def _groups(tree: SourceTree) -> Dict[str, List[SourceFile]]:
    """Files grouped by their outermost item directory (nested item dirs stay together)."""
    item_dirs = {posixpath.dirname(f.path) for f in tree.files if posixpath.basename(f.path) in ENTRYPOINTS}
    groups: Dict[str, List[SourceFile]] = {}
    for f in tree.files:
        top = None
        d = posixpath.dirname(f.path)
        while True:
            if d in item_dirs:
                top = d
            parent = posixpath.dirname(d)
            if parent == d:
                break
            d = parent
        if top is not None:
            groups.setdefault(top, []).append(f)
    return groups
