"""Writing a planned tree into an output directory it shares with other files.

The directory may be a consumer repository: agentrc records what it wrote in
`DIR/.agentrc/manifest.json`, so a rebuild deletes its own stale outputs and never
overwrites or deletes a file it did not write. All decisions are made before anything is
written. The guarantees (docs/security.md) hold by construction, not by checks of the cases
someone thought of:

- One place reaches the disk: `_Tree`. Every path it is given is relative, normalised and
  below the output directory (`safe_path`), and it walks there one component at a time from
  a descriptor of the output directory, opening each with O_NOFOLLOW relative to its parent.
  No symlink inside the output is ever followed, and none can be swapped in between a check
  and a use. A manifest naming another path is unreadable (AR093): nothing is touched.
- A write is a transaction (`Output.apply`). New bytes and the plan's data are staged and
  fsync'd in `DIR/.agentrc/txn/` (the same file system as the targets), then a plan of the one
  executor (`output.steps`, the writer's kinds in `writesteps`) journals its commit point. The
  renames, deletions, pruning and the new manifest follow from the plan's data alone,
  idempotently, so any later run (`Output.__init__`, before it reads anything) completes a
  committed plan (roll forward) or throws away an uncommitted staging area (roll back).
  A kill or an I/O error at any point leaves either the old tree or
  the new one once the next run has started.
- One run at a time: an exclusive `flock` on `DIR/.agentrc/lock`, waited for a bounded time.

Failures are diagnostics (AR140 a symlink in the way, AR141 locked, AR142 an I/O error),
never tracebacks.

`Output` is assembled here from one module per job, each a step of the transaction: `tree`
(the one way to the disk), `fsync`, `manifest` (the manifest's and journal's parsing and
bytes), `recorded` (the last build's manifest kept in memory), `directory` (opened, locked,
read), `diffing` (planning), `staging`, `commit` (the roll-forward's work), `writesteps` (its
steps) and `recovery`. Callers
keep importing from here: the names those modules define are re-exported, and setting one
on this module (as tests do with `os` or a limit) sets it where the code reads it.
"""

from __future__ import annotations

import contextlib
import os  # noqa: F401 - re-exported, and replaced by tests (`_Facade`)
import sys
import time  # noqa: F401 - as `os`
import types

# Re-exported below: callers, Pants' rules and tests import these from here.
from agentrc.files import safe_path  # noqa: F401
from agentrc.output import (
    atomic,
    commit,
    diffing,
    directory,
    fsync,
    manifest,
    parents,
    recorded,
    recovery,
    staging,
    tree,
    writesteps,
)
from agentrc.output.diffing import (  # noqa: F401
    _adopted_dirs,
    _merge,
    _Planning,
)
from agentrc.output.directory import (  # noqa: F401
    PARALLEL_MIN,
    PARTIAL,
    Changes,
    _directories,
    _note,
    _nothing_written,
)
from agentrc.output.fsync import (  # noqa: F401
    FAST_FSYNC,
    SLOW_RUN,
    SYNC_BATCH,
    SYNC_THREADS,
    _fsync_all,
    _fsync_each,
    _fsync_pool,
    _getpid,
    _noter,
    _sync_pool,
)
from agentrc.output.manifest import (  # noqa: F401
    _CHUNK,
    _ENCODE,
    _PUTS_CHUNK,
    _check_record,
    _entry_lines,
    _journal_bytes,
    _journal_chunks,
    _keys,
    _load_json,
    _Manifest,
    _manifest_bytes,
    _parse_journal,
    _parse_manifest,
    _path_of,
    _section,
    _stat,
    _value,
    _write_chunks,
    manifest_digest,
)
from agentrc.output.parents import SWEEP_SLACK_FINE_NS, SWEEP_SLACK_NS  # noqa: F401
from agentrc.output.recorded import (  # noqa: F401
    _as_recorded,
    _patch,
    _recent_dirs,
    _recorded_manifest,
    _replay_manifest,
    _same_statuses,
    _updated,
    _well_formed,
    recorded_statuses,
    replayed_statuses,
    untouched,
    untouched_manifest,
)
from agentrc.output.recovery import _sweep_since  # noqa: F401
from agentrc.output.staging import (  # noqa: F401
    _STATUS,
    CHILD_SHARE,
    _Staging,
)
from agentrc.output.tree import (  # noqa: F401
    _DIR_FLAGS,
    _FS_ERRORS,
    _LEFTOVER,
    _NEW_FILE,
    _NO_HARD_LINKS,
    _NOFOLLOW,
    _PINNED,
    _SHA,
    _STAGED,
    _STAGED_TREE,
    JOURNAL,
    LOCK,
    LOCK_TIMEOUT,
    MANIFEST,
    MAX_MANIFEST,
    MAX_OPEN_DIRS,
    MAX_TREE_DEPTH,
    STATE,
    TXN,
    OutputError,
    _NotDir,
    _NotFile,
    _open_dirs_allowed,
    _OtherDevice,
    _remove_staged,
    _Symlink,
    _Tree,
    _Unsafe,
    sha,
)

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator, Optional

    from agentrc.fdio import StrPath


