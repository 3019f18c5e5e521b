"""`agentrc cap` tried as an attacker would (issue 30): links planted where a scope's files
are written, a package's npm configuration and dependencies, credentials and options in
source URLs, git's own configuration, FIFOs named as files, long link chains, concurrent
runs and runs killed with SIGKILL. Each test plants the attack for real (real files, real
git repositories, real processes, the real npm when it is on PATH) and fails without the
fix it checks."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentrc.capops import instances as capinstances
from agentrc.output import atomic
from test_cap_install import STORE, bare_repo, git, run, run_json, write_package

SRC = os.environ.get("AGENTRC_TEST_SRC") or str(Path(__file__).resolve().parent.parent / "src")


def outside_files(tmp_path: Path, scope: Path):
    """Every file below tmp_path but outside the scope and the package, by bytes."""
    out = {}
    for p in sorted(tmp_path.rglob("*")):
        if scope in p.parents or p == scope or "pkg" in p.relative_to(tmp_path).parts[0]:
            continue
        if p.is_file() and not p.is_symlink():
            out[str(p)] = p.read_bytes()
    return out


def git_scope(tmp_path: Path) -> Path:
    s = tmp_path / "scope"
    s.mkdir()
    git("init", "-q", str(s))
    return s


# --- 1. every file a scope holds is written through no link ------------------------------------


@pytest.mark.parametrize("where", ["oas-lock.json", ".agents/capabilities/.gitignore"])
def test_a_link_at_a_scope_file_is_ar224_and_nothing_is_written_through(tmp_path, capsys, where):
    scope = git_scope(tmp_path)
    pkg = write_package(tmp_path / "pkg")
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own file\n")
    link = scope / where
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(victim)
    before = outside_files(tmp_path, scope)
    code, env = run_json(capsys, "cap", "install", str(pkg), "--dir", str(scope))
    assert code == 1 and not env["ok"]
    codes = [d["code"] for d in env["error"]["details"]["diagnostics"]]
    assert codes in (["AR224"], ["AR159"], ["AR167"]), env
    assert victim.read_text() == "the user's own file\n" and outside_files(tmp_path, scope) == before
    assert link.is_symlink()
    assert not (scope / STORE / "demo.cap").exists()


def test_a_linked_lock_is_refused_by_every_writer_of_it(tmp_path, capsys):
    """The lock read through a link is refused before anything; an ignore file linked out is
    AR224 at the write (install ensures it under the scope's lock)."""
    scope = git_scope(tmp_path)
    pkg = write_package(tmp_path / "pkg")
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    (scope / ".agents" / "capabilities").mkdir(parents=True)
    (scope / ".agents" / "capabilities" / ".gitignore").symlink_to(victim)
    code, _out, err = run(capsys, "cap", "install", str(pkg), "--dir", str(scope))
    assert code == 1 and "AR167" in err or "AR224" in err, err
    assert victim.read_text() == "keep\n"


def test_a_linked_directory_on_the_way_to_the_store_is_refused(tmp_path, capsys):
    scope = git_scope(tmp_path)
    pkg = write_package(tmp_path / "pkg")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (scope / ".agents").symlink_to(elsewhere)
    code, _out, err = run(capsys, "cap", "install", str(pkg), "--dir", str(scope))
    assert code == 1 and ("AR167" in err or "AR224" in err), err
    assert list(elsewhere.iterdir()) == []


def test_a_package_shipping_the_provenance_file_as_a_link_cannot_redirect_it(tmp_path, capsys):
    scope = tmp_path / "scope"
    scope.mkdir()
    pkg = write_package(tmp_path / "pkg")
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    (pkg / "capabilities" / "demo" / ".oas-installation.json").symlink_to(victim)
    code, _env = run_json(capsys, "cap", "install", str(pkg), "--dir", str(scope))
    assert victim.read_text() == "keep\n"
    record = scope / STORE / "demo.cap" / ".oas-installation.json"
    if code == 0:
        assert record.is_file() and not record.is_symlink()


def test_an_instance_file_is_written_through_no_link(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    (home / "TASK.md").symlink_to(victim)
    with pytest.raises(atomic.UnsafeWrite) as info:
        capinstances.write_file(str(home / "TASK.md"), b"task", root=str(home))
    assert atomic.code_of(info.value, "") == "AR224"
    assert victim.read_text() == "keep\n"
    # An old fixed temporary name planted as a link is never used either.
    (home / "instance.json.agentrc-tmp").symlink_to(victim)
    (home / ".instance.json.agentrc-tmp").symlink_to(victim)
    capinstances.write_file(str(home / "instance.json"), b"{}\n", root=str(home))
    assert (home / "instance.json").read_bytes() == b"{}\n" and victim.read_text() == "keep\n"


def test_cap_use_never_writes_through_a_linked_config(tmp_path, capsys):
    scope = tmp_path / "scope"
    scope.mkdir()
    pkg = write_package(tmp_path / "pkg")
    assert run_json(capsys, "cap", "install", str(pkg), "--dir", str(scope))[0] == 0
    victim = tmp_path / "victim.yaml"
    victim.write_text("name: victim\n")
    (scope / "oas-config.yaml").symlink_to(victim)
    code, _out, err = run(capsys, "cap", "use", "demo.cap", "--dir", str(scope))
    assert code == 1 and ("AR167" in err or "AR224" in err), err
    assert victim.read_text() == "name: victim\n"


# --- 2. npm, hardened ------------------------------------------------------------------------------


def closure_package(tmp_path: Path, lock_packages: dict, deps: dict, npmrc: str = "") -> Path:
    pkg = tmp_path / "pkg"
    cap = pkg / "capabilities" / "closure"
    (cap / "skills" / "s").mkdir(parents=True)
    (cap / "skills" / "s" / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nBody.\n")
    (cap / "package.json").write_text(json.dumps({"name": "acme", "version": "1.0.0", "private": True,
                                                  "dependencies": deps}))
    lock = {"name": "acme", "version": "1.0.0", "lockfileVersion": 3, "requires": True,
            "packages": {"": {"name": "acme", "version": "1.0.0", "dependencies": deps}, **lock_packages}}
    (cap / "package-lock.json").write_text(json.dumps(lock, indent=2))
    if npmrc:
        (cap / ".npmrc").write_text(npmrc)
    (cap / "oas.json").write_text(json.dumps({"capability": "acme.closure", "version": "1.0.0",
                                              "description": "d", "skills": ["skills"]}))
    (pkg / "oas-package.json").write_text(json.dumps({"package": "acme.pkg", "version": "1.0.0", "description": "d",
                                                      "compatibility": {"oas": ">=0.20.0"},
                                                      "capabilities": ["capabilities/closure"]}))
    return pkg


def evil_git(tmp_path: Path) -> Path:
    marker = tmp_path / "PWNED"
    script = tmp_path / "evilgit.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\nexec git \"$@\"\n")
    script.chmod(0o755)
    return marker


@pytest.fixture
def npm_env(tmp_path, monkeypatch):
    monkeypatch.setenv("npm_config_update_notifier", "false")
    monkeypatch.setenv("npm_config_offline", "true")
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "agentrc-cache"))
    return tmp_path


