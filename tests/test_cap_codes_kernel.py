"""The `--json` error codes of `agentrc cap` are the OAS kernel's for the same input (issue 34,
item 7), row by row of agentrc's code table (capops/failure.py) and the verbs' own E_* codes:
an invalid capability manifest (`oas.json`: its schema, a hook the contract does not know,
`required` on a hook other than spawn) is `invalid-source`, an invalid or missing package
manifest `invalid-package-manifest`, and so on for sources, closures, the lock, remove,
trust, update, migrate, init, spawn and retire. Both tools run on twin scopes, the kernel as
a separate program (tests/test_cap_judge.py).

Where agentrc differs on purpose (it refuses what the kernel accepts, or the kernel stops
with a stack trace and no envelope, or with a usage error agentrc exits 2), the difference is
pinned here and listed in docs/capabilities.md ("Listing and error codes compared with the
OAS kernel"). Two differences agentrc should lose are strict xfails: when they are aligned,
the test says so. The `cap run` codes are compared in tests/test_cap_run.py, the install
refusals of tests/test_cap_judge.py (a missing skill, an escaping link, ...) there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Callable, List, Optional, Tuple

import pytest

from agentrc.cli.main import main
from test_cap_install import git, write_package
from test_cap_judge import OAS, agentrc, oas, pytestmark, scope_state, twins  # noqa: F401 - skip without node
from test_cap_spawn import deployment

CAP = {"capability": "demo.cap", "version": "0.1.0", "description": "d"}


@pytest.mark.parametrize("broken,code,ar", [
    ("capability-schema", "invalid-source", "AR150"),
    ("capability-json", "invalid-source", "AR150"),
    ("unknown-hook", "invalid-source", "AR154"),
    ("required-retire-hook", "invalid-source", "AR155"),
    ("package-schema", "invalid-package-manifest", "AR151"),
    ("no-capability-manifest", "invalid-package-manifest", "AR151"),
])
def test_invalid_manifests_carry_the_kernels_codes(tmp_path, capsys, broken, code, ar):
    pkg = write_package(tmp_path / "pkg")
    manifest = pkg / "capabilities" / "demo" / "oas.json"
    if broken == "capability-schema":
        manifest.write_text(json.dumps({"capability": "demo.cap"}))
    elif broken == "capability-json":
        manifest.write_text("{")
    elif broken == "unknown-hook":
        manifest.write_text(json.dumps({**CAP, "hooks": {"nope": "bin/hook.sh"}}))
    elif broken == "required-retire-hook":
        manifest.write_text(json.dumps({**CAP, "hooks": {"retire": {"command": "bin/hook.sh", "required": True}}}))
    elif broken == "package-schema":
        (pkg / "oas-package.json").write_text(json.dumps({"package": "x"}))
    else:
        manifest.unlink()
    a, k = twins(tmp_path, git_scopes=False)
    ours = agentrc(capsys, "install", str(pkg), "--dir", str(a))
    theirs = oas(tmp_path, "install", str(pkg), "--dir", str(k))
    assert not ours["ok"] and not theirs["ok"]
    assert ours["error"]["code"] == theirs["error"]["code"] == code, (ours, theirs)
    assert ar in [d["code"] for d in ours["error"]["details"]["diagnostics"]]
    assert scope_state(a) == scope_state(k) == {"oas-lock.json": None}


# --- every row of the code table, twin scopes ------------------------------------------------

DEMO = Path("capabilities") / "demo"
INSTALLED = Path(".agents") / "capabilities" / "installed"
LOCK_V2 = '{\n  "lockfileVersion": 2,\n  "packages": {},\n  "capabilities": {}\n}\n'
CONFIG = "name: s\ncapabilities:\n  additive:\n    demo.cap:\n      from: installed\n      global: true\n"
DIR_VERBS = ("install", "remove", "trust", "update", "migrate", "init", "use", "doctor")


def edit(pkg: Path, **fields) -> None:
    manifest = pkg / DEMO / "oas.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), **fields}))


def closure(pkg: Path, deps: Optional[dict] = None, lock_version: int = 3, entries: Optional[dict] = None) -> Path:
    """The demo capability with a runtime closure (package.json + package-lock.json)."""
    c = pkg / DEMO
    manifest = {"name": "x", "version": "1.0.0", **({"dependencies": deps} if deps else {})}
    (c / "package.json").write_text(json.dumps(manifest))
    lock = {"name": "x", "version": "1.0.0", "lockfileVersion": lock_version, "requires": True}
    if lock_version > 1:
        lock["packages"] = {"": {"name": "x", "version": "1.0.0", **({"dependencies": deps} if deps else {})},
                            **(entries or {})}
    (c / "package-lock.json").write_text(json.dumps(lock))
    return c


def kernel_run(cwd: Path, *args: str) -> Tuple[int, Optional[dict]]:
    """The kernel's exit code and its --json envelope (None: it printed none, a stack trace)."""
    proc = subprocess.run(["node", str(OAS), *args, "--json"], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, NO_COLOR="1"))
    try:
        return proc.returncode, json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return proc.returncode, None


