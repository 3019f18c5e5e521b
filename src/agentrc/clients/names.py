"""The clients' names alone, without their adapters: what the command line needs to parse
and check `--client` before it knows whether there is anything to build.

A no-change build prints the last result and stops (agentrc.pipeline.build); importing the
adapters (agentrc.clients.registry) cost more than the rest of such a build together. The
registry remains the one list: tests/test_registry.py fails when these names disagree with it.

So do the adapters' facts below, which the registry's derived lists read so that a build
imports the adapters of its clients alone: tests/test_client_facts.py fails when they
disagree with the adapters.
"""

from __future__ import annotations

from typing import Tuple

CLIENTS: Tuple[str, ...] = ("claude", "copilot", "opencode", "cursor", "codex", "gemini", "windsurf", "openclaw",
                            "hermes", "aider", "pi", "cline", "amp")
DEFAULT_CLIENTS: Tuple[str, ...] = ("claude", "copilot", "opencode")
PLUGIN_LAYOUTS: Tuple[str, ...] = ("claude", "cursor", "gemini", "codex", "pi")  # registry.PLUGIN_LAYOUTS' keys
FAMILIES: Tuple[str, ...] = CLIENTS  # each adapter's `family`, in registry order
PASSTHROUGH_BLOCKS: Tuple[str, ...] = CLIENTS  # each adapter's `passthrough_block`, in registry order
ALIASES: Tuple[str, ...] = ("claude-code", "vscode", "github-copilot")  # the adapters' `aliases`
SHARED_BLOCKS: Tuple[Tuple[str, str], ...] = (("openclaw", "OpenClaw"), ("hermes", "Hermes Agent"),
                                              ("pi", "pi"))  # `shared_block`
AGENT_SKILLS_WRITERS: Tuple[str, ...] = ("codex", "gemini", "openclaw", "hermes", "pi",
                                        "amp")  # `skill_dir` .agents/skills
# Every skill frontmatter field some adapter reads: the union of their `skill_fields`, and the
# keys Hermes and OpenClaw read at the top level (hermes.HERMES_SKILL_KEYS,
# openclaw.OPENCLAW_SKILL_KEYS). A skill's other fields go into the Agent Skills `metadata`
# map for every client (clients.skillmeta).
SKILL_FIELDS_READ = frozenset({
    "agent", "allowed-tools", "argument-hint", "arguments", "author", "background", "color", "command-arg-mode",
    "command-dispatch", "command-tool", "compatibility", "context", "disable-model-invocation", "disallowed-tools",
    "effort", "environments", "globs", "homepage", "hooks", "icon", "model", "paths", "platforms",
    "required_environment_variables", "shell", "user-invocable", "version", "when_to_use",
})
