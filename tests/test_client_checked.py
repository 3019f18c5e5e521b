"""clients/names.py's CHECKED_WITH, the client version each generated client page says it was checked with,
agrees with the pins the conformance suite installs, and the pages say it (issue 33 item 4)."""

import json
import re
from pathlib import Path

from agentrc.clients import names
from agentrc.clients.registry import CLIENTS
from agentrc.docgen.pages import _checked_lines, render_client
from agentrc.docgen.probing import probes

ROOT = Path(__file__).resolve().parent.parent


def _pinned(pin: str) -> str:
    """The version that `pin` ("npm PKG in tools/FILE.json" or "PyPI PKG in tools/FILE.txt") names."""
    m = re.fullmatch(r"(npm|PyPI) (\S+) in (tools/\S+)", pin)
    assert m, pin
    kind, package, path = m.groups()
    text = (ROOT / path).read_text(encoding="utf-8")
    if kind == "npm":
        data = json.loads(text)
        return str({**data.get("optionalDependencies", {}), **data["devDependencies"]}[package])
    found = re.search(rf"^{re.escape(package)}==(\S+)\s*$", text, re.M)
    assert found, (package, path)
    return found.group(1)


def test_every_checked_version_is_the_pinned_one():
    for client, (what, pin) in names.CHECKED_WITH.items():
        if pin:
            version = _pinned(pin)
            assert what.endswith(f" {version}"), (client, what, version)
        else:
            assert re.search(r"documentation of \d{4}-\d{2}-\d{2}", what), (client, what)


def test_checked_and_status_name_registered_clients_and_cover_the_first_ten():
    assert set(names.CHECKED_WITH) <= set(names.CLIENTS)
    assert set(names.CLIENT_STATUS) <= set(names.CLIENTS)
    first = ("claude", "copilot", "opencode", "cursor", "codex", "gemini", "windsurf", "openclaw", "hermes",
             "antigravity")
    assert set(first) <= set(names.CHECKED_WITH)


def test_the_client_pages_carry_the_version_and_the_retirement():
    items = probes()
    gemini = render_client(CLIENTS["gemini"], items)
    assert "Client version checked: Gemini CLI 0.61.0 (npm @google/gemini-cli in tools/package.json)." in gemini
    assert "retired Gemini CLI for consumer accounts" in gemini and "2026-06-18" in gemini
    page = " ".join(render_client(CLIENTS["antigravity"], items).split())
    assert "Client version checked: Google's Antigravity CLI documentation of 2026-12-06" in page
    assert _checked_lines("no-such-client") == []
