"""`agentrc cap spawn` in the worktree, attached and workspace work modes, with lineage
(`--parent`, `--relation`, `--relative-to`), `--purpose` and a team scope, and `agentrc cap
retire`'s git steps and lineage splice; judged by the OAS kernel, which spawns the same soul
into a twin scope (real git repositories made in the test)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import test_cap_spawn
from test_cap_install import git
from test_cap_spawn import OAS, agentrc, deployment, hook_log, instances, neutral, neutral_defaults, oas, tree

env = test_cap_spawn.env  # the fixture: an isolated HOME, a stand-in claude on PATH

pytestmark = pytest.mark.skipif(not OAS.exists() or not shutil.which("node"),
                                reason="the OAS kernel (../shared/judges/oas-kernel) and node are needed")

LINEAGE = ("instance", "work", "branch", "parentInstance", "siblingInstance", "relation", "relativeTo", "spawnOrigin")


def home_of(scope: Path, name: str) -> Path:
    return scope / "agents" / "dev" / "instances" / name


def doc(scope: Path, name: str):
    return json.loads((home_of(scope, name) / "instance.json").read_text())


def lineage(scope: Path):
    return {n: {k: doc(scope, n).get(k) for k in LINEAGE} for n in instances(scope)}


def worktrees(scope: Path):
    """(path made neutral, branch) of every worktree git knows besides the main one."""
    out = git("-C", str(scope), "worktree", "list", "--porcelain").split("\n\n")
    rows = []
    for block in out[1:]:
        fields = dict(line.split(" ", 1) for line in block.splitlines() if " " in line)
        rows.append((fields["worktree"].replace(str(scope.resolve()), "<scope>"), fields.get("branch")))
    return rows


def branches(scope: Path):
    return git("-C", str(scope), "branch", "--format=%(refname:short)").split()


def both(capsys, a: Path, k: Path, *args):
    """Run one spawn/retire in both tools; (our envelope, the kernel's result)."""
    rc, ours = agentrc(capsys, a, *args)
    kargs = list(args) + (["--no-launch"] if args[0] == "spawn" else [])
    krc, kout, kerr = oas(k, *kargs, "--json")
    assert rc == krc, (ours, kout, kerr)
    theirs = json.loads(kout) if kout.strip() else {"stderr": kerr}
    return ours, theirs


def home_tree(home: Path, scope: Path):
    """tree() of the home without what git put in a worktree."""
    return {k: v for k, v in tree(home, scope).items() if not k.startswith("work/")}


def test_worktree_spawn_and_retire_match_the_kernel(env, capsys):
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s, work="worktree")
    ours, theirs = both(capsys, a, k, "spawn", "dev", "--purpose", "Fix Bug")
    assert ours["ok"] and theirs["ok"], (ours, theirs)
    for key in ("instance", "work", "branch", "spawnOrigin", "parent", "relation"):
        assert ours["result"][key] == theirs["result"][key], key
    assert ours["result"]["instance"] == "dev-fix-bug" and ours["result"]["branch"] == "agents/dev-fix-bug"
    assert worktrees(a) == worktrees(k) == [("<scope>/agents/dev/instances/dev-fix-bug/work",
                                             "refs/heads/agents/dev-fix-bug")]
    ha, hk = home_of(a, "dev-fix-bug"), home_of(k, "dev-fix-bug")
    assert home_tree(ha, a) == home_tree(hk, k) and (ha / "work" / ".git").is_file()
    assert {f: doc(a, "dev-fix-bug").get(f) for f in LINEAGE} == {f: doc(k, "dev-fix-bug").get(f) for f in LINEAGE}
    # The hooks saw the branch and the work mode.
    assert hook_log(a) == hook_log(k) and hook_log(a)[0][1]["OAS_BRANCH"] == "agents/dev-fix-bug"
    # A second purpose-named spawn gets -2.
    ours, theirs = both(capsys, a, k, "spawn", "dev", "--purpose", "fix bug")
    assert ours["result"]["instance"] == theirs["result"]["instance"] == "dev-fix-bug-2"
    # Retire removes the worktree and keeps the branch; --delete-branch deletes it too.
    ours, theirs = both(capsys, a, k, "retire", "dev-fix-bug")
    for key in ("worktreeRemoved", "branchDeleted", "removedDir"):
        assert ours["result"][key] == theirs[key], key
    assert ours["result"]["worktreeRemoved"] and not ours["result"]["branchDeleted"]
    assert worktrees(a) == worktrees(k) and len(worktrees(a)) == 1
    assert "agents/dev-fix-bug" in branches(a) and branches(a) == branches(k)
    ours, theirs = both(capsys, a, k, "retire", "dev-fix-bug-2", "--delete-branch")
    assert ours["result"]["branchDeleted"] and theirs["branchDeleted"]
    assert worktrees(a) == worktrees(k) == [] and branches(a) == branches(k)
    assert "agents/dev-fix-bug-2" not in branches(a)
    assert instances(a) == instances(k) == []


