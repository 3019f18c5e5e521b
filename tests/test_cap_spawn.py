"""`agentrc cap spawn` and `agentrc cap retire` (spec 003: exact runtime composition, hooks,
rollback and the cleanup contract), judged by the OAS kernel: the same deployment is spawned
with `oas spawn --no-launch` into a twin scope, and the homes, instance.json, the hooks'
environment, rollback, quarantine markers and retire are compared. Each tool also retires a
home the other quarantined.

Both tools compose the kernel's part of a home (the skills oas, oas-config and oas-packages;
the kernel:oas, kernel:instance-boundary and work-mode:MODE blocks) with their own texts: the
same names and block sources in the same order are asserted, and the bytes everywhere the
text is not a tool's own default (TASK.md's wording and tmux are left out)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentrc.capops.doctor import INJECTS_DIR, KERNEL_SKILLS_DIR
from agentrc.cli.main import main
from test_cap_install import git
from test_cap_judge import OAS

pytestmark = pytest.mark.skipif(not OAS.exists() or not shutil.which("node"),
                                reason="the OAS kernel (../shared/judges/oas-kernel) and node are needed")

CAP = Path(".agents") / "capabilities"
KERNEL_SKILLS = {"oas", "oas-config", "oas-packages"}
# A hook that logs its OAS_* environment to <context>/hook.log and fails on request: a file
# fail-<event> in the context makes that event exit 3, after a JSON last line.
HOOK = """import { appendFileSync, existsSync } from "node:fs";
const ev = process.argv[2];
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("OAS_")));
appendFileSync(process.env.OAS_CONTEXT + "/hook.log", JSON.stringify({ ev, env }) + "\\n");
if (existsSync(process.env.OAS_CONTEXT + "/fail-" + ev)) {
  console.log(JSON.stringify({ meta: { id: "half" }, warning: ev + " failed on purpose" }));
  process.exit(3);
}
console.log("progress");
console.log(JSON.stringify({ meta: { id: "minted-" + ev }, brief: "acme ready" }));
"""


def capability(root: Path, cid="acme.hooks", required=True, retire=True, skill="hooked") -> Path:
    (root / "skills" / skill).mkdir(parents=True)
    (root / "skills" / skill / "SKILL.md").write_text(f"---\nname: {skill}\ndescription: from {cid}\n---\nBody.\n")
    (root / "bin").mkdir()
    (root / "bin" / "hook.mjs").write_text(HOOK)
    (root / "inject.md").write_text(f"Use {cid}.\n")
    hooks = {"spawn": {"command": "bin/hook.mjs spawn", "required": True} if required else "bin/hook.mjs spawn"}
    if retire:
        hooks["retire"] = "bin/hook.mjs retire"
    (root / "oas.json").write_text(json.dumps({"capability": cid, "version": "1.0.0", "description": "Hooks.",
                                               "skills": ["skills"], "inject": "inject.md", "hooks": hooks}, indent=2))
    return root


def deployment(scope: Path, owned=True, config_extra="", soul_skill="dev-skill", work="checkout", **cap) -> None:
    scope.mkdir()
    git("init", "-q", str(scope))
    git("-C", str(scope), "commit", "-q", "--allow-empty", "-m", "init")
    soul = scope / "agents" / "dev" / "soul"
    (soul / "skills" / soul_skill).mkdir(parents=True)
    (soul / "skills" / soul_skill / "SKILL.md").write_text(f"---\nname: {soul_skill}\ndescription: soul\n---\nMine.\n")
    (soul / "soul.yaml").write_text(f"name: dev\nrepo: .\nwork: {work}\nruntime: claude\n")
    (soul / "AGENTS.md").write_text("# Dev\n\nThe soul.\n")
    if owned:
        capability(scope / CAP / "owned" / "acme.hooks", **cap)
    (scope / "oas-config.yaml").write_text("capabilities:\n  additive:\n    acme.hooks:\n"
                                           f"      from: {'owned' if owned else 'installed'}\n      global: true\n"
                                           + config_extra)


@pytest.fixture
def env(tmp_path, monkeypatch):
    """An isolated HOME and a stand-in `claude` on PATH (the kernel looks it up even with
    --no-launch)."""
    home, bindir = tmp_path / "home", tmp_path / "bin"
    home.mkdir()
    bindir.mkdir()
    (bindir / "claude").write_text("#!/bin/sh\nexit 0\n")
    (bindir / "claude").chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    return tmp_path


def oas(scope: Path, *args):
    proc = subprocess.run(["node", str(OAS), *args], cwd=scope, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, NO_COLOR="1"))
    return proc.returncode, proc.stdout, proc.stderr


def agentrc(capsys, scope: Path, *args):
    rc = main(["cap", *args, "--dir", str(scope), "--json"])
    out = capsys.readouterr().out.strip()
    assert len(out.splitlines()) == 1, out
    return rc, json.loads(out)


def instances(scope: Path):
    d = scope / "agents" / "dev" / "instances"
    return sorted(os.listdir(d)) if d.is_dir() else []


def tree(home: Path, scope: Path):
    """Every entry of a home: files by bytes, links by target, with the scope's path made
    neutral; the kernel's own skills left out."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(home):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(home))
            parts = rel.split("/")
            if parts[:2] == [".agents", "skills"] and len(parts) > 2 and parts[2] in KERNEL_SKILLS:
                if len(parts) == 3:  # present in both; the text is each tool's own
                    out[rel] = ("kernel skill", (p / "SKILL.md").is_file())
                continue
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p).replace(str(scope), "<scope>"))
            elif p.is_file() and rel not in ("AGENTS.md", "TASK.md", "instance.json"):
                out[rel] = ("file", p.read_bytes())
            elif p.is_dir():
                out[rel] = ("dir",)
            else:
                out[rel] = ("file",)
        dirnames[:] = [d for d in dirnames if not (Path(dirpath) / d).is_symlink()]
    return out


