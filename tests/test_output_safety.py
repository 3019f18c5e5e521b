"""What agentrc writes, and what a crash leaves (docs/security.md): the output side of
"safe by construction". Every path written, merged or deleted stays inside --out and goes
through no symlink; a build is a transaction that a kill or an I/O error at any point
cannot leave half done; one run at a time; the documented recovery works; user files keep
their bytes."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from agentrc.cli.main import main
from agentrc.files import OutputFile
from agentrc.inputs.read import read_inputs
from agentrc.output import atomic, steps, writer
from agentrc.pipeline import stages
from helpers import ROOT

REGISTRY = str(ROOT / "examples" / "registry")
PY = sys.executable
ENV = dict(os.environ, PYTHONPATH=str(ROOT / "src"))


def _build(out, *extra: str, clients: str = "claude") -> int:
    return main(["build", REGISTRY, "--client", clients, "--out", str(out), "--no-cache", *extra])


def _tree(root: Path) -> dict:
    """Every file, link and directory below `root`, with its bytes and mode bits."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if p.is_symlink():
                found[rel] = ("link", os.readlink(p))
            elif p.is_dir():
                found[rel] = ("dir",)
            else:
                found[rel] = (p.read_bytes(), p.stat().st_mode & 0o777)
    return found


def _without_stat(tree: dict) -> dict:
    """The manifest's `stat` records mtimes, which differ between two correct builds."""
    tree = dict(tree)
    raw = tree.pop(".agentrc/manifest.json", None)
    if raw is not None:
        data = json.loads(raw[0])
        data.pop("stat", None)
        tree[".agentrc/manifest.json"] = json.dumps(data, sort_keys=True)
    return tree


# --- 1. the write boundary -----------------------------------------------------------------


@pytest.mark.parametrize("key", ["../victim/keep.txt", "/ABS/keep.txt", "a/../../victim/keep.txt", "./x", "a//b",
                                 ".agentrc/manifest.json", "", "a\\..\\b"])
@pytest.mark.parametrize("section", ["files", "merged"])
def test_a_manifest_naming_paths_outside_deletes_nothing(tmp_path, capsys, key, section):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("keep me\n")
    out = tmp_path / "out"
    assert _build(out) == 0
    digest = hashlib.sha256(b"keep me\n").hexdigest()
    key = key.replace("/ABS", str(tmp_path))
    manifest = json.loads((out / ".agentrc" / "manifest.json").read_text())
    if section == "files":
        manifest["files"][key] = digest
    else:
        manifest["merged"][key] = {"format": "json", "created": True, "keys": []}
    (out / ".agentrc" / "manifest.json").write_text(json.dumps(manifest))
    before = _tree(tmp_path)
    capsys.readouterr()
    assert _build(out, clients="opencode") == 1  # would delete claude's files: nothing is deleted
    err = capsys.readouterr().err
    assert "error[AR093]" in err and "Traceback" not in err
    assert _tree(tmp_path) == before


@pytest.mark.parametrize("link", [".claude", ".claude/agentrc", ".mcp.json"])
def test_writes_never_go_through_a_symlink_in_the_output(tmp_path, capsys, link):
    home = tmp_path / "home"  # stands for ~/.claude: the user's global settings
    out = tmp_path / "out"
    assert _build(out) == 0
    target = out / link
    if target.is_dir():
        shutil.copytree(target, home)
        shutil.rmtree(target)
    else:
        home.mkdir()
        shutil.copy(target, home / "file")
        target.unlink()
        home = home / "file"
    os.symlink(home, target)
    before = _tree(tmp_path)
    capsys.readouterr()
    # A rebuild with another client set would rewrite settings.json and delete claude's files.
    assert _build(out, clients="copilot") == 1
    err = capsys.readouterr().err
    assert f"{out / link}: error[AR140]" in err and "Traceback" not in err
    assert _tree(tmp_path) == before


def test_a_symlink_swapped_in_during_the_write_is_not_followed(tmp_path):
    """The walk opens each directory with O_NOFOLLOW from its parent's descriptor: a link
    that appears after diff() is refused at the write itself (no check-then-use window)."""
    out = tmp_path / "out"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    files = [OutputFile("d/x.txt", b"x\n")]
    with writer.session(out) as tree:
        changes, _, diags = tree.diff(files)
        assert not diags
        (out / "d").symlink_to(elsewhere)
        problems = tree.apply(files, changes)
    assert any(p.code == "AR140" for p in problems)
    assert list(elsewhere.iterdir()) == []
    with writer.session(out) as tree:  # and the next run refuses it too
        _, _, diags = tree.diff(files)
    assert [d.code for d in diags if d.is_error] == ["AR140"]