def test_a_git_dependency_with_the_packages_own_npmrc_never_runs_its_git(npm_env, capsys):
    tmp_path = npm_env
    marker = evil_git(tmp_path)
    dep_repo = tmp_path / "dep-work"
    git("init", "-q", "-b", "main", str(dep_repo))
    (dep_repo / "package.json").write_text(json.dumps({"name": "dep", "version": "1.0.0"}))
    git("add", "-A", cwd=dep_repo)
    git("commit", "-qm", "one", cwd=dep_repo)
    sha = git("rev-parse", "HEAD", cwd=dep_repo)
    url = f"git+file://{dep_repo}#{sha}"
    outside_cache = tmp_path / "npm-cache-outside"
    pkg = closure_package(tmp_path, {"node_modules/dep": {"version": "1.0.0", "resolved": url}}, {"dep": url},
                          npmrc=f"git={tmp_path / 'evilgit.sh'}\ncache={outside_cache}\n")
    scope = tmp_path / "scope"
    scope.mkdir()
    code, env = run_json(capsys, "cap", "install", str(pkg), "--dir", str(scope))
    assert code == 1 and not env["ok"], env
    diags = env["error"]["details"]["diagnostics"]
    assert {d["code"] for d in diags} == {"AR242"}, diags
    text = " ".join(d["message"] for d in diags)
    assert ".npmrc" in text and "git dependency" in text
    assert not marker.exists() and not outside_cache.exists()
    assert json.loads((scope / "oas-lock.json").read_text() if (scope / "oas-lock.json").exists() else "{}") == {}


