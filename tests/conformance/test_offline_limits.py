"""OFFLINE_LIMITS.md (what each client can check offline) matches the discovery tests.

Every (client, capability) of the judged clients has exactly one row; `checked` and `partly`
rows name tests that exist, other rows name none; and every test of the discovery files is
named by some row, so a new check cannot go unrecorded. Needs no tool.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Dict, List, Set, Tuple

from agentrc.clients import registry

HERE = Path(__file__).resolve().parent
LIMITS = HERE / "OFFLINE_LIMITS.md"
JUDGED = ("claude", "codex", "copilot", "gemini", "opencode", "kilo", "openclaw", "hermes", "cline", "pi", "qwen",
          "aider", "vibe", "kimi", "amp", "droid", "auggie", "continue")
CAPABILITIES = ("skills", "commands", "agents", "mcp-servers", "mcp-connect", "hooks", "hooks-run", "instructions",
                "ignore")
STATUSES = ("checked", "partly", "not checkable offline", "nothing generated", "no judge")
DISCOVERY_FILES = ("test_claude_discovery.py", "test_codex_discovery.py", "test_codex_examples_discovery.py",
                   "test_copilot_discovery.py",
                   "test_gemini_discovery.py", "test_opencode_discovery.py", "test_opencode_commands_and_mcp.py",
                   "test_plugin_install.py", "test_kilo_discovery.py", "test_openclaw_discovery.py",
                   "test_hermes_discovery.py", "test_cline_discovery.py", "test_pi_discovery.py",
                   "test_qwen_discovery.py", "test_aider_discovery.py", "test_vibe_discovery.py",
                   "test_kimi_discovery.py", "test_amp_discovery.py", "test_droid_discovery.py",
                   "test_auggie_discovery.py", "test_continue_discovery.py", "test_ignore_judges.py")
# Files with several clients' tests: each test's name starts with test_<client>_.
SHARED_FILES = ("test_plugin_install.py", "test_ignore_judges.py")


def _rows() -> List[Tuple[str, str, str, str, List[str]]]:
    rows = []
    for line in LIMITS.read_text(encoding="utf-8").splitlines():
        if not line.startswith("| ") or line.startswith("| client ") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        assert len(cells) == 5, f"OFFLINE_LIMITS.md: not five columns: {line}"
        client, capability, status, why, tests = cells
        rows.append((client, capability, status, why, [t.strip() for t in tests.split(",") if t.strip()]))
    assert rows, "OFFLINE_LIMITS.md has no table rows"
    return rows


def _tests() -> Dict[str, Set[str]]:
    """{file: names of its test functions}."""
    found = {}
    for name in DISCOVERY_FILES:
        tree = ast.parse((HERE / name).read_text(encoding="utf-8"))
        found[name] = {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}
    return found


def test_offline_limits_has_one_row_per_client_and_capability():
    rows = _rows()
    keys = [(client, capability) for client, capability, *_ in rows]
    assert len(keys) == len(set(keys)), f"duplicate rows: {sorted(k for k in keys if keys.count(k) > 1)}"
    want = {(c, cap) for c in JUDGED for cap in CAPABILITIES}
    assert {k for k in keys if k[0] in JUDGED} == want
    others = {c for c, cap in keys if c not in JUDGED}
    missing = set(registry.CLIENTS) - set(JUDGED) - others
    assert not missing, f"registered clients without a `*` row: {sorted(missing)}"
    for client, capability, status, why, tests in rows:
        assert status in STATUSES, (client, capability, status)
        assert why, (client, capability)
        if client not in JUDGED:
            assert (capability, status, tests) == ("*", "no judge", []), (client, capability, status)


def test_offline_limits_names_existing_tests_and_every_test_is_named():
    tests = _tests()
    every = set().union(*tests.values())
    named: Set[str] = set()
    for client, capability, status, _, names in _rows():
        if status in ("checked", "partly"):
            assert names, f"{client}/{capability} is {status} but names no test"
        else:
            assert not names, f"{client}/{capability} is {status} but names tests {names}"
        unknown = [n for n in names if n not in every]
        assert not unknown, f"{client}/{capability} names tests that do not exist: {unknown}"
        named.update(names)
    unnamed = {f: sorted(t - named) for f, t in tests.items() if t - named}
    assert not unnamed, f"discovery tests not recorded in OFFLINE_LIMITS.md: {unnamed}"


def test_offline_limits_matches_each_tests_client():
    """A row names only tests of its own client's files (or its own tests of a shared file)."""
    tests = _tests()
    for f in SHARED_FILES:
        clients = {c for c in JUDGED if any(t.startswith(f"test_{c}_") for t in tests[f])}
        stray = [t for t in tests[f] if not any(t.startswith(f"test_{c}_") for c in JUDGED)]
        assert clients and not stray, f"{f}: every test's name must start with test_<client>_ ({stray})"
    for client, capability, _, _, names in _rows():
        own = set().union(*(t for f, t in tests.items() if f.startswith(f"test_{client}_")))
        own |= {t for f in SHARED_FILES for t in tests[f] if t.startswith(f"test_{client}_")}
        stray = [n for n in names if n not in own]
        assert not stray, f"{client}/{capability} names other clients' tests: {stray}"
    assert re.search(r"^\| client \| capability \| status \|", LIMITS.read_text(encoding="utf-8"), re.M)