BLOCK = re.compile(r"\n<!-- oas:([^ \n]+) src=([^\n]*) -->\n(.*?)\n<!-- /oas:\1 -->\n", re.S)
DEFAULT_TEXTS = (str(OAS.parent.parent / "injects") + os.sep, INJECTS_DIR + os.sep)
DEFAULT_TREES = DEFAULT_TEXTS + (str(OAS.parent.parent / "skills") + os.sep, KERNEL_SKILLS_DIR + os.sep)


def neutral_defaults(text: str) -> str:
    """An AGENTS.md with each block whose file is a tool's own packaged default text (the
    kernel's injects/, agentrc's data/injects/) reduced to its source: comparing two of them
    asserts the same block sources in the same order, and the same bytes for every other
    block (capability and config blocks, an oas.injection-override) and for the soul's text."""
    def reduce(m: "re.Match[str]") -> str:
        if m.group(2).startswith(DEFAULT_TEXTS):
            return f"\n<!-- oas:{m.group(1)} (default text) -->\n"
        return m.group(0)
    return BLOCK.sub(reduce, text)


def block_sources(text: str):
    return [m.group(1) for m in BLOCK.finditer(text)]


def neutral_instructions(rows, scope: Path):
    """instance.json `instructions` with each tool's own default files made neutral."""
    return neutral(defaults_neutral(rows), scope)


def defaults_neutral(value):
    """`value` with every path into a tool's own default texts or kernel skills replaced by
    "(default)"."""
    if isinstance(value, str):
        return "(default)" if value.startswith(DEFAULT_TREES) else value
    if isinstance(value, list):
        return [defaults_neutral(v) for v in value]
    if isinstance(value, dict):
        return {k: defaults_neutral(v) for k, v in value.items()}
    return value


def neutral(value, scope: Path):
    return json.loads(json.dumps(value).replace(str(scope), "<scope>"))


def hook_log(scope: Path):
    log = scope / "hook.log"
    if not log.exists():
        return []
    return [(x["ev"], neutral(x["env"], scope)) for x in map(json.loads, log.read_text().splitlines())]


