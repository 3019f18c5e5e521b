"""`agentrc cap spawn` where an audit found it apart from the OAS kernel (issue 34, items 5
and 7), judged by the kernel on twin scopes: a capability whose host requirement is missing
is spawned with the kernel's warning and recorded in instance.json's
`capabilityRuntime[].missingRequires`; a drifted installed artifact refuses the spawn with
the kernel's JSON error code, while agentrc's diagnostic still says what drifted."""

from __future__ import annotations

import json
from pathlib import Path

from test_cap_spawn import (  # noqa: F401
    CAP, agentrc, deployment, env, installed_twins, instances, oas, pytestmark)

MISSING = "agentrc-test-no-such-command"


def with_requires(scope: Path) -> None:
    """The owned hooked capability, advisory hook, requiring one command that is on PATH
    (`git`), one that is not (with why and install) and one that is not (bare why)."""
    deployment(scope, required=False)
    manifest = scope / CAP / "owned" / "acme.hooks" / "oas.json"
    doc = json.loads(manifest.read_text())
    doc["layer"] = "messaging"
    doc["requires"] = [{"command": "git", "why": "history"},
                       {"command": MISSING, "why": "talks to the chat", "install": "https://example.invalid/install"},
                       {"command": MISSING + "-2", "why": ""}]
    manifest.write_text(json.dumps(doc, indent=2))
    (scope / "oas-config.yaml").write_text("capabilities:\n  layers:\n    messaging:\n      capability: acme.hooks\n"
                                           "      from: owned\n      global: true\n")


def test_missing_host_requirements_warn_and_are_recorded_as_the_kernels(env, capsys):
    a, k = env / "a", env / "k"
    for s in (a, k):
        with_requires(s)
    rc, ours = agentrc(capsys, a, "spawn", "dev")
    krc, kout, kerr = oas(k, "spawn", "dev", "--no-launch", "--json")
    assert rc == krc == 0, (ours, kerr)
    theirs = json.loads(kout)["result"]
    missing = [w for w in theirs["warnings"] if "not on PATH" in w]
    assert len(missing) == 2, theirs["warnings"]
    assert [w for w in ours["result"]["warnings"] if "not on PATH" in w] == missing
    assert missing[0] == (f'acme.hooks (messaging): required command "{MISSING}" not on PATH — talks to the chat '
                          "(install: https://example.invalid/install)")
    mine, kernel = (json.loads((s / "agents" / "dev" / "instances" / "dev-1" / "instance.json").read_text())
                    for s in (a, k))
    recorded = [r["missingRequires"] for r in kernel["capabilityRuntime"]]
    assert [r["missingRequires"] for r in mine["capabilityRuntime"]] == recorded
    assert [m["command"] for m in recorded[0]] == [MISSING, MISSING + "-2"]


def test_requirements_on_path_leave_no_warning_and_an_empty_record(env, capsys):
    a = env / "a"
    deployment(a, required=False)
    rc, ours = agentrc(capsys, a, "spawn", "dev")
    assert rc == 0 and not [w for w in ours["result"]["warnings"] if "not on PATH" in w]
    doc = json.loads((a / "agents" / "dev" / "instances" / "dev-1" / "instance.json").read_text())
    assert [r["missingRequires"] for r in doc["capabilityRuntime"]] == [[]]


def test_a_drifted_artifact_refuses_the_spawn_with_the_kernels_code(env, capsys, tmp_path):
    a, k = installed_twins(env, capsys, tmp_path, required=False)
    for s in (a, k):
        with open(s / CAP / "installed" / "acme.hooks" / "inject.md", "a") as fh:
            fh.write("tampered\n")
    rc, ours = agentrc(capsys, a, "spawn", "dev")
    krc, kout, _kerr = oas(k, "spawn", "dev", "--no-launch", "--json")
    assert rc == krc == 1
    assert ours["error"]["code"] == json.loads(kout)["error"]["code"] == "E_SPAWN_FAILED"
    # agentrc's diagnostic still names what drifted, and nothing was created.
    diag = ours["error"]["details"]["diagnostics"][0]
    assert diag["code"] == "AR161" and "acme.hooks" in diag["message"] and "integrity" in diag["message"]
    assert instances(a) == instances(k) == []