def test_planned_paths_outside_the_output_are_refused(tmp_path):
    for bad in ("../x", "/tmp/x", "a/./b", ".agentrc/manifest.json"):
        with writer.session(tmp_path / "out") as tree:
            changes, _, diags = tree.diff([OutputFile(bad, b"x")])
        assert [d.code for d in diags] == ["AR140"] and changes.empty


# --- 5. manifests of any shape, and directories that cannot be written ---------------------


@pytest.mark.parametrize("content", [
    "null", "[]", '"files"', "{}", '{"files": []}', '{"files": {"a": 1}}', '{"files": {"a": "zz"}}',
    '{"files": {}, "merged": []}', '{"files": {}, "merged": {"a": {"keys": [[1, 2]]}}}',
    '{"files": {}, "merged": {"a": {"format": "yaml"}}}', '{"files": {}, "dirs": ["../x"]}',
    '{"files": {}, "version": 2}', "[" * 100000, "\xff", "{" + '"files": {}, ' * 3 + "}"])
def test_a_manifest_of_any_shape_is_a_diagnostic(tmp_path, capsys, content):
    out = tmp_path / "out"
    (out / ".agentrc").mkdir(parents=True)
    (out / ".agentrc" / "manifest.json").write_bytes(content.encode("utf-8", "surrogateescape")
                                                    if content != "\xff" else b"\xff")
    before = _tree(out)
    assert _build(out) == 1
    err = capsys.readouterr().err
    assert "error[AR093]" in err and "Traceback" not in err
    assert _tree(out) == before