def test_spawn_composes_the_home_the_kernel_composes(env, capsys):
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s)
    rc, ours = agentrc(capsys, a, "spawn", "dev", "--task", "Do it.")
    krc, kout, kerr = oas(k, "spawn", "dev", "--no-launch", "--json", "--task", "Do it.")
    assert rc == 0 and ours["ok"], ours
    assert krc == 0, kerr
    theirs = json.loads(kout)["result"]
    for key in ("instance", "agent", "work", "branch", "launched", "runtime", "spawnOrigin", "parent", "relation"):
        assert ours["result"][key] == theirs[key], key
    ha, hk = a / "agents" / "dev" / "instances" / "dev-1", k / "agents" / "dev" / "instances" / "dev-1"
    # Same entries, same bytes of every copied skill, same links.
    assert tree(ha, a) == tree(hk, k)
    assert tree(ha, a)["CLAUDE.md"] == ("link", "AGENTS.md")
    assert tree(ha, a)[".claude/skills"] == ("link", "../.agents/skills")
    assert not (ha / ".agents" / "skills" / "hooked").is_symlink()
    # AGENTS.md: the soul, the kernel and work-mode blocks, then the capability block; byte
    # for byte but for each tool's own default texts.
    assert neutral_defaults((ha / "AGENTS.md").read_text().replace(str(a), "<scope>")) == \
        neutral_defaults((hk / "AGENTS.md").read_text().replace(str(k), "<scope>"))
    assert block_sources((ha / "AGENTS.md").read_text()) == [
        "kernel:oas", "kernel:instance-boundary", "work-mode:checkout", "capability:acme.hooks"]
    mine, kernel = (json.loads((h / "instance.json").read_text()) for h in (ha, hk))
    for key in ("agent", "kind", "instance", "work", "branch", "runtime", "spawnOrigin", "capabilityMeta"):
        assert mine[key] == kernel[key], key
    assert neutral(mine["home"], a) == neutral(kernel["home"], k)
    assert mine["skills"] == kernel["skills"]
    assert {s["name"] for s in mine["skills"] if s["source"] == "kernel"} == KERNEL_SKILLS
    assert neutral_instructions(mine["instructions"], a) == neutral_instructions(kernel["instructions"], k)
    fields = ("id", "origin", "level", "settings", "provenance", "skills", "hooks", "trusted")
    assert [neutral({f: c[f] for f in fields}, a) for c in mine["capabilities"]] == \
        [neutral({f: c[f] for f in fields}, k) for c in kernel["capabilities"]]
    assert neutral(mine["capabilityRuntime"][0]["hooks"], a) == neutral(kernel["capabilityRuntime"][0]["hooks"], k)
    # The hooks saw the same OAS_* environment, and the brief reached TASK.md.
    assert hook_log(a) == hook_log(k) and [ev for ev, _e in hook_log(a)] == ["spawn"]
    assert "acme ready" in (ha / "TASK.md").read_text()
    # Retire: each tool retires its own; the retire hook gets the spawn's meta.
    rc, out = agentrc(capsys, a, "retire", "dev-1")
    krc, kout, kerr = oas(k, "retire", "dev-1", "--json")
    assert rc == 0 and out["ok"] and krc == 0, (out, kerr)
    assert {k2: out["result"][k2] for k2 in ("retired", "agent", "removedDir", "capabilityMeta")} == \
        {k2: json.loads(kout)[k2] for k2 in ("retired", "agent", "removedDir", "capabilityMeta")}
    assert instances(a) == instances(k) == []
    assert hook_log(a) == hook_log(k)
    assert json.loads(hook_log(a)[-1][1]["OAS_META"]) == {"id": "minted-spawn"}


def test_duplicate_skill_names_fail_unless_an_override_names_the_winner(env, capsys):
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s, soul_skill="hooked")
    rc, ours = agentrc(capsys, a, "spawn", "dev")
    krc, kout, _e = oas(k, "spawn", "dev", "--no-launch", "--json")
    assert rc == 1 and ours["error"]["code"] == json.loads(kout)["error"]["code"] == "E_SPAWN_FAILED"
    assert ours["error"]["details"]["diagnostics"][0]["code"] == "AR171" and krc == 1
    assert "duplicate skill" in json.loads(kout)["error"]["message"]
    assert hook_log(a) == hook_log(k) == []
    # agentrc checks the composition before it creates anything; the kernel (0.20.0) finds the
    # duplicate only after it created the home, and leaves that half-built home (no
    # instance.json) behind.
    assert instances(a) == []
    assert instances(k) == ["dev-1"] and not (k / "agents" / "dev" / "instances" / "dev-1" / "instance.json").exists()
    shutil.rmtree(k / "agents" / "dev" / "instances" / "dev-1")
    for s in (a, k):
        with open(s / "oas-config.yaml", "a") as fh:
            fh.write("skill-overrides:\n  hooked: acme.hooks\n")
    assert agentrc(capsys, a, "spawn", "dev")[0] == 0
    assert oas(k, "spawn", "dev", "--no-launch", "--json")[0] == 0
    for s in (a, k):
        skill = s / "agents" / "dev" / "instances" / "dev-1" / ".agents" / "skills" / "hooked" / "SKILL.md"
        assert "from acme.hooks" in skill.read_text()