def ours_run(capsys, *args: str) -> Tuple[int, Optional[dict]]:
    rc = main(["cap", *args, "--json"])
    out = capsys.readouterr().out.strip()
    return rc, json.loads(out.splitlines()[-1]) if out else None


def install_both(capsys, pkg: Path, a: Path, k: Path) -> None:
    assert ours_run(capsys, "install", str(pkg), "--dir", str(a))[0] == 0
    assert kernel_run(k, "install", str(pkg), "--dir", str(k))[0] == 0


# Each row: the base of both scopes (plain, installed: demo.pkg installed by each tool,
# deployed: a repository with the soul `dev`), what to do to the package and to each scope,
# and the verb's arguments (paths from the package and the scope).
Prep = Callable[[Path, Path, Path], None]
Args = Callable[[Path, Path, Path], List[str]]


def _nothing(tmp: Path, pkg: Path, scope: Path) -> None:
    return None


def _fifo(tmp, pkg, scope):
    if not (pkg / DEMO / "fifo").exists():
        os.mkfifo(str(pkg / DEMO / "fifo"))


def _cycle(tmp, pkg, scope):
    if not (tmp / "p1").exists():
        write_package(tmp / "p1", pid="one.pkg", caps={"capabilities/one": ("one.cap", "")}, deps=["../p2"])
        write_package(tmp / "p2", pid="two.pkg", caps={"capabilities/two": ("two.cap", "")}, deps=["../p1"])


def _dependent(tmp, pkg, scope):
    if not (tmp / "p1").exists():
        write_package(tmp / "p2", pid="two.pkg", caps={"capabilities/two": ("two.cap", "")})
        write_package(tmp / "p1", pid="one.pkg", caps={"capabilities/one": ("one.cap", "")}, deps=["../p2"])


def _same_id(tmp, pkg, scope):
    if not (tmp / "other").exists():
        other = write_package(tmp / "other", caps={"capabilities/other": ("other.cap", "")})
        doc = json.loads((other / "oas-package.json").read_text())
        (other / "oas-package.json").write_text(json.dumps({**doc, "package": "demo.pkg"}))


def _link_escape(tmp, pkg, scope):
    dep = pkg / DEMO / "vendor" / "dep"
    if dep.exists():
        return
    dep.mkdir(parents=True)
    (dep / "package.json").write_text('{"name": "dep", "version": "1.0.0"}')
    os.symlink(str(tmp), str(dep / "out"))
    closure(pkg, {"dep": "file:vendor/dep"}, entries={"node_modules/dep": {"resolved": "vendor/dep", "link": True},
                                                      "vendor/dep": {"name": "dep", "version": "1.0.0"}})


def _outside_dep(tmp, pkg, scope):
    dep = tmp / "dep"
    if dep.exists():
        return
    dep.mkdir()
    (dep / "package.json").write_text('{"name": "dep", "version": "1.0.0"}')
    closure(pkg, {"dep": f"file:{dep}"}, entries={"node_modules/dep": {"resolved": str(dep), "link": True}})


def _drift(tmp, pkg, scope):
    with open(scope / INSTALLED / "demo.cap" / "injects" / "i.md", "a") as fh:
        fh.write("tampered\n")


def _source_changed(tmp, pkg, scope):
    shutil.rmtree(scope / INSTALLED / "demo.cap")
    (pkg / DEMO / "injects" / "i.md").write_text("changed at the source\n")


