"""The clients' names alone, without their adapters: what the command line needs to parse
and check `--client` before it knows whether there is anything to build.

A no-change build prints the last result and stops (agentrc.pipeline.build); importing the
adapters (agentrc.clients.registry) cost more than the rest of such a build together. The
registry remains the one list: tests/test_registry.py fails when these names disagree with it.
"""

from __future__ import annotations

from typing import Tuple

CLIENTS: Tuple[str, ...] = ("claude", "copilot", "opencode", "cursor", "codex", "gemini", "windsurf", "openclaw",
                            "hermes")
DEFAULT_CLIENTS: Tuple[str, ...] = ("claude", "copilot", "opencode")
PLUGIN_LAYOUTS: Tuple[str, ...] = ("claude", "cursor", "gemini", "codex")  # registry.PLUGIN_LAYOUTS' keys