@pytest.mark.parametrize("winner", ["", "kernel", "acme.hooks"])
def test_a_capability_skill_named_like_a_kernel_skill(env, capsys, winner):
    """The kernel's own skills take part in duplicate detection and skill-overrides like any
    other source, in both tools."""
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s, skill="oas", config_extra=f"skill-overrides:\n  oas: {winner}\n" if winner else "")
    rc, ours = agentrc(capsys, a, "spawn", "dev")
    krc, kout, _e = oas(k, "spawn", "dev", "--no-launch", "--json")
    if not winner:
        assert rc == krc == 1 and ours["error"]["details"]["diagnostics"][0]["code"] == "AR171"
        assert "duplicate skill" in json.loads(kout)["error"]["message"] and "'oas'" in ours["error"]["message"]
        return
    assert rc == krc == 0, (ours, kout)
    mine, kernel = (json.loads((s / "agents" / "dev" / "instances" / "dev-1" / "instance.json").read_text())
                    for s in (a, k))
    assert mine["skills"] == kernel["skills"]
    assert {"name": "oas", "source": winner} in mine["skills"]
    text = (a / "agents" / "dev" / "instances" / "dev-1" / ".agents" / "skills" / "oas" / "SKILL.md").read_text()
    assert ("from acme.hooks" in text) == (winner == "acme.hooks")


def test_a_failed_required_hook_rolls_the_spawn_back(env, capsys):
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s)
        (s / "fail-spawn").write_text("")
    rc, ours = agentrc(capsys, a, "spawn", "dev")
    krc, kout, _e = oas(k, "spawn", "dev", "--no-launch", "--json")
    assert rc == krc == 1 and ours["error"]["code"] == json.loads(kout)["error"]["code"] == "E_SPAWN_FAILED"
    assert ours["error"]["details"]["diagnostics"][0]["code"] == "AR173"
    assert "rolled back" in ours["error"]["message"] and "rolled back" in json.loads(kout)["error"]["message"]
    # Compensation ran (the retire hook, with the failed hook's meta), and nothing is left.
    assert hook_log(a) == hook_log(k) and [ev for ev, _e in hook_log(a)] == ["spawn", "retire"]
    assert json.loads(hook_log(a)[1][1]["OAS_META"]) == {"id": "half"}
    assert instances(a) == instances(k) == []


def test_an_advisory_hook_failure_only_warns(env, capsys):
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s, required=False)
        (s / "fail-spawn").write_text("")
    rc, ours = agentrc(capsys, a, "spawn", "dev")
    krc, kout, _e = oas(k, "spawn", "dev", "--no-launch", "--json")
    assert rc == krc == 0
    assert ours["result"]["warnings"] == json.loads(kout)["result"]["warnings"] == \
        ["acme.hooks spawn hook failed (continuing): spawn failed on purpose"]
    assert instances(a) == instances(k) == ["dev-1"]


def marker_view(scope: Path):
    m = json.loads((scope / "agents" / "dev" / "instances" / "dev-1" / ".oas-rollback-incomplete.json").read_text())
    c = m["cleanup"]
    return neutral({"instance": m["instance"], "agent": m["agent"], "reason": m["reason"], "failed": m["failed"],
                    "retainedFor": m["retainedFor"], "n_incomplete": len(m["incomplete"]),
                    "cleanup": {"version": c["version"], "repo": c["repo"], "work": c["work"], "branch": c["branch"],
                                "outstanding": c["outstanding"], "capabilityMeta": c["capabilityMeta"],
                                "runtime": [(r["id"], r["hooks"], r["requiredHooks"], r["trust"]["trusted"])
                                            for r in c["capabilityRuntime"]]}}, scope)


