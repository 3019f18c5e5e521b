"""The capability-level tool vocabulary (spec 001 §4) and the portable model aliases (§3.4).

Per-client names live in each client adapter; this module holds only what is neutral.
The spec's §4 table lists eight capabilities; agentrc checks each client's column against
that client's current documentation (see docs/clients/) rather than copying the spec's
cells, which predate Copilot's and opencode's current tool names.
"""

from __future__ import annotations

import re
from typing import Optional

TOOLS = ("read", "write", "edit", "bash", "grep", "glob", "web-fetch", "web-search")

# §3.4: the guaranteed short aliases, plus `inherit` (use the session's model), which every
# client that has agents understands in some form.
MODEL_ALIASES = ("sonnet", "opus", "haiku", "inherit")

QUALIFIED_MODEL_RE = re.compile(r"^[a-z0-9][a-z0-9-]*/[A-Za-z0-9][\w.:#@-]*$")


def check_model(model: str) -> bool:
    return model in MODEL_ALIASES or bool(QUALIFIED_MODEL_RE.match(model))


def join_model(provider: Optional[str], ident: str) -> str:
    """The inverse of `split_model`."""
    return f"{provider}/{ident}" if provider is not None else ident


def split_model(model: str):
    """`anthropic/claude-sonnet-4-5` -> ('anthropic', 'claude-sonnet-4-5'); aliases -> (None, alias)."""
    if "/" in model:
        provider, ident = model.split("/", 1)
        return provider, ident
    return None, model
