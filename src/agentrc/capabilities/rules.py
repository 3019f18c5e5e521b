"""Spec 003's rules over several capabilities at once: ids are unique (AR152), and a soul
gets at most one integration per fundamental layer (AR153)."""

from __future__ import annotations

from agentrc.capabilities.model import Capability
from agentrc.diagnostics import Diagnostics

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, Sequence, Tuple


def duplicate_ids(capabilities: Sequence[Tuple[str, Capability]], diags: Diagnostics) -> None:
    """`capabilities`: (where it comes from, capability) of one source layer (one package,
    or the packages of one scope). Each id repeated is an error at its second place."""
    seen: Dict[str, str] = {}
    for origin, cap in capabilities:
        if cap.id in seen:
            diags.error(origin, (0, 0), "AR152", f"capability {cap.id!r} is also exported by {seen[cap.id]}")
        else:
            seen[cap.id] = origin


def layer_conflicts(soul: str, active: Sequence[Tuple[str, Capability]], diags: Diagnostics) -> None:
    """`active`: (where it comes from, capability) of the capabilities active for `soul`.
    Two that declare the same layer are an error."""
    holder: Dict[str, Tuple[str, Capability]] = {}
    for origin, cap in active:
        if not cap.layer:
            continue
        if cap.layer in holder and holder[cap.layer][1].id != cap.id:
            first = holder[cap.layer][1]
            diags.error(origin, (0, 0), "AR153", f"soul {soul!r}: {cap.id!r} and {first.id!r} both implement the "
                        f"{cap.layer} layer; one integration per layer")
        else:
            holder.setdefault(cap.layer, (origin, cap))