def test_failed_compensation_quarantines_and_each_tool_retries_the_others(env, capsys):
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s)
        (s / "fail-spawn").write_text("")
        (s / "fail-retire").write_text("")
    rc, ours = agentrc(capsys, a, "spawn", "dev")
    krc, kout, _e = oas(k, "spawn", "dev", "--no-launch", "--json")
    assert rc == krc == 1 and "rollback INCOMPLETE" in ours["error"]["message"]
    assert "rollback INCOMPLETE" in json.loads(kout)["error"]["message"]
    # The home is kept, marked with the same versioned cleanup contract, and nothing else.
    assert instances(a) == instances(k) == ["dev-1"]
    assert marker_view(a) == marker_view(k)
    assert not (a / "agents" / "dev" / "instances" / "dev-1" / "instance.json").exists()
    # Swap the homes: agentrc retries the kernel's quarantine and the kernel retries agentrc's.
    ha, hk = (s / "agents" / "dev" / "instances" / "dev-1" for s in (a, k))
    for h, src, dst in ((ha, a, k), (hk, k, a)):
        doc = (h / ".oas-rollback-incomplete.json").read_text().replace(str(src), str(dst))
        (h / ".oas-rollback-incomplete.json").write_text(doc)
    tmp = env / "swap"
    ha.rename(tmp)
    hk.rename(ha)
    tmp.rename(hk)
    # The cleanup still fails: both keep the home and say what is outstanding.
    rc, out = agentrc(capsys, a, "retire", "dev-1")
    krc, kout, _e = oas(k, "retire", "dev-1", "--json")
    assert rc == krc == 1 and out["error"]["code"] == "E_RETIRE_INCOMPLETE"
    assert out["error"]["details"]["diagnostics"][0]["code"] == "AR176"
    assert out["error"]["details"]["retainedHome"] == str(ha) and json.loads(kout)["retainedHome"] == str(hk)
    assert len(out["error"]["details"]["rollbackIncomplete"]) == len(json.loads(kout)["rollbackIncomplete"]) == 1
    assert instances(a) == instances(k) == ["dev-1"]
    # Fixed: the retry proves the cleanup and removes the home.
    for s in (a, k):
        (s / "fail-retire").unlink()
    rc, out = agentrc(capsys, a, "retire", "dev-1")
    krc, kout, _e = oas(k, "retire", "dev-1", "--json")
    assert rc == krc == 0 and out["result"]["removedDir"] and json.loads(kout)["removedDir"]
    assert instances(a) == instances(k) == []
    assert hook_log(a) == hook_log(k)


def test_force_removes_a_quarantine_and_names_what_the_operator_owns(env, capsys):
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s)
        (s / "fail-spawn").write_text("")
        (s / "fail-retire").write_text("")
    agentrc(capsys, a, "spawn", "dev")
    oas(k, "spawn", "dev", "--no-launch", "--json")
    rc, out = agentrc(capsys, a, "retire", "dev-1", "--force")
    krc, kout, _e = oas(k, "retire", "dev-1", "--force", "--json")
    assert rc == krc == 0
    assert len(out["result"]["forcedIncomplete"]) == len(json.loads(kout)["forcedIncomplete"]) == 1
    assert "acme.hooks" in out["result"]["forcedIncomplete"][0]
    assert instances(a) == instances(k) == []


@pytest.mark.parametrize("marker", [None, "not json", {"cleanup": {"version": 2}},
                                    {"cleanup": {"version": 1, "repo": "/r", "work": "checkout",
                                                 "capabilityRuntime": [{"id": "x"}],
                                                 "outstanding": {"hooks": [], "git": []}}}])
