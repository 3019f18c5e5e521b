"""The per-client totals of a build (`agentrc build`'s summary lines, `pants package`'s).

Apart from the planner (agentrc.output.plan) on purpose: a no-change build prints the last
build's totals, and must not import the client adapters the planner needs to do so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Iterable, List, Tuple

if TYPE_CHECKING:
    from agentrc.fidelity import ItemReport


def summary(reports: Iterable[ItemReport]) -> Dict[str, Dict[str, int]]:
    """Per client: how many items were generated, and how many fields per status.
    (agentrc.fidelity is imported here: a no-change build prints recorded totals only.)"""
    from agentrc.fidelity import STATUSES
    out: Dict[str, Dict[str, int]] = {}
    # Reports share their tuple of outcomes (agentrc.output.plan `_outcomes`): each distinct
    # tuple is counted once, by identity (held here, so no other object can take its id).
    counted: Dict[int, Tuple[tuple, List[Tuple[str, int]]]] = {}
    for r in reports:
        s = out.setdefault(r.client, dict({"items": 0, "skipped": 0, "servers": 0},
                                          **{status: 0 for status in STATUSES}))
        if r.kind == "mcp":
            s["servers"] += 1 if r.generated else 0
        elif r.kind != "tools":
            s["items" if r.generated and r.outputs else "skipped"] += 1
        known = counted.get(id(r.fields))
        if known is None:
            per: Dict[str, int] = {}
            for f in r.fields:
                per[f.status] = per.get(f.status, 0) + 1
            known = counted[id(r.fields)] = (r.fields, list(per.items()))
        for status, n in known[1]:
            s[status] = s.get(status, 0) + n
    return out


def summary_lines(totals: Dict[str, Dict[str, int]]) -> List[str]:
    """One line per client of `summary()`: what `agentrc build` prints and what `pants
    package` shows for a package."""
    lines = []
    for client, s in totals.items():
        fields = ", ".join(f"{s.get(k, 0)} {k}" for k in ("emitted", "mapped", "degraded", "dropped"))
        servers = f", {s['servers']} MCP servers" if s.get("servers") else ""
        lines.append(f"{client}: {s['items']} items generated, {s['skipped']} not generated (audience, or a kind "
                     f"the client lacks){servers}; fields: {fields}")
    return lines
