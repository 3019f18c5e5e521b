"""A loaded registry with its diagnostics, and the join of two front doors' registries.

Both front doors (portable sources, canonical projects) yield a `Loaded`; the pipeline
joins them into one model. Shared by `agentrc.inputs` and `agentrc.pipeline`.
"""

from __future__ import annotations

from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.fidelity import ItemReport
from agentrc.frozen import FrozenMap
from agentrc.model import Registry

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Tuple


@dataclass(frozen=True)
class Loaded:
    """The registry a front door made of its input, with its diagnostics and its account of each key."""
    registry: Registry
    diagnostics: Tuple[Diagnostic, ...]
    # What the front door did with each key of each entry (the canonical one's; the portable
    # front door reads its fields as they are, and the adapters report every one).
    reports: Tuple[ItemReport, ...] = ()

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)


def join(a: Registry, b: Registry) -> Tuple[Registry, Tuple[Diagnostic, ...]]:
    """One registry holding both; an item defined by both is an error (AR013)."""
    diags = Diagnostics()
    seen = {i.key: i for i in a.items}
    for item in b.items:
        if item.key in seen:
            diags.error(item.entrypoint, (1, 1), "AR013",
                        f"{item.label} is also defined by {seen[item.key].entrypoint}")
    items = tuple(sorted(a.items + b.items, key=lambda i: (i.kind.value, i.name, i.entrypoint)))
    return Registry(items, a.bundles + b.bundles, FrozenMap({**dict(a.tools), **dict(b.tools)}),
                    tuple(sorted(set(a.roots + b.roots)))), diags.sorted()