def agents_md(scope: Path, name: str, root: Path) -> str:
    return neutral_defaults((home_of(scope, name) / "AGENTS.md").read_text().replace(str(root), "<root>"))


def test_the_worktree_setup_runs_in_the_new_tree(env, capsys):
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s, work="worktree", config_extra="work-modes:\n  worktree:\n    setup: setup.sh\n")
        (s / "setup.sh").write_text("#!/bin/sh\npwd > .setup-ran\n")
        (s / "setup.sh").chmod(0o755)
    ours, theirs = both(capsys, a, k, "spawn", "dev")
    assert ours["result"]["warnings"] == theirs["result"]["warnings"] == []
    for s in (a, k):
        assert (home_of(s, "dev-1") / "work" / ".setup-ran").read_text().strip() == str(home_of(s, "dev-1") / "work")
    # A failing setup warns and the spawn goes on.
    for s in (a, k):
        (s / "setup.sh").write_text("#!/bin/sh\nexit 4\n")
    ours, theirs = both(capsys, a, k, "spawn", "dev")
    assert ours["ok"] and theirs["ok"]
    for w in (ours["result"]["warnings"], theirs["result"]["warnings"]):
        assert len(w) == 1 and w[0].startswith("worktree setup command failed (continuing): "), w
    assert instances(a) == instances(k) == ["dev-1", "dev-2"]


def test_a_worktree_spawn_rolls_back_its_worktree_and_branch(env, capsys):
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s, work="worktree")
        (s / "fail-spawn").write_text("")
    ours, theirs = both(capsys, a, k, "spawn", "dev")
    assert ours["error"]["details"]["diagnostics"][0]["code"] == "AR173"
    assert "rolled back" in ours["error"]["message"] and "rolled back" in theirs["error"]["message"]
    assert instances(a) == instances(k) == [] and worktrees(a) == worktrees(k) == []
    assert branches(a) == branches(k) and not any(b.startswith("agents/") for b in branches(a))


def test_a_quarantined_worktree_retry_redoes_the_git_steps(env, capsys):
    """The compensation fails, so the home is kept with a worktree cleanup descriptor; the
    retry re-runs the retire hook and the git steps and verifies them, in both tools, whoever
    wrote the marker."""
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s, work="worktree")
        (s / "fail-spawn").write_text("")
        (s / "fail-retire").write_text("")
    ours, theirs = both(capsys, a, k, "spawn", "dev")
    assert "rollback INCOMPLETE" in ours["error"]["message"] and "rollback INCOMPLETE" in theirs["error"]["message"]
    markers = [json.loads((home_of(s, "dev-1") / ".oas-rollback-incomplete.json").read_text())["cleanup"]
               for s in (a, k)]
    assert [{f: m[f] for f in ("version", "work", "branch", "outstanding")} for m in markers] == [
        {"version": 1, "work": "worktree", "branch": "agents/dev-1",
         "outstanding": {"hooks": ["acme.hooks"], "git": []}}] * 2
    # The worktree and the branch are gone already; someone recreates the branch meanwhile.
    for s in (a, k):
        assert worktrees(s) == [] and "agents/dev-1" not in branches(s)
        git("-C", str(s), "branch", "agents/dev-1")
        (s / "fail-retire").unlink()
    # Swap the homes: each tool retries the other's quarantine.
    ha, hk = home_of(a, "dev-1"), home_of(k, "dev-1")
    for h, src, dst in ((ha, a, k), (hk, k, a)):
        m = h / ".oas-rollback-incomplete.json"
        m.write_text(m.read_text().replace(str(src), str(dst)))
    tmp = env / "swap"
    ha.rename(tmp)
    hk.rename(ha)
    tmp.rename(hk)
    ours, theirs = both(capsys, a, k, "retire", "dev-1")
    assert ours["ok"] and ours["result"]["removedDir"] and theirs["removedDir"]
    assert ours["result"]["branchDeleted"] and theirs["branchDeleted"]
    assert "agents/dev-1" not in branches(a) and branches(a) == branches(k)
    assert instances(a) == instances(k) == []


