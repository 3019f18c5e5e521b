"""`--watch` (build, lint): run the command again whenever a source changes, until Ctrl-C.

The watching is watchfiles' (inotify on Linux, FSEvents on macOS, polling elsewhere),
imported here only: a run without --watch never loads it. Changes are debounced (a save
that writes a temporary file and renames it is one change; a burst of saves one run), and
each run is the command's ordinary run: a build with --watch is the same build again, which
the memo and the no-change stamp make incremental (an edited item is built alone).

What the run itself wrote is no reason to run again: a build whose --out lies inside its
sources (`agentrc build . --out .`) would otherwise rebuild forever. The files it created,
updated or deleted, its state directory (`.agentrc/`), the writer's temporary files and the
report are left out of the changes; the rest of watchfiles' default filter (.git,
__pycache__, editors' swap files) too.

Ctrl-C ends the loop with exit status 130 and no traceback (agentrc.cli.main).
"""

from __future__ import annotations

import os

from agentrc.cli.common import UsageError, say

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Callable, Collection, Iterable, Sequence, Tuple

STEP_MS = 100  # a change is run once nothing else changed for this long (the debounce)
DEBOUNCE_MS = 1600  # the longest a steady stream of changes is grouped before a run
READY_MS = 200  # how often the watcher wakes with nothing changed (the first time: it is ready)

# What one run returns: its exit status and the absolute paths it wrote (or deleted).
if TYPE_CHECKING:
    Run = Callable[[], Tuple[int, Collection[str]]]


def loop(paths: Sequence[str], once: Run, outputs: Iterable[str] = ()) -> int:
    """Run `once`, then again after each change under `paths`; the last run's status when
    the watch ends (it ends by Ctrl-C, which agentrc.cli.main turns into 130). `outputs`:
    directories and files the command writes every run (--out's state, --report)."""
    try:
        import watchfiles
    except ImportError:  # pragma: no cover - a dependency of the package
        raise UsageError("--watch needs the watchfiles package (pip install watchfiles)") from None
    code, written = once()
    ignored = _Ignored(outputs, written)
    shown = ", ".join(paths)
    watching = False
    # yield_on_timeout: the first (empty) batch comes once the watcher is in place, and only
    # then is "watching" said: a change made after that line is never missed.
    for changes in watchfiles.watch(*paths, watch_filter=ignored, step=STEP_MS, debounce=DEBOUNCE_MS,
                                    raise_interrupt=True, yield_on_timeout=True, rust_timeout=READY_MS):
        if not watching:
            watching = True
            say(f"watching {shown} for changes (Ctrl-C to stop)", style="dim")
        relevant = sorted({p for _, p in changes if not ignored.ours(p)})
        if not relevant:
            continue
        more = f" and {len(relevant) - 1} more" if len(relevant) > 1 else ""
        say(f"changed: {os.path.relpath(relevant[0])}{more}; running again", style="dim")
        code, written = once()
        ignored.written = {os.path.abspath(p) for p in written}
        say(f"watching {shown} for changes (Ctrl-C to stop)", style="dim")
    return code


class _Ignored:
    """watchfiles' default filter, less what agentrc writes itself."""

    def __init__(self, outputs: Iterable[str], written: Collection[str]) -> None:
        import watchfiles

        self.default = watchfiles.DefaultFilter()
        self.outputs = tuple(os.path.abspath(p) for p in outputs)
        self.written = {os.path.abspath(p) for p in written}

    def __call__(self, change, path: str) -> bool:
        return self.default(change, path) and not self.ours(path)

    def ours(self, path: str) -> bool:
        path = os.path.abspath(path)
        name = os.path.basename(path)
        if path in self.written or ".agentrc-tmp" in name or name.startswith(".agentrc-"):
            return True
        return any(path == o or path.startswith(o + os.sep) for o in self.outputs)
