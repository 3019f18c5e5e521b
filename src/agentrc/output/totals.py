"""The per-client totals of a build (`agentrc build`'s summary lines, `pants package`'s).

Apart from the planner (agentrc.output.plan) on purpose: a no-change build prints the last
build's totals, and must not import the client adapters the planner needs to do so.
"""

from __future__ import annotations

from collections import Counter
from itertools import chain
from operator import attrgetter

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, Iterable, List

    from agentrc.fidelity import ItemReport


_status = attrgetter("status")


def summary(reports: Iterable[ItemReport]) -> Dict[str, Dict[str, int]]:
    """Per client: how many items were generated, and how many fields per status.
    (agentrc.fidelity is imported here: a no-change build prints recorded totals only.)"""
    from agentrc.fidelity import STATUSES
    out: Dict[str, Dict[str, int]] = {}
    fields: Dict[str, List[tuple]] = {}  # per client, each report's outcomes, counted at the end
    for r in reports:
        s = out.get(r.client)
        if s is None:
            s = out[r.client] = dict({"items": 0, "skipped": 0, "servers": 0}, **{status: 0 for status in STATUSES})
            fields[r.client] = []
        if r.kind == "mcp":
            s["servers"] += 1 if r.generated else 0
        elif r.kind != "tools":
            s["items" if r.generated and r.outputs else "skipped"] += 1
        fields[r.client].append(r.fields)
    # One loop in C per client over every outcome (Counter's): counted in Python, report by
    # report, with each client's totals made anew for each, it was 0.06 s of a 10,000-item
    # build (most items' outcomes are their own: a model, a path in a detail).
    for client, held in fields.items():
        s = out[client]
        for status, n in Counter(map(_status, chain.from_iterable(held))).items():
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