def test_lineage_and_its_splice_at_retire_match_the_kernel(env, capsys):
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s)
    both(capsys, a, k, "spawn", "dev")                                          # dev-1, top level
    ours, theirs = both(capsys, a, k, "spawn", "dev", "--parent", "dev-1")      # dev-2, child of dev-1
    assert ours["result"]["parent"] == theirs["result"]["parent"] == "dev-1"
    assert ours["result"]["spawnOrigin"] == theirs["result"]["spawnOrigin"] == "instance"
    ours, theirs = both(capsys, a, k, "spawn", "dev", "--relation", "sibling", "--relative-to", "dev-1")
    assert ours["result"]["sibling"] == theirs["result"]["sibling"] == "dev-1"  # dev-3
    ours, theirs = both(capsys, a, k, "spawn", "dev", "--relation", "parent", "--relative-to", "dev-2")
    assert ours["result"]["parent"] == theirs["result"]["parent"] == "dev-1"    # dev-4 takes dev-2's slot
    both(capsys, a, k, "spawn", "dev", "--relation", "sibling", "--relative-to", "dev-2")  # dev-5: dev-2's parent
    both(capsys, a, k, "spawn", "dev", "--relation", "unrelated")               # dev-6
    assert lineage(a) == lineage(k)
    assert lineage(a)["dev-2"]["parentInstance"] == "dev-4" and lineage(a)["dev-5"]["parentInstance"] == "dev-4"
    # Retiring dev-4 hands its children back to the parent it displaced.
    ours, theirs = both(capsys, a, k, "retire", "dev-4")
    assert ours["result"]["relinked"] == theirs["relinked"]
    assert lineage(a) == lineage(k) and lineage(a)["dev-2"]["parentInstance"] == "dev-1"
    # Retiring the root: its children become roots, its sibling loses the link.
    ours, theirs = both(capsys, a, k, "retire", "dev-1")
    assert ours["result"]["relinked"] == theirs["relinked"] and len(ours["result"]["relinked"]) == 3
    assert lineage(a) == lineage(k)
    assert all(v["parentInstance"] is None and v["siblingInstance"] is None for v in lineage(a).values())


def test_attached_and_workspace_instances_match_the_kernel(env, capsys):
    homes = {}
    for name in ("a", "k"):
        ws = env / name
        ws.mkdir()
        (ws / "oas-config.yaml").write_text("team:\n  name: acme\n  id: acme:ns\n")
        deployment(ws / "repo")
        homes[name] = ws / "repo"
    a, k = homes["a"], homes["k"]
    ours, theirs = both(capsys, a, k, "spawn", "dev", "--work", "worktree")      # dev-1 owns a tree
    assert ours["ok"], ours
    ha, hk = home_of(a, "dev-1"), home_of(k, "dev-1")
    rc, ours = agentrc(capsys, a, "spawn", "dev", "--work", "attached", "--work-dir", str(ha / "work"))
    krc, kout, kerr = oas(k, "spawn", "dev", "--work", "attached", "--work-dir", str(hk / "work"), "--no-launch",
                          "--json")
    assert rc == krc == 0, (ours, kerr)
    theirs = json.loads(kout)
    for key in ("instance", "work", "branch", "parent", "relation", "spawnOrigin"):
        assert ours["result"][key] == theirs["result"][key], key
    assert ours["result"]["parent"] == "dev-1" and ours["result"]["branch"] == "agents/dev-1"
    assert os.readlink(home_of(a, "dev-2") / "work") == str(ha / "work")
    ours, theirs = both(capsys, a, k, "spawn", "dev", "--work", "workspace")
    assert ours["result"]["branch"] is theirs["result"]["branch"] is None
    assert os.readlink(home_of(a, "dev-3") / "work") == str(a.parent)
    assert os.readlink(home_of(k, "dev-3") / "work") == str(k.parent)
    assert neutral(lineage(a), a.parent) == neutral(lineage(k), k.parent)
    # The same homes (links, skills) and AGENTS.md blocks, the kernel's own blocks aside.
    for name in ("dev-1", "dev-2", "dev-3"):
        assert home_tree(home_of(a, name), a.parent) == home_tree(home_of(k, name), k.parent), name
        assert agents_md(a, name, a.parent) == agents_md(k, name, k.parent), name
    mine, kernel = doc(a, "dev-2"), doc(k, "dev-2")
    assert neutral(mine["skills"], a.parent) == neutral(kernel["skills"], k.parent)
    fields = ("id", "origin", "level", "settings", "provenance", "skills", "hooks", "trusted")
    assert [neutral({f: c[f] for f in fields}, a.parent) for c in mine["capabilities"]] == \
        [neutral({f: c[f] for f in fields}, k.parent) for c in kernel["capabilities"]]
    # The team is recorded and handed to the hooks.
    assert neutral(doc(a, "dev-3")["team"], a.parent) == neutral(doc(k, "dev-3")["team"], k.parent) == {
        "name": "acme", "id": "acme:ns", "scope": "<scope>"}
    assert neutral(hook_log(a), a.parent) == neutral(hook_log(k), k.parent)
    assert {e["OAS_TEAM_ID"] for _ev, e in hook_log(a)} == {"acme:ns"}
    # Retiring the attached guest leaves the owner's tree alone.
    ours, theirs = both(capsys, a, k, "retire", "dev-2")
    assert ours["result"]["worktreeRemoved"] is theirs["worktreeRemoved"] is False
    assert (ha / "work" / ".git").is_file() and len(worktrees(a)) == len(worktrees(k)) == 1