def test_a_huge_manifest_is_refused_unread(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(writer, "MAX_MANIFEST", 1000)
    out = tmp_path / "out"
    (out / ".agentrc").mkdir(parents=True)
    (out / ".agentrc" / "manifest.json").write_text('{"files": {}, "pad": "' + "x" * 2000 + '"}')
    assert _build(out) == 1
    assert "larger than" in capsys.readouterr().err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_a_read_only_output_is_a_diagnostic(tmp_path, capsys):
    out = tmp_path / "out"
    assert _build(out) == 0
    (out / ".claude" / "rules" / "extra.md").parent.mkdir(exist_ok=True)
    os.chmod(out, 0o555)
    try:
        capsys.readouterr()
        assert _build(out, clients="copilot") == 1
        err = capsys.readouterr().err
        assert "error[AR142]" in err and "Permission denied" in err and "Traceback" not in err
    finally:
        os.chmod(out, 0o755)


def test_output_that_is_a_file_an_unwritable_report_and_too_long_paths(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    assert _build(tmp_path / "file") == 1
    assert "error[AR142] cannot read or write: Not a directory" in capsys.readouterr().err
    out = tmp_path / "out"
    assert _build(out, "--report", str(tmp_path / "file" / "report.json")) == 1
    err = capsys.readouterr().err
    assert "error[AR142] cannot write the report" in err and "Traceback" not in err
    assert not out.exists()  # nothing written
    deep = tmp_path / "/".join(["d" * 200] * 25)  # > PATH_MAX (4096)
    assert _build(deep) == 1
    err = capsys.readouterr().err
    assert "error[AR142]" in err and "Traceback" not in err
    long_name = tmp_path / ("n" * 300)  # > NAME_MAX
    assert _build(long_name) == 1
    assert "error[AR142]" in capsys.readouterr().err


def test_a_full_disk_is_a_diagnostic_and_writes_nothing(tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    assert _build(out) == 0
    before = _tree(out)
    real_write = os.write

    def full(fd, data):
        if len(data) > 100:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full)
    capsys.readouterr()
    assert _build(out, clients="copilot") == 1
    err = capsys.readouterr().err
    assert "No space left on device" in err and "nothing written" in err and "Traceback" not in err
    monkeypatch.undo()
    assert _tree(out) == before


# --- 2. a build is a transaction: faults and kills at every step ---------------------------


class _Killed(BaseException):
    """Stands for SIGKILL: raised at one call, and every call after it fails the same way,
    so no cleanup of the dying run can happen."""


class _FaultyOS:
    """`os` as the writer sees it, failing at the k-th call that touches the disk. The writer
    fsyncs batches of files from a thread pool: the calls are counted under a lock, so each
    k is one call (which one of a batch's fsyncs it is may vary from run to run)."""

    CALLS = ("open", "write", "read", "fsync", "replace", "rename", "link", "unlink", "mkdir", "rmdir", "fchmod",
             "stat", "fstat", "listdir", "makedirs", "close")

    def __init__(self, k: int, fault):
        self.k, self.fault, self.count, self.dead, self.fds = k, fault, 0, False, set()
        self.lock = threading.Lock()

    def __getattr__(self, name):
        real = getattr(os, name)
        if name not in self.CALLS:
            return real

        def call(*args, **kwargs):
            if self.dead:
                raise _Killed()
            if name == "close":
                self.fds.discard(args[0])
                return real(*args, **kwargs)
            with self.lock:
                if self.dead:
                    raise _Killed()
                self.count += 1
                hit = self.count == self.k
                if hit and self.fault is _Killed:
                    self.dead = True
                    raise _Killed()
            if hit:
                raise OSError(self.fault, os.strerror(self.fault))
            if name == "fsync":
                return None  # counted as a step, not paid for: durability is the kill -9 test's
            result = real(*args, **kwargs)
            if name == "open":
                self.fds.add(result)
            return result
        return call

    def close_leaked(self):
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass


def _small_registry(reg: Path) -> Path:
    """Two rules, a hook (merged into a user's settings.json), the context (a block in
    AGENTS.md) and an MCP server: every kind of write, in few files, so that a fault can be
    injected at every single step of the build in a few seconds."""
    for part in ("rules/commit-style", "rules/api-conventions", "hooks/format-on-edit", "context/project"):
        shutil.copytree(Path(REGISTRY) / part, reg / part)
    (reg / "tools.bundle.yaml").write_text("schema: 1\nname: tools\ndescription: Shared MCP servers\nitems: {}\n"
                                           "mcps:\n  docs:\n    remote:\n      type: http\n"
                                           "      url: https://docs.example.com/mcp\n")
    return reg


def _scenario(tmp_path: Path):
    """An output tree with user files next to agentrc's, and the next build's files: creates,
    updates, deletes, merges into a user's file, pruned directories."""
    reg = _small_registry(tmp_path / "reg")
    out = tmp_path / "template"
    (out / ".claude").mkdir(parents=True)
    (out / ".claude" / "settings.json").write_text('{\n  // mine\n  "model": "opus",\n}\n')
    (out / "README.md").write_text("the user's\n")
    (out / "empty-of-the-user").mkdir()
    assert main(["build", str(reg), "--client", "claude,copilot", "--out", str(out), "--no-cache"]) == 0
    rule = reg / "rules" / "commit-style" / "RULE.md"
    rule.write_text(rule.read_text().replace("Conventional Commits form", "Conventional Commits 1.0 form"))
    shutil.rmtree(reg / "rules" / "api-conventions")
    inputs = read_inputs((str(reg),))
    plan = stages.generate(inputs.tree, ["claude", "opencode"], [], False, inputs.explicit, None,
                           canonical=inputs.canonical)
    assert plan.ok
    clean = tmp_path / "clean"
    shutil.copytree(out, clean, symlinks=True)
    assert not _run(clean, plan.files)
    return out, list(plan.files), _without_stat(_tree(clean))


def _run(out: Path, files) -> tuple:
    """A build's write; its errors (none expected)."""
    with writer.session(out) as tree:
        changes, _, diags = tree.diff(files)
        assert not [d for d in diags if d.is_error], diags
        return tuple(d for d in tree.apply(files, changes) if d.is_error)


def _faulty_run(out: Path, files) -> bool:
    """A build's write that may fail anywhere: whether it reported a failure."""
    try:
        with writer.session(out) as tree:
            changes, _, diags = tree.diff(files)
            if any(d.is_error for d in diags):
                return True
            return any(d.is_error for d in tree.apply(files, changes))
    except writer.OutputError as exc:
        assert exc.diagnostics
        return True


def _user_files(tree: dict) -> dict:
    return {k: v for k, v in tree.items() if k in ("README.md", "empty-of-the-user")}


@pytest.fixture
def fast_tmp(tmp_path):
    """A directory in memory when there is one: the fault tests rebuild a tree hundreds of
    times, and removing directories on a journaling disk costs milliseconds each."""
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        path = Path(tempfile.mkdtemp(prefix="agentrc-faults-", dir="/dev/shm"))
        yield path
        shutil.rmtree(path, ignore_errors=True)
    else:
        yield tmp_path


def _as_os(monkeypatch, value) -> None:
    """`value` as `os` for the writer and for the executor running its plan (`steps`, and
    `atomic`, which writes the executor's journal): a fault can hit every step."""
    monkeypatch.setattr(writer, "os", value)
    monkeypatch.setattr(steps, "os", value)
    monkeypatch.setattr(atomic, "os", value)


@pytest.mark.parametrize("fault", [errno.EIO, errno.ENOSPC, _Killed], ids=["EIO", "ENOSPC", "kill"])
def test_a_fault_at_any_step_then_a_rebuild_gives_the_clean_tree(fast_tmp, monkeypatch, fault):
    tmp_path = fast_tmp
    template, files, expected = _scenario(tmp_path)
    counter = _FaultyOS(0, fault)
    _as_os(monkeypatch, counter)
    out = tmp_path / "out"
    shutil.copytree(template, out, symlinks=True)
    assert not _run(out, files)
    total = counter.count
    assert total > 50, total
    assert _without_stat(_tree(out)) == expected
    for k in range(1, total + 1):
        shutil.rmtree(out)
        shutil.copytree(template, out, symlinks=True)
        faulty = _FaultyOS(k, fault)
        _as_os(monkeypatch, faulty)
        try:
            reported = _faulty_run(out, files)
            # Unreported only when it hit the release of the lock, after all was written.
            left = {p: v for p, v in _without_stat(_tree(out)).items() if p != ".agentrc/lock"}
            assert reported or left == expected, f"step {k}: the fault was not reported"
        except _Killed:
            pass
        finally:
            faulty.close_leaked()
        _as_os(monkeypatch, _FaultyOS(0, fault))  # no fault (and no real fsync)
        assert not _run(out, files), f"step {k}: the next build failed"
        _as_os(monkeypatch, os)
        after = _tree(out)
        assert _without_stat(after) == expected, f"step {k} ({fault}): the rebuild differs from a clean build"
        assert _user_files(after) == _user_files(expected)
        assert after[".claude/settings.json"][0].startswith(b'{\n  // mine\n  "model": "opus",\n')


class _RecordingOS:
    """`os` as the writer sees it, logging which staged file each fsync was for."""

    def __init__(self):
        self.names, self.log, self.lock = {}, [], threading.Lock()

    def __getattr__(self, name):
        real = getattr(os, name)
        if name not in ("open", "fsync", "replace", "close"):
            return real

        def call(*args, **kwargs):
            result = real(*args, **kwargs)
            with self.lock:
                if name == "open":
                    self.names[result] = args[0]
                elif name == "close":
                    self.names.pop(args[0], None)
                else:
                    self.log.append((name, self.names.get(args[0], args[0])))
            return result
        return call


def test_every_staged_byte_is_durable_before_the_journal_commits(fast_tmp, monkeypatch):
    """The staged files are fsync'd in parallel batches (`writer.SYNC_BATCH`, made small
    here): each of them, the staging directory and every directory of a staged tree (new
    directories, staged whole), before the journal is renamed into place."""
    template, files, _ = _scenario(fast_tmp)
    monkeypatch.setattr(writer, "SYNC_BATCH", 2)
    recorder = _RecordingOS()
    _as_os(monkeypatch, recorder)
    assert not _run(template, files)
    log = recorder.log
    # The commit point: the executor's journal written a third time (begun, the point begun,
    # the point done), after the plan's data (`journal.tmp`, renamed to its chunk's name).
    journal = [i for i, (kind, name) in enumerate(log) if kind == "replace" and str(name).startswith(".journal.json")]
    commit = journal[2]
    assert log.index(("replace", "journal.tmp")) < journal[0]
    names = {f.path.rpartition("/")[2] for f in files}
    synced = [name for kind, name in log if kind == "fsync" and isinstance(name, str)]
    staged = [name for name in synced if name.endswith(".new") or name in names]
    assert len(staged) > 2 and any(n.endswith(".new") for n in staged), log  # more than one batch, both ways
    assert all(i < commit for i, (kind, name) in enumerate(log) if kind == "fsync" and name in staged)
    trees = {name for name in synced if name.endswith(".dir")}
    assert trees and all(("fsync", name) in log[:commit] for name in trees | {"rules", "txn"}), log
    assert ("fsync", "journal.tmp") in log[:commit]


def test_a_directory_made_where_a_staged_tree_goes_gets_agentrcs_files_beside_the_users(tmp_path, capsys,
                                                                                         monkeypatch):
    """A new directory is staged whole and renamed into place; when the user made it in the
    meantime (after the journal committed), agentrc's files are put in it one by one: the
    user's own files keep their bytes, a name the user took is theirs (AR091, not in the
    manifest), and every other file is written as in a clean build."""
    clean, out = tmp_path / "clean", tmp_path / "out"
    assert _build(clean) == 0
    expected = _tree(clean)
    ours = ".claude/rules/commit-style.md"
    others = [rel for rel in expected if rel.startswith(".claude/rules/") and rel != ours]
    assert ours in expected and others
    real = writer.Output._roll_forward
    trees = []

    def roll_forward(self, journal, fresh=False):
        trees.extend(t["path"] for t in journal.get("trees", ()))
        (out / ".claude" / "rules").mkdir(parents=True)
        (out / ".claude" / "rules" / "commit-style.md").write_text("the user's\n")
        (out / ".claude" / "notes.md").write_text("mine\n")
        return real(self, journal, fresh)

    monkeypatch.setattr(writer.Output, "_roll_forward", roll_forward)
    capsys.readouterr()
    assert _build(out) == 1
    err = capsys.readouterr().err
    assert ".claude" in trees
    assert f"{out / ours}: error[AR091] appeared while agentrc was writing" in err and "Traceback" not in err
    got = _tree(out)
    assert got[ours][0] == b"the user's\n" and got[".claude/notes.md"][0] == b"mine\n"
    for rel, value in expected.items():
        if rel != ours and not rel.startswith(".agentrc"):
            assert got.get(rel) == value, rel
    manifest = json.loads((out / ".agentrc" / "manifest.json").read_text())
    assert ours not in manifest["files"] and all(rel in manifest["files"] for rel in others)
    assert not (out / ".agentrc" / "txn").exists()


def _tree_journal(tmp_path: Path, tmp) -> tuple:
    """A victim directory beside an output whose staging directory holds a committed
    journal of one staged tree, `tmp`, to be moved to `moved`: (victim, output)."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("keep me\n")
    out = tmp_path / "out"
    txn = out / ".agentrc" / "txn"
    txn.mkdir(parents=True)
    (txn / "journal.json").write_text(json.dumps({"version": 2, "put": [], "delete": [], "prune": [],
                                                  "manifest": None, "trees": [{"path": "moved", "tmp": tmp}]}))
    return victim, out


@pytest.mark.parametrize("tmp", ["../../victim", "0.new", "x.dir", "/abs.dir", 7])
def test_a_journal_naming_a_staged_tree_badly_is_refused(tmp_path, capsys, tmp):
    """A journal's `trees` direct renames: each must name a staged tree (`N.dir`) and a safe
    path, or the journal is not replayed (AR093) and nothing is touched."""
    victim, out = _tree_journal(tmp_path, tmp)
    assert _build(out) == 1
    err = capsys.readouterr().err
    assert "error[AR093]" in err and "cannot read the journal" in err and "Traceback" not in err
    assert (victim / "keep.txt").read_text() == "keep me\n" and not (out / "moved").exists()


def test_a_staged_tree_that_is_a_link_is_not_followed(tmp_path, capsys):
    """A staged tree named by a committed journal that is a symlink (the output's own files
    may be hostile) is refused: nothing is moved or linked from where it points."""
    victim, out = _tree_journal(tmp_path, "0.dir")
    (out / ".agentrc" / "txn" / "0.dir").symlink_to(victim)
    assert _build(out) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "error[" in err
    assert (victim / "keep.txt").read_text() == "keep me\n" and not (out / "moved").exists()
    assert sorted(p.name for p in victim.iterdir()) == ["keep.txt"]


def test_an_uncommitted_staged_tree_is_discarded(tmp_path, capsys):
    """Staged trees without a journal (a run killed before its commit) go, with all below
    them: nothing visible changed, and the build then writes as a clean one."""
    out, clean = tmp_path / "out", tmp_path / "clean"
    assert _build(clean) == 0
    deep = out / ".agentrc" / "txn" / "0.dir" / "a" / "b"
    deep.mkdir(parents=True)
    (deep / "f.md").write_text("staged\n")
    (out / ".agentrc" / "txn" / "3.new").write_text("staged\n")
    assert _build(out) == 0
    assert _without_stat(_tree(out)) == _without_stat(_tree(clean))


def test_kill_9_during_builds_then_a_rebuild_gives_the_clean_tree(tmp_path):
    """Real processes killed at moments spread over a build (a few seconds in all)."""
    reg = tmp_path / "reg"
    shutil.copytree(REGISTRY, reg)
    for i in range(24):  # a larger tree: more of the build is spent writing
        d = reg / "rules" / f"bulk-{i}"
        d.mkdir()
        (d / "RULE.md").write_text(f"---\nschema: 1\nname: bulk-{i}\ndescription: Use when testing {i}\n---\n\n"
                                   f"## Body\n\nText {i}.\n")
    cmd = [PY, "-m", "agentrc", "build", str(reg), "--out", "{out}", "--no-cache", "--jobs", "1"]
    clean, out = tmp_path / "clean", tmp_path / "out"
    expected, duration = clean_build(cmd, clean)
    n = 6
    for i in range(n):
        killed_build(cmd, out, duration * (0.4 + 0.6 * i / n))
        if i % 2:  # half the time, an interrupted build into a tree of another client set
            shutil.rmtree(reg / "rules" / f"bulk-{i}")
            expected, _ = clean_build(cmd, clean)
    assert_rebuilds_to(cmd, out, expected)


def _argv(cmd, out):
    return [c.replace("{out}", str(out)) for c in cmd]


def clean_build(cmd, clean):
    """`cmd` (its output `{out}`) run to the end into `clean`: its tree (without the
    manifest's mtimes) and how long it took."""
    start = time.monotonic()
    subprocess.run(_argv(cmd, clean), env=ENV, check=True, capture_output=True)
    return _without_stat(_tree(clean)), time.monotonic() - start


def killed_build(cmd, out, after: float) -> None:
    """`cmd` run into `out` and killed (SIGKILL) `after` seconds later."""
    proc = subprocess.Popen(_argv(cmd, out), env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(after)
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def assert_rebuilds_to(cmd, out, expected) -> None:
    """One more run of `cmd` into `out` succeeds, says no traceback, and leaves `expected`."""
    done = subprocess.run(_argv(cmd, out), env=ENV, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert _without_stat(_tree(out)) == expected


def test_a_build_removes_agentrcs_own_leftover_temporary_files_and_nothing_else(tmp_path):
    """Writers before the journal staged beside their targets (`.agentrc-XXXXXXXX`, from
    mkstemp) and `write_atomic` writes `.NAME.agentrc-tmp`: a killed run left them. The next
    build removes exactly those names, as regular files, in the directories it writes."""
    out = tmp_path / "out"
    assert _build(out) == 0
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("keep")
    leftovers = [".agentrc-abc12_9z", ".claude/rules/.agentrc-zz_9k0q1", ".claude/.settings.json.agentrc-tmp",
                 ".agentrc/.agentrc-12345678", ".report.json.agentrc-tmp"]
    kept = [".agentrc-abc", ".agentrc-ABCDEFGH", ".agentrc-abc123456", "x.agentrc-tmp", ".agentrc-tmp",
            ".agentrc-abc12345.bak", "mine/.agentrc-abc12345", ".claude/rules/keep.md"]
    for rel in leftovers + kept:
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text("x")
    (out / ".claude" / ".agentrc-linklink").symlink_to(outside / "secret")
    (out / ".claude" / ".agentrc-dir12345").mkdir()
    assert _build(out) == 0
    for rel in leftovers:
        assert not (out / rel).exists(), rel
    for rel in kept:
        assert (out / rel).read_text() == "x", rel
    assert (out / ".claude" / ".agentrc-linklink").is_symlink() and (outside / "secret").read_text() == "keep"
    assert (out / ".claude" / ".agentrc-dir12345").is_dir()


# --- 3. one run at a time --------------------------------------------------------------------


def test_a_second_build_waits_then_fails_with_a_diagnostic(tmp_path):
    out = tmp_path / "out"
    cmd = [PY, "-m", "agentrc", "build", REGISTRY, "--client", "claude", "--out", str(out), "--no-cache"]
    # The holder keeps the lock until the test writes a line to it: no timing to lose on a
    # loaded machine.
    holder = subprocess.Popen([PY, "-c", "import sys; sys.path.insert(0, sys.argv[1]);"
                               "from agentrc.output import writer\n"
                               "with writer.session(sys.argv[2]):\n"
                               "    print('locked', flush=True); sys.stdin.readline()",
                               str(ROOT / "src"), str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        second = subprocess.run(cmd, env=dict(ENV, AGENTRC_LOCK_TIMEOUT="0.3"), capture_output=True, text=True)
        assert second.returncode == 1
        assert "waiting for another agentrc run" in second.stderr
        assert "error[AR141]" in second.stderr and "Traceback" not in second.stderr
        # A run that waits long enough goes ahead once the first one is done.
        third = subprocess.Popen(cmd, env=dict(ENV, AGENTRC_LOCK_TIMEOUT="60"), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        assert third.stderr is not None
        first_line = third.stderr.readline()
        assert "waiting for another agentrc run" in first_line, first_line
        assert holder.stdin is not None
        holder.stdin.write("go\n")
        holder.stdin.flush()
        _, rest = third.communicate(timeout=120)
        assert third.returncode == 0, first_line + rest
    finally:
        holder.kill()
        holder.wait()
    assert sorted(os.listdir(out / ".agentrc")) == ["manifest.json"]  # no lock file, no staging left


def test_two_concurrent_builds_both_succeed_one_after_the_other(tmp_path):
    out = tmp_path / "out"
    cmd = [PY, "-m", "agentrc", "build", REGISTRY, "--out", str(out), "--no-cache", "--jobs", "1"]
    procs = [subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = [p.communicate() for p in procs]
    for p, (_, err) in zip(procs, results):
        assert p.returncode == 0, err
        assert "Traceback" not in err


# --- 4. the documented recovery: delete the manifest, rebuild --------------------------------


def test_deleting_the_manifest_and_rebuilding_adopts_what_agentrc_wrote(tmp_path, capsys):
    out = tmp_path / "out"
    assert _build(out, clients="claude,opencode,copilot") == 0
    before = _tree(out)
    (out / ".agentrc" / "manifest.json").unlink()
    capsys.readouterr()
    assert _build(out, clients="claude,opencode,copilot") == 0, capsys.readouterr().err
    after = _tree(out)
    for path in (".claude/settings.json", ".mcp.json", "opencode.json", ".vscode/mcp.json"):
        assert after[path] == before[path], path  # hooks not appended twice, servers not AR096
    # ... and they are agentrc's again: another client set takes them out, and since they
    # held nothing else, the files go, as after a clean build.
    assert _build(out, clients="opencode") == 0
    assert not (out / ".mcp.json").exists() and not (out / ".claude" / "settings.json").exists()


CODEX_USER = '# mine\nmodel = "o3"\n\n[mcp_servers.mine]\ncommand = "mine"\n'


@pytest.mark.parametrize("user", [None, CODEX_USER], ids=["created", "users"])
def test_the_recovery_adopts_codex_toml_tables_too(tmp_path, capsys, user):
    """MCP servers in .codex/config.toml (TOML) and hooks in .codex/hooks.json: after the
    manifest is lost, a rebuild reads the tables back, finds what it would write, and owns
    them again; removing codex later deletes what agentrc created and gives the user's file
    back byte for byte."""
    out = tmp_path / "out"
    if user is not None:
        (out / ".codex").mkdir(parents=True)
        (out / ".codex" / "config.toml").write_text(user)
    assert _build(out, clients="codex") == 0
    before = _tree(out)
    assert b"[mcp_servers.schema-tools]" in before[".codex/config.toml"][0]
    assert b"PreToolUse" in before[".codex/hooks.json"][0]
    (out / ".agentrc" / "manifest.json").unlink()
    capsys.readouterr()
    assert _build(out, clients="codex") == 0
    err = capsys.readouterr().err
    assert "AR096" not in err and "error" not in err, err
    after = _tree(out)
    assert {p: v for p, v in after.items() if p != ".agentrc/manifest.json"} == {
        p: v for p, v in before.items() if p != ".agentrc/manifest.json"}  # byte-identical, nothing twice
    merged = json.loads(after[".agentrc/manifest.json"][0])["merged"]
    assert merged[".codex/config.toml"]["created"] is (user is None)
    assert _build(out, clients="codex") == 0  # a normal rebuild is a no-op
    assert "0 created, 0 updated, 0 deleted" in capsys.readouterr().err
    assert _tree(out) == after
    assert _build(out, clients="claude") == 0
    assert not (out / ".codex" / "hooks.json").exists()
    if user is None:
        assert not (out / ".codex" / "config.toml").exists()
    else:
        assert (out / ".codex" / "config.toml").read_text() == user


def test_a_users_file_adopted_after_the_recovery_keeps_its_bytes(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    user = '{\n  // mine\n  "mcpServers": {\n    "mine": {"command": "mine"}\n  }\n}\n'
    (out / ".mcp.json").write_text(user)
    assert _build(out) == 0
    (out / ".agentrc" / "manifest.json").unlink()
    assert _build(out) == 0
    assert _build(out, clients="opencode") == 0
    assert (out / ".mcp.json").read_text() == user


def test_a_toml_table_agentrc_would_write_is_adopted_in_any_spelling_and_edits_are_kept(tmp_path, capsys):
    out = tmp_path / "out"
    assert _build(out, clients="codex") == 0
    config = out / ".codex" / "config.toml"
    text = config.read_text()
    (out / ".agentrc" / "manifest.json").unlink()
    # The same data spelled otherwise (keys reordered, a literal string): still what agentrc writes.
    config.write_text(text.replace('url = "https://docs.example.com/mcp"\nbearer_token_env_var = "API_DOCS_TOKEN"',
                                   "bearer_token_env_var = 'API_DOCS_TOKEN'\nurl = 'https://docs.example.com/mcp'"))
    assert config.read_text() != text
    capsys.readouterr()
    assert _build(out, clients="codex") == 0, capsys.readouterr().err
    assert config.read_text() == text
    # Another value is the user's: AR096 after a lost manifest, AR094 (an edit) with it.
    config.write_text(text.replace("API_DOCS_TOKEN", "MY_TOKEN"))
    capsys.readouterr()
    assert _build(out, clients="codex") == 1
    assert "error[AR094] mcp_servers.api-docs was edited since agentrc wrote it" in capsys.readouterr().err
    (out / ".agentrc" / "manifest.json").unlink()
    assert _build(out, clients="codex") == 1
    assert "error[AR096] defines 'mcp_servers.api-docs' itself" in capsys.readouterr().err


# --- 6. byte identity of what the user has -----------------------------------------------------


def test_a_trailing_comma_in_a_users_opencode_json_stays(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    user = '{\n  "instructions": ["mine.md",],\n  "x": 1\n}\n'
    (out / "opencode.json").write_text(user)
    assert _build(out, clients="opencode") == 0
    assert '"instructions": ["mine.md", ".agents/rules/' in (out / "opencode.json").read_text()
    assert _build(out, clients="claude") == 0
    assert (out / "opencode.json").read_text() == user


def test_an_empty_mcp_json_stays_empty(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / ".mcp.json").write_bytes(b"")
    assert _build(out, clients="claude") == 0
    assert "mcpServers" in (out / ".mcp.json").read_text()
    assert _build(out, clients="opencode") == 0
    assert (out / ".mcp.json").read_bytes() == b""


def test_pruning_never_removes_a_users_empty_directory(tmp_path):
    out = tmp_path / "out"
    (out / ".claude").mkdir(parents=True)
    (out / "mine").mkdir()
    assert _build(out, clients="claude") == 0
    assert _build(out, clients="opencode") == 0
    assert (out / ".claude").is_dir() and (out / "mine").is_dir()
    assert not (out / ".claude" / "rules").exists()  # agentrc's own directories go
    assert sorted(os.listdir(out / ".claude")) == []