@pytest.mark.parametrize("spec", ["github:acme/dep", "acme/dep", "git://example.invalid/dep.git",
                                  "git+ssh://git@example.invalid/dep.git"])
def test_every_git_spelling_is_refused_before_npm(npm_env, capsys, spec):
    tmp_path = npm_env
    pkg = closure_package(tmp_path, {"node_modules/dep": {"version": "1.0.0", "resolved": spec}}, {"dep": spec})
    scope = tmp_path / "scope"
    scope.mkdir()
    code, env = run_json(capsys, "cap", "install", str(pkg), "--dir", str(scope))
    assert code == 1 and "AR242" in [d["code"] for d in env["error"]["details"]["diagnostics"]], env


def test_an_absolute_file_dependency_with_install_links_is_refused(npm_env, capsys):
    tmp_path = npm_env
    secret_dir = tmp_path / "secret-dep"
    secret_dir.mkdir()
    (secret_dir / "package.json").write_text(json.dumps({"name": "dep", "version": "1.0.0"}))
    (secret_dir / "id_rsa").write_text("PRIVATE KEY\n")
    spec = f"file:{secret_dir}"
    pkg = closure_package(tmp_path, {"node_modules/dep": {"resolved": str(secret_dir), "link": True},
                                     str(os.path.relpath(secret_dir, tmp_path / "pkg" / "capabilities" / "closure")):
                                         {"version": "1.0.0"}},
                          {"dep": spec}, npmrc="install-links=true\n")
    scope = tmp_path / "scope"
    scope.mkdir()
    code, env = run_json(capsys, "cap", "install", str(pkg), "--dir", str(scope))
    assert code == 1, env
    messages = [d for d in env["error"]["details"]["diagnostics"] if d["code"] == "AR242"]
    assert any("outside the package" in d["message"] for d in messages), env
    assert not list(scope.rglob("id_rsa"))


@pytest.mark.parametrize("name", ["package.json", "package-lock.json"])
def test_a_closure_file_linked_out_of_the_package_is_refused_and_never_read(npm_env, capsys, name):
    """A runtime closure's package-lock.json (or package.json) that is a link to a file
    outside the package: agentrc read it through the link to check it (its content reached
    a diagnostic) and npm would have read it there too. It is refused (AR242), unread."""
    tmp_path = npm_env
    pkg = closure_package(tmp_path, {}, {})
    linked = pkg / "capabilities" / "closure" / name
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"lockfileVersion": 3, "packages": {
        "node_modules/LEAKED-SECRET": {"os": ["linux"]}}}))
    linked.unlink()
    linked.symlink_to(outside)
    scope = tmp_path / "scope"
    scope.mkdir()
    code, env = run_json(capsys, "cap", "install", str(pkg), "--dir", str(scope))
    assert code == 1, env
    diags = env["error"]["details"]["diagnostics"]
    assert any(d["code"] == "AR242" and f"{name} is a symbolic link" in d["message"] for d in diags), diags
    assert "LEAKED-SECRET" not in json.dumps(env)


