"""Requirements of active capabilities (spec 003 `requires`) with the real Claude Code CLI and
an isolated HOME: a local marketplace made here, registered with `claude plugin marketplace
add`; runtime packages verified in `claude plugin list --json`, never installed at spawn;
bare `cap install`'s consent gate (`--accept-requirement`, `--no-requirements`, the steps
shown), each compared with the OAS kernel on a twin scope of a package authored here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentrc.capabilities.model import Requirement
from agentrc.capops import reqs as capreqs
from agentrc.cli.main import main
from helpers import ROOT, readable
from test_cap_install import git
from test_cap_judge import OAS

BIN = ROOT / ".tools" / "npm" / "node_modules" / ".bin"
pytestmark = pytest.mark.skipif(not OAS.exists() or not shutil.which("node"),
                                reason="the OAS kernel (../shared/judges/oas-kernel) and node are needed")
CAP = Path(".agents") / "capabilities"
PLUGIN = "hello@local-market"


@pytest.fixture
def env(tmp_path, monkeypatch):
    """An isolated HOME, the real claude first on PATH, and a local marketplace registered."""
    if not (BIN / "claude").exists():
        if os.environ.get("AGENTRC_REQUIRE_TOOLS") == "1":
            pytest.fail("AGENTRC_REQUIRE_TOOLS=1: the claude CLI is not in .tools/; run tools/install.sh")
        pytest.skip("the claude CLI is not in .tools/ (tools/install.sh)")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ['PATH']}")
    market = tmp_path / "market"
    for rel, text in {
        ".claude-plugin/marketplace.json": json.dumps({"name": "local-market", "owner": {"name": "t"}, "plugins": [
            {"name": "hello", "source": "./plugins/hello", "description": "Says hello"}]}),
        "plugins/hello/.claude-plugin/plugin.json": json.dumps({"name": "hello", "description": "Says hello",
                                                                "version": "1.0.0"}),
        "plugins/hello/skills/hi/SKILL.md": "---\nname: hi\ndescription: Say hi.\n---\n\nSay hi.\n",
    }.items():
        (market / rel).parent.mkdir(parents=True, exist_ok=True)
        (market / rel).write_text(text)
    claude("plugin", "marketplace", "add", str(market))
    return tmp_path


def claude(*args, check=True):
    proc = subprocess.run([str(BIN / "claude"), *args], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert not check or proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def plugins():
    return {r["id"]: r["enabled"] for r in json.loads(claude("plugin", "list", "--json").stdout)}


def deployment(scope: Path, requires, runtime="claude") -> None:
    """A git scope with one soul running `runtime` and an owned capability, active
    globally, requiring `requires`."""
    scope.mkdir()
    git("init", "-q", str(scope))
    git("-C", str(scope), "commit", "-q", "--allow-empty", "-m", "init")
    soul = scope / "agents" / "dev" / "soul"
    soul.mkdir(parents=True)
    (soul / "soul.yaml").write_text(f"name: dev\nrepo: .\nwork: checkout\nruntime: {runtime}\n")
    (soul / "AGENTS.md").write_text("# Dev\n")
    cap = scope / CAP / "owned" / "acme.push"
    (cap / "skills" / "push").mkdir(parents=True)
    (cap / "skills" / "push" / "SKILL.md").write_text("---\nname: push\ndescription: Push.\n---\nPush.\n")
    (cap / "oas.json").write_text(json.dumps({"capability": "acme.push", "version": "1.0.0", "description": "Push.",
                                              "skills": ["skills"], "requires": requires}, indent=2))
    (scope / "oas-config.yaml").write_text("capabilities:\n  additive:\n    acme.push:\n      from: owned\n"
                                           "      global: true\n")


def twins(env, requires, runtime="claude"):
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s, requires, runtime)
    return a, k


def agentrc(capsys, scope: Path, *args):
    rc = main(["cap", *args, "--dir", str(scope), "--json"])
    out = capsys.readouterr().out.strip()
    assert len(out.splitlines()) == 1, out
    return rc, json.loads(out)


def oas(scope: Path, *args):
    proc = subprocess.run(["node", str(OAS), *args, "--dir", str(scope), "--json"], cwd=scope, capture_output=True,
                          text=True, timeout=300, env=dict(os.environ, NO_COLOR="1"), stdin=subprocess.DEVNULL)
    return proc.returncode, json.loads(proc.stdout.strip().splitlines()[-1])


def oas_spawn(scope: Path):
    proc = subprocess.run(["node", str(OAS), "spawn", "dev", "--no-launch", "--json"], cwd=scope,
                          capture_output=True, text=True, timeout=300, env=dict(os.environ, NO_COLOR="1"))
    return proc.returncode, json.loads(proc.stdout.strip().splitlines()[-1])


def requirements(doc):
    """The `requirements` of bare install's JSON, requesters by capability, without scopes."""
    body = doc.get("result") or doc["error"].get("details") or {}
    out = []
    for r in body["requirements"]:
        r = {k: v for k, v in r.items() if k != "requestedBy"} | {"by": [x["capability"] for x in r["requestedBy"]]}
        if r.get("conflict"):
            r["conflict"] = [{k: v for k, v in p.items() if k != "scope"} for p in r["conflict"]["plans"]]
        out.append(r)
    return out