def test_an_unidentifiable_home_fails_closed(env, capsys, marker):
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s)
        home = s / "agents" / "dev" / "instances" / "dev-9"
        home.mkdir(parents=True)
        (home / "credential").write_text("secret")
        if marker is not None:
            (home / ".oas-rollback-incomplete.json").write_text(marker if isinstance(marker, str)
                                                                  else json.dumps(marker))
    rc, out = agentrc(capsys, a, "retire", "dev-9")
    krc, _o, kerr = oas(k, "retire", "dev-9", "--json")
    assert rc == krc == 1
    assert out["error"]["code"] == "E_UNIDENTIFIED_INSTANCE_HOME" and "E_UNIDENTIFIED_INSTANCE_HOME" in kerr
    assert out["error"]["details"]["diagnostics"][0]["code"] == "AR175"
    assert instances(a) == instances(k) == ["dev-9"]
    rc, out = agentrc(capsys, a, "retire", "dev-9", "--force")
    krc, _o, kerr = oas(k, "retire", "dev-9", "--force", "--json")
    assert rc == krc == 0, kerr
    assert instances(a) == instances(k) == []


def installed_twins(env, capsys, tmp_path: Path, required: bool):
    """Twin scopes that installed (each with its own tool) a package holding the hooked
    capability, untrusted: (agentrc's scope, the kernel's)."""
    pkg = tmp_path / "pkg"
    capability(pkg / "capabilities" / "acme", required=required)
    (pkg / "oas-package.json").write_text(json.dumps({
        "package": "acme.pkg", "version": "1.0.0", "description": "Acme.", "compatibility": {"oas": ">=0.19.0"},
        "capabilities": ["capabilities/acme"]}))
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s, owned=False)
    assert agentrc(capsys, a, "install", str(pkg))[0] == 0
    assert oas(k, "install", str(pkg), "--dir", str(k), "--json")[0] == 0
    return a, k


def test_untrusted_hooks(env, capsys, tmp_path):
    """An installed capability's hooks run only once it is trusted: a required one refuses the
    spawn (nothing created), an advisory one is skipped with a warning."""
    a, k = installed_twins(env, capsys, tmp_path, required=True)
    rc, ours = agentrc(capsys, a, "spawn", "dev")
    krc, kout, _e = oas(k, "spawn", "dev", "--no-launch", "--json")
    assert rc == krc == 1 and ours["error"]["details"]["diagnostics"][0]["code"] == "AR172"
    assert "not trusted" in json.loads(kout)["error"]["message"]
    assert instances(a) == instances(k) == [] and hook_log(a) == hook_log(k) == []
    assert agentrc(capsys, a, "trust", "acme.hooks")[0] == 0
    assert oas(k, "trust", "acme.hooks", "--dir", str(k), "--json")[0] == 0
    assert agentrc(capsys, a, "spawn", "dev")[0] == 0
    assert oas(k, "spawn", "dev", "--no-launch", "--json")[0] == 0
    assert hook_log(a) == hook_log(k) and len(hook_log(a)) == 1


def test_refusals(env, capsys):
    a = env / "a"
    deployment(a, work="bogus")
    rc, out = agentrc(capsys, a, "spawn", "dev")
    assert rc == 1 and out["error"]["details"]["diagnostics"][0]["code"] == "AR251" and instances(a) == []
    rc, out = agentrc(capsys, a, "spawn", "nobody")
    assert rc == 1 and out["error"]["code"] == "E_UNKNOWN_AGENT"
    rc, out = agentrc(capsys, a, "retire", "dev-1")
    assert rc == 1 and out["error"]["details"]["diagnostics"][0]["code"] == "AR177"
    rc, out = agentrc(capsys, a, "retire", "../../etc")
    assert rc == 1 and out["error"]["details"]["diagnostics"][0]["code"] == "AR177"
    # A skill that links outside itself is not copied: the spawn stops and leaves nothing.
    b = env / "b"
    deployment(b)
    skill = b / "agents" / "dev" / "soul" / "skills" / "dev-skill"
    for target in ("/etc/hostname", "../../AGENTS.md"):
        (skill / "leak").symlink_to(target)
        rc, out = agentrc(capsys, b, "spawn", "dev")
        assert rc == 1 and out["error"]["details"]["diagnostics"][0]["code"] == "AR174"
        assert os.listdir(b / "agents" / "dev" / "instances") == []
        (skill / "leak").unlink()
    assert hook_log(b) == []
    # Links inside the skill are kept as links (a loop to itself included); modes are kept.
    (skill / "self").symlink_to(".")
    (skill / "doc.md").symlink_to("SKILL.md")
    (skill / "run.sh").write_text("#!/bin/sh\n")
    (skill / "run.sh").chmod(0o755)
    assert agentrc(capsys, b, "spawn", "dev")[0] == 0
    copy = b / "agents" / "dev" / "instances" / "dev-1" / ".agents" / "skills" / "dev-skill"
    assert os.readlink(copy / "self") == "." and os.readlink(copy / "doc.md") == "SKILL.md"
    assert os.access(copy / "run.sh", os.X_OK)