def test_a_closure_lock_linked_inside_the_package_is_read_there(npm_env, capsys):
    """Packages may carry links: a package-lock.json linking to a file inside the package is
    checked where it leads (a platform-variant entry there is still AR255), not refused."""
    tmp_path = npm_env
    pkg = closure_package(tmp_path, {"node_modules/dep": {"version": "1.0.0", "os": ["linux"]}}, {})
    cdir = pkg / "capabilities" / "closure"
    (cdir / "locks").mkdir()
    (cdir / "package-lock.json").rename(cdir / "locks" / "real.json")
    (cdir / "package-lock.json").symlink_to("locks/real.json")
    scope = tmp_path / "scope"
    scope.mkdir()
    code, env = run_json(capsys, "cap", "install", str(pkg), "--dir", str(scope))
    assert code == 1, env
    codes = {d["code"] for d in env["error"]["details"]["diagnostics"]}
    assert codes == {"AR255"}, env


def test_an_npmrc_alone_is_refused_and_npm_runs_with_agentrcs_own_config(npm_env, capsys):
    """Without the package's .npmrc, a closure installs; npm is given agentrc's own user and
    global configs, its cache and the real git, whatever the environment says."""
    from agentrc.capops import closure as capclosure

    tmp_path = npm_env
    cdir = tmp_path / "c"
    cdir.mkdir()
    (cdir / "package.json").write_text("{}")
    (cdir / "package-lock.json").write_text("{}")
    (cdir / ".npmrc").write_text("git=./evilgit.sh\n")
    assert any(".npmrc" in why for why in capclosure.refused(str(cdir), str(cdir)))
    os.environ["npm_config_git"] = "/tmp/evil"
    os.environ["NPM_CONFIG_USERCONFIG"] = "/tmp/evil-rc"
    try:
        argv, env = capclosure.npm_command(str(cdir), str(tmp_path))
    finally:
        del os.environ["npm_config_git"], os.environ["NPM_CONFIG_USERCONFIG"]
    assert "npm_config_git" not in env and "NPM_CONFIG_USERCONFIG" not in env and env["npm_config_offline"] == "true"
    assert f"--prefix={cdir}" in argv and "--ignore-scripts" in argv and "--install-links=false" in argv
    assert f"--git={shutil.which('git')}" in argv
    assert f"--cache={tmp_path / 'agentrc-cache' / 'npm'}" in argv
    assert (tmp_path / "npmrc-user").read_bytes() == b"" and (tmp_path / "npmrc-global").read_bytes() == b""


@pytest.mark.skipif(not shutil.which("npm"), reason="npm is needed")
def test_a_user_npmrc_naming_a_git_is_not_read_either(npm_env, capsys, monkeypatch):
    """A closure that installs for real: the user's ~/.npmrc (`git=`, `cache=`) is not what
    npm reads either, so the installed artifact does not depend on it."""
    tmp_path = npm_env
    home = tmp_path / "home"
    home.mkdir()
    marker = evil_git(tmp_path)
    (home / ".npmrc").write_text(f"git={tmp_path / 'evilgit.sh'}\ncache={tmp_path / 'home-cache'}\n")
    monkeypatch.setenv("HOME", str(home))
    vendor = {"vendor/dep": {"version": "1.0.0"}, "node_modules/dep": {"resolved": "vendor/dep", "link": True}}
    pkg = closure_package(tmp_path, vendor, {"dep": "file:vendor/dep"})
    dep = pkg / "capabilities" / "closure" / "vendor" / "dep"
    dep.mkdir(parents=True)
    (dep / "package.json").write_text(json.dumps({"name": "dep", "version": "1.0.0"}))
    scope = tmp_path / "scope"
    scope.mkdir()
    code, env = run_json(capsys, "cap", "install", str(pkg), "--dir", str(scope))
    assert code == 0, env
    assert os.readlink(scope / STORE / "acme.closure" / "node_modules" / "dep") == "../vendor/dep"
    assert not marker.exists() and not (tmp_path / "home-cache").exists()


# --- 3. reads on someone's behalf ---------------------------------------------------------------


def spawn_scope(tmp_path: Path, config: str) -> Path:
    scope = tmp_path / "scope"
    soul = scope / "agents" / "dev" / "soul"
    soul.mkdir(parents=True)
    git("init", "-q", str(scope))
    git("-C", str(scope), "commit", "-q", "--allow-empty", "-m", "init")
    (soul / "soul.yaml").write_text("name: dev\nrepo: .\nwork: checkout\nruntime: claude\n")
    (soul / "AGENTS.md").write_text("# Dev\n")
    (scope / "oas-config.yaml").write_text(config)
    return scope


