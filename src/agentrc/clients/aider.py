"""Aider (PyPI `aider-chat`): read-only files named in `.aider.conf.yml`, and nothing else.

Aider has no rules directory, skills, agents, custom commands, hooks or MCP servers, and it
does not read AGENTS.md on its own. What it has is `read:` in `.aider.conf.yml` (git root,
then the working directory, then the home directory): files added to every chat read-only,
their whole text sent to the model. So rules become markdown files under `.aider/rules`, and
they and the shared AGENTS.md are appended to that list. The list is written as JSON, which
YAML reads, key by key into the user's file.

Verified with aider 0.86.2 (tests/conformance/test_aider_discovery.py): with that config in
the project, `aider --message` sends every listed file's text to the model under "Here are
some READ ONLY files"; its argument parser (configargparse) reads `.aider.conf.yml` as
YAML, so a JSON file works.
"""

from __future__ import annotations

from agentrc.clients import ignorefile
from agentrc.clients.base import ClientAdapter, RenderContext, context_section
from agentrc.fidelity import Tracker
from agentrc.files import fragment
from agentrc.model import Item, Kind

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Sequence

CONFIG = ".aider.conf.yml"
RULES_DIR = ".aider/rules"
# Aider has no named tools to allow or deny (it edits through its edit formats and runs shell
# commands it suggests after asking), so every capability of the vocabulary is unnamed.
TOOL_NAMES: Dict[str, str] = {}
NOT_READ = "Aider reads the file's text whole, as a read-only file of every chat"


def read_entry(path: str, owner: str) -> Any:
    """One element of `read:` in .aider.conf.yml (identical entries are written once)."""
    return fragment(CONFIG, "json", ("read",), path, owner, append=True)


class Aider(ClientAdapter):
    name = "aider"
    family = "aider"
    title = "Aider"
    ignore_file = ignorefile.mapped(
        '.aiderignore', 'aider leaves these files out of its repository map and will not add them to the chat')
    passthrough_block = "aider"
    passthrough_example = {"note": "kept"}
    tool_names = TOOL_NAMES
    # Rules and the global context only: Aider has no skills, agents, custom commands or
    # hooks, and no MCP servers (every field of those is reported dropped by the frame).
    kinds = (Kind.RULE, Kind.CONTEXT)
    capabilities = frozenset()
    resource_root = ".aider/agentrc"
    # A rule file is sent whole: no frontmatter, so the aider: block has nowhere to go.
    passthrough_in_frontmatter = False

    def rule(self, item, ctx, tracker, fm, body):
        if "name" in item.fields:
            tracker.mapped("name", f"file name, and the title of {RULES_DIR}/<name>.md")
        tracker.dropped("description", f"{NOT_READ}; a rule has no description there")
        if item.scope_paths:
            tracker.degraded("scope", f"Aider has no path-scoped rules: the rule is in every chat ({CONFIG} read:)")
        block = self.passthrough_block
        if block in item.passthrough:
            tracker.dropped(block, f"a rule file has no frontmatter in Aider ({NOT_READ})")
        body, extra = self.place(item, RULES_DIR, body, tracker)
        path = f"{RULES_DIR}/{item.name}.md"
        for f in tracker.expected:
            if f not in tracker.outcomes:
                tracker.dropped(f, f"Aider reads no {f} of a rule ({NOT_READ})")
        return path, body, list(extra) + [read_entry(path, self.owner(item))]

    def context(self, item: Item, ctx: RenderContext, tracker: Tracker) -> Sequence[Any]:
        out: List[Any] = list(context_section(self, item, ctx, tracker, self.context_file))
        # Aider does not read AGENTS.md by itself: the read: list names it.
        return out + [read_entry(self.context_file, self.owner(item))]
