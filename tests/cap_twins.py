"""Helpers for twin runs of `agentrc cap` and the OAS kernel that need the processes' own
stdio (a capability command inherits it) or a working directory (the kernel resolves
`oas NAMESPACE COMMAND` from where it runs): both tools run here against real scopes.

`home` isolates HOME; `oas` runs the kernel in a directory and returns (exit code, stdout,
stderr); `ours` runs `agentrc` in this process with its file descriptors captured (`capfd`),
so a command it starts is captured too; `command_capability` writes a capability whose
command prints what it was given (argv, working directory, OAS_* environment) and logs
that it ran; `package` wraps capabilities in an oas-package.json."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Dict, Optional, Tuple

import pytest

from agentrc.cli.main import main
from test_cap_judge import OAS

needs_kernel = pytest.mark.skipif(not OAS.exists() or not shutil.which("node"),
                                  reason="the OAS kernel (../shared/judges/oas-kernel) and node are needed")

CAP = Path(".agents") / "capabilities"
# A command that prints one JSON line of what it got and appends to ran.log in its working
# directory; EXIT_WITH sets its exit code.
COMMAND = """import { appendFileSync } from "node:fs";
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("OAS_")));
appendFileSync("ran.log", "ran\\n");
console.log(JSON.stringify({ argv: process.argv.slice(2), cwd: process.cwd(), env }));
process.exit(Number(process.env.EXIT_WITH || 0));
"""


@pytest.fixture
def home(tmp_path, monkeypatch):
    """An isolated HOME for both tools."""
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.delenv("OAS_HOME", raising=False)
    monkeypatch.delenv("PI_AGENT_HOME", raising=False)
    monkeypatch.delenv("PI_AGENTS_ROOT", raising=False)
    return h


def oas(cwd: Path, *args: str, env: Optional[Dict[str, str]] = None) -> Tuple[int, str, str]:
    proc = subprocess.run(["node", str(OAS), *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, NO_COLOR="1", **(env or {})))
    return proc.returncode, proc.stdout, proc.stderr


def ours(capfd, *args: str) -> Tuple[int, str, str]:
    capfd.readouterr()
    rc = main(list(args))
    out, err = capfd.readouterr()
    return rc, out, err


def envelope(out: str) -> dict:
    lines = out.strip().splitlines()
    assert len(lines) == 1, out
    return json.loads(lines[0])


def command_capability(root: Path, cid: str = "acme.chat", namespace: str = "team-chat", commands=None,
                       layer: str = "") -> Path:
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "chat.mjs").write_text(COMMAND)
    doc = {"capability": cid, "version": "1.0.0", "description": "Chat.", "command": namespace,
           "commands": commands if commands is not None else {"auth": "bin/chat.mjs auth --declared"}}
    if layer:
        doc["layer"] = layer
    (root / "oas.json").write_text(json.dumps(doc, indent=2))
    return root


def package(root: Path, caps: Dict[str, Path], pid: str = "acme.pkg") -> Path:
    """A package at `root` holding each capability directory of `caps` (rel -> source)."""
    for rel, src in caps.items():
        shutil.copytree(src, root / rel, symlinks=True)
    (root / "oas-package.json").write_text(json.dumps({
        "package": pid, "version": "1.0.0", "description": "Acme.", "compatibility": {"oas": ">=0.19.0"},
        "capabilities": list(caps)}, indent=2))
    return root


def config(scope: Path, cid: str = "acme.chat", origin: str = "installed", extra: str = "",
           settings: str = "") -> None:
    """An oas-config.yaml activating `cid` globally (with `settings`, YAML lines at 8 spaces)."""
    text = f"name: {scope.name}\n{extra}capabilities:\n  additive:\n    {cid}:\n      from: {origin}\n" \
           "      global: true\n"
    if settings:
        text += "      settings:\n" + settings
    (scope / "oas-config.yaml").write_text(text)


def neutral(text: str, *scopes: Path) -> str:
    for s in scopes:
        text = text.replace(str(s), "<scope>")
    return text
