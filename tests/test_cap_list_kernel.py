"""`agentrc cap list` reports each capability's health and trust as the OAS kernel's
`oas list` does (issue 34, item 4): on one scope both tools list, an untrusted capability
with hooks is `untrusted` / `untrusted-surface` (never `ok`), a trusted one `ok`, an edited
artifact `drifted` / `integrity-drift`, a deleted one `missing`, a provenance file that
disagrees with the lock `provenance-mismatch`; with the same `layer` and
`executableSurface`. The kernel runs as a separate program, as in tests/test_cap_judge.py."""

from __future__ import annotations

import json
import shutil

from test_cap_install import write_package
from test_cap_judge import STORE, agentrc, bundled_package, oas, pytestmark, twins  # noqa: F401 - skip without node

FIELDS = ("capability", "version", "package", "path", "integrity", "installedIntegrity", "layer", "trusted",
          "installed", "executableSurface", "status", "code")


def _rows(env):
    assert env["ok"], env
    return [{f: c[f] for f in FIELDS} for c in env["result"]["capabilities"]]


def _both(tmp_path, capsys, scope):
    ours, theirs = agentrc(capsys, "list", "--dir", str(scope)), oas(tmp_path, "list", "--dir", str(scope))
    assert _rows(ours) == _rows(theirs)
    assert ours["result"]["packages"] == theirs["result"]["packages"]
    return _rows(ours)


def test_health_and_trust_as_the_kernel_lists_them(tmp_path, capsys):
    pkg = write_package(tmp_path / "pkg", caps={"capabilities/a": ("x.a", "messaging"), "capabilities/b": ("x.b", ""),
                                                "capabilities/c": ("x.c", ""), "capabilities/d": ("x.d", "")})
    man = json.loads((pkg / "capabilities" / "d" / "oas.json").read_text())
    del man["hooks"]  # no executable surface: nothing to trust
    (pkg / "capabilities" / "d" / "oas.json").write_text(json.dumps(man))
    scope, _ = twins(tmp_path)
    assert agentrc(capsys, "install", str(pkg), "--dir", str(scope))["ok"]
    rows = _both(tmp_path, capsys, scope)
    assert [(r["capability"], r["status"], r["layer"]) for r in rows] == [
        ("x.a", "untrusted", "messaging"), ("x.b", "untrusted", None), ("x.c", "untrusted", None), ("x.d", "ok", None)]
    assert rows[0]["code"] == "untrusted-surface" and rows[0]["executableSurface"] == {"commands": [],
                                                                                     "hooks": ["spawn"]}
    assert agentrc(capsys, "trust", "x.a", "--dir", str(scope))["ok"]
    (scope / STORE / "x.b" / "injects" / "i.md").write_text("Edited.\n")
    shutil.rmtree(scope / STORE / "x.c")
    rows = _both(tmp_path, capsys, scope)
    assert [(r["status"], r["code"]) for r in rows] == [
        ("ok", None), ("drifted", "integrity-drift"), ("missing", "missing-capability-artifact"), ("ok", None)]


def test_the_kernels_bundled_capabilities_list_alike(tmp_path, capsys):
    pkg = bundled_package(tmp_path, names=("oas-okf", "oas-review", "oas-linear"))
    scope, _ = twins(tmp_path)
    assert agentrc(capsys, "install", str(pkg), "--dir", str(scope))["ok"]
    before = _both(tmp_path, capsys, scope)
    assert agentrc(capsys, "trust", "oas.linear", "--dir", str(scope))["ok"]
    after = _both(tmp_path, capsys, scope)
    assert [r["status"] for r in after] != [r["status"] for r in before] or all(r["status"] == "ok" for r in before)