@pytest.mark.parametrize("args, kernel_code, code", [
    (["--parent", "nobody"], "E_PARENT_NOT_FOUND", "AR250"),
    (["--relative-to", "dev-1"], "E_BAD_ARGS", "AR250"),
    (["--relation", "sibling"], "E_BAD_ARGS", "AR250"),
    (["--relation", "cousin", "--relative-to", "dev-1"], "E_BAD_ARGS", "AR250"),
    (["--parent", "dev-1", "--relation", "child"], "E_BAD_ARGS", "AR250"),
    (["--work", "attached"], "E_SPAWN_FAILED", "AR251"),
    (["--work", "attached", "--work-dir", "."], "E_SPAWN_FAILED", "AR250"),
    (["--work", "attached", "--work-dir", ".", "--relation", "sibling", "--relative-to", "dev-1"], "E_BAD_ARGS",
     "AR250"),
    (["--work", "worktree", "--branch", "taken"], "E_SPAWN_FAILED", "AR251"),
])
def test_refusals_leave_nothing(env, capsys, args, kernel_code, code):
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s)
        git("-C", str(s), "branch", "taken")
    both(capsys, a, k, "spawn", "dev")
    args = [x if x != "." else str(s / "agents") for x in args]
    rc, ours = agentrc(capsys, a, "spawn", "dev", *[x.replace(str(k), str(a)) for x in args])
    krc, kout, kerr = oas(k, "spawn", "dev", *args, "--no-launch", "--json")
    assert rc == krc == 1, (ours, kout, kerr)
    assert ours["error"]["code"] == json.loads(kout)["error"]["code"] == kernel_code
    assert ours["error"]["details"]["diagnostics"][0]["code"] == code
    assert instances(a) == instances(k) == ["dev-1"] and worktrees(a) == worktrees(k) == []


def test_a_soul_in_two_team_repositories_is_ambiguous(env, capsys):
    ws = env / "ws"
    ws.mkdir()
    (ws / "oas-config.yaml").write_text("team:\n  name: acme\n")
    for repo in ("one", "two"):
        deployment(ws / repo)
    (ws / "three").mkdir()
    git("init", "-q", str(ws / "three"))
    (ws / "three" / "agents").mkdir()
    rc, ours = agentrc(capsys, ws / "three", "spawn", "dev")
    krc, kout, _e = oas(ws / "three", "spawn", "dev", "--no-launch", "--json")
    assert rc == krc == 1 and ours["error"]["code"] == json.loads(kout)["error"]["code"] == "E_AMBIGUOUS_SOUL"
    assert ours["error"]["details"]["diagnostics"][0]["code"] == "AR252"
    # With one member holding it, the spawn goes there.
    shutil.rmtree(ws / "two" / "agents" / "dev")
    rc, ours = agentrc(capsys, ws / "three", "spawn", "dev")
    assert rc == 0 and ours["result"]["home"] == str(home_of(ws / "one", "dev-1"))


