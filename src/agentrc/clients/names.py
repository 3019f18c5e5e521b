"""The clients' names alone, without their adapters: what the command line needs to parse
and check `--client` before it knows whether there is anything to build.

A no-change build prints the last result and stops (agentrc.building.build); importing the
adapters (agentrc.clients.registry) cost more than the rest of such a build together. The
registry remains the one list: tests/test_registry.py fails when these names disagree with it.

So do the adapters' facts below, which the registry's derived lists read so that a build
imports the adapters of its clients alone: tests/test_client_facts.py fails when they
disagree with the adapters.
"""

from __future__ import annotations

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, Tuple

CLIENTS: Tuple[str, ...] = ("claude", "copilot", "opencode", "cursor", "codex", "gemini", "windsurf", "openclaw",
                            "hermes", "antigravity", "pi", "cline", "aider",
                            "amp", "qwen", "vibe", "droid", "crush", "auggie", "kilo", "kimi", "continue")
DEFAULT_CLIENTS: Tuple[str, ...] = ("claude", "copilot", "opencode")
PLUGIN_LAYOUTS: Tuple[str, ...] = ("claude", "cursor", "gemini", "codex", "antigravity",
                                   "pi", "qwen", "vibe", "droid", "auggie")  # registry.PLUGIN_LAYOUTS' keys
FAMILIES: Tuple[str, ...] = CLIENTS  # each adapter's `family`, in registry order
PASSTHROUGH_BLOCKS: Tuple[str, ...] = CLIENTS  # each adapter's `passthrough_block`, in registry order
ALIASES: Tuple[str, ...] = ("claude-code", "vscode", "github-copilot")  # the adapters' `aliases`
SHARED_BLOCKS: Tuple[Tuple[str, str], ...] = (("openclaw", "OpenClaw"), ("hermes", "Hermes Agent"),
                                              ("pi", "pi"), ("vibe", "Mistral Vibe"),
                                              ("crush", "Crush"), ("kimi", "Kimi Code CLI"))  # `shared_block`
AGENT_SKILLS_WRITERS: Tuple[str, ...] = ("codex", "gemini", "openclaw", "hermes", "antigravity", "pi",
                                        "amp", "vibe", "crush", "kimi")  # `skill_dir` .agents/skills
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

# What each client's output was checked with, for its generated page (issue 33 item 4): the pinned
# CLI (tests/test_client_checked.py holds each version equal to its pin) or, where no CLI runs
# here, its documentation of a date; and what became of a client (retired, renamed), with when.
# client -> (what it was checked with, the package and pin file that say so, or "" for docs)
CHECKED_WITH: Dict[str, Tuple[str, str]] = {
    "claude": ("Claude Code 2.1.332", "npm @anthropic-ai/claude-code in tools/package.json"),
    "copilot": ("GitHub Copilot CLI 1.0.102", "npm @github/copilot in tools/package.json"),
    "opencode": ("opencode 1.18.33", "npm opencode-ai in tools/package.json"),
    "cursor": ("Cursor's documentation of 2026-11-30 (no Cursor CLI is pinned)", ""),
    "codex": ("Codex CLI 0.171.0", "npm @openai/codex in tools/package.json"),
    "gemini": ("Gemini CLI 0.61.0", "npm @google/gemini-cli in tools/package.json"),
    "windsurf": ("Windsurf's and Devin's documentation of 2026-11-30 (no Windsurf CLI is pinned)", ""),
    "openclaw": ("OpenClaw 2026.9.6", "npm openclaw in tools/openclaw-package.json"),
    "hermes": ("Hermes Agent 0.19.0", "PyPI hermes-agent in tools/hermes-requirements.txt"),
    "antigravity": ("Google's Antigravity CLI documentation of 2026-12-06 (agy is in no package registry, "
                    "so no CLI runs here)", ""),
    "kilo": ("Kilo Code CLI 7.7.7", "npm @kilocode/cli in tools/package.json"),
    "pi": ("pi 0.73.1", "npm @mariozechner/pi-coding-agent in tools/package.json"),
    "cline": ("Cline CLI 3.0.65", "npm cline in tools/package.json"),
    "qwen": ("Qwen Code 0.24.4", "npm @qwen-code/qwen-code in tools/package.json"),
    "amp": ("Amp CLI 0.0.1790142911-g7618fb", "npm @ampcode/cli in tools/package.json"),
    "droid": ("Factory droid 0.225.2", "npm @factory/cli-linux-x64 in tools/package.json"),
    "auggie": ("Auggie 0.36.0", "npm @augmentcode/auggie in tools/package.json"),
    "aider": ("Aider 0.86.2", "PyPI aider-chat in tools/aider-requirements.txt"),
    "vibe": ("Mistral Vibe 3.0.2", "PyPI mistral-vibe in tools/vibe-requirements.txt"),
    "kimi": ("Kimi CLI 1.51.0", "PyPI kimi-cli in tools/kimi-requirements.txt"),
    "crush": ("Crush's documentation of 2026-12-06 (its npm package downloads its binary from github.com, so no "
              "Crush CLI runs here)", ""),
    "continue": ("Continue CLI (cn) 1.5.47", "npm @continuedev/cli in tools/package.json"),
}

