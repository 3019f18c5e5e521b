"""Pants' remote cache end to end, with `[agentrc].execution = "process"`: a BuildGrid
server on loopback (tools/buildgrid/start.sh), and three fresh clones of this repository,
each with its own empty local cache. The first clone fills the remote cache, the second
is served from it (every generation Process a hit, the same dist/ bytes), and a third run
with the server gone still builds, with a warning.

Skipped when BuildGrid cannot be installed here (it needs CPython 3.11), unless
AGENTRC_REQUIRE_TOOLS=1."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Dict, Iterator

import pytest

from helpers import PANTS_PYTHON, ROOT, copy_minimal_repo

START = ROOT / "tools" / "buildgrid" / "start.sh"
STOP = ROOT / "tools" / "buildgrid" / "stop.sh"
INSTANCE = "agentrc-test"
REQUIRE_TOOLS = os.environ.get("AGENTRC_REQUIRE_TOOLS") == "1"
PANTS_TIMEOUT = 600
START_TIMEOUT = 600  # a first start installs BuildGrid into a venv (~30 s)
STOP_TIMEOUT = 60


def _unavailable(message: str) -> None:
    if REQUIRE_TOOLS:
        pytest.fail(f"{message} (AGENTRC_REQUIRE_TOOLS=1)")
    pytest.skip(message)


def _free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class BuildGrid:
    """The server start.sh started, with its own state dir (pid, port and log files)."""

    def __init__(self, port: int, state_dir: Path):
        self.port = port
        self.state_dir = state_dir
        self.env = {**os.environ, "BUILDGRID_STATE_DIR": str(state_dir), "BUILDGRID_INSTANCE": INSTANCE,
                    "BUILDGRID_PORT": str(port)}

    @property
    def address(self) -> str:
        return f"grpc://127.0.0.1:{self.port}"

    def start(self) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", str(START), str(self.port)], env=self.env, capture_output=True, text=True,
                              timeout=START_TIMEOUT)

    def stop(self) -> None:
        subprocess.run(["bash", str(STOP)], env=self.env, capture_output=True, text=True, timeout=STOP_TIMEOUT)

    def log_tail(self) -> str:
        log = self.state_dir / "bgd.log"
        return log.read_text(errors="replace")[-3000:] if log.exists() else "(no log)"


@pytest.fixture(scope="module")
def buildgrid(tmp_path_factory) -> Iterator[BuildGrid]:
    if not PANTS_PYTHON.exists():
        _unavailable("the Pants venv is missing: run ./pants once (./test does)")
    server = BuildGrid(_free_loopback_port(), tmp_path_factory.mktemp("buildgrid"))
    try:
        began = time.monotonic()
        try:
            proc = server.start()
        except subprocess.TimeoutExpired:
            pytest.fail(f"tools/buildgrid/start.sh took over {START_TIMEOUT}s")
        if proc.returncode == 3:
            _unavailable(f"BuildGrid cannot be installed here: {proc.stderr.strip()}")
        assert proc.returncode == 0, f"start.sh failed:\n{proc.stdout}\n{proc.stderr}\n{server.log_tail()}"
        assert f"--remote-store-address={server.address}" in proc.stdout
        assert f"--remote-instance-name={INSTANCE}" in proc.stdout
        print(f"BuildGrid up on {server.address} in {time.monotonic() - began:.1f}s")
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory) -> Path:
    """One copy of the minimal repository, taken once, so every clone has the same bytes
    even while the working tree is being edited."""
    repo = tmp_path_factory.mktemp("snapshot")
    return copy_minimal_repo(repo)


def _clone(snapshot: Path, base: Path, n: int) -> Path:
    clone = base / f"clone-{n}"
    shutil.copytree(snapshot, clone)
    return clone


def _package(clone: Path, caches: Path, n: int, server: BuildGrid) -> subprocess.CompletedProcess:
    """`pants package ::` in `clone` with an empty local cache of its own and the remote cache."""
    home = caches / f"home-{n}"
    home.mkdir()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "NO_SCIE_WARNING": "1",
           "LANG": "C.UTF-8"}
    argv = [str(PANTS_PYTHON), "-m", "pants", "--no-pantsd", "--no-watch-filesystem",
            f"--pants-workdir={clone / '.pants.d'}",
            f"--local-store-dir={caches / f'lmdb_store-{n}'}", f"--named-caches-dir={caches / f'named_caches-{n}'}",
            "--remote-cache-read", "--remote-cache-write", f"--remote-store-address={server.address}",
            f"--remote-instance-name={INSTANCE}",
            "--agentrc-execution=process", "--stats-log", "package", "::"]
    began = time.monotonic()
    proc = subprocess.run(argv, cwd=clone, env=env, capture_output=True, text=True, timeout=PANTS_TIMEOUT)
    print(f"clone {n}: pants package :: exited {proc.returncode} in {time.monotonic() - began:.1f}s")
    return proc


def _counters(proc: subprocess.CompletedProcess) -> Dict[str, int]:
    """The `--stats-log` counters Pants logs at the end of a run."""
    text = proc.stderr
    at = text.rfind("Counters:")
    assert at >= 0, f"no --stats-log counters in the output:\n{text[-3000:]}"
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s+(\w+): (\d+)$", text[at:], re.M)}


def _tree(root: Path) -> Dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _remote(counters: Dict[str, int]) -> Dict[str, int]:
    return {k: v for k, v in counters.items() if k.startswith("remote_cache") or k.startswith("local_cache_requests")}


def test_remote_cache_is_shared_between_clones(buildgrid, snapshot, tmp_path):
    caches = tmp_path / "caches"
    caches.mkdir()

    # Clone 1: empty local cache, empty remote cache: generates, then writes to the remote cache.
    first = _clone(snapshot, tmp_path, 1)
    proc = _package(first, caches, 1, buildgrid)
    assert proc.returncode == 0, f"clone 1 failed:\n{proc.stdout}\n{proc.stderr[-5000:]}"
    c1 = _counters(proc)
    print(f"clone 1 counters: {_remote(c1)}")
    assert c1.get("remote_cache_write_successes", 0) > 0, \
        f"clone 1 wrote nothing to the remote cache: {_remote(c1)}\n{buildgrid.log_tail()}"
    assert c1.get("remote_cache_write_errors", 0) == 0, _remote(c1)
    dist1 = _tree(first / "dist")
    assert dist1, "clone 1 packaged nothing"

    # Clone 2: another empty local cache: every generation Process is served remotely.
    second = _clone(snapshot, tmp_path, 2)
    proc = _package(second, caches, 2, buildgrid)
    assert proc.returncode == 0, f"clone 2 failed:\n{proc.stdout}\n{proc.stderr[-5000:]}"
    c2 = _counters(proc)
    print(f"clone 2 counters: {_remote(c2)}")
    assert c2.get("remote_cache_requests_cached", 0) > 0, \
        f"clone 2 had no remote cache hit: the cache keys differ between clones: {_remote(c2)}"
    assert c2.get("remote_cache_requests_uncached", 0) == 0, \
        f"some Process keys differ between identical clones: {_remote(c2)}"
    assert _tree(second / "dist") == dist1, "clone 2's dist/ differs from clone 1's"

    # Clone 3: the server is gone: Pants warns about the remote cache and still builds.
    buildgrid.stop()
    third = _clone(snapshot, tmp_path, 3)
    proc = _package(third, caches, 3, buildgrid)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"clone 3 failed with the remote cache down:\n{proc.stdout}\n{proc.stderr[-5000:]}"
    assert re.search(r"\[WARN\] Failed to (read from|write to) remote cache", output), \
        f"no warning about the unreachable remote cache:\n{proc.stderr[-5000:]}"
    c3 = _counters(proc)
    print(f"clone 3 counters: {_remote(c3)}")
    assert c3.get("remote_cache_requests_cached", 0) == 0
    assert _tree(third / "dist") == dist1, "clone 3's dist/ differs from clone 1's"


def test_start_on_a_machine_without_the_venv_says_why_it_stops(tmp_path):
    """A fresh clone has no BuildGrid venv: start.sh must reach the install step and speak,
    not end silently (it once did: with `set -e` and `pipefail`, reading the shebang of a bgd
    that did not exist yet ended the script with exit 1 and no message, which is how CI failed).
    The python3.11 given cannot make a venv, so the script stops at once with its own message."""
    fake = tmp_path / "python3.11"
    fake.write_text("#!/bin/sh\n[ \"$1\" = -c ] && exit 0\nexit 1\n")
    fake.chmod(0o755)
    env = {**os.environ, "BUILDGRID_STATE_DIR": str(tmp_path / "state"), "BUILDGRID_VENV": str(tmp_path / "venv"),
           "AGENTRC_PY311": str(fake)}
    proc = subprocess.run(["bash", str(START), str(_free_loopback_port())], env=env, capture_output=True, text=True,
                          timeout=STOP_TIMEOUT)
    assert proc.returncode == 3, proc.stderr
    assert "installing buildgrid" in proc.stderr
    assert "could not create a venv" in proc.stderr
    assert not (tmp_path / "venv").exists()