def test_an_anchor_name_in_two_team_roots_needs_relative_root(env, capsys):
    """dev-1 lives in the team's repositories three and two; spawning in one, --parent dev-1
    is ambiguous, --relative-root picks three, and picking two is refused because the name
    dev-1, seen from one, leads to three's (the first of the team's roots in path order)."""
    homes = {}
    for name in ("a", "k"):
        ws = env / name
        ws.mkdir()
        (ws / "oas-config.yaml").write_text("team:\n  name: acme\n")
        for repo in ("one", "two", "three", "zero"):
            deployment(ws / repo)
        homes[name] = ws
    a, k = homes["a"], homes["k"]
    for repo in ("two", "three"):
        both(capsys, a / repo, k / repo, "spawn", "dev")
    ours, theirs = both(capsys, a / "one", k / "one", "spawn", "dev", "--parent", "dev-1", "--purpose", "x")
    assert ours["error"]["code"] == theirs["error"]["code"] == "E_RELATIVE_AMBIGUOUS"
    assert ours["error"]["details"]["diagnostics"][0]["code"] == "AR250"
    for repo, ok in (("two", False), ("three", True)):
        rc, ours = agentrc(capsys, a / "one", "spawn", "dev", "--parent", "dev-1", "--relative-root",
                           str(a / repo / "agents"), "--purpose", "x")
        krc, kout, kerr = oas(k / "one", "spawn", "dev", "--parent", "dev-1", "--relative-root",
                              str(k / repo / "agents"), "--purpose", "x", "--no-launch", "--json")
        theirs = json.loads(kout)
        assert rc == krc == (0 if ok else 1), (repo, ours, kout, kerr)
        if ok:
            assert ours["result"]["parent"] == theirs["result"]["parent"] == "dev-1"
        else:
            assert ours["error"]["code"] == theirs["error"]["code"] == "E_RELATIVE_AMBIGUOUS"
    assert instances(a / "one") == instances(k / "one") == ["dev-x"]
    # A new instance named like its anchor: the kernel (0.20.0) records relation child with no
    # parent link at all; agentrc refuses and asks for --purpose.
    rc, ours = agentrc(capsys, a / "zero", "spawn", "dev", "--parent", "dev-1", "--relative-root",
                       str(a / "three" / "agents"))
    krc, kout, _e = oas(k / "zero", "spawn", "dev", "--parent", "dev-1", "--relative-root",
                        str(k / "three" / "agents"), "--no-launch", "--json")
    assert rc == 1 and ours["error"]["code"] == "E_RELATIVE_AMBIGUOUS" and instances(a / "zero") == []
    theirs = json.loads(kout)["result"]
    assert krc == 0 and theirs["instance"] == "dev-1" and theirs["relation"] == "child" and theirs["parent"] is None


LOCKING_HOOK = """import { appendFileSync, existsSync } from "node:fs";
import { execFileSync } from "node:child_process";
const ev = process.argv[2];
appendFileSync(process.env.OAS_CONTEXT + "/hook.log", JSON.stringify({ ev, env: {} }) + "\\n");
if (ev === "retire" && existsSync(process.env.OAS_CONTEXT + "/lock-worktree")) {
  execFileSync("git", ["-C", process.env.OAS_CONTEXT, "worktree", "lock", process.env.OAS_HOME + "/work"]);
}
if (existsSync(process.env.OAS_CONTEXT + "/fail-" + ev)) {
  console.log(JSON.stringify({ meta: { id: "half" }, warning: ev + " failed on purpose" }));
  process.exit(3);
}
console.log(JSON.stringify({ meta: { id: "minted-" + ev } }));
"""