def _install(tmp, pkg, scope) -> List[str]:
    return ["install", str(pkg)]


ALIGNED = [
    ("AR166-trust-not-installed", "installed",
     lambda t, p, s: shutil.rmtree(s / INSTALLED / "demo.cap"), lambda t, p, s: ["trust", "demo.cap"],
     "missing-capability-artifact", "AR166"),
    ("E_UNKNOWN_AGENT-spawn", "deployed", _nothing, lambda t, p, s: ["spawn", "ghost"], "E_UNKNOWN_AGENT", "AR166"),
    # row, base, prepare, arguments, the kernel's code (and agentrc's), agentrc's diagnostic
    ("AR156-dotdot-path", "plain", lambda t, p, s: edit(p, skills=["../x"]), _install, "path-escape", "AR156"),
    ("AR157-missing-hook-script", "plain", lambda t, p, s: edit(p, hooks={"spawn": "bin/none.sh"}), _install,
     "capability-not-self-contained", "AR157"),
    ("AR157-fifo-in-package", "plain", _fifo, _install, "invalid-source", "AR157"),
    ("AR160-no-such-directory", "plain", _nothing, lambda t, p, s: ["install", str(t / "nowhere")],
     "invalid-source", "AR160"),
    ("AR160-plain-http", "plain", _nothing, lambda t, p, s: ["install", "http://example.invalid/x.git"],
     "invalid-source", "AR160"),
    ("AR241-ref-like-an-option", "plain", _nothing, lambda t, p, s: ["install", "https://example.invalid/x.git@-x"],
     "invalid-source", "AR241"),
    ("AR225-credentials-in-url", "plain", _nothing,
     lambda t, p, s: ["install", "https://user:secret@example.invalid/x.git"], "invalid-source", "AR225"),
    ("AR164-dependency-cycle", "plain", _cycle, lambda t, p, s: ["install", str(t / "p1")], "dependency-cycle",
     "AR164"),
    ("AR161-package-id-taken", "installed", _same_id, lambda t, p, s: ["install", str(t / "other")],
     "integrity-drift", "AR161"),
    ("AR255-npm-lock-v1", "plain", lambda t, p, s: closure(p, lock_version=1) and None, _install,
     "invalid-package-manifest", "AR255"),
    ("AR242-file-dependency-outside", "plain", _outside_dep, _install, "invalid-package-manifest", "AR242"),
    ("AR257-closure-link-escape", "plain", _link_escape, _install, "path-escape", "AR257"),
    ("AR166-remove-unknown", "installed", _nothing, lambda t, p, s: ["remove", "no.pkg"], "unknown-capability",
     "AR166"),
    ("AR162-remove-referenced", "installed", lambda t, p, s: (s / "oas-config.yaml").write_text(CONFIG) and None,
     lambda t, p, s: ["remove", "demo.pkg"], "remove-blocked", "AR162"),
    ("AR162-remove-depended-on", "plain", _dependent, lambda t, p, s: ["remove", "two.pkg"], "remove-blocked",
     "AR162"),
    ("AR166-trust-unknown", "installed", _nothing, lambda t, p, s: ["trust", "no.cap"], "unknown-capability",
     "AR166"),
    ("AR166-update-unknown", "installed", _nothing, lambda t, p, s: ["update", "no.pkg"], "unknown-capability",
     "AR166"),
    ("AR161-trust-drifted", "installed", _drift, lambda t, p, s: ["trust", "demo.cap"], "integrity-drift", "AR161"),
    ("AR178-migrate-without-lock", "plain", _nothing, lambda t, p, s: ["migrate"], "legacy-lock", "AR178"),
    ("AR159-migrate-malformed-v1", "plain",
     lambda t, p, s: (s / "oas-lock.json").write_text('{"lockfileVersion": 1, "capabilities": {"x.y": '
                                                      '{"source": "marketplace:x.y@1.0.0"}}}') and None,
     lambda t, p, s: ["migrate"], "invalid-lock", "AR159"),
    ("E_RECONCILE_FAILED-restore-changed-source", "installed", _source_changed, lambda t, p, s: ["install"],
     "E_RECONCILE_FAILED", None),
    ("E_CONFIG_EXISTS-init-over-config", "plain", lambda t, p, s: (s / "oas-config.yaml").write_text(CONFIG) and None,
     lambda t, p, s: ["init"], "E_CONFIG_EXISTS", "AR265"),
    ("E_UNKNOWN_CAPABILITY-init", "plain", _nothing, lambda t, p, s: ["init", "--knowledge", "no.cap"],
     "E_UNKNOWN_CAPABILITY", "AR170"),
    ("E_LAYER_MISMATCH-init", "installed", _nothing, lambda t, p, s: ["init", "--knowledge", "demo.cap"],
     "E_LAYER_MISMATCH", "AR170"),
    ("E_SPAWN_FAILED-unknown-work-mode", "deployed", _nothing, lambda t, p, s: ["spawn", "dev", "--work", "bogus"],
     "E_SPAWN_FAILED", "AR251"),
    ("E_PARENT_NOT_FOUND-spawn", "deployed", _nothing, lambda t, p, s: ["spawn", "dev", "--parent", "nope-1"],
     "E_PARENT_NOT_FOUND", "AR250"),
    ("E_RELATIVE_NOT_FOUND-spawn", "deployed", _nothing,
     lambda t, p, s: ["spawn", "dev", "--relation", "sibling", "--relative-to", "nope"], "E_RELATIVE_NOT_FOUND",
     "AR250"),
    ("E_BAD_ARGS-missing-task-file", "deployed", _nothing,
     lambda t, p, s: ["spawn", "dev", "--task-file", str(t / "none.md")], "E_BAD_ARGS", "AR254"),
]

