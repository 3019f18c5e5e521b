"""Helpers shared by the tests: the repository root and golden-file comparison.

Goldens are regenerated with AGENTRC_REGEN_GOLDENS=1 (then review the diff)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Tuple

ROOT = Path(__file__).resolve().parent.parent
# The Pants venv's interpreter, where ./pants puts it ($AGENTRC_PANTS_VENV, else .pants-venv).
PANTS_PYTHON = Path(os.environ.get("AGENTRC_PANTS_VENV") or ROOT / ".pants-venv") / "bin" / "python"

REGEN = os.environ.get("AGENTRC_REGEN_GOLDENS") == "1"


def compare_golden(path: Path, actual: str) -> None:
    """Assert `actual` equals the golden file, or rewrite it when regenerating."""
    if REGEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"missing golden {path}; run with AGENTRC_REGEN_GOLDENS=1 and review it"
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"{path} differs; rerun with AGENTRC_REGEN_GOLDENS=1 and review the diff"


def saved_then_counted(script: str, path: str) -> Tuple[int, int]:
    """What `script` prints (a JSON count) run as a process that saves what it made to `path`
    (its second argument `save`), then as a new process reading it (`count`): the work kept
    files spare a second process (agentrc.classcode, agentrc.patterns)."""
    import json
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))

    def run(mode: str) -> int:
        out = subprocess.run([sys.executable, "-c", script, path, mode], env=env, capture_output=True,
                             text=True, check=True)
        return json.loads(out.stdout)

    return run("save"), run("count")


def copy_minimal_repo(dest: Path) -> Path:
    """What a monorepo using the backend holds: pants.toml, the backend, the core and the
    examples (without the plugin's own tests), copied to `dest` for a real Pants to run in."""
    import shutil

    dest.mkdir(parents=True, exist_ok=True)
    for name in ("pants.toml", "BUILD"):
        shutil.copy(ROOT / name, dest / name)
    ignore = shutil.ignore_patterns("__pycache__", "*_test.py", "testutil.py", "conftest.py")
    for name in ("pants-plugins", "src", "examples"):
        shutil.copytree(ROOT / name, dest / name, ignore=ignore)
    return dest


def readable(fd, seconds: float) -> bool:
    """Whether `fd` (a descriptor or a file) has something to read, or its end, within
    `seconds`. poll, not select: select refuses a descriptor numbered 1024 or above, which a
    test worker that has run many modules hands out."""
    import select

    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(seconds * 1000))


def stop_pantsd(*repos: Path, wait: float = 20.0) -> None:
    """Stop the pantsd that runs in each of `repos` (its pid file under `.pids/`), and wait for
    them to go: a test's daemon must not outlive the test, nor keep its temporary files open.
    All are told first, then waited for together (each takes a few seconds to shut down)."""
    import signal
    import time

    pids = []
    for repo in repos:
        for pidfile in (repo / ".pids").glob("*/pantsd/pid"):
            try:
                pid = int(pidfile.read_text().strip())
                # Only that repository's daemon: a pid file left behind may name a reused pid.
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    if str(repo).encode() not in fh.read():
                        continue
                os.kill(pid, signal.SIGTERM)
            except (OSError, ValueError):
                continue
            pids.append(pid)
    deadline = time.monotonic() + wait
    while pids and time.monotonic() < deadline:
        pids = [pid for pid in pids if _alive(pid)]
        time.sleep(0.1)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def tree_text(files) -> str:
    """A whole output tree as one reviewable text: each file's path, mode and content."""
    parts = []
    for f in files:
        try:
            body = f.content.decode("utf-8")
        except UnicodeDecodeError:  # pragma: no cover - no binary resources in the examples
            body = f"<{len(f.content)} bytes>\n"
        parts.append(f"=== {f.path}{' (executable)' if f.executable else ''}\n{body}")
    return "".join(parts)


class WrappedOS:
    """`os` as a module under test sees it (a test sets it as the module's `os`): each call
    of a function goes through `around(name, real, args, kwargs)`, which a subclass defines
    (counting, logging); everything else is `os`'s own."""

    def __getattr__(self, name):
        real = getattr(os, name)
        if not callable(real):
            return real

        def call(*args, **kwargs):
            return self.around(name, real, args, kwargs)
        return call

    def around(self, name, real, args, kwargs):
        return real(*args, **kwargs)
