"""The client registry: one adapter module per client, listed once here.

Everything that depends on the set of clients is derived from this list and the adapters'
attributes: the Pants `clients=` field, the families content may name, the passthrough
blocks (their order is fmt's key order and the item schema's properties), the writers of
the shared Agent Skills directory and the blocks they merge, and the docs' mapping tables.
Adding a client is one module plus one line here (plus goldens), and its name in
clients/names.py, the list the command line checks --client against without importing an
adapter; tests/test_registry.py fails when a derived list, or that one, disagrees.

The order below is the order of passthrough blocks in formatted frontmatter.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Tuple

from agentrc.clients import names
from agentrc.clients.base import SHARED_SKILL_DIR, ClientAdapter, RenderContext
from agentrc.clients.claude import Claude, ClaudePlugin
from agentrc.clients.codex import Codex, CodexPlugin
from agentrc.clients.copilot import Copilot
from agentrc.clients.cursor import Cursor, CursorPlugin
from agentrc.clients.gemini import Gemini, GeminiExtension
from agentrc.clients.hermes import Hermes
from agentrc.clients.openclaw import OpenClaw
from agentrc.clients.opencode import Opencode
from agentrc.clients.windsurf import Windsurf
from agentrc.families import SPEC_FAMILIES
from agentrc.frozen import FrozenMap
from agentrc.model import ClientNames

ADAPTERS: Tuple[ClientAdapter, ...] = (
    Claude(),
    Copilot(),
    Opencode(),
    Cursor(),
    Codex(),
    Gemini(),
    Windsurf(),
    OpenClaw(),
    Hermes(),
)
CLIENTS: Dict[str, ClientAdapter] = {adapter.name: adapter for adapter in ADAPTERS}
DEFAULT_CLIENTS: Tuple[str, ...] = names.DEFAULT_CLIENTS


# Clients with a plugin/extension package layout (`agentrc build --layout plugin`), in CLIENTS order.
PLUGIN_LAYOUTS: Dict[str, ClientAdapter] = {adapter.name: adapter for adapter in (
    ClaudePlugin(), CursorPlugin(), GeminiExtension(), CodexPlugin())}


def families() -> FrozenSet[str]:
    """Every family content may name: the spec's four plus each registered client's."""
    return frozenset(SPEC_FAMILIES) | {a.family for a in CLIENTS.values()}


def passthrough_blocks() -> Tuple[str, ...]:
    """The clients' frontmatter blocks, in registry order (fmt's key order)."""
    return tuple(a.passthrough_block for a in ADAPTERS if a.passthrough_block)


def client_names() -> ClientNames:
    """The registered clients as the front doors see them."""
    return ClientNames(families(), passthrough_blocks(),
                       frozenset(n for a in ADAPTERS for n in (a.name,) + tuple(a.aliases)))


def shared_blocks() -> Tuple[Tuple[str, str], ...]:
    """(block, client title) of the clients whose block every writer of the shared Agent
    Skills SKILL.md merges into it."""
    return tuple((a.passthrough_block, a.title) for a in ADAPTERS if a.shared_block)


def agent_skills_writers() -> Tuple[str, ...]:
    """The clients that write skills into the shared `.agents/skills` directory."""
    return tuple(a.name for a in ADAPTERS if a.skill_dir == SHARED_SKILL_DIR)


def render_context(skills: FrozenSet[str] = frozenset(), clients: FrozenSet[str] = frozenset(),
                   renamed: FrozenMap = FrozenMap()) -> RenderContext:
    """What adapters may know beyond the item, for a build of `clients` holding `skills`
    (`renamed`: `base.skill_names` of the build's items)."""
    return RenderContext(families(), skills, clients, shared_blocks(), renamed)


def get(names, layout: str = "project") -> Tuple[ClientAdapter, ...]:
    table = PLUGIN_LAYOUTS if layout == "plugin" else CLIENTS
    unknown = [n for n in names if n not in table]
    if unknown:
        what = "client(s) with a plugin layout" if layout == "plugin" else "client(s)"
        raise KeyError(f"unknown {what}: {', '.join(unknown)} (known: {', '.join(table)})")
    return tuple(table[n] for n in names)