def test_git_steps_that_fail_are_owed_in_the_marker_and_proven_on_retry(env, capsys):
    """The compensating retire hook locks the worktree, so the rollback can neither remove it
    nor delete its branch: the home is kept with outstanding.git [worktree, branch] in both
    tools. Once unlocked, each tool's retry of the other's marker removes and verifies both."""
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s, work="worktree")
        (s / ".agents" / "capabilities" / "owned" / "acme.hooks" / "bin" / "hook.mjs").write_text(LOCKING_HOOK)
        (s / "fail-spawn").write_text("")
        (s / "lock-worktree").write_text("")
    ours, theirs = both(capsys, a, k, "spawn", "dev")
    assert "rollback INCOMPLETE" in ours["error"]["message"] and "rollback INCOMPLETE" in theirs["error"]["message"]
    cleanups = [json.loads((home_of(s, "dev-1") / ".oas-rollback-incomplete.json").read_text())["cleanup"]
                for s in (a, k)]
    assert [c["outstanding"] for c in cleanups] == [{"hooks": [], "git": ["worktree", "branch"]}] * 2
    for s in (a, k):
        assert len(worktrees(s)) == 1 and "agents/dev-1" in branches(s)
    # Still locked: the retry proves nothing and keeps the home.
    ours, theirs = both(capsys, a, k, "retire", "dev-1")
    assert ours["error"]["code"] == "E_RETIRE_INCOMPLETE" and theirs["rollbackIncomplete"]
    assert instances(a) == instances(k) == ["dev-1"]
    for s in (a, k):
        (s / "lock-worktree").unlink()
        git("-C", str(s), "worktree", "unlock", str(home_of(s, "dev-1") / "work"))
    # Swap the markers (each home keeps its own worktree): each tool retries the other's.
    ma, mk = (home_of(s, "dev-1") / ".oas-rollback-incomplete.json" for s in (a, k))
    da, dk = ma.read_text(), mk.read_text()
    ma.write_text(dk.replace(str(k), str(a)))
    mk.write_text(da.replace(str(a), str(k)))
    ours, theirs = both(capsys, a, k, "retire", "dev-1")
    assert ours["ok"] and ours["result"]["removedDir"] and theirs["removedDir"], (ours, theirs)
    assert ours["result"]["branchDeleted"] and theirs["branchDeleted"]
    assert worktrees(a) == worktrees(k) == [] and "agents/dev-1" not in branches(a) + branches(k)
    assert instances(a) == instances(k) == []


def test_an_anchor_file_that_is_not_what_spawn_wrote_is_read_safely(env, capsys):
    a = env / "a"
    deployment(a)
    assert agentrc(capsys, a, "spawn", "dev")[0] == 0
    meta = home_of(a, "dev-1") / "instance.json"
    for junk, code in (("[1]", 1), ("{not json", 1), (json.dumps({"parentInstance": {"x": 1},
                                                                  "siblingInstance": "../../etc"}), 0)):
        meta.write_text(junk)
        rc, out = agentrc(capsys, a, "spawn", "dev", "--relation", "sibling", "--relative-to", "dev-1")
        assert rc == code, out
        if code:
            assert out["error"]["details"]["diagnostics"][0]["code"] == "AR250"
    # Only a name is inherited: the new instance is dev-1's sibling, with no parent.
    assert {k: doc(a, "dev-2").get(k) for k in ("parentInstance", "siblingInstance")} == {
        "parentInstance": None, "siblingInstance": "dev-1"}
    assert agentrc(capsys, a, "retire", "dev-2")[0] == 0


def test_retire_reports_a_worktree_git_still_lists(env, capsys):
    """A locked worktree survives `git worktree remove --force`. Both tools remove the home;
    the kernel (0.20.0) still reports worktreeRemoved: true, agentrc reports false and says
    what to run."""
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s, work="worktree")
    both(capsys, a, k, "spawn", "dev")
    for s in (a, k):
        git("-C", str(s), "worktree", "lock", str(home_of(s, "dev-1") / "work"))
    ours, theirs = both(capsys, a, k, "retire", "dev-1", "--delete-branch")
    assert ours["ok"] and ours["result"]["removedDir"] and theirs["removedDir"]
    assert theirs["worktreeRemoved"] is True and theirs["branchDeleted"] is True
    assert ours["result"]["worktreeRemoved"] is False and ours["result"]["branchDeleted"] is False
    assert any("still registered" in w and "git worktree unlock" in w for w in ours["result"]["warnings"])
    # What git says afterwards, in both scopes: the worktree is still listed and its branch
    # (checked out there) was not deleted.
    assert len(worktrees(a)) == len(worktrees(k)) == 1
    assert "agents/dev-1" in branches(a) and "agents/dev-1" in branches(k)
    assert instances(a) == instances(k) == []
