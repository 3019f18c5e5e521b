"""The `--json` error codes of `agentrc cap install` are the OAS kernel's for the same input
(issue 34, item 7): an invalid capability manifest (`oas.json`: its schema, a hook the
contract does not know, `required` on a hook other than spawn) is `invalid-source`, an
invalid or missing package manifest `invalid-package-manifest`. Both tools run on twin
scopes, the kernel as a separate program (tests/test_cap_judge.py)."""

from __future__ import annotations

import json

import pytest

from test_cap_install import write_package
from test_cap_judge import agentrc, oas, pytestmark, scope_state, twins  # noqa: F401 - skip without node

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
