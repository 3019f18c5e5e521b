"""`agentrc cap spawn`'s --task-file, --repo, --runtime and --model, and the instance.json
fields the kernel records beyond the composition (`model`, `composition`, `tmux`, `command`),
judged by `oas spawn --no-launch` on twin scopes (real git repositories made here)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agentrc.cli.main import main
from test_cap_install import git
from test_cap_spawn import agentrc, deployment, env, instances, neutral, oas, pytestmark  # noqa: F401

KERNEL_SKILL_NAMES = {"oas", "oas-config", "oas-packages"}


def home_of(scope: Path, name="dev-1") -> Path:
    return scope / "agents" / "dev" / "instances" / name


def kernel_free(doc, scope: Path):
    """The parts of a `composition` that are not the kernel's own skills and blocks."""
    c = neutral(doc["composition"], scope)
    c["expected"] = [r for r in c["expected"] if r["source"] != "kernel"
                     and not r["source"].startswith(("kernel:", "work-mode:"))]
    m = c["materialized"]
    m["skills"] = [s for s in m["skills"] if s["source"] != "kernel"]
    m["instructions"] = [i for i in m["instructions"] if not i["source"].startswith(("kernel:", "work-mode:"))]
    m["runtimePosture"].pop("why", None)
    return c


def test_flags_and_the_recorded_launch_match_the_kernel(env, capsys, tmp_path):
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s)
        other = s / "other"
        git("init", "-q", str(other))
        git("-C", str(other), "commit", "-q", "--allow-empty", "-m", "init")
    (env / "bin" / "pi").write_text("#!/bin/sh\nexit 0\n")
    (env / "bin" / "pi").chmod(0o755)
    task = tmp_path / "task.md"
    task.write_text("Fix the parser.\n\nThen the lexer.\n")
    flags = ("--task-file", str(task), "--runtime", "pi", "--model", "anthropic/claude-x:high", "--repo", "other")
    rc, ours = agentrc(capsys, a, "spawn", "dev", *flags)
    krc, kout, kerr = oas(k, "spawn", "dev", "--no-launch", "--json", *flags)
    assert rc == 0 and ours["ok"], ours
    assert krc == 0, kerr
    theirs = json.loads(kout)["result"]
    for key in ("instance", "runtime", "model", "launched", "tmux"):
        assert ours["result"][key] == theirs[key], key
    assert neutral(ours["result"]["repo"], a) == neutral(theirs["repo"], k) == "<scope>/other"
    mine, kernel = (json.loads((home_of(s) / "instance.json").read_text()) for s in (a, k))
    for key in ("runtime", "model", "tmux"):
        assert mine[key] == kernel[key], key
    assert neutral(mine["repo"], a) == neutral(kernel["repo"], k)
    assert neutral(mine["command"], a) == neutral(kernel["command"], k)
    assert kernel_free(mine, a) == kernel_free(kernel, k)
    # The task reached TASK.md and the hooks' OAS_TASK from the file, in both.
    for s in (a, k):
        assert "Fix the parser.\n\nThen the lexer." in (home_of(s) / "TASK.md").read_text()
        logged = [json.loads(x) for x in (s / "other" / "hook.log").read_text().splitlines()]
        assert logged[0]["env"]["OAS_TASK"] == task.read_text() and logged[0]["env"]["OAS_RUNTIME"] == "pi"


def test_claude_model_preferences_and_command(env, capsys):
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s)
        (s / "agents" / "dev" / "soul" / "soul.yaml").write_text(
            "name: dev\nrepo: .\nwork: checkout\nruntime: claude\nmodel: openai/gpt-9, anthropic/claude-y:low\n")
    rc, ours = agentrc(capsys, a, "spawn", "dev", "--task", "x")
    krc, kout, kerr = oas(k, "spawn", "dev", "--no-launch", "--json", "--task", "x")
    assert rc == 0 and krc == 0, (ours, kerr)
    assert ours["result"]["model"] == json.loads(kout)["result"]["model"] == "claude-y"
    mine, kernel = (json.loads((home_of(s) / "instance.json").read_text()) for s in (a, k))
    assert neutral(mine["command"], a) == neutral(kernel["command"], k)
    assert kernel_free(mine, a) == kernel_free(kernel, k)


def test_bad_flags_are_ar254_and_leave_nothing(env, capsys, tmp_path):
    a = env / "a"
    deployment(a)
    rc, out = agentrc(capsys, a, "spawn", "dev", "--task-file", str(tmp_path / "missing.md"))
    assert rc == 1 and out["error"]["code"] == "E_BAD_ARGS"
    assert main(["cap", "spawn", "dev", "--runtime", "emacs", "--dir", str(a)]) == 1
    err = capsys.readouterr().err
    assert "error[AR254]" in err and "emacs" in err
    assert instances(a) == []
    assert not os.path.exists(a / "hook.log")