# client -> what became of it, with the date (retired for some accounts, renamed).
CLIENT_STATUS: Dict[str, str] = {
    "gemini": ("Google retired Gemini CLI for consumer accounts (free, Google AI Pro and Ultra) on 2026-06-18; "
               "Gemini Code Assist Standard and Enterprise licenses and API keys keep it, and this target stays "
               "for them. Its successor for the others is the Antigravity CLI (`--client antigravity`)."),
    "windsurf": "Windsurf was renamed Devin Desktop on 2026-06-02; the target keeps the name `windsurf`.",
    "kimi": ("Moonshot stopped maintaining Kimi CLI (PyPI `kimi-cli`) on 2026-09-21 in favour of Kimi Code CLI, a "
             "native binary installed by Moonshot's own script; `kimi-cli` 1.51.0 is its final release and the one "
             "this target is checked with (1.52.0 only runs that installer)."),
    "amp": ("Amp's CLI is published as `@ampcode/cli`, formerly `@sourcegraph/amp`; the target is `amp` under either "
            "name."),
    "antigravity": ("The successor of Gemini CLI for consumer accounts since 2026-06-18 (`agy`). Its layout "
                    "(`.agents/rules`, `.agents/skills`, `.agents/agents/<name>/agent.md`, "
                    "`.agents/mcp_config.json`, AGENTS.md and GEMINI.md, the plugin package) was verified from "
                    "Google's documentation of 2026-12-06, not by running `agy`: the rules' `trigger:` keys are "
                    "from the Antigravity IDE's rules page, the rest from the CLI's pages."),
    "kilo": ("Kilo Code CLI 7.8.1 (2026-09-27) names a Linux binary package the npm registry does not have, so "
             "this target is checked with 7.7.7, the newest release that installs on Linux, run offline: `kilo "
             "debug skill`, `kilo debug config` and its first model request. A project `kilo.json` may not reference "
             "the environment (`{env:VAR}`): Kilo skips a server whose headers do, and the whole file for any "
             "other reference, so agentrc leaves such values out, for your own `~/.config/kilo/kilo.json`."),
    "continue": ("Checked by running the Continue CLI (`cn`), which shares the `.continue/` files with Continue's "
                 "IDE extensions. The CLI reads the always-on rules only (a rule with `globs` is for the IDE "
                 "extensions), has no command or prompt files (commands are skills: `/<name>` in its terminal UI "
                 "loads one, without arguments), runs an agent file when named (`cn --agent`), loads a "
                 "`.continue/mcpServers` block only when named (`cn --mcp`; the IDE extensions load the folder, "
                 "per Continue's documentation) and fires no hooks."),
}
