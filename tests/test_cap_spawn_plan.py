"""`cap spawn` and `cap retire` as plans of small steps (issue 35): the executor (`capops.plan`)
does the steps in order and, when one fails, undoes the done ones in reverse, records what an
undo could not finish (quarantine), and reports; and a spawn that fails after its home exists
for a reason other than a required hook is undone the same way (retire hooks run, the home
removed), on a real deployment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentrc.capops import plan
from agentrc.capops import spawn as capspawn
from test_cap_spawn import CAP, agentrc, deployment, env, hook_log, instances, pytestmark  # noqa: F401


class Recorder(plan.Step):
    def __init__(self, name, log, fail_do=False, fail_undo=False, leave=""):
        self.name, self.log, self.fail_do, self.fail_undo, self.leave = name, log, fail_do, fail_undo, leave

    def do(self):
        self.log.append(("do", self.name))
        if self.fail_do:
            raise RuntimeError(f"{self.name} failed")

    def undo(self, undone):
        self.log.append(("undo", self.name))
        if self.fail_undo:
            raise OSError("disk gone")
        if self.leave:
            undone.incomplete.append(self.leave)
            undone.outstanding.append(self.name)


def test_steps_run_in_order_and_nothing_is_undone_when_all_succeed():
    log = []
    plan.run([Recorder("a", log), Recorder("b", log)], quarantine=lambda e, u: log.append(("quarantine",)))
    assert log == [("do", "a"), ("do", "b")]


def test_a_failed_step_undoes_the_done_ones_in_reverse_and_reraises():
    log = []
    with pytest.raises(RuntimeError, match="c failed"):
        plan.run([Recorder("a", log), Recorder("b", log), Recorder("c", log, fail_do=True), Recorder("d", log)])
    assert log == [("do", "a"), ("do", "b"), ("do", "c"), ("undo", "b"), ("undo", "a")]


def test_an_undo_that_does_not_finish_is_quarantined_and_later_undos_see_it():
    log, seen = [], []
    steps = [Recorder("home", log), Recorder("hooks", log, leave="retire hook x: exit 3"),
             Recorder("boom", log, fail_do=True)]

    def failed(exc, undone):
        seen.append(("failed", str(exc), list(undone.incomplete)))
        raise ValueError("reported")

    with pytest.raises(ValueError, match="reported"):
        plan.run(steps, quarantine=lambda e, u: seen.append(("quarantine", list(u.incomplete), list(u.outstanding))),
                 failed=failed)
    assert seen == [("quarantine", ["retire hook x: exit 3"], ["hooks"]),
                    ("failed", "boom failed", ["retire hook x: exit 3"])]


def test_an_undo_that_raises_is_recorded_and_the_rest_still_undone():
    log, seen = [], []
    with pytest.raises(RuntimeError):
        plan.run([Recorder("a", log), Recorder("b", log, fail_undo=True), Recorder("c", log, fail_do=True)],
                 quarantine=lambda e, u: seen.append(list(u.incomplete)))
    assert log[-2:] == [("undo", "b"), ("undo", "a")]
    assert seen == [["b: could not be undone (disk gone)"]]


def test_an_interrupt_is_not_undone():
    log = []

    class Interrupted(plan.Step):
        def do(self):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        plan.run([Recorder("a", log), Interrupted()])
    assert log == [("do", "a")]


# A spawn hook (advisory) that puts a directory where TASK.md goes: the spawn fails after its
# home exists, for no required hook.
BLOCKER = """import { appendFileSync, mkdirSync } from "node:fs";
const ev = process.argv[2];
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("OAS_")));
appendFileSync(process.env.OAS_CONTEXT + "/hook.log", JSON.stringify({ ev, env }) + "\\n");
if (ev === "spawn") mkdirSync("TASK.md");
console.log(JSON.stringify({ meta: { id: "minted-" + ev } }));
"""


def blocked(scope: Path) -> None:
    deployment(scope, required=False)
    (scope / CAP / "owned" / "acme.hooks" / "bin" / "hook.mjs").write_text(BLOCKER)


def test_a_spawn_failing_after_its_home_exists_is_undone(env, capsys):
    a = env / "a"
    blocked(a)
    rc, out = agentrc(capsys, a, "spawn", "dev")
    assert rc == 1 and out["error"]["details"]["diagnostics"][0]["code"] == "AR224"  # TASK.md not a regular file
    assert instances(a) == []  # the home removed, no staging left
    assert [(ev, e["OAS_CAPABILITY"]) for ev, e in hook_log(a)] == [("spawn", "acme.hooks"), ("retire", "acme.hooks")]
    assert json.loads(hook_log(a)[1][1]["OAS_META"]) == {"id": "minted-spawn"}


def test_a_spawn_whose_undo_does_not_finish_keeps_the_home_with_its_marker(env, capsys):
    a = env / "a"
    blocked(a)
    hook = a / CAP / "owned" / "acme.hooks" / "bin" / "hook.mjs"
    hook.write_text(BLOCKER.replace('console.log(JSON.stringify({ meta: { id: "minted-" + ev } }));',
                                    'if (ev === "retire") process.exit(4);\n'
                                    'console.log(JSON.stringify({ meta: { id: "minted-" + ev } }));'))
    with pytest.raises(OSError):
        capspawn.spawn(str(a), "dev")
    assert instances(a) == ["dev-1"]
    marker = json.loads((a / "agents" / "dev" / "instances" / "dev-1" / capspawn.MARKER).read_text())
    assert capspawn.usable_descriptor(marker) and marker["failed"] == []
    assert marker["cleanup"]["outstanding"] == {"hooks": ["acme.hooks"], "git": []}
    assert marker["incomplete"][0].startswith("retire hook acme.hooks: exit 4")
    # The next retire retries the cleanup: the hook now succeeds, the home goes.
    hook.write_text(BLOCKER)
    rc, out = agentrc(capsys, a, "retire", "dev-1")
    assert rc == 0 and out["result"]["removedDir"] is True and instances(a) == []