# Rows where agentrc differs on purpose: agentrc's code and diagnostic, and what the kernel
# does ("ok": accepts; "crash": exits non-zero with no envelope, a stack trace or plain text;
# or its own code).
DELIBERATE = [
    ("AR242-npmrc-in-closure", "plain",
     lambda t, p, s: (closure(p) / ".npmrc").write_text("git=/bin/false\n") and None, _install,
     "invalid-package-manifest", "AR242", "ok"),
    ("AR167-agents-dir-link", "plain",
     lambda t, p, s: ((t / f"elsewhere-{s.name}").mkdir(), os.symlink(str(t / f"elsewhere-{s.name}"),
                                                                        str(s / ".agents"))) and None,
     _install, "path-escape", "AR167", "ok"),
    ("AR159-lock-link", "plain",
     lambda t, p, s: ((t / f"lock-{s.name}").write_text(LOCK_V2), os.symlink(str(t / f"lock-{s.name}"),
                                                                             str(s / "oas-lock.json"))) and None,
     _install, "invalid-lock", "AR159", "ok"),
    ("AR008-manifest-not-utf8", "plain",
     lambda t, p, s: (p / DEMO / "oas.json").write_bytes((p / DEMO / "oas.json").read_bytes().replace(
         b"A capability.", b"A \xff capability.")) and None, _install, "invalid-package-manifest", "AR008", "ok"),
    ("AR167-use-config-link", "installed",
     lambda t, p, s: ((t / f"config-{s.name}").write_text("name: s\n"), os.symlink(
         str(t / f"config-{s.name}"), str(s / "oas-config.yaml"))) and None,
     lambda t, p, s: ["use", "demo.cap"], "path-escape", "AR167", "ok"),
    ("E_UNKNOWN_CAPABILITY-use", "installed", _nothing, lambda t, p, s: ["use", "no.cap"], "E_UNKNOWN_CAPABILITY",
     "AR170", "crash"),
    ("E_UNKNOWN_SOUL-doctor", "deployed", _nothing, lambda t, p, s: ["doctor", "--soul", "ghost"], "E_UNKNOWN_SOUL",
     "AR166", "crash"),
    ("E_NO_DEPLOYMENT-status", "plain", _nothing, lambda t, p, s: ["status"], "E_NO_DEPLOYMENT", "AR265", "crash"),
    ("E_UNKNOWN_INSTANCE-retire", "deployed", _nothing, lambda t, p, s: ["retire", "nope-1"], "E_UNKNOWN_INSTANCE",
     "AR177", "crash"),
    ("E_UNIDENTIFIED_INSTANCE_HOME-retire", "deployed",
     lambda t, p, s: (s / "agents" / "dev" / "instances" / "dev-9").mkdir(parents=True),
     lambda t, p, s: ["retire", "dev-9"], "E_UNIDENTIFIED_INSTANCE_HOME", "AR175", "crash"),
    ("AR054-task-file-directory", "deployed", _nothing, lambda t, p, s: ["spawn", "dev", "--task-file", str(t)],
     "E_BAD_ARGS", "AR054", "E_SPAWN_FAILED"),
]



