"""The client registry: one adapter module per client, listed once here.

The CLI's --client choices, the Pants `clients=` field and the docs' mapping tables all
come from this dict, so adding a client is one module plus one line here (plus goldens).
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Tuple

from agentrc.clients.base import ClientAdapter
from agentrc.clients.claude import Claude, ClaudePlugin
from agentrc.clients.codex import Codex, CodexPlugin
from agentrc.clients.copilot import Copilot
from agentrc.clients.cursor import Cursor, CursorPlugin
from agentrc.clients.gemini import Gemini, GeminiExtension
from agentrc.clients.opencode import Opencode
from agentrc.clients.openclaw import OpenClaw
from agentrc.clients.hermes import Hermes
from agentrc.clients.windsurf import Windsurf
from agentrc.families import SPEC_FAMILIES

ADAPTERS: Tuple[ClientAdapter, ...] = (
    Claude(),
    Copilot(),
    Opencode(),
    Cursor(),
    Gemini(),
    Codex(),
    OpenClaw(),
    Hermes(),
    Windsurf(),
)
CLIENTS: Dict[str, ClientAdapter] = {adapter.name: adapter for adapter in ADAPTERS}
DEFAULT_CLIENTS: Tuple[str, ...] = ("claude", "copilot", "opencode")


# Clients with a plugin/extension package layout (`agentrc build --layout plugin`), in CLIENTS order.
PLUGIN_LAYOUTS: Dict[str, ClientAdapter] = {adapter.name: adapter for adapter in (
    ClaudePlugin(), CursorPlugin(), GeminiExtension(), CodexPlugin())}


def families() -> FrozenSet[str]:
    """Every family content may name: the spec's four plus each registered client's."""
    return frozenset(SPEC_FAMILIES) | {a.family for a in CLIENTS.values()}


def passthrough_blocks() -> FrozenSet[str]:
    return frozenset(a.passthrough_block for a in CLIENTS.values() if a.passthrough_block)


def get(names, layout: str = "project") -> Tuple[ClientAdapter, ...]:
    table = PLUGIN_LAYOUTS if layout == "plugin" else CLIENTS
    unknown = [n for n in names if n not in table]
    if unknown:
        what = "client(s) with a plugin layout" if layout == "plugin" else "client(s)"
        raise KeyError(f"unknown {what}: {', '.join(unknown)} (known: {', '.join(table)})")
    return tuple(table[n] for n in names)
