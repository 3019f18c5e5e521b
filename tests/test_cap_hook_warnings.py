"""The kernel warns about an active capability's missing host commands (`requires` not on
PATH) where it runs lifecycle hooks (issue 34, items 5 and 7): at spawn and at retire (for
the capabilities the instance records, in retire order). A spawn that writes a local soul
runs its soul-scaffold hooks too, and warns once, not once per step. agentrc warns in the
same words at the same steps; judged by `oas` on twin scopes."""

from __future__ import annotations

import json
from pathlib import Path

from test_cap_soul_scaffold import scaffolding
from test_cap_spawn import CAP, agentrc, deployment, env, oas, pytestmark  # noqa: F401

MISSING = "agentrc-test-no-such-command"


def requiring(scope: Path, cid: str, why: str) -> None:
    """`cid`'s owned manifest requires a command that is not on PATH."""
    manifest = scope / CAP / "owned" / cid / "oas.json"
    doc = json.loads(manifest.read_text())
    doc["requires"] = [{"command": MISSING, "why": why, "install": "https://example.invalid/install"}]
    manifest.write_text(json.dumps(doc, indent=2))


def missing(warnings) -> list:
    return [w for w in warnings or [] if "not on PATH" in w]


def test_retire_warns_about_missing_commands_as_the_kernel(env, capsys):
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s, required=False)
        requiring(s, "acme.hooks", "talks to the chat")
    rc, ours = agentrc(capsys, a, "spawn", "dev")
    krc, kout, kerr = oas(k, "spawn", "dev", "--no-launch", "--json")
    assert rc == krc == 0, (ours, kerr)
    rc, ours = agentrc(capsys, a, "retire", "dev-1")
    krc, kout, kerr = oas(k, "retire", "dev-1", "--json")
    assert rc == krc == 0, (ours, kout, kerr)
    theirs = missing(json.loads(kout).get("warnings"))  # the kernel prints retire's result bare
    assert theirs == [f'acme.hooks: required command "{MISSING}" not on PATH — talks to the chat '
                      "(install: https://example.invalid/install)"], kout
    assert missing(ours["result"].get("warnings")) == theirs


def test_soul_scaffold_warns_about_missing_commands_as_the_kernel(env, capsys, tmp_path):
    a, k = env / "a", env / "k"
    for s in (a, k):
        deployment(s, required=False)
        scaffolding(s)
        requiring(s, "acme.scaffold", "writes the notes")
    instructions = tmp_path / "AGENTS.md"
    instructions.write_text("# Helper\n")
    rc, ours = agentrc(capsys, a, "spawn", "helper", "--instructions-file", str(instructions), "--runtime", "claude")
    krc, kout, kerr = oas(k, "spawn", "helper", "--instructions-file", str(instructions), "--runtime", "claude",
                          "--no-launch", "--json", "--dir", str(k))
    assert rc == krc == 0, (ours, kout, kerr)
    theirs = missing(json.loads(kout)["result"].get("warnings"))
    # Once, as the kernel warns: the soul-scaffold step's own warnings are not shown, so the
    # spawn's warning is the only one (a scaffold that warned too would repeat it).
    assert theirs == [f'acme.scaffold: required command "{MISSING}" not on PATH — writes the notes '
                      "(install: https://example.invalid/install)"], kout
    assert missing(ours["result"].get("warnings")) == theirs