@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """HOME isolated for both tools, and a stand-in `claude` on PATH (the kernel looks it up
    even with --no-launch)."""
    home, bindir = tmp_path / "home", tmp_path / "bin"
    home.mkdir()
    bindir.mkdir()
    (bindir / "claude").write_text("#!/bin/sh\nexit 0\n")
    (bindir / "claude").chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("OAS_HOME", raising=False)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    return tmp_path


def twin_run(tmp: Path, capsys, base: str, prepare: Prep, args: Args):
    """Both scopes built from `base`, prepared alike, the verb run by each tool on its own:
    ((agentrc's exit, envelope), (the kernel's exit, envelope))."""
    pkg = write_package(tmp / "pkg")
    a, k = tmp / "a", tmp / "k"
    for s in (a, k):
        if base == "deployed":
            deployment(s)
        else:
            s.mkdir()
            git("init", "-q", str(s))
    if base == "installed":
        install_both(capsys, pkg, a, k)
    if prepare is _dependent:
        prepare(tmp, pkg, a)
        install_both(capsys, tmp / "p1", a, k)
    for s in (a, k):
        prepare(tmp, pkg, s)
    ours = ours_run(capsys, *args(tmp, pkg, a), "--dir", str(a))
    kargs = args(tmp, pkg, k)
    if kargs[0] in DIR_VERBS:
        kargs += ["--dir", str(k)]
    if kargs[0] == "spawn":
        kargs.append("--no-launch")
    if kargs[0] == "install" and len(kargs) == 3:
        kargs.append("--no-requirements")
    return ours, kernel_run(k, *kargs)


def diagnostics(envelope: dict) -> List[str]:
    return [d["code"] for d in envelope["error"].get("details", {}).get("diagnostics", [])]


@pytest.mark.parametrize("row,base,prepare,args,code,ar", ALIGNED, ids=[r[0] for r in ALIGNED])
def test_each_refusal_carries_the_kernels_code(isolated, capsys, row, base, prepare, args, code, ar):
    (rc, ours), (krc, theirs) = twin_run(isolated, capsys, base, prepare, args)
    assert theirs is not None and not theirs["ok"], (row, krc, theirs)
    assert rc == krc == 1 and ours is not None, (ours, theirs)
    assert ours["error"]["code"] == theirs["error"]["code"] == code, (ours, theirs)
    if ar:
        assert ar in diagnostics(ours), ours


@pytest.mark.parametrize("row,base,prepare,args,code,ar,kernel", DELIBERATE, ids=[r[0] for r in DELIBERATE])
def test_deliberate_differences_hold(isolated, capsys, row, base, prepare, args, code, ar, kernel):
    (rc, ours), (krc, theirs) = twin_run(isolated, capsys, base, prepare, args)
    assert rc == 1 and ours is not None and ours["error"]["code"] == code and ar in diagnostics(ours), ours
    if kernel == "ok":
        assert krc == 0, theirs
    elif kernel == "crash":
        assert krc != 0 and (theirs is None or "error" not in theirs), theirs
    else:
        assert krc != 0 and theirs["error"]["code"] == kernel, theirs


def test_a_usage_error_exits_2_where_the_kernel_says_E_USAGE(isolated, capsys):
    """`cap remove` without its package: the kernel's envelope is E_USAGE with exit 1;
    agentrc exits 2 with the usage on stderr, as every agentrc command does."""
    with pytest.raises(SystemExit) as exc:
        main(["cap", "remove", "--json", "--dir", str(isolated)])
    assert exc.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and "usage" in err
    krc, theirs = kernel_run(isolated, "remove", "--dir", str(isolated))
    assert krc == 1 and theirs is not None and theirs["error"]["code"] == "E_USAGE"
