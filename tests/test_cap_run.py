"""`agentrc cap run NAMESPACE COMMAND [ARGS...]` (spec 003: operational commands), judged by
the OAS kernel's `oas NAMESPACE COMMAND`: on twin scopes (each tool installs, activates and
trusts the same capability), the command gets the same arguments and OAS_* environment and
its exit code comes back unchanged; refusals (unknown namespace or command, inactive,
untrusted, drifted) carry the kernel's codes and run nothing. Hostile manifests (a script
outside the capability, a link planted at it, an option for node, an empty or non-string
command) are refused by both."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cap_twins import home  # noqa: F401  (the fixture, used by name)
from helpers import ROOT
from cap_twins import CAP, command_capability, config, envelope, needs_kernel, neutral, oas, ours, package

pytestmark = needs_kernel

SETTINGS = "        channel: general\n        retries: 3\n"
TEAM = "team:\n  name: crew\n  id: crew-1\n"


def installed_twins(tmp_path: Path, capfd, trust: bool = True, settings: str = SETTINGS, extra: str = TEAM):
    """Twin scopes a (agentrc) and k (kernel), each with the package installed, activated and
    (with `trust`) approved by its own tool."""
    pkg = package(tmp_path / "pkg", {"capabilities/chat": command_capability(tmp_path / "src" / "chat")})
    a, k = tmp_path / "a" / "scope", tmp_path / "k" / "scope"
    for s in (a, k):
        s.mkdir(parents=True)
        config(s, settings=settings, extra=extra)
    assert ours(capfd, "cap", "install", str(pkg), "--dir", str(a), "--json")[0] == 0
    assert oas(k, "install", str(pkg), "--json")[0] == 0
    if trust:
        assert ours(capfd, "cap", "trust", "acme.chat", "--dir", str(a), "--json")[0] == 0
        assert oas(k, "trust", "acme.chat", "--json")[0] == 0
    return a, k


def ran(scope: Path) -> int:
    log = scope / "ran.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_a_command_gets_what_the_kernels_dispatch_gives_it(tmp_path, home, capfd, monkeypatch):
    a, k = installed_twins(tmp_path, capfd)
    monkeypatch.setenv("OAS_CLI_BIN", "/somewhere/else")  # inherited: agentrc does not pass it on
    args = ("auth", "plain", "two words", "--flag", "-x", "--", "--dir", "elsewhere")
    rc, out, _err = ours(capfd, "cap", "run", "--dir", str(a), "team-chat", *args)
    krc, kout, _kerr = oas(k, "team-chat", *args)
    assert rc == krc == 0
    mine, theirs = json.loads(neutral(out, a)), json.loads(neutral(kout, k))
    assert theirs["env"].pop("OAS_CLI_BIN").endswith("oas.mjs")
    assert mine == theirs
    assert mine["argv"] == ["auth", "--declared", *args[1:]]
    assert mine["env"] == {"OAS_CAPABILITY": "acme.chat", "OAS_SETTINGS": '{"channel":"general","retries":3}',
                           "OAS_TEAM_NAME": "crew", "OAS_TEAM_ID": "crew-1", "OAS_TEAM_SCOPE": "<scope>"}
    assert ran(a) == ran(k) == 1


@pytest.mark.parametrize("code", [0, 7, 255])
def test_the_commands_exit_code_passes_through(tmp_path, home, capfd, monkeypatch, code):
    a, k = installed_twins(tmp_path, capfd, settings="", extra="")
    monkeypatch.setenv("EXIT_WITH", str(code))
    rc, out, _err = ours(capfd, "cap", "run", "--dir", str(a), "--json", "team-chat", "auth")
    krc, kout, _kerr = oas(k, "team-chat", "auth", "--json")
    assert rc == krc == code
    # --json before the namespace is agentrc's own; the command's stdout is its own.
    assert json.loads(neutral(out, a))["env"]["OAS_SETTINGS"] == json.loads(kout)["env"]["OAS_SETTINGS"] == "{}"


def test_without_a_command_the_namespace_lists_its_commands(tmp_path, home, capfd):
    a, k = installed_twins(tmp_path, capfd, settings="", extra="")
    rc, out, err = ours(capfd, "cap", "run", "--dir", str(a), "team-chat")
    krc, kout, kerr = oas(k, "team-chat")
    assert rc == krc == 0 and out == kout == ""
    assert "commands: auth" in err and "commands: auth" in kerr
    rc, out, _err = ours(capfd, "cap", "run", "--dir", str(a), "--json", "team-chat")
    krc, kout, _kerr = oas(k, "team-chat", "--json")
    assert rc == krc == 1
    assert envelope(out)["error"]["code"] == envelope(kout)["error"]["code"] == "E_UNKNOWN_COMMAND"
    assert ran(a) == ran(k) == 0


@pytest.mark.parametrize("case,code", [
    ("untrusted", "E_CAPABILITY_BLOCKED"),
    ("inactive", "E_CAPABILITY_INACTIVE"),
    ("unknown-namespace", "E_UNKNOWN_COMMAND"),
    ("unknown-command", "E_UNKNOWN_COMMAND"),
    ("drifted", "E_CONFIG_BROKEN"),
    ("unlocked", "E_CONFIG_BROKEN"),
])
def test_refusals_carry_the_kernels_codes_and_run_nothing(tmp_path, home, capfd, case, code):
    a, k = installed_twins(tmp_path, capfd, trust=case != "untrusted", settings="", extra="")
    argv = ["team-chat", "auth"]
    for s in (a, k):
        if case == "inactive":
            (s / "oas-config.yaml").write_text(f"name: {s.name}\n")
        elif case == "drifted":
            with open(s / CAP / "installed" / "acme.chat" / "bin" / "chat.mjs", "a") as fh:
                fh.write("// changed after install\n")
        elif case == "unlocked":
            (s / "oas-lock.json").unlink()
    if case == "unknown-namespace":
        argv = ["no-such", "auth"]
    elif case == "unknown-command":
        argv = ["team-chat", "nope"]
    rc, out, err = ours(capfd, "cap", "run", "--dir", str(a), "--json", *argv)
    krc, kout, _kerr = oas(k, *argv, "--json")
    assert rc == krc == 1
    assert envelope(out)["error"]["code"] == envelope(kout)["error"]["code"] == code, (out, kout)
    # The same in text: exit 1, a diagnostic, nothing run.
    rc, out, err = ours(capfd, "cap", "run", "--dir", str(a), *argv)
    krc, kout, kerr = oas(k, *argv)
    assert rc == krc == 1 and out == ""
    assert "error[AR" in err
    assert ran(a) == ran(k) == 0
    if case == "untrusted":
        assert f"agentrc cap trust acme.chat --dir {a}" in err and "oas trust acme.chat" in kerr


def owned_twins(tmp_path: Path, commands, evil: bool = True):
    """Twin scopes with an owned capability (trusted with its scope, never checked by an
    install) declaring `commands`; evil.mjs beside the store, outside the capability."""
    a, k = tmp_path / "a" / "scope", tmp_path / "k" / "scope"
    for s in (a, k):
        command_capability(s / CAP / "owned" / "acme.chat", commands=commands)
        config(s, origin="owned")
        if evil:
            (s / "evil.mjs").write_text('import { writeFileSync } from "node:fs"; writeFileSync("pwned", "");\n')
    return a, k


@pytest.mark.parametrize("case", ["escaping-path", "planted-link", "absolute-path", "node-option", "blank",
                                  "missing-script", "non-string", "directory"])
def test_hostile_commands_are_refused_by_both(tmp_path, home, capfd, case):
    commands = {"escaping-path": {"auth": "../../../../evil.mjs"},
                "planted-link": {"auth": "bin/chat.mjs auth"},
                "absolute-path": {"auth": "EVIL"},
                "node-option": {"auth": "--eval=require('fs').writeFileSync('pwned','')"},
                "blank": {"auth": "   "},
                "missing-script": {"auth": "bin/nothing.mjs"},
                "non-string": {"auth": 5},
                "directory": {"auth": "bin"}}[case]
    a, k = owned_twins(tmp_path, commands)
    for s in (a, k):
        script = s / CAP / "owned" / "acme.chat" / "bin" / "chat.mjs"
        if case == "planted-link":
            script.unlink()
            script.symlink_to(s / "evil.mjs")
        if case == "absolute-path":
            manifest = s / CAP / "owned" / "acme.chat" / "oas.json"
            manifest.write_text(manifest.read_text().replace("EVIL", str(s / "evil.mjs")))
    rc, out, _err = ours(capfd, "cap", "run", "--dir", str(a), "--json", "team-chat", "auth")
    krc, kout, _kerr = oas(k, "team-chat", "auth", "--json")
    assert rc == krc == 1
    assert envelope(out)["error"]["code"] == "E_CAPABILITY_BROKEN"
    if case == "directory":  # the kernel hands node a directory, which fails: no envelope
        assert kout == ""
    else:
        assert envelope(kout)["error"]["code"] == "E_CAPABILITY_BROKEN", kout
    for s in (a, k):
        assert not (s / "pwned").exists() and ran(s) == 0


def test_an_owned_capability_runs_and_two_owners_of_a_namespace_are_refused(tmp_path, home, capfd):
    a, k = owned_twins(tmp_path, None, evil=False)
    rc, out, _err = ours(capfd, "cap", "run", "--dir", str(a), "team-chat", "auth")
    krc, kout, _kerr = oas(k, "team-chat", "auth")
    assert rc == krc == 0 and json.loads(neutral(out, a))["argv"] == json.loads(kout)["argv"]
    for s in (a, k):  # a second capability, acquired but not active, claims the namespace
        command_capability(s / CAP / "owned" / "acme.other", cid="acme.other")
    rc, out, _err = ours(capfd, "cap", "run", "--dir", str(a), "--json", "team-chat", "auth")
    krc, kout, _kerr = oas(k, "team-chat", "auth", "--json")
    assert rc == krc == 1
    assert envelope(out)["error"]["code"] == envelope(kout)["error"]["code"] == "E_DUPLICATE_NAMESPACE"


def test_inside_an_instance_its_record_decides(tmp_path, home, capfd, monkeypatch):
    """With OAS_HOME naming an instance home (and no --dir), the activation and settings are
    the ones its instance.json records, and its repository is the context, as in the kernel."""
    a, k = owned_twins(tmp_path, None, evil=False)
    for s in (a, k):
        (s / "oas-config.yaml").write_text(f"name: {s.name}\n")  # nothing active by config
        inst = s / "agents" / "dev" / "instances" / "dev-1"
        inst.mkdir(parents=True)
        (inst / "instance.json").write_text(json.dumps({
            "instance": "dev-1", "repo": str(s), "team": {"name": "t", "scope": str(s)},
            "capabilities": [{"id": "acme.chat", "settings": {"mode": "instance"}}]}))
    outside = tmp_path / "outside"
    outside.mkdir()
    monkeypatch.chdir(outside)
    monkeypatch.setenv("OAS_HOME", str(a / "agents" / "dev" / "instances" / "dev-1"))
    rc, out, _err = ours(capfd, "cap", "run", "team-chat", "auth")
    monkeypatch.setenv("OAS_HOME", str(k / "agents" / "dev" / "instances" / "dev-1"))
    krc, kout, _kerr = oas(outside, "team-chat", "auth")
    assert rc == krc == 0
    mine, theirs = json.loads(neutral(out, a)), json.loads(neutral(kout, k))
    theirs["env"].pop("OAS_CLI_BIN")
    assert {k_: v for k_, v in mine["env"].items() if k_ != "OAS_HOME"} == \
        {k_: v for k_, v in theirs["env"].items() if k_ != "OAS_HOME"}
    assert mine["env"]["OAS_SETTINGS"] == '{"mode":"instance"}' and mine["env"]["OAS_TEAM_NAME"] == "t"
    # With --dir the scope's own config decides: nothing is active there.
    rc, out, _err = ours(capfd, "cap", "run", "--dir", str(a), "--json", "team-chat", "auth")
    assert rc == 1 and envelope(out)["error"]["code"] == "E_CAPABILITY_INACTIVE"
    assert ran(outside) == 2 and ran(a) == ran(k) == 0  # both ran where they were started


def test_ctrl_c_reaches_the_command_which_ends_its_own_way(tmp_path, home):
    """SIGINT to the terminal's process group: the command handles it and its exit code comes
    back; agentrc neither kills it nor exits first."""
    a, _k = owned_twins(tmp_path, {"wait": "bin/wait.mjs"}, evil=False)
    (a / CAP / "owned" / "acme.chat" / "bin" / "wait.mjs").write_text(
        'import { writeFileSync } from "node:fs";\n'
        'process.on("SIGINT", () => { writeFileSync("cleaned", ""); process.exit(42); });\n'
        'writeFileSync("ready", ""); setInterval(() => {}, 1000);\n')
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.Popen([sys.executable, "-m", "agentrc", "cap", "run", "--dir", str(a), "team-chat", "wait"],
                            cwd=a, env=env, start_new_session=True)
    deadline = time.time() + 60
    while not (a / "ready").exists() and time.time() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=60) == 42
    assert (a / "cleaned").exists()
