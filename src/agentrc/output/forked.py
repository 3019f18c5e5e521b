"""One loop of the writer run by two processes: the tail of its items in a forked child.

Why: a cold build's write (staging 46,000 files at 10,000 items, then linking them into
place) ran in the build's process alone, a fifth of the build's wall time, while the
second core, whose worker had finished rendering, stood idle. Staging and linking a file
depend on that file alone (its directory is made by whichever process comes first: a
`mkdir` that finds it there opens it), so the items after `cut` can be done by a child.

What it guarantees: the caller's outcome is the one the loop would have had in one
process, except that two failures may both happen and the parent's is reported first.
The child writes nothing but what its share of the loop writes; it reports, in memory
shared with the parent (an anonymous mapping made before the fork), one fixed-size record
per item and, on failure, the index and errno of the item it failed on; it leaves with
`os._exit` (no cleanup of the parent's state runs twice). The parent waits for it before
returning or raising: a child never outlives the write it belongs to, and when the parent
is killed the child is killed too (Linux: `PR_SET_PDEATHSIG`). Meanwhile the child holds
the output's lock with the parent (the flock'd descriptor is shared across the fork), so
no other run can recover the staging directory while the child writes into it.

Only the CLI's build uses it (`Output.jobs`); Pants' rules never fork.
"""

from __future__ import annotations

import errno
import os
import struct

from agentrc import pickling

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    import mmap
    from typing import Callable, Optional, Tuple

# `mmap` and `signal` are imported where a child is forked: a one-edit build's write, which
# forks none, imported them for nothing (1 ms, a hundredth of it at 1,000 items).

_HEAD = struct.Struct("<qqi")  # failed item (-1: none), the failure's length, 1 when the child finished
_FAILURE = 4096  # bytes after the header for the failure, pickled
_PR_SET_PDEATHSIG = 1


class Failed(Exception):
    """A failure of a share of the loop at item `index` (-1: at none in particular);
    `original` is what was raised there, and what the caller raises again."""

    def __init__(self, original: BaseException, index: int):
        super().__init__(index)
        self.original = original
        self.index = index


def run(count: int, cut: int, record: int, parent: Callable[[int, int], None],
        child: Callable[[int, int, memoryview], None]) -> Optional[memoryview]:
    """`parent(0, cut)` here and `child(cut, count, records)` in a forked process, at once.
    `records` holds `record` bytes per item of the child's share (item `cut + k` at
    `k * record`), which the child fills; returned once the child has finished, for the
    caller to read. When `cut >= count` or there is no fork, `parent(0, count)` runs alone
    and None is returned. A failure of the parent's share kills the child and is raised
    once it is gone; a failure of the child's is raised here as `Failed` (the item it
    happened on when the child raised `Failed` itself, else -1) with the exception the
    child raised, sent back pickled."""
    if cut >= count or not hasattr(os, "fork"):
        parent(0, count)
        return None
    import mmap
    import signal

    base = _HEAD.size + _FAILURE
    shared = mmap.mmap(-1, base + max(1, (count - cut) * record))
    _HEAD.pack_into(shared, 0, -1, 0, 0)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's lines are counted by no coverage run
        status = 1
        try:
            _die_with_parent()
            signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends the child without a traceback
            try:
                child(cut, count, memoryview(shared)[base:])
                _HEAD.pack_into(shared, 0, -1, 0, 1)
                status = 0
            except BaseException as exc:  # noqa: B036 - sent to the parent, which raises it
                _fail(shared, exc)
        finally:
            os._exit(status)
    try:
        parent(0, cut)
    except BaseException:
        _kill(pid)
        raise
    _, status = _wait(pid)
    index, length, done = _HEAD.unpack_from(shared, 0)
    if done == 1:
        return memoryview(shared)[base:]
    original: BaseException = OSError(errno.EIO, f"the process writing the second half ended ({_status(status)})")
    if length:
        try:
            original = pickling.loads(shared[_HEAD.size:_HEAD.size + length])
        except Exception:  # noqa: S110 - the generic failure above stands
            pass
    raise Failed(original, index)


def _fail(shared: mmap.mmap, exc: BaseException) -> None:
    """What the child failed on, for the parent: the item and the exception, pickled (an
    OSError of the same errno and text if it cannot be)."""
    index = exc.index if isinstance(exc, Failed) else -1
    original = exc.original if isinstance(exc, Failed) else exc
    try:
        data = pickling.dumps(original)
    except Exception:
        data = b""
    if not data or len(data) > _FAILURE:
        code = getattr(original, "errno", None) or errno.EIO
        data = pickling.dumps(OSError(code, f"{type(original).__name__}: {original}"[:_FAILURE // 2]))
    shared[_HEAD.size:_HEAD.size + len(data)] = data
    _HEAD.pack_into(shared, 0, index, len(data), 0)


def _die_with_parent() -> None:
    """Ask the kernel to kill this child when its parent dies (Linux); elsewhere the child
    finishes its bounded share and leaves."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _kill(pid: int) -> None:
    import signal

    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    _wait(pid)


def _wait(pid: int) -> Tuple[int, int]:
    try:
        return os.waitpid(pid, 0)  # retried by Python itself when a signal interrupts it
    except ChildProcessError:
        return pid, 0


def _status(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return f"exit status {os.WEXITSTATUS(status)}"
