"""The client registry: one adapter module per client, listed once here.

Everything that depends on the set of clients is derived from this list and the adapters'
attributes: the Pants `clients=` field, the families content may name, the passthrough
blocks (their order is fmt's key order and the item schema's properties), the writers of
the shared Agent Skills directory and the blocks they merge, and the docs' mapping tables.
Adding a client is one module plus one line here (plus goldens), and its name and facts in
clients/names.py, what the command line and the derived lists read without importing an
adapter; tests/test_registry.py and tests/test_client_facts.py fail when a derived list, or
those facts, disagree with the adapters.

An adapter's module is imported when the adapter is first asked for (`get`, or `ADAPTERS`,
`CLIENTS` and `PLUGIN_LAYOUTS`, built on first use): a build of three clients imports
three adapters, not nine (issue 13: the imports were a tenth of a replayed edit).

The order below is the order of passthrough blocks in formatted frontmatter.
"""

from __future__ import annotations

import functools
import importlib

from agentrc.clients import names
from agentrc.clients.base import SHARED_SKILL_DIR, ClientAdapter, RenderContext  # noqa: F401 (re-exported)
from agentrc.families import SPEC_FAMILIES
from agentrc.frozen import FrozenMap
from agentrc.model import ClientNames

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, FrozenSet, Tuple

# Each client's adapter class, "module:Class" under agentrc.clients, in registry order.
_ADAPTERS: Tuple[Tuple[str, str], ...] = (
    ("claude", "claude:Claude"),
    ("copilot", "copilot:Copilot"),
    ("opencode", "opencode:Opencode"),
    ("cursor", "cursor:Cursor"),
    ("codex", "codex:Codex"),
    ("gemini", "gemini:Gemini"),
    ("windsurf", "windsurf:Windsurf"),
    ("openclaw", "openclaw:OpenClaw"),
    ("hermes", "hermes:Hermes"),
    ("antigravity", "antigravity:Antigravity"),
    ("pi", "pi:Pi"),
    ("cline", "cline:Cline"),
    ("aider", "aider:Aider"),
    ("amp", "amp:Amp"),
    ("qwen", "qwen:Qwen"),
    ("vibe", "vibe:Vibe"),
    ("droid", "droid:Droid"),
    ("crush", "crush:Crush"),
    ("auggie", "auggie:Auggie"),
    ("kilo", "kilo:Kilo"),
    ("kimi", "kimi:Kimi"),
    ("continue", "continuedev:Continue"),
)
# Clients with a plugin/extension package layout (`agentrc build --layout plugin`), in CLIENTS order.
_PLUGIN_LAYOUTS: Tuple[Tuple[str, str], ...] = (
    ("claude", "claude:ClaudePlugin"),
    ("cursor", "cursor:CursorPlugin"),
    ("gemini", "gemini:GeminiExtension"),
    ("codex", "codex:CodexPlugin"),
    ("antigravity", "antigravity:AntigravityPlugin"),
    ("pi", "pi:PiPackage"),
    ("qwen", "qwen:QwenExtension"),
    ("vibe", "vibe:VibePlugin"),
    ("droid", "droid:DroidPlugin"),
    ("auggie", "auggie:AuggiePlugin"),
)
DEFAULT_CLIENTS: Tuple[str, ...] = names.DEFAULT_CLIENTS

ADAPTERS: Tuple[ClientAdapter, ...]  # built on first use (__getattr__)
CLIENTS: Dict[str, ClientAdapter]
PLUGIN_LAYOUTS: Dict[str, ClientAdapter]


@functools.lru_cache(maxsize=None)
def _adapter(where: str) -> ClientAdapter:
    """The one instance of the adapter class `where` ("module:Class"), its module imported now."""
    module, _, cls = where.partition(":")
    adapter: ClientAdapter = getattr(importlib.import_module(f"agentrc.clients.{module}"), cls)()
    return adapter


def __getattr__(name: str) -> Any:
    """`ADAPTERS`, `CLIENTS` and `PLUGIN_LAYOUTS`, every adapter imported on first use."""
    if name == "ADAPTERS":
        value: Any = tuple(_adapter(w) for _, w in _ADAPTERS)
    elif name == "CLIENTS":
        value = {n: _adapter(w) for n, w in _ADAPTERS}
    elif name == "PLUGIN_LAYOUTS":
        value = {n: _adapter(w) for n, w in _PLUGIN_LAYOUTS}
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def families() -> FrozenSet[str]:
    """Every family content may name: the spec's four plus each registered client's
    (`names.FAMILIES`, the adapters' `family`)."""
    return frozenset(SPEC_FAMILIES) | frozenset(names.FAMILIES)


def passthrough_blocks() -> Tuple[str, ...]:
    """The clients' frontmatter blocks, in registry order (fmt's key order)."""
    return names.PASSTHROUGH_BLOCKS


def client_names() -> ClientNames:
    """The registered clients as the front doors see them."""
    return ClientNames(families(), passthrough_blocks(), frozenset(names.CLIENTS + names.ALIASES))


def shared_blocks() -> Tuple[Tuple[str, str], ...]:
    """(block, client title) of the clients whose block every writer of the shared Agent
    Skills SKILL.md merges into it."""
    return names.SHARED_BLOCKS


def agent_skills_writers() -> Tuple[str, ...]:
    """The clients that write skills into the shared `.agents/skills` directory."""
    return names.AGENT_SKILLS_WRITERS


def render_context(skills: FrozenSet[str] = frozenset(), clients: FrozenSet[str] = frozenset(),
                   renamed: FrozenMap = FrozenMap(), shared: bool = True) -> RenderContext:
    """What adapters may know beyond the item, for a build of `clients` holding `skills`
    (`renamed`: `base.skill_names` of the build's items; `shared`: the project's
    `shared-copies`)."""
    return RenderContext(families(), skills, clients, shared_blocks(), renamed, shared)


def get(clients, layout: str = "project") -> Tuple[ClientAdapter, ...]:
    """The adapters of `clients` (in that order), only theirs imported."""
    table = dict(_PLUGIN_LAYOUTS if layout == "plugin" else _ADAPTERS)
    unknown = [n for n in clients if n not in table]
    if unknown:
        what = "client(s) with a plugin layout" if layout == "plugin" else "client(s)"
        raise KeyError(f"unknown {what}: {', '.join(unknown)} (known: {', '.join(table)})")
    return tuple(_adapter(table[n]) for n in clients)