def test_an_untrusted_advisory_hook_is_skipped_with_a_warning(env, capsys, tmp_path):
    a, k = installed_twins(env, capsys, tmp_path, required=False)
    rc, ours = agentrc(capsys, a, "spawn", "dev")
    krc, kout, _e = oas(k, "spawn", "dev", "--no-launch", "--json")
    assert rc == krc == 0
    for warnings in (ours["result"]["warnings"], json.loads(kout)["result"]["warnings"]):
        assert len(warnings) == 1 and warnings[0].startswith("acme.hooks: executable surface disabled")
    assert hook_log(a) == hook_log(k) == []
    assert instances(a) == instances(k) == ["dev-1"]


def test_concurrent_spawns_get_distinct_homes(env):
    a = env / "a"
    deployment(a)
    src = Path(__file__).resolve().parent.parent / "src"
    procs = [subprocess.Popen([sys.executable, "-m", "agentrc.cli.main", "cap", "spawn", "dev", "--dir", str(a),
                               "--json"], env=dict(os.environ, PYTHONPATH=str(src)), stdout=subprocess.PIPE)
             for _ in range(4)]
    outs = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert all(o["ok"] for o in outs), outs
    assert sorted(o["result"]["instance"] for o in outs) == instances(a) == ["dev-1", "dev-2", "dev-3", "dev-4"]
    assert len(hook_log(a)) == 4


def test_a_declared_resource_that_is_missing_refuses_the_spawn(env, capsys):
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s)
        shutil.rmtree(s / CAP / "owned" / "acme.hooks" / "skills" / "hooked")
    rc, ours = agentrc(capsys, a, "spawn", "dev")
    krc, kout, _e = oas(k, "spawn", "dev", "--no-launch", "--json")
    assert rc == krc == 1 and ours["error"]["code"] == json.loads(kout)["error"]["code"] == "E_SPAWN_FAILED"
    assert ours["error"]["details"]["diagnostics"][0]["code"] == "AR174"
    assert "do not exist" in json.loads(kout)["error"]["message"]
    assert instances(a) == instances(k) == [] and hook_log(a) == hook_log(k) == []


def test_hooks_run_outer_scope_to_inner_then_by_id_and_retire_in_reverse(env, capsys):
    """Two config scopes: a workspace (zz.outer) around a repository (ab.inner, aa.inner).
    Spawn runs zz.outer, aa.inner, ab.inner; retire the reverse, in both tools."""
    homes = {}
    for name in ("a", "k"):
        ws = env / name
        ws.mkdir()
        capability(ws / CAP / "owned" / "zz.outer", cid="zz.outer", required=False, skill="outer")
        (ws / "oas-config.yaml").write_text("capabilities:\n  additive:\n    zz.outer:\n      from: owned\n"
                                            "      global: true\n")
        repo = ws / "repo"
        deployment(repo, owned=False)
        for cid in ("ab.inner", "aa.inner"):
            capability(repo / CAP / "owned" / cid, cid=cid, required=False, skill=cid.replace(".", "-"))
        (repo / "oas-config.yaml").write_text("capabilities:\n  additive:\n" + "".join(
            f"    {cid}:\n      from: owned\n      global: true\n" for cid in ("ab.inner", "aa.inner")))
        homes[name] = repo
    a, k = homes["a"], homes["k"]
    assert agentrc(capsys, a, "spawn", "dev")[0] == 0
    assert oas(k, "spawn", "dev", "--no-launch", "--json")[0] == 0
    assert agentrc(capsys, a, "retire", "dev-1")[0] == 0
    assert oas(k, "retire", "dev-1", "--json")[0] == 0
    order = [(ev, e["OAS_CAPABILITY"]) for ev, e in hook_log(a)]
    assert order == [(ev, e["OAS_CAPABILITY"]) for ev, e in hook_log(k)] == [
        ("spawn", "zz.outer"), ("spawn", "aa.inner"), ("spawn", "ab.inner"),
        ("retire", "ab.inner"), ("retire", "aa.inner"), ("retire", "zz.outer")]
    # The same environment throughout, OAS_LEVEL the scope of each binding.
    assert neutral(hook_log(a), a.parent) == neutral(hook_log(k), k.parent)
    assert [e["OAS_LEVEL"] for _ev, e in hook_log(a)][:2] == [str(a.parent), "<scope>"]
    assert {e["OAS_ROOT"] for ev, e in hook_log(a) if ev == "retire"} == {"<scope>/agents"}