@pytest.fixture
def fake_claude(tmp_path, monkeypatch):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "claude").write_text("#!/bin/sh\nexit 0\n")
    (bindir / "claude").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("HOME", str(tmp_path))


@pytest.fixture
def alarm():
    signal.signal(signal.SIGALRM, lambda *_a: pytest.fail("blocked: a read hung"))
    signal.alarm(20)
    yield
    signal.alarm(0)


def test_an_injection_override_outside_the_scope_is_never_read(tmp_path, capsys, fake_claude, alarm):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-INJECTION\n")
    scope = spawn_scope(tmp_path, "oas:\n  injection-override: ../secret.txt\n")
    code, out, err = run(capsys, "cap", "spawn", "dev", "--task", "t", "--dir", str(scope))
    assert code == 1 and "AR050" in err, err
    assert "TOP-SECRET-INJECTION" not in out + err
    assert not any("TOP-SECRET-INJECTION" in p.read_text(errors="replace")
                   for p in scope.rglob("*") if p.is_file() and ".git" not in p.parts)
    code, out, err = run(capsys, "cap", "doctor", "--soul", "dev", "--dir", str(scope))
    assert "TOP-SECRET-INJECTION" not in out + err


def test_an_injection_override_that_is_a_fifo_is_ar054_not_a_hang(tmp_path, capsys, fake_claude, alarm):
    scope = spawn_scope(tmp_path, "oas:\n  injection-override: inject.md\n")
    os.mkfifo(scope / "inject.md")
    code, _out, err = run(capsys, "cap", "spawn", "dev", "--task", "t", "--dir", str(scope))
    assert code == 1 and "AR054" in err, err


@pytest.mark.parametrize("kind", ["fifo", "stdin"])
def test_a_task_file_that_is_a_fifo_or_stdin_is_ar054_not_a_hang(tmp_path, capsys, fake_claude, alarm, kind):
    scope = spawn_scope(tmp_path, "name: s\n")
    if kind == "fifo":
        task = tmp_path / "task.fifo"
        os.mkfifo(task)
    else:
        task = Path("/dev/stdin")
    code, _out, err = run(capsys, "cap", "spawn", "dev", "--task-file", str(task), "--dir", str(scope))
    assert code == 1 and "AR054" in err, err
    assert not (scope / "agents" / "dev" / "instances").exists() or \
        not os.listdir(scope / "agents" / "dev" / "instances")


def test_a_task_file_anywhere_is_read(tmp_path, capsys, fake_claude, alarm):
    scope = spawn_scope(tmp_path, "name: s\n")
    task = tmp_path / "elsewhere" / "task.md"
    task.parent.mkdir()
    task.write_text("do the thing\n")
    code, _out, err = run(capsys, "cap", "spawn", "dev", "--task-file", str(task), "--dir", str(scope))
    assert code == 0, err
    (home,) = (scope / "agents" / "dev" / "instances").iterdir()
    assert "do the thing" in (home / "TASK.md").read_text()


# --- 4. concurrency and killed runs -------------------------------------------------------------


def agentrc_proc(*argv, env=None, prelude=""):
    """A real agentrc process (`prelude` runs first, in it)."""
    code = textwrap.dedent(prelude) + "\nimport sys\nfrom agentrc.cli.main import main\nsys.exit(main(sys.argv[1:]))\n"
    return subprocess.Popen([sys.executable, "-c", code, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=str(SRC), **(env or {})))