def doctor_requirements(capsys, scope: Path, kernel=False):
    """`missingHostRequirements` of `cap doctor --json` (or `oas doctor --json`), the scope's
    path and the tool's name taken out of the consent command."""
    if kernel:
        proc = subprocess.run(["node", str(OAS), "doctor", str(scope), "--json"], capture_output=True, text=True,
                              timeout=300, env=dict(os.environ, NO_COLOR="1"))
        doc = json.loads(proc.stdout)
    else:
        assert main(["cap", "doctor", str(scope), "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
    out = []
    for r in doc["missingHostRequirements"]:
        r = dict(r, requestedBy=[x["capability"] for x in r["requestedBy"]])
        if r["consentCommand"]:
            r["consentCommand"] = r["consentCommand"].replace(str(scope), "SCOPE").replace("agentrc cap ", "") \
                .replace("oas ", "")
        out.append(r)
    return out


def spawned(scope: Path):
    d = scope / "agents" / "dev" / "instances"
    return sorted(os.listdir(d)) if d.is_dir() else []


REQ = [{"runtime": "claude", "package": PLUGIN, "why": "push events"}]


def test_a_missing_plugin_fails_the_spawn_and_consent_installs_it(env, capsys):
    a, k = twins(env, REQ)
    assert PLUGIN not in plugins()
    # Spawn verifies, never installs: both tools refuse with the consent command.
    rc, ours = agentrc(capsys, a, "spawn", "dev")
    krc, theirs = oas_spawn(k)
    assert rc == krc == 1 and theirs["error"]["code"] == ours["error"]["code"] == "E_SPAWN_FAILED"
    message = ours["error"]["details"]["diagnostics"][0]["message"]
    assert ours["error"]["details"]["diagnostics"][0]["code"] == "AR230"
    assert f"--accept-requirement claude:{PLUGIN}" in message and f"claude plugin install {PLUGIN}" in message
    assert f"claude plugin install {PLUGIN}" in theirs["error"]["message"]
    assert spawned(a) == spawned(k) == [] and PLUGIN not in plugins()
    # Bare install without consent: the plan (every step's argv) and consent-required.
    rc, ours = agentrc(capsys, a, "install")
    krc, theirs = oas(k, "install")
    assert rc == krc == 0 and requirements(ours) == requirements(theirs)
    assert requirements(ours) == [{
        "command": f"claude:{PLUGIN}", "kind": "runtime-package", "runtime": "claude", "package": PLUGIN,
        "why": "push events", "docs": None, "outcome": "consent-required", "by": ["acme.push"],
        "plan": {"manager": "claude", "argv": ["claude", "plugin", "install", PLUGIN],
                 "steps": [["claude", "plugin", "install", PLUGIN]], "source": f"claude package ({PLUGIN})",
                 "version": None, "scope": "user-level (Claude Code plugins)"}}]
    assert ours["result"]["requirements"][0]["requestedBy"][0]["souls"] == ["dev"]
    # Declining leaves a doctor warning with the consent command, as the kernel's doctor does.
    mine, kernel = doctor_requirements(capsys, a), doctor_requirements(capsys, k, kernel=True)
    assert mine == kernel and [r["consentCommand"] for r in mine] == [
        f"install --accept-requirement claude:{PLUGIN} --dir SCOPE"]
    # --no-requirements skips it, as the kernel does.
    assert requirements(agentrc(capsys, a, "install", "--no-requirements")[1]) == \
        requirements(oas(k, "install", "--no-requirements")[1])
    assert PLUGIN not in plugins()
    # Consent runs the steps, then the runtime's own list must show it.
    rc, ours = agentrc(capsys, a, "install", "--accept-requirement", f"claude:{PLUGIN}")
    assert rc == 0 and ours["result"]["requirements"][0]["outcome"] == "installed", ours
    assert plugins()[PLUGIN] is True
    # Installed now: nothing left to ask, for either tool; both spawn.
    assert agentrc(capsys, a, "install")[1]["result"]["requirements"] == []
    assert oas(k, "install")[1]["result"]["requirements"] == []
    assert agentrc(capsys, a, "spawn", "dev")[0] == 0 and oas_spawn(k)[0] == 0
    # Both record the verified plugin in instance.json the same way.
    mine, kernel = (json.loads((s / "agents" / "dev" / "instances" / "dev-1" / "instance.json").read_text())
                    ["composition"]["materialized"]["runtimePackages"] for s in (a, k))
    assert mine == kernel and [(r["capability"], r["package"], r["loadedBy"]) for r in mine] == \
        [("acme.push", PLUGIN, "runtime-discovery")]
    # Disabled does not count.
    claude("plugin", "disable", PLUGIN)
    rc, ours = agentrc(capsys, a, "spawn", "dev")
    krc, theirs = oas_spawn(k)
    assert rc == krc == 1 and theirs["error"]["code"] == ours["error"]["code"] == "E_SPAWN_FAILED"
    assert "disabled" in ours["error"]["details"]["diagnostics"][0]["message"]
    assert "DISABLED" in theirs["error"]["message"]
    assert requirements(agentrc(capsys, a, "install")[1]) == requirements(oas(k, "install")[1])


def test_a_plugin_of_another_runtime_is_asked_only_when_named(env, capsys):
    a, k = twins(env, REQ, runtime="pi")
    # The soul runs pi: a Claude plugin is never asked of this host, and pi spawns need none.
    assert requirements(agentrc(capsys, a, "install")[1]) == requirements(oas(k, "install")[1]) == []
    # Naming it is the statement the host needs it.
    named = ("install", "--accept-requirement", "claude:nope@local-market")
    assert requirements(agentrc(capsys, a, *named)[1]) == requirements(oas(k, *named)[1]) == []
    rc, ours = agentrc(capsys, a, "install", "--no-requirements", "--accept-requirement", f"claude:{PLUGIN}")
    krc, theirs = oas(k, "install", "--no-requirements", "--accept-requirement", f"claude:{PLUGIN}")
    assert requirements(ours) == requirements(theirs) and [r["outcome"] for r in requirements(ours)] == ["skipped"]


def test_every_step_is_shown_and_only_a_consented_one_runs(env, capsys):
    """A marketplace registration is a step of its own, shown before consent."""
    req = [{"runtime": "claude", "package": "tool@example-market", "marketplace": "example-org/example-market",
            "why": "tools", "install": "https://example.invalid/docs"}]
    a, k = twins(env, req)
    main(["cap", "install", "--dir", str(a)])
    text = capsys.readouterr().out
    assert ("installer: claude plugin marketplace add example-org/example-market  &&  claude plugin install "
            "tool@example-market") in text
    assert "--accept-requirement claude:tool@example-market" in text
    assert requirements(agentrc(capsys, a, "install")[1]) == requirements(oas(k, "install")[1])
    assert [r["plan"]["steps"] for r in requirements(agentrc(capsys, a, "install")[1])] == [[
        ["claude", "plugin", "marketplace", "add", "example-org/example-market"],
        ["claude", "plugin", "install", "tool@example-market"]]]
    assert "example-market" not in claude("plugin", "marketplace", "list").stdout


def test_a_consented_install_that_fails_is_a_failure(env, capsys):
    req = [{"runtime": "claude", "package": "nope@local-market", "why": "missing from the marketplace"}]
    a, k = twins(env, req)
    rc, ours = agentrc(capsys, a, "install", "--accept-requirement", "claude:nope@local-market")
    krc, theirs = oas(k, "install", "--accept-requirement", "claude:nope@local-market")
    assert rc == krc == 1 and ours["error"]["code"] == theirs["error"]["code"] == "E_RECONCILE_FAILED"
    assert [r["outcome"] for r in requirements(ours)] == [r["outcome"] for r in requirements(theirs)] == ["failed"]
    assert ours["error"]["details"]["diagnostics"][0]["code"] == "AR232"
    assert [f["id"] for f in ours["error"]["details"]["failures"]] == \
        [f["id"] for f in theirs["error"]["details"]["failures"]] == ["requirement claude:nope@local-market"]


@pytest.mark.parametrize("flags", [[], ["--no-requirements"]])
def test_an_unsafe_package_spec_is_refused_even_when_skipping(env, capsys, flags):
    req = [{"runtime": "claude", "package": "x@m; rm -rf ~", "why": "hostile"},
           {"runtime": "claude", "package": "ok@m", "marketplace": "../../etc", "why": "hostile source"}]
    a, k = twins(env, req)
    rc, ours = agentrc(capsys, a, "install", *flags)
    krc, theirs = oas(k, "install", *flags)
    assert rc == krc == 1
    assert requirements(ours) == requirements(theirs)
    assert {r["code"] for r in requirements(ours)} == {"E_REQUIREMENT_POLICY"}
    assert {d["code"] for d in ours["error"]["details"]["diagnostics"]} == {"AR231"}
    rc, ours = agentrc(capsys, a, "spawn", "dev")
    assert rc == 1 and ours["error"]["code"] == "E_SPAWN_FAILED" and spawned(a) == []


def test_identities_and_plans_match_the_kernels(tmp_path):
    specs = [("pi", "npm:@scope/name@1.2.3", ""), ("pi", "npm:plain@latest", ""), ("pi", "npm:@scope/name", ""),
             ("claude", "p@m", ""), ("claude", "p@m", "org/market"), ("pi", "npm:x@^1.0", "")]
    script = ("import('" + str(OAS.parent.parent / "lib" / "packages.mjs") + "').then((m) => {"
              "const rows = JSON.parse(process.argv[1]).map(([runtime, pkg, marketplace]) => {"
              "const req = { runtime, package: pkg, why: 'w', ...(marketplace ? { marketplace } : {}) };"
              "const p = m.requirementInstallPlan(req, { context: process.argv[2] });"
              "return [m.normalizeRequirement(req).command, p.steps, p.source, p.version ?? null, p.scope]; });"
              "console.log(JSON.stringify(rows)); })")
    proc = subprocess.run(["node", "-e", script, json.dumps(specs), str(tmp_path)], capture_output=True, text=True,
                          check=True)
    theirs = json.loads(proc.stdout)
    ours = []
    for runtime, pkg, market in specs:
        r = Requirement(why="w", runtime=runtime, package=pkg, marketplace=market)
        p = capreqs.plan(r, capreqs.claude_binary(str(tmp_path)))
        ours.append([capreqs.name_of(r), p["steps"], p["source"], p["version"], p["scope"]])
    assert ours == theirs
    # The executable a context selects (oas-claude-config above it) is the one each step runs.
    (tmp_path / "oas-claude-config").write_text("# the work account\nclaude-work\n")
    theirs = json.loads(subprocess.run(["node", "-e", script, json.dumps(specs[3:5]), str(tmp_path / "x")],
                                       capture_output=True, text=True, check=True).stdout)
    assert [row[1] for row in theirs] == [capreqs.plan(Requirement("w", runtime=rt, package=pk, marketplace=m),
                                                       capreqs.claude_binary(str(tmp_path / "x")))["steps"]
                                          for rt, pk, m in specs[3:5]]
    assert theirs[1][1][0][0] == "claude-work"


def test_a_pi_package_is_checked_in_pi_s_own_list(env, capsys):
    """pi is not installed here: its list cannot be read, so the package is missing for both
    tools; consent runs `pi install`, which fails, and both say so."""
    req = [{"runtime": "pi", "package": "npm:@team/chat-pi@latest", "why": "push events in pi"}]
    a, k = twins(env, req, runtime="pi")
    ours, theirs = agentrc(capsys, a, "install")[1], oas(k, "install")[1]
    assert requirements(ours) == requirements(theirs)
    assert [(r["command"], r["plan"]["steps"], r["plan"]["version"]) for r in requirements(ours)] == [
        ("pi:npm:@team/chat-pi", [["pi", "install", "npm:@team/chat-pi@latest"]], "latest")]
    named = ("install", "--accept-requirement", "pi:npm:@team/chat-pi")
    rc, ours = agentrc(capsys, a, *named)
    krc, theirs = oas(k, *named)
    assert rc == krc == 1 and [r["outcome"] for r in requirements(ours)] == \
        [r["outcome"] for r in requirements(theirs)] == ["failed"]
    assert doctor_requirements(capsys, a) == doctor_requirements(capsys, k, kernel=True)


def test_two_capabilities_asking_one_plugin_from_different_sources_conflict(env, capsys):
    a, k = twins(env, [{"runtime": "claude", "package": PLUGIN, "marketplace": "org-a/market", "why": "a"}])
    for s in (a, k):
        other = s / CAP / "owned" / "acme.other"
        other.mkdir(parents=True)
        (other / "oas.json").write_text(json.dumps({
            "capability": "acme.other", "version": "1.0.0", "description": "Other.",
            "requires": [{"runtime": "claude", "package": PLUGIN, "marketplace": "org-b/market", "why": "b"}]}))
        with open(s / "oas-config.yaml", "a") as fh:
            fh.write("    acme.other:\n      from: owned\n      global: true\n")
    rc, ours = agentrc(capsys, a, "install", "--accept-requirement", f"claude:{PLUGIN}")
    krc, theirs = oas(k, "install", "--accept-requirement", f"claude:{PLUGIN}")
    assert rc == krc == 1 and requirements(ours) == requirements(theirs)
    assert requirements(ours)[0]["reason"] == "conflicting install plans for the same command"
    assert {d["code"] for d in ours["error"]["details"]["diagnostics"]} == {"AR231"}
    assert PLUGIN not in plugins()


def _interactive(scope: Path, answer: bytes) -> str:
    """Bare `cap install` on a terminal (a pty), answering the consent prompt with `answer`."""
    import pty  # POSIX only, like the CLIs under test

    main_fd, tty = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "agentrc", "cap", "install",
                             "--dir", str(scope)], stdin=tty, stdout=tty, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    os.close(tty)
    seen = b""
    answered = False
    while True:
        if not readable(main_fd, 120):
            proc.kill()
            break
        try:
            chunk = os.read(main_fd, 4096)
        except OSError:
            break  # the child closed the terminal
        if not chunk:
            break
        seen += chunk
        if not answered and b"[y/N]" in seen:
            os.write(main_fd, answer)
            answered = True
    proc.wait(timeout=120)
    os.close(main_fd)
    return seen.decode("utf-8", "replace")


@pytest.mark.parametrize("answer, installed", [(b"n\n", False), (b"y\n", True)])
def test_an_interactive_run_asks_before_each_install(env, answer, installed):
    a = env / "a"
    deployment(a, REQ)
    shown = _interactive(a, answer)
    assert f"installer: claude plugin install {PLUGIN}" in shown and "Run this install now? [y/N]" in shown
    assert (PLUGIN in plugins()) is installed
    assert ("consent needed" in shown) is not installed


def test_a_packaged_requirement_is_consented_alike_by_both_tools(env, capsys):
    """The requirement comes with a package authored here and installed by each tool into its
    twin scope; each tool's --accept-requirement installs the plugin (uninstalled between)."""
    pkg = env / "pkg"
    cap = pkg / "capabilities" / "push"
    (cap / "skills" / "push").mkdir(parents=True)
    (cap / "skills" / "push" / "SKILL.md").write_text("---\nname: push\ndescription: Push.\n---\nPush.\n")
    (cap / "oas.json").write_text(json.dumps({"capability": "acme.pushpkg", "version": "1.0.0", "description": "P.",
                                              "skills": ["skills"], "requires": REQ}))
    (pkg / "oas-package.json").write_text(json.dumps({
        "package": "acme.pkg", "version": "1.0.0", "description": "P.", "compatibility": {"oas": ">=0.19.0"},
        "capabilities": ["capabilities/push"]}))
    a, k = twins(env, [])
    for s in (a, k):
        (s / "oas-config.yaml").write_text("capabilities:\n  additive:\n    acme.pushpkg:\n      from: installed\n"
                                           "      global: true\n")
    assert agentrc(capsys, a, "install", str(pkg))[0] == 0
    assert oas(k, "install", str(pkg))[0] == 0
    assert requirements(agentrc(capsys, a, "install")[1]) == requirements(oas(k, "install")[1])
    accept = ("install", "--accept-requirement", f"claude:{PLUGIN}")
    krc, theirs = oas(k, *accept)
    assert krc == 0 and PLUGIN in plugins()
    claude("plugin", "uninstall", PLUGIN)
    assert PLUGIN not in plugins()
    rc, ours = agentrc(capsys, a, *accept)
    assert rc == 0 and PLUGIN in plugins()
    assert requirements(ours) == requirements(theirs)
    assert [r["outcome"] for r in requirements(ours)] == ["installed"]
