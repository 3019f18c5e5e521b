"""A skill's fields that no client reads, carried in the Agent Skills `metadata` map.

Spec 001 §3.3 lets a skill hold fields the format does not define and asks that they pass
through to the clients. Written at the top level of a SKILL.md they would reach no client
as meant: each client reads the fields it knows and ignores or refuses the rest, the Agent
Skills reference validator (skills-ref) refuses every key but its six, and the shared
`.agents/skills` copy holds the standard's form only. The standard has one place for
properties it does not define, `metadata`, a map of strings that every client reading
SKILL.md accepts. So a field no client agentrc has reads (`team: platform`) is written
there, the same way for every client, which keeps shared copies byte for byte alike; a
value that is not a string becomes its YAML text (degraded), and a list or a map, which
the map cannot hold, is dropped (AR092), each with its reason in the fidelity report.

A field some client reads (`names.SKILL_FIELDS_READ`) stays that client's business: the
others drop it as before.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from agentrc.clients import names
from agentrc.fidelity import Tracker
from agentrc.model import Item, Kind

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, Optional

_WHY = "the Agent Skills map for properties the standard does not define; no client agentrc has reads the field"


def carry_unread(item: Item, entry: str, fm: Dict[str, Any], tracker: Tracker) -> None:
    """Put a skill's unread fields into the `metadata` map of `fm`, the frontmatter of the
    SKILL.md `entry`, once every other key is set (a passthrough block's own `metadata:`
    keys win a clash)."""
    if item.kind is not Kind.SKILL or not item.extra or not entry.endswith("/SKILL.md"):
        return
    carried: Dict[str, str] = {}
    for key, value in item.extra.items():
        if key in names.SKILL_FIELDS_READ:
            continue
        text = _as_text(value)
        existing = fm.get("metadata")
        if existing is not None and (not isinstance(existing, dict) or key in existing):
            tracker.dropped(key, f"metadata.{key} is set by a passthrough block's metadata, which wins")
        elif text is None:
            tracker.dropped(key, f"a {_what(value)}: the Agent Skills metadata map, where SKILL.md carries a field "
                                 "no client reads, holds strings only")
        else:
            carried[key] = text
            if isinstance(value, str):
                tracker.mapped(key, f"metadata.{key} in SKILL.md: {_WHY}")
            else:
                tracker.degraded(key, f"metadata.{key}: {text!r} in SKILL.md, a string (the Agent Skills metadata map "
                                      f"holds strings): {_WHY}")
    if carried:
        existing = fm.get("metadata")
        fm["metadata"] = {**existing, **carried} if isinstance(existing, dict) else carried


def _as_text(value: Any) -> Optional[str]:
    """A scalar as the string YAML would show it; None for a list, a map or no value."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value) if isinstance(value, float) else str(value)
    # A date exists only once `datetime` is imported (by YAML's loader): not imported for this.
    dates = sys.modules.get("datetime")
    if dates is not None and isinstance(value, dates.date):  # (a datetime is a date too)
        return value.isoformat()
    return None


def _what(value: Any) -> str:
    if value is None:
        return "field with no value"
    return "list" if isinstance(value, (list, tuple)) else "map" if isinstance(value, Mapping) else type(value).__name__