def test_three_concurrent_installs_in_a_fresh_scope_all_land(tmp_path):
    scope = git_scope(tmp_path)
    pkgs = [write_package(tmp_path / f"pkg{i}", pid=f"p{i}.pkg", caps={"c": (f"c{i}.cap", "")}) for i in range(3)]
    procs = [agentrc_proc("cap", "install", str(p), "--dir", str(scope)) for p in pkgs]
    results = [(p.wait(120), p.stderr.read().decode()) for p in procs]
    assert all(rc == 0 for rc, _ in results), results
    lock = json.loads((scope / "oas-lock.json").read_text())
    assert sorted(lock["packages"]) == ["p0.pkg", "p1.pkg", "p2.pkg"]
    assert sorted(os.listdir(scope / STORE)) == ["c0.cap", "c1.cap", "c2.cap"]
    assert (scope / ".agents" / "capabilities" / ".gitignore").read_text().count("installed/") == 1
    assert not [p for p in (scope / ".agents" / "capabilities").iterdir() if "agentrc-tmp" in p.name]


KILL_AT = """
import os, signal
from agentrc.capops import txn as captxn
def kill(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
"""
KILL_AT_COMMIT = KILL_AT + "captxn.Txn.commit = kill\n"  # everything staged, the journal not yet written
# The journal committed (the executor recorded the point done), no step after it carried out.
KILL_AFTER_COMMIT = KILL_AT + "captxn.Retire.do = captxn.Place.do = captxn.Replace.do = kill\n"


def artifact(scope: Path, cid: str):
    return {str(p.relative_to(scope / STORE / cid)): p.read_bytes() for p in (scope / STORE / cid).rglob("*")
            if p.is_file()}


@pytest.mark.parametrize("verb", ["update", "remove"])
def test_a_run_killed_before_its_commit_point_is_rolled_back_by_the_next(tmp_path, capsys, verb):
    scope = tmp_path / "scope"
    scope.mkdir()
    pkg = write_package(tmp_path / "pkg")
    assert run_json(capsys, "cap", "install", str(pkg), "--dir", str(scope))[0] == 0
    lock_before = (scope / "oas-lock.json").read_bytes()
    art_before = artifact(scope, "demo.cap")
    (pkg / "capabilities" / "demo" / "injects" / "i.md").write_text("Changed.\n")
    proc = agentrc_proc("cap", verb, "demo.pkg", "--dir", str(scope), prelude=KILL_AT_COMMIT)
    assert proc.wait(120) == -signal.SIGKILL, proc.stderr.read()
    assert (scope / STORE / ".agentrc-txn").is_dir()  # the kill left the staged transaction behind
    assert (scope / "oas-lock.json").read_bytes() == lock_before and artifact(scope, "demo.cap") == art_before
    code, out, err = run(capsys, "cap", "install", "--dir", str(scope), "--no-requirements")
    assert code == 0, out + err
    assert "warning[AR142]" in err and "rolled back a capability transaction" in err, err
    assert not [n for n in os.listdir(scope / STORE) if n.startswith(".")]
    assert (scope / "oas-lock.json").read_bytes() == lock_before
    assert artifact(scope, "demo.cap") == art_before


@pytest.mark.parametrize("verb", ["update", "remove"])
def test_a_run_killed_after_its_commit_point_is_completed_by_the_next(tmp_path, capsys, verb):
    scope = tmp_path / "scope"
    scope.mkdir()
    pkg = write_package(tmp_path / "pkg")
    assert run_json(capsys, "cap", "install", str(pkg), "--dir", str(scope))[0] == 0
    lock_before = (scope / "oas-lock.json").read_bytes()
    (pkg / "capabilities" / "demo" / "injects" / "i.md").write_text("Changed.\n")
    proc = agentrc_proc("cap", verb, "demo.pkg", "--dir", str(scope), prelude=KILL_AFTER_COMMIT)
    assert proc.wait(120) == -signal.SIGKILL, proc.stderr.read()
    assert (scope / STORE / ".agentrc-txn" / "journal.json").is_file()
    assert (scope / "oas-lock.json").read_bytes() == lock_before  # nothing visible yet
    code, out, err = run(capsys, "cap", "list", "--dir", str(scope))  # list takes no lock: it changes nothing
    assert (scope / STORE / ".agentrc-txn" / "journal.json").is_file()
    code, out, err = run(capsys, "cap", "install", "--dir", str(scope), "--no-requirements")
    assert code == 0, out + err
    assert "warning[AR142]" in err and "completed a capability transaction" in err, err
    assert not [n for n in os.listdir(scope / STORE) if n.startswith(".")]
    lock = json.loads((scope / "oas-lock.json").read_text())
    if verb == "remove":
        assert lock["packages"] == {} and not (scope / STORE / "demo.cap").exists()
    else:
        assert artifact(scope, "demo.cap")["injects/i.md"] == b"Changed.\n"
        assert (scope / "oas-lock.json").read_bytes() != lock_before
        code, env = run_json(capsys, "cap", "list", "--dir", str(scope))
        # Its spawn hook is not trusted yet: the kernel lists it `untrusted`, and so does agentrc.
        assert [c["status"] for c in env["result"]["capabilities"]] == ["untrusted"], env


