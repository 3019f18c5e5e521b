"""The PyPI-installed client CLIs the conformance tests judge with (Hermes Agent, Kimi Code,
Mistral Vibe, Aider): where tools/install.sh puts each one and which version it pins.

Each client is pinned in a requirements file of its own, tools/<name>-requirements.txt
(`<package>==X.Y.Z` on one line), and installed into a venv of its own,
.tools/<name>-venv, so that their dependency pins cannot fight each other or agentrc's.
`pypi_client(name, package, command)` returns the client's command, or skips the test
(fails it with AGENTRC_REQUIRE_TOOLS=1) when the venv is missing or holds another version.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Tuple

from .conformance_helpers import ROOT, TOOLS_DIR, tool_missing


def pinned_pypi_version(name: str, package: str) -> str:
    """The version tools/<name>-requirements.txt pins for `package`."""
    reqs = ROOT / "tools" / f"{name}-requirements.txt"
    m = re.search(rf"^{re.escape(package)}==(\S+)\s*$", reqs.read_text(encoding="utf-8"), re.M)
    assert m, f"{reqs.relative_to(ROOT)} does not pin {package}==X.Y.Z"
    return m.group(1)


def pypi_client(name: str, package: str, command: str) -> Path:
    """.tools/<name>-venv/bin/<command>, when the venv holds exactly the pinned `package`."""
    want = pinned_pypi_version(name, package)
    venv = TOOLS_DIR / f"{name}-venv"
    binary = venv / "bin" / command
    if not binary.exists():
        tool_missing(f"{package} {want} is not installed in {venv.relative_to(ROOT)}")
    proc = subprocess.run([str(venv / "bin" / "python"), "-c",
                           f"import importlib.metadata as m; print(m.version({package!r}))"],
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=60)
    have = proc.stdout.strip()
    if have != want:
        tool_missing(f"{package} {have or '(unreadable)'} is installed in {venv.relative_to(ROOT)}, "
                     f"but tools/{name}-requirements.txt pins {want}")
    return binary


def model_requests(requests: List[Dict[str, Any]], path: str = "/chat/completions") -> List[Dict[str, Any]]:
    """The JSON bodies of the model requests a local sink recorded (POSTs whose path ends
    with `path`)."""
    return [r["body"] for r in requests if r["method"] == "POST" and r["path"].endswith(path)
            and isinstance(r["body"], dict)]


def system_text(body: Dict[str, Any]) -> str:
    """The system messages of an OpenAI chat-completions request, as one text."""
    parts = []
    for message in body.get("messages", []):
        if message.get("role") != "system":
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(c.get("text", "") for c in content if isinstance(c, dict))
        parts.append(str(content))
    return "\n".join(parts)


def snippet(detail: str) -> Tuple[str, Any]:
    """(top-level key, value) of the `add: \\`key: {json}\\`` snippet in a fidelity detail."""
    m = re.search(r"add: `([A-Za-z_]+): (\{.*\})`", detail)
    assert m, f"no config snippet in: {detail}"
    return m.group(1), json.loads(m.group(2))