def test_each_tool_retires_the_others_live_instance(env, capsys):
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s)
    assert agentrc(capsys, a, "spawn", "dev")[0] == 0
    assert oas(k, "spawn", "dev", "--no-launch", "--json")[0] == 0
    ha, hk = (s / "agents" / "dev" / "instances" / "dev-1" for s in (a, k))
    tmp = env / "swap"
    ha.rename(tmp)
    hk.rename(ha)
    tmp.rename(hk)
    for h, src, dst in ((ha, k, a), (hk, a, k)):
        (h / "instance.json").write_text((h / "instance.json").read_text().replace(str(src), str(dst)))
    rc, out = agentrc(capsys, a, "retire", "dev-1")
    krc, kout, kerr = oas(k, "retire", "dev-1", "--json")
    assert rc == krc == 0 and out["result"]["removedDir"] and json.loads(kout)["removedDir"], kerr
    assert instances(a) == instances(k) == []
    assert hook_log(a) == hook_log(k) and [ev for ev, _e in hook_log(a)] == ["spawn", "retire"]
    assert json.loads(hook_log(a)[1][1]["OAS_META"]) == {"id": "minted-spawn"}


def test_oas_level_is_the_scope_of_the_binding(env, capsys):
    """A capability acquired at the workspace but activated by the repository's config: its
    hooks get the repository as OAS_LEVEL, in both tools."""
    homes = {}
    for name in ("a", "k"):
        ws = env / name
        ws.mkdir()
        capability(ws / CAP / "owned" / "zz.outer", cid="zz.outer", required=False, skill="outer")
        (ws / "oas-config.yaml").write_text("{}\n")
        repo = ws / "repo"
        deployment(repo, owned=False)
        (repo / "oas-config.yaml").write_text("capabilities:\n  additive:\n    zz.outer:\n      global: true\n")
        homes[name] = repo
    a, k = homes["a"], homes["k"]
    assert agentrc(capsys, a, "spawn", "dev")[0] == 0
    assert oas(k, "spawn", "dev", "--no-launch", "--json")[0] == 0
    assert neutral(hook_log(a), a.parent) == neutral(hook_log(k), k.parent)
    assert [e["OAS_LEVEL"] for _ev, e in hook_log(a)] == ["<scope>"]
    mine, kernel = (json.loads((s / "agents" / "dev" / "instances" / "dev-1" / "instance.json").read_text())
                    for s in (a, k))
    assert neutral([c["level"] for c in mine["capabilities"]], a) == neutral([c["level"] for c in kernel[
        "capabilities"]], k) == ["<scope>"]


def test_a_missing_kernel_skill_fails_the_spawn_before_anything_is_written(env, capsys, monkeypatch):
    """agentrc's own skills are promised to every instance: an installation without them
    (a broken package) fails the spawn, as the kernel fails on a missing skill of its own."""
    from agentrc.capops import doctor as capdoctor
    broken = env / "broken-skills"
    shutil.copytree(capdoctor.KERNEL_SKILLS_DIR, broken)
    (broken / "oas-config" / "SKILL.md").unlink()
    monkeypatch.setattr(capdoctor, "KERNEL_SKILLS_DIR", str(broken))
    deployment(env / "a")
    rc, ours = agentrc(capsys, env / "a", "spawn", "dev")
    assert rc == 1 and ours["error"]["code"] == "E_SPAWN_FAILED"
    assert [d["code"] for d in ours["error"]["details"]["diagnostics"]] == ["AR174"]
    assert "'oas-config'" in ours["error"]["message"]
    assert instances(env / "a") == [] and hook_log(env / "a") == []