def test_a_run_killed_at_its_first_staging_leaves_nothing_after_the_next(tmp_path, capsys):
    scope = tmp_path / "scope"
    scope.mkdir()
    pkg = write_package(tmp_path / "pkg")
    prelude = """
import os, signal
from agentrc.capops import install as capinstall
_load = capinstall._load
def load(dest, label):
    os.kill(os.getpid(), signal.SIGKILL)
capinstall._load = load
"""
    proc = agentrc_proc("cap", "install", str(pkg), "--dir", str(scope), prelude=prelude)
    assert proc.wait(120) == -signal.SIGKILL
    assert [n for n in os.listdir(scope / STORE) if n.startswith(".staging-")]
    code, env = run_json(capsys, "cap", "install", str(pkg), "--dir", str(scope))
    assert code == 0, env
    assert sorted(os.listdir(scope / STORE)) == ["demo.cap"]


# --- 5. git sources ----------------------------------------------------------------------------------


SECRET = "S3cr3tPassw0rd-xyz"


@pytest.mark.parametrize("spec", [f"https://user:{SECRET}@127.0.0.1:9/pkg.git@v1#.",
                                  f"https://{SECRET}@127.0.0.1:9/pkg.git",
                                  f"ssh://git:{SECRET}@127.0.0.1:9/pkg.git@v1",
                                  f"https://user:{SECRET}@127.0.0.1:9"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_credentials_in_a_source_are_refused_and_never_shown(tmp_path, capsys, spec, fmt):
    scope = tmp_path / "scope"
    scope.mkdir()
    argv = ["cap", "install", spec, "--dir", str(scope)] + (["--json"] if fmt == "json" else [])
    code, out, err = run(capsys, *argv)
    assert code == 1 and "AR225" in out + err, out + err
    assert SECRET not in out + err
    assert not any(SECRET in p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file())


def test_a_dependency_with_credentials_is_refused_without_showing_them(tmp_path, capsys):
    scope = tmp_path / "scope"
    scope.mkdir()
    pkg = write_package(tmp_path / "pkg", deps=[f"https://u:{SECRET}@127.0.0.1:9/dep.git@v1"])
    code, out, err = run(capsys, "cap", "install", str(pkg), "--dir", str(scope))
    assert code == 1 and "AR225" in err and SECRET not in out + err


@pytest.mark.parametrize("spec,code", [("ssh://-oProxyCommand=touch%20/tmp/x@host/x", "AR241"),
                                       ("ssh://-ouser@host/x", "AR241"),
                                       ("https://-host/x", "AR241"), ("https://host/-x/y", "AR241"),
                                       ("https://host/x@-v", "AR241"), ("http://host/x.git", "AR160"),
                                       ("git://host/x.git", "AR160")])
def test_options_and_unauthenticated_transports_are_refused_before_git(tmp_path, capsys, spec, code):
    scope = tmp_path / "scope"
    scope.mkdir()
    rc, _out, err = run(capsys, "cap", "install", spec, "--dir", str(scope))
    assert rc == 1 and code in err and "git clone failed" not in err and "git fetch failed" not in err, err
    assert ("not authenticated" if code == "AR160" else "'-'") in err
    assert not (scope / ".agents").exists() and not (scope / "oas-lock.json").exists()


def test_ssh_user_names_stay_valid():
    from agentrc.capabilities import source

    assert source.parse("git@github.com:org/repo.git@v1").url == "git@github.com:org/repo.git"
    assert source.parse("ssh://git@host/org/repo.git#pkg").url == "ssh://git@host/org/repo.git"


def test_git_runs_without_the_users_templates_or_hooks(tmp_path, capsys, monkeypatch):
    """A template directory from the global git config would put a post-checkout hook into
    every clone; agentrc's git uses no template and no hooks path."""
    marker = tmp_path / "HOOK-RAN"
    template = tmp_path / "template"
    (template / "hooks").mkdir(parents=True)
    (template / "hooks" / "post-checkout").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (template / "hooks" / "post-checkout").chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(f"[init]\n\ttemplateDir = {template}\n"
                                     f"[core]\n\thooksPath = {template / 'hooks'}\n")
    pkg = write_package(tmp_path / "pkg")
    url = bare_repo(tmp_path, "repo", ".", pkg, tag="v1")
    monkeypatch.setenv("HOME", str(home))
    scope = tmp_path / "scope"
    scope.mkdir()
    code, env = run_json(capsys, "cap", "install", f"{url}@v1#.", "--dir", str(scope))
    assert code == 0, env
    assert not marker.exists()
    assert env["result"]["installed"][0]["commit"] == git("rev-parse", "v1^{commit}", cwd=tmp_path / "repo-work")


def test_installing_a_scope_into_itself_is_refused(tmp_path, capsys, monkeypatch):
    pkg = write_package(tmp_path / "pkg")
    monkeypatch.chdir(pkg)
    code, _out, err = run(capsys, "cap", "install", ".", "--dir", str(pkg))
    assert code == 1 and "AR160" in err and "into itself" in err, err
    assert not (pkg / STORE).exists() or not os.listdir(pkg / STORE)


# --- 7. link chains ---------------------------------------------------------------------------------


@pytest.mark.parametrize("at", ["manifest", "capability root"])
def test_a_thousand_link_chain_in_a_package_is_a_diagnostic(tmp_path, capsys, at):
    pkg = write_package(tmp_path / "pkg")
    cap = pkg / "capabilities" / "demo"
    if at == "manifest":
        (cap / "oas.json").rename(cap / "real-oas.json")
        where, prev, last = cap, "real-oas.json", cap / "oas.json"
    else:
        cap.rename(pkg / "capabilities" / "real-demo")
        where, prev, last = pkg / "capabilities", "real-demo", cap
    for i in range(1000):
        (where / f"l{i}").symlink_to(prev)
        prev = f"l{i}"
    last.symlink_to(prev)
    scope = tmp_path / "scope"
    scope.mkdir()
    code, out, err = run(capsys, "cap", "install", str(pkg), "--dir", str(scope))
    assert code == 1 and "Traceback" not in err, err
    assert any(c in err for c in ("AR156", "AR054", "AR151")), err


def test_update_of_a_wrong_integrity_with_a_missing_artifact_says_what_was_wrong(tmp_path, capsys):
    scope = tmp_path / "scope"
    scope.mkdir()
    pkg = write_package(tmp_path / "pkg")
    assert run_json(capsys, "cap", "install", str(pkg), "--dir", str(scope))[0] == 0
    lock = json.loads((scope / "oas-lock.json").read_text())
    good = lock["capabilities"]["demo.cap"]["integrity"]
    lock["capabilities"]["demo.cap"]["integrity"] = "sha256-" + "0" * 64
    (scope / "oas-lock.json").write_text(json.dumps(lock, indent=2) + "\n")
    shutil.rmtree(scope / STORE / "demo.cap")
    code, out, err = run(capsys, "cap", "update", "demo.pkg", "--dir", str(scope))
    assert code == 0, err
    assert "up to date" not in out and "demo.cap" in out and "the lock recorded" in out, out
    assert json.loads((scope / "oas-lock.json").read_text())["capabilities"]["demo.cap"]["integrity"] == good
    assert (scope / STORE / "demo.cap" / "oas.json").is_file()
