"""Every directory a write changes is fsync'd after its last change and before the new
manifest records it, also when its descriptor is evicted from the writer's small cache
(`_Tree.unsynced`: it is fsync'd then, not opened again at the end), and a cold build
opens each output directory once to write it (issue 13: each was opened twice)."""

from __future__ import annotations

import contextlib
import io
import os
import threading
from pathlib import Path

from agentrc.cli.main import main
from agentrc.output import writer
from helpers import WrappedOS
from test_memory_cost import _registry  # n rules and n skills with a supporting file each


def _build(reg: Path, out: Path, clients: str = "claude,copilot,opencode") -> None:
    with contextlib.redirect_stderr(io.StringIO()):
        assert main(["build", str(reg), "--client", clients, "--out", str(out), "--jobs", "1", "--no-cache"]) == 0


class _LoggingOS(WrappedOS):
    """`os` as the writer sees it, logging each change of an output directory's entries and
    each fsync of a directory by the directory's inode, and the rename of the manifest into
    place. (The staging directory and `.agentrc` have their own fsyncs, checked by
    `test_output_safety`.)"""

    def __init__(self):
        self.log = []
        self.paths = {}
        self.dir_opens = 0
        self.lock = threading.Lock()

    def around(self, name, real, args, kwargs):
        changed = None
        if name == "rmdir":
            with contextlib.suppress(OSError):
                gone = os.stat(args[0], dir_fd=kwargs.get("dir_fd"), follow_symlinks=False).st_ino
                with self.lock:
                    self.log.append(("removed", gone))
        if name in ("link", "rename", "replace"):
            changed = kwargs.get("dst_dir_fd")
        elif name in ("mkdir", "unlink", "rmdir"):
            changed = kwargs.get("dir_fd")
        result = real(*args, **kwargs)
        with self.lock:
            if changed is not None and "/.agentrc" not in os.readlink(f"/proc/self/fd/{changed}"):
                self.log.append(("change", os.fstat(changed).st_ino))  # agentrc's own state aside
                self.paths[os.fstat(changed).st_ino] = (name, os.readlink(f"/proc/self/fd/{changed}"))
            if name == "fsync" and os.path.isdir(f"/proc/self/fd/{args[0]}"):
                self.log.append(("fsync", os.fstat(args[0]).st_ino))
            if name == "open" and len(args) > 1 and args[1] & getattr(os, "O_DIRECTORY", 0):
                self.dir_opens += 1
            if name == "replace" and args[1] == "manifest.json":
                self.log.append(("manifest", None))
        return result


def _check_durable(log, paths) -> None:
    manifest = max(i for i, (kind, _) in enumerate(log) if kind == "manifest")
    last_change = {}
    for i, (kind, ino) in enumerate(log[:manifest]):
        if kind == "change":
            last_change[ino] = i
    for kind, ino in log:
        if kind == "removed":
            last_change.pop(ino, None)  # removed: its entries are gone, its parent's change is synced
    synced_after = {ino for ino in last_change
                    if any(kind == "fsync" and other == ino for kind, other in log[last_change[ino]:manifest])}
    assert synced_after == set(last_change), [paths[i] for i in set(last_change) - synced_after]


def test_each_changed_directory_is_fsynced_after_its_last_change_and_before_the_manifest(tmp_path, monkeypatch):
    reg = _registry(tmp_path, 50)
    real = writer._Tree.__init__
    monkeypatch.setattr(writer._Tree, "__init__", lambda self, root, most=None: real(self, root, 16))
    out = tmp_path / "out"
    logging = _LoggingOS()
    monkeypatch.setattr(writer, "os", logging)
    _build(reg, out)
    dirs = sum(1 for p in out.rglob("*") if p.is_dir() and ".agentrc" not in p.parts)
    assert dirs > 150, dirs
    _check_durable(logging.log, logging.paths)
    # Each output directory looked for while reading (missing: one open of the topmost new
    # one), then made and opened once to write into it; none opened again for its fsync.
    assert logging.dir_opens <= dirs + 20, (logging.dir_opens, dirs)

    # An edit that adds and deletes files in directories written long ago (evicted since).
    for i in range(0, 40, 3):
        (reg / "skills" / f"skill-{i:04d}" / "scripts" / "more.sh").write_text("#!/bin/sh\necho more\n")
    (reg / "rules" / "rule-0007" / "RULE.md").unlink()
    (reg / "rules" / "rule-0007").rmdir()
    logging = _LoggingOS()
    monkeypatch.setattr(writer, "os", logging)
    _build(reg, out)
    _check_durable(logging.log, logging.paths)

    # A client fewer: its files deleted and its directories pruned.
    logging = _LoggingOS()
    monkeypatch.setattr(writer, "os", logging)
    _build(reg, out, "claude,copilot")
    _check_durable(logging.log, logging.paths)
    assert not (out / ".opencode").exists()

    monkeypatch.setattr(writer, "os", os)
    clean = tmp_path / "clean"
    _build(reg, clean, "claude,copilot")
    tree = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()
            and ".agentrc" not in p.parts}
    assert tree == {str(p.relative_to(clean)): p.read_bytes() for p in sorted(clean.rglob("*")) if p.is_file()
                    and ".agentrc" not in p.parts}


def _write(out: Path, files) -> None:
    with writer.session(out) as tree:
        changes, _, diags = tree.diff(files)
        assert not diags, diags
        assert tree.apply(files, changes) == ()


def test_a_directory_changed_again_after_its_eviction_is_fsynced_again(tmp_path, monkeypatch):
    """Files of a directory that come apart from each other, and new directories made in a
    directory whose descriptor was evicted (and fsync'd) meanwhile: it is fsync'd again."""
    from agentrc.files import OutputFile

    real = writer._Tree.__init__
    monkeypatch.setattr(writer._Tree, "__init__", lambda self, root, most=None: real(self, root, 16))
    files = []
    for i in range(12):
        files.append(OutputFile(f"a/{i}/x.md", b"x\n"))
        files += [OutputFile(f"b/{i}/{j}/y.md", b"y\n") for j in range(20)]  # `a` and `a/{i}` evicted
        files.append(OutputFile(f"a/{i}/z.md", b"z\n"))  # `a/{i}` changed again
    logging = _LoggingOS()
    monkeypatch.setattr(writer, "os", logging)
    _write(tmp_path / "out", files)
    _check_durable(logging.log, logging.paths)
    # And an update of some, a deletion of others: the same directories, written long after.
    logging = _LoggingOS()
    monkeypatch.setattr(writer, "os", logging)
    _write(tmp_path / "out", [OutputFile(f.path, b"new\n") if f.path.endswith("z.md") else f for f in files
                              if not f.path.endswith("x.md")])
    _check_durable(logging.log, logging.paths)
