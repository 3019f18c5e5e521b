"""The fence around one fuzz case of the fetch surfaces: what it may touch, and for how long.

Why: the inputs of these targets name places (a lock whose local source is `/`, a bundle
that requires `file:///etc`, a link to the home directory, a FIFO as an injection file).
Running them unguarded would walk the disk or block the suite; and reaching such a place is
exactly the bug the fuzzer is looking for. So each case runs inside `fenced`:

- a Python audit hook (PEP 578, installed once, active only inside `fenced`) sees every
  open, directory listing, rename, removal, mkdir, link and subprocess of the process. A
  path outside the case's allowed directories (after symlinks) raises `Escaped` before the
  operation happens, and the case fails with the event and the path. Reads may also touch
  the interpreter and agentrc's own modules; writes only the case and the cache;
  subprocesses only `git`, with only the `file` transport (GIT_ALLOW_PROTOCOL).
- an interval timer raises `TimedOut` after the case's time budget (a blocked read of a
  FIFO, a walk that does not end).

Both are BaseException subclasses, so the `except Exception` of the code under test does
not swallow them; the hook also records what it saw, for code that catches everything.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import sysconfig
import threading
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[2]

_WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_PATH_EVENTS = {"open", "os.listdir", "os.scandir", "os.remove", "os.rmdir", "os.mkdir", "os.rename",
                "os.symlink", "os.link", "os.chmod", "os.chown", "os.truncate", "os.utime", "shutil.rmtree",
                "shutil.copyfile", "shutil.copytree"}
_READS = {"open", "os.listdir", "os.scandir"}
_FOLLOWS = {"os.listdir", "os.scandir", "os.truncate"}  # and open without O_NOFOLLOW
_RUNS = {"os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "pty.spawn"}


class Escaped(BaseException):
    """The code under test reached outside the case's directories."""


class TimedOut(BaseException):
    """The case ran past its time budget."""


class _Fence:
    def __init__(self) -> None:
        self.reads: Tuple[str, ...] = ()
        self.writes: Tuple[str, ...] = ()
        self.active = False
        self.hits: List[str] = []


_FENCE = _Fence()
_INSTALLED = False


def _system_roots() -> Tuple[str, ...]:
    """What any Python process reads: the standard library, site-packages, agentrc's source
    (its schemas and the modules imported lazily), a few device files, and the system's load
    (`/proc/loadavg`: a cold read forks workers only while a CPU is idle, agentrc.memo.cpus)."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, str(ROOT / "src"), str(Path(__file__).parent),
             "/dev/null", "/dev/urandom", "/proc/self", "/etc/localtime", "/proc/loadavg"}
    paths.update(v for k, v in sysconfig.get_paths().items() if v)
    # The import system lists the directories of sys.path when a module is imported lazily.
    paths.update(p for p in sys.path if p and os.path.isabs(p))
    return tuple(sorted(os.path.realpath(p) for p in paths))


def _inside(path: str, roots: Sequence[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def _real(raw: object, follow: bool = True) -> Optional[str]:
    """The absolute, link-resolved path an audited argument names (its last component kept
    as it is when the operation does not follow a link there: removing, renaming, making,
    linking, stamping a link acts on the link); None for a file descriptor or a plain name
    relative to a directory descriptor (its directory was audited when it was opened)."""
    if raw is None or isinstance(raw, int):
        return None
    try:
        path = os.fsdecode(os.fspath(raw))  # type: ignore[arg-type]
    except TypeError:
        return None
    if not os.path.isabs(path):
        if ".." not in path.split(os.sep):
            return None
        path = os.path.join(os.getcwd(), path)
    try:
        if follow:
            return os.path.realpath(path)
        head, tail = os.path.split(os.path.abspath(path))
        return os.path.join(os.path.realpath(head), tail)
    except (OSError, RuntimeError, RecursionError, ValueError):
        return os.path.abspath(path)


def _check(event: str, args: Tuple) -> None:
    if event in _RUNS:
        _refuse(f"{event} {args[:2]!r}")
    if event == "subprocess.Popen":
        argv = args[1] if isinstance(args[1], (list, tuple)) else [args[1]]
        exe = os.path.basename(os.fsdecode(argv[0])) if argv else ""
        if exe != "git":
            _refuse(f"subprocess {list(argv)[:4]!r}")
        return
    if event not in _PATH_EVENTS:
        return
    write = event not in _READS or (event == "open" and isinstance(args[2], int) and args[2] & _WRITE)
    if event == "os.symlink":  # (target, link): the target is text, only the link is written
        targets = [(args[1], True, False)]
    elif event in ("os.link", "shutil.copyfile", "shutil.copytree"):  # (source read, destination written)
        targets = [(args[0], False, True), (args[1], True, event != "os.link")]
    elif event == "os.rename":
        targets = [(args[0], True, False), (args[1], True, False)]
    elif event == "open":
        nofollow = isinstance(args[2], int) and args[2] & getattr(os, "O_NOFOLLOW", 0)
        targets = [(args[0], bool(write), not nofollow)]
    else:
        targets = [(args[0], bool(write), event in _FOLLOWS)]
    for raw, writes, follows in targets:
        path = _real(raw, follows)
        if path is not None and not _inside(path, _FENCE.writes if writes else _FENCE.reads):
            _refuse(f"{event} {'(write) ' if writes else ''}{path}")


def _refuse(what: str) -> None:
    _FENCE.hits.append(what)
    raise Escaped(what)


def _hook(event: str, args: Tuple) -> None:
    if not _FENCE.active:
        return
    _FENCE.active = False  # the checks themselves (realpath) must not recurse into the hook
    try:
        _check(event, args)
    finally:
        _FENCE.active = True


def _alarm(signum, frame) -> None:
    raise TimedOut("the case ran past its time budget")


@contextlib.contextmanager
def fenced(case: Path, seconds: float, extra_reads: Sequence[str] = (),
           reads_only: Optional[Sequence[str]] = None) -> Iterator[_Fence]:
    """Run the body with the case directory (and the cache) as the only places to write and,
    with the system roots, to read; `reads_only` narrows the case's readable part (a source
    fetched over git must not read the consumer's other directories). `seconds` bounds it."""
    global _INSTALLED
    if not _INSTALLED:
        sys.addaudithook(_hook)
        _INSTALLED = True
    cache = os.environ.get("AGENTRC_CACHE_DIR", "")
    writes = tuple(os.path.realpath(p) for p in (str(case), cache, os.devnull) if p)
    readable = writes if reads_only is None else tuple(os.path.realpath(p) for p in (*reads_only, cache) if p)
    _FENCE.writes = writes
    _FENCE.reads = readable + _system_roots() + tuple(os.path.realpath(p) for p in extra_reads)
    _FENCE.hits = []
    timed = threading.current_thread() is threading.main_thread() and seconds > 0
    old_handler = signal.signal(signal.SIGALRM, _alarm) if timed else None
    old_git = os.environ.get("GIT_ALLOW_PROTOCOL")
    os.environ["GIT_ALLOW_PROTOCOL"] = "file"
    if timed:
        signal.setitimer(signal.ITIMER_REAL, seconds)
    _FENCE.active = True
    try:
        yield _FENCE
    finally:
        _FENCE.active = False
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old_handler)
        if old_git is None:
            os.environ.pop("GIT_ALLOW_PROTOCOL", None)
        else:
            os.environ["GIT_ALLOW_PROTOCOL"] = old_git