@contextlib.contextmanager
def session(root: StrPath, write: bool = True,
            notify: Optional[Callable[[str], None]] = None) -> Iterator["Output"]:
    """The output directory, locked and recovered, for one run's diff and apply; raises
    OutputError when it cannot be used. `write=False` (a check) creates nothing, but still
    finishes a write an earlier run was interrupted in."""
    out = Output(str(root), write, notify)
    try:
        yield out
    finally:
        out.close()


class Output(_Staging, _Planning):
    """An output directory held for one run: `diff` then `apply`, under the lock."""

    def __init__(self, root: str, write: bool, notify: Optional[Callable[[str], None]] = None):
        super().__init__(root, write)
        try:
            self._open(notify)
        except OutputError:
            self.close()
            raise
        except _FS_ERRORS as exc:
            self.close()
            raise OutputError([self._problem(exc, "")]) from None
        except BaseException:
            self.close()
            raise

    def _open(self, notify: Optional[Callable[[str], None]]) -> None:
        if not self._reopen():
            return  # a check of a directory without agentrc's state: nothing to lock or recover
        self._lock(notify)
        self._recover()


def write_atomic(path: StrPath, data: bytes, root: Optional[StrPath] = None) -> None:
    """One file outside any manifest (a report, a formatted source, a lock): `atomic.write_atomic`,
    which never writes through a link between `root` and the file (AR224)."""
    atomic.write_atomic(path, data, root)


# --- this module as it was before the split -------------------------------------------------

# Not `steps` and `atomic`: the executor and its journal's writes are shared with other workflows.
_PARTS = (fsync, tree, manifest, recorded, directory, diffing, commit, recovery, staging, writesteps, parents)
_FSYNC_STATE = frozenset({"_pool", "_pool_pid", "_slow_fsyncs", "_slow_run"})  # rebound by `fsync` itself
_ABSENT = object()


class _Facade(types.ModuleType):
    """This module, whose names are also where the split modules read them: setting one here
    (`monkeypatch.setattr(writer, "os", ...)`, a smaller `SYNC_BATCH`, a wrapped
    `_manifest_bytes`) sets it in each part that holds the same object, so the code that
    moved sees what the code here used to; and the fsync state, which `fsync` rebinds as it
    learns the file system, is read and set there (a copy here would go stale)."""

    def __getattr__(self, name: str) -> Any:
        if name in _FSYNC_STATE:
            return getattr(fsync, name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _FSYNC_STATE:
            setattr(fsync, name, value)
            return
        old = self.__dict__.get(name, _ABSENT)
        if old is not _ABSENT:
            for part in _PARTS:
                if part.__dict__.get(name, _ABSENT) is old:
                    setattr(part, name, value)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Facade
