"""fsync for the writer: many staged files at once, in a batch or on a few threads.

A write is durable only when its staged files and the directories that changed reach the
disk, and a build of thousands of items fsyncs thousands of files: done one after another
that is most of a cold build's time. This module decides, per process, whether the file
system's fsyncs wait for a device (then a small reused thread pool overlaps them) or return
at once (then the calling thread does them, with no thread hand-off).
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Sequence, Tuple

SYNC_THREADS = 8  # fsyncs at once (`_fsync_all`)


SYNC_BATCH = 64  # staged files written before they are fsync'd together: bounds the open descriptors


_pool: Any = None  # the fsync threads (`_sync_pool`)


_pool_pid = 0  # the process that started them: a forked child starts its own


# An fsync that returns sooner than this waited for no device (a file system in memory, or
# nothing left to write): while they do, a batch is fsync'd in the calling thread. SLOW_RUN
# slower ones in a row switch the process to the threads (one alone may be a preemption).
FAST_FSYNC = 0.0001  # seconds


SLOW_RUN = 3


_slow_fsyncs = False  # set for the process once SLOW_RUN fsyncs in a row took longer


_slow_run = 0


def _sync_pool() -> Any:
    """SYNC_THREADS threads, started once per process and reused by every batch: a pool
    per batch started 900 threads in a cold build of 1,000 items, and waiting for their
    start and end was a third of the writer's time."""
    global _pool, _pool_pid
    if _pool is None or _pool_pid != _getpid():
        # Imported here: concurrent.futures (and logging with it) is a tenth of the start-up of a
        # build with nothing to write (docs/architecture.md).
        from concurrent.futures import ThreadPoolExecutor
        _pool, _pool_pid = ThreadPoolExecutor(SYNC_THREADS, thread_name_prefix="agentrc-fsync"), _getpid()
    return _pool


_getpid = os.getpid  # bound once: tests replace the module's `os` to count the calls that touch the disk


def _noter(written: Dict[str, list]) -> Callable[[str, os.stat_result], None]:
    """What `_sync_staged` calls with each staged file's path and status: notes the status
    in `written` as the manifest records it (`_stat`)."""
    def note(path: str, st: os.stat_result) -> None:
        written[path] = [st.st_size, st.st_mtime_ns, st.st_mode & 0o7777]
    return note


def _fsync_each(fds: Sequence[Tuple[int, int]]) -> List[Tuple[int, BaseException]]:
    """fsync each (index, descriptor); the failures by index (every one is still tried)."""
    failed = []
    for i, fd in fds:
        try:
            os.fsync(fd)
        except BaseException as exc:  # noqa: B036 - handed back to the caller, which raises it
            failed.append((i, exc))
    return failed


def _fsync_all(fds: Sequence[int]) -> None:
    """fsync every descriptor, returning when all have returned; the first error (in order)
    is raised. In parallel: fsync releases the GIL, and a journaling file system commits
    concurrent fsyncs together (on ext4 one journal commit serves the lot, where one fsync
    after another waits for a commit each: 74 small files took 0.26 s, 8 threads 0.01 s).
    Each file is still fsync'd itself, so an I/O error is reported for the file it hit.
    Each thread of the pool gets a share of the batch (one task per thread, not per file).
    Until one fsync is slow (`FAST_FSYNC`), they are called here, one after the other: on a
    file system that never waits (tmpfs) the threads' hand-offs were all of the cost."""
    global _slow_fsyncs, _slow_run
    if len(fds) < 2:
        for fd in fds:
            os.fsync(fd)
        return
    start = 0
    failed: List[Tuple[int, BaseException]] = []
    clock = time.perf_counter
    while not _slow_fsyncs and start < len(fds):
        began = clock()
        try:
            os.fsync(fds[start])
        except BaseException as exc:  # noqa: B036 - raised below, after the others are tried
            failed.append((start, exc))
        start += 1
        if clock() - began <= FAST_FSYNC:
            _slow_run = 0
        else:
            _slow_run += 1
            _slow_fsyncs = _slow_run >= SLOW_RUN
    rest = fds[start:]
    if len(rest) < 2:
        failed.extend(_fsync_each([(start + i, fd) for i, fd in enumerate(rest)]))
    else:
        failed.extend(_fsync_pool(list(enumerate(rest, start))))
    if failed:
        raise min(failed, key=lambda f: f[0])[1]


def _fsync_pool(indexed: List[Tuple[int, int]]) -> List[Tuple[int, BaseException]]:
    """fsync each (index, descriptor) on the pool's threads; the failures."""
    n = min(SYNC_THREADS, len(indexed))
    pool = _sync_pool()
    futures = [pool.submit(_fsync_each, indexed[k::n]) for k in range(n)]
    return [f for future in futures for f in future.result()]
