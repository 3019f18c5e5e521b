"""`agentrc cap spawn`'s --task-file, --repo, --runtime and --model, and the instance.json
fields the kernel records beyond the composition (`model`, `composition`, `tmux`, `command`),
judged by `oas spawn --no-launch` on twin scopes (real git repositories made here)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agentrc.cli.main import main
from test_cap_install import git
from test_cap_spawn import (  # noqa: F401
    agentrc, block_sources, defaults_neutral, deployment, env, hook_log, instances, neutral, neutral_defaults, oas,
    pytestmark, tree)

KERNEL_SKILL_NAMES = {"oas", "oas-config", "oas-packages"}


def home_of(scope: Path, name="dev-1") -> Path:
    return scope / "agents" / "dev" / "instances" / name


def kernel_free(doc, scope: Path):
    """A `composition` with each tool's own default texts and kernel skill trees made
    neutral (their sources, names and order are still compared)."""
    c = neutral(defaults_neutral(doc["composition"]), scope)
    c["materialized"]["runtimePosture"].pop("why", None)
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
    for key in ("instance", "runtime", "model", "launched", "tmux", "attach"):
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


def provider(scope: Path, link_out=False) -> None:
    """acme.review, owned at `scope`, defining the agent `reviewer` (model and runtime in its
    soul.yaml) and a skill; declared in config for another soul only, so it is not active for
    the reviewer."""
    cap = scope / ".agents" / "capabilities" / "owned" / "acme.review"
    soul = cap / "agents" / "reviewer"
    soul.mkdir(parents=True)
    (soul / "soul.yaml").write_text("name: reviewer\ndescription: Reviews.\nruntime: claude\nmodel: sonnet\n"
                                    "repo: .\n")
    (soul / "AGENTS.md").write_text("# Reviewer\n\nReview the change.\n")
    (cap / "skills" / "review").mkdir(parents=True)
    (cap / "skills" / "review" / "SKILL.md").write_text("---\nname: review\ndescription: review\n---\nLook.\n")
    (cap / "oas.json").write_text(json.dumps({"capability": "acme.review", "version": "1.0.0",
                                              "description": "Review agents.", "skills": ["skills"],
                                              "agents": ["agents/reviewer"]}, indent=2))
    if link_out:
        os.symlink(str(scope), soul / "up")
    with open(scope / "oas-config.yaml", "a") as fh:
        fh.write("    acme.review:\n      from: owned\n      souls:\n        dev: true\n")


def test_a_capability_defined_agent_spawns_as_the_kernels(env, capsys):
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s)
        provider(s)
    rc, ours = agentrc(capsys, a, "spawn", "reviewer", "--task", "Review it.")
    krc, kout, kerr = oas(k, "spawn", "reviewer", "--no-launch", "--json", "--task", "Review it.")
    assert rc == 0 and ours["ok"], ours
    assert krc == 0, kerr
    theirs = json.loads(kout)["result"]
    for key in ("instance", "agent", "runtime", "model", "work"):
        assert ours["result"][key] == theirs[key], key
    assert neutral(ours["result"]["home"], a) == neutral(theirs["home"], k) == \
        "<scope>/local-agents/reviewer/instances/reviewer-1"
    ha, hk = (s / "local-agents" / "reviewer" / "instances" / "reviewer-1" for s in (a, k))
    assert tree(ha, a) == tree(hk, k)
    assert os.readlink(ha / "soul") == str(a / ".agents" / "capabilities" / "owned" / "acme.review" / "agents" /
                                           "reviewer")
    assert neutral_defaults((ha / "AGENTS.md").read_text().replace(str(a), "<scope>")) == \
        neutral_defaults((hk / "AGENTS.md").read_text().replace(str(k), "<scope>"))
    assert block_sources((ha / "AGENTS.md").read_text())[:3] == [
        "kernel:oas", "kernel:instance-boundary", "work-mode:checkout"]
    mine, kernel = (json.loads((h / "instance.json").read_text()) for h in (ha, hk))
    for key in ("agent", "kind", "instance", "runtime", "model"):
        assert mine[key] == kernel[key], key
    assert mine["kind"] == "capability"
    assert mine["skills"] == kernel["skills"]
    assert {"name": "review", "source": "acme.review"} in mine["skills"]
    assert kernel_free(mine, a) == kernel_free(kernel, k)
    assert [ev for ev, e in hook_log(a)] == ["spawn"] and hook_log(a) == hook_log(k)
    assert hook_log(a)[0][1]["OAS_KIND"] == "capability"
    # Each tool retires its own.
    rc, out = agentrc(capsys, a, "retire", "reviewer-1")
    krc, kout, kerr = oas(k, "retire", "reviewer-1", "--json")
    assert rc == 0 and out["ok"] and krc == 0, (out, kerr)
    assert not ha.exists() and not hk.exists()
    assert hook_log(a) == hook_log(k)


def test_a_capability_agent_that_is_not_self_contained_is_ar258(env, capsys):
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s)
        provider(s, link_out=True)
    rc, out = agentrc(capsys, a, "spawn", "reviewer")
    assert rc == 1 and out["error"]["code"] == "E_SPAWN_FAILED"
    assert out["error"]["details"]["diagnostics"][0]["code"] == "AR258"
    krc, kout, _kerr = oas(k, "spawn", "reviewer", "--no-launch", "--json")
    assert krc != 0 and json.loads(kout.splitlines()[-1])["error"]["code"] == "E_SPAWN_FAILED"
    assert not (a / "local-agents").exists() and not (k / "local-agents").exists()


def committed_with_worktree(scope: Path) -> Path:
    deployment(scope)
    (scope / ".gitignore").write_text("agents/*/instances/\nhook.log\n")
    git("-C", str(scope), "add", "-A")
    git("-C", str(scope), "commit", "-q", "-m", "deployment")
    wt = scope.parent / f"{scope.name}-wt"
    git("-C", str(scope), "worktree", "add", "-q", str(wt), "-b", "feature")
    return wt


def test_a_spawn_from_a_linked_worktree_homes_in_the_primary_checkout(env, capsys):
    a, k = env / "a", env / "k"
    wa, wk = committed_with_worktree(a), committed_with_worktree(k)
    rc, ours = agentrc(capsys, wa, "spawn", "dev", "--task", "x")
    krc, kout, kerr = oas(wk, "spawn", "dev", "--no-launch", "--json", "--task", "x", "--dir", str(wk))
    assert rc == 0 and ours["ok"], ours
    assert krc == 0, kerr
    theirs = json.loads(kout)["result"]
    assert ours["result"]["home"] == str(a / "agents" / "dev" / "instances" / "dev-1")
    assert neutral(ours["result"]["home"], a) == neutral(theirs["home"], k)
    assert neutral(ours["result"]["repo"], a) == neutral(theirs["repo"], k)
    assert instances(a) == instances(k) == ["dev-1"] and instances(wa) == instances(wk) == []
    assert tree(home_of(a), a) == tree(home_of(k), k)
    assert hook_log(a) == hook_log(k) != []


def test_a_worktree_without_its_primary_checkout_is_ar259(env, capsys):
    a, k = env / "a", env / "k"
    wa, wk = committed_with_worktree(a), committed_with_worktree(k)
    for s in (a, k):
        s.rename(s.parent / f"{s.name}-gone")
    rc, out = agentrc(capsys, wa, "spawn", "dev")
    krc, kout, _kerr = oas(wk, "spawn", "dev", "--no-launch", "--json", "--dir", str(wk))
    assert rc == 1 and out["error"]["details"]["diagnostics"][0]["code"] == "AR259"
    assert krc != 0 and json.loads(kout.splitlines()[-1])["error"]["code"] == out["error"]["code"] == \
        "E_NO_DEPLOYMENT"
    assert instances(wa) == instances(wk) == []


def test_def_and_instructions_files_write_the_local_soul_the_kernel_writes(env, capsys, tmp_path):
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s)
    definition = tmp_path / "helper.md"
    definition.write_text("---\nname: ignored\ndescription: 'Helps out'\nmodel: sonnet # cheap\nruntime: claude\n"
                          "---\n\n# Helper\n\nHelp.\n\n")
    rc, ours = agentrc(capsys, a, "spawn", "Helper", "--def-file", str(definition), "--work", "checkout")
    krc, kout, kerr = oas(k, "spawn", "Helper", "--def-file", str(definition), "--work", "checkout", "--no-launch",
                          "--json", "--dir", str(k))
    assert rc == 0 and ours["ok"], ours
    assert krc == 0, kerr
    theirs = json.loads(kout)["result"]
    for key in ("instance", "agent", "runtime", "model", "work"):
        assert ours["result"][key] == theirs[key], key
    sa, sk = (s / "local-agents" / "helper" / "soul" for s in (a, k))
    for f in ("soul.yaml", "AGENTS.md"):
        assert (sa / f).read_bytes() == (sk / f).read_bytes(), f
    assert (sa / "soul.yaml").read_text() == ("name: helper\nkind: local\ndescription: Helps out\nwork: checkout\n"
                                              "runtime: claude\nmodel: sonnet\n")
    assert os.readlink(sa / "CLAUDE.md") == os.readlink(sk / "CLAUDE.md") == "AGENTS.md"
    ha, hk = (s / "local-agents" / "helper" / "instances" / "helper-1" for s in (a, k))
    assert tree(ha, a) == tree(hk, k)
    mine, kernel = (json.loads((h / "instance.json").read_text()) for h in (ha, hk))
    assert mine["kind"] == kernel["kind"] == "local"
    # A local soul's home gets the local-soul block, after kernel:oas, in both tools.
    assert neutral_defaults((ha / "AGENTS.md").read_text().replace(str(a), "<scope>")) == \
        neutral_defaults((hk / "AGENTS.md").read_text().replace(str(k), "<scope>"))
    assert block_sources((ha / "AGENTS.md").read_text())[:4] == [
        "kernel:oas", "kernel:local-soul", "kernel:instance-boundary", "work-mode:checkout"]
    # --instructions-file updates the same soul: new AGENTS.md, flags over the soul.yaml.
    instructions = tmp_path / "AGENTS.md"
    instructions.write_text("# Helper v2\n")
    rc, ours = agentrc(capsys, a, "spawn", "helper", "--instructions-file", str(instructions), "--model", "opus")
    krc, kout, kerr = oas(k, "spawn", "helper", "--instructions-file", str(instructions), "--model", "opus",
                          "--no-launch", "--json", "--dir", str(k))
    assert rc == 0 and krc == 0, (ours, kerr)
    for f in ("soul.yaml", "AGENTS.md"):
        assert (sa / f).read_bytes() == (sk / f).read_bytes(), f
    assert ours["result"]["instance"] == json.loads(kout)["result"]["instance"] == "helper-2"


def test_local_soul_refusals_are_ar179(env, capsys, tmp_path):
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s)
    instructions = tmp_path / "AGENTS.md"
    instructions.write_text("# Dev\n")
    rc, out = agentrc(capsys, a, "spawn", "dev", "--instructions-file", str(instructions))
    krc, kout, _kerr = oas(k, "spawn", "dev", "--instructions-file", str(instructions), "--no-launch", "--json",
                           "--dir", str(k))
    assert rc == 1 and out["error"]["details"]["diagnostics"][0]["code"] == "AR179"
    assert krc != 0 and json.loads(kout.splitlines()[-1])["error"]["code"] == out["error"]["code"] == "E_BAD_ARGS"
    assert (a / "agents" / "dev" / "soul" / "AGENTS.md").read_text() == "# Dev\n\nThe soul.\n"
    # A value with a line break would add keys to soul.yaml: refused, nothing written.
    rc, out = agentrc(capsys, a, "spawn", "helper", "--instructions-file", str(instructions),
                      "--model", "x\ntype: admins")
    assert rc == 1 and out["error"]["details"]["diagnostics"][0]["code"] == "AR179"
    assert not (a / "local-agents").exists()
    rc, out = agentrc(capsys, a, "spawn", "helper", "--def-file", str(tmp_path / "missing.md"))
    assert rc == 1 and out["error"]["details"]["diagnostics"][0]["code"] == "AR179"


def test_the_kind_is_the_souls_kind_as_the_kernel_reads_it(env, capsys):
    """`kind:` in soul.yaml (tmp read as local) decides the kind recorded, OAS_KIND and the
    kernel:local-soul block, wherever the soul lives; no kind is persistent."""
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s)
        (s / "agents" / "dev" / "soul" / "soul.yaml").write_text("name: dev\nkind: tmp\nrepo: .\nruntime: claude\n")
        solo = s / "local-agents" / "solo" / "soul"
        solo.mkdir(parents=True)
        (solo / "soul.yaml").write_text("name: solo\nruntime: claude\n")
        (solo / "AGENTS.md").write_text("# Solo\n")
    for soul, kind in (("dev", "local"), ("solo", "persistent")):
        rc, ours = agentrc(capsys, a, "spawn", soul)
        krc, kout, kerr = oas(k, "spawn", soul, "--no-launch", "--json")
        assert rc == 0 and krc == 0, (ours, kerr)
        homes = [Path(ours["result"]["home"]), Path(json.loads(kout)["result"]["home"])]
        mine, kernel = (json.loads((h / "instance.json").read_text()) for h in homes)
        assert mine["kind"] == kernel["kind"] == kind, soul
        texts = [h.joinpath("AGENTS.md").read_text().replace(str(s), "<scope>") for h, s in zip(homes, (a, k))]
        assert neutral_defaults(texts[0]) == neutral_defaults(texts[1])
        assert ("kernel:local-soul" in block_sources(texts[0])) == (kind == "local")
    assert [e["OAS_KIND"] for _ev, e in hook_log(a)] == [e["OAS_KIND"] for _ev, e in hook_log(k)] == \
        ["local", "persistent"]
