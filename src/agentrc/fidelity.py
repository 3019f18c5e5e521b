"""Fidelity reports: for each item and client, what happened to every field.

Statuses:
- emitted:  written to the client's output as authored.
- mapped:   written in the client's own form (renamed key, converted value, other file).
- degraded: the client gets a weaker equivalent (a rule scoped to paths becomes always-on).
- dropped:  the client has no equivalent; the information is not in its output.
- omitted:  intentionally not written: SSOT-only fields (schema, license, metadata,
            requires, ignore, audience) and passthrough blocks of other clients.

A `Tracker` is handed to each adapter; `finish()` fails loudly if a field of the item was
never accounted for, so an adapter cannot drop a field silently.
"""

from __future__ import annotations

from agentrc.classcode import dataclass

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, Iterable, List, Tuple

EMITTED, MAPPED, DEGRADED, DROPPED, OMITTED = "emitted", "mapped", "degraded", "dropped", "omitted"
STATUSES = (EMITTED, MAPPED, DEGRADED, DROPPED, OMITTED)


@dataclass(frozen=True)
class FieldOutcome:
    """What became of one field of an item for one client: emitted, mapped, degraded or dropped."""
    field: str
    status: str
    detail: str = ""

    def to_json(self) -> dict:
        return {"field": self.field, "status": self.status, "detail": self.detail}


@dataclass(frozen=True)
class ItemReport:
    """The fidelity report of one item for one client: its outputs and each field's outcome."""
    client: str
    kind: str
    name: str
    source: str
    generated: bool  # False when audience excludes the client
    outputs: Tuple[str, ...]
    fields: Tuple[FieldOutcome, ...]
    # Other clients that also load this client's copy of the item from where it was written
    # (opencode reads .claude/skills): (client, path, what happens), see plan.cross_discovery.
    also_loaded_by: Tuple[Tuple[str, str, str], ...] = ()

    @property
    def worst(self) -> str:
        order = {DROPPED: 0, DEGRADED: 1, MAPPED: 2, EMITTED: 3, OMITTED: 4}
        return min((f.status for f in self.fields), key=order.__getitem__, default=EMITTED)

    def to_json(self) -> dict:
        return {
            "client": self.client,
            "kind": self.kind,
            "name": self.name,
            "source": self.source,
            "generated": self.generated,
            "outputs": list(self.outputs),
            "fields": [f.to_json() for f in self.fields],
            # Only when there is one: single-client reports keep their shape.
            **({"also_loaded_by": [{"client": c, "path": p, "detail": d} for c, p, d in self.also_loaded_by]}
               if self.also_loaded_by else {}),
        }


# Every FieldOutcome made, by its (field, status, detail): a cold build of 5,000 items makes
# about 120,000 of them but fewer than 1,000 distinct ones, and they are frozen, so one object
# serves every report that has it (17 MB less at 5,000 items). Cleared when it grows past
# `_MOST`: a long-lived process (pantsd) must not keep every detail string it ever saw.
_OUTCOMES: Dict[Tuple[str, str, str], FieldOutcome] = {}
_MOST = 50_000


def outcome(field: str, status: str, detail: str = "") -> FieldOutcome:
    """The one FieldOutcome of (field, status, detail), made on first use."""
    key = (field, status, detail)
    known = _OUTCOMES.get(key)
    if known is None:
        if len(_OUTCOMES) >= _MOST:
            _OUTCOMES.clear()
        known = _OUTCOMES[key] = FieldOutcome(field, status, detail)
    return known


class UnreportedField(AssertionError):
    """An adapter forgot a field: a bug in agentrc, never a user error."""


class Tracker:
    def __init__(self, expected: Iterable[str]):
        self.expected: List[str] = list(expected)
        self.outcomes: Dict[str, FieldOutcome] = {}

    def set(self, field: str, status: str, detail: str = "") -> None:
        assert status in STATUSES, status
        self.outcomes[field] = outcome(field, status, detail)

    # The statuses' own setters skip `set`'s check (a build reports 120,000 outcomes).
    def emitted(self, field: str, detail: str = "") -> None:
        self.outcomes[field] = outcome(field, EMITTED, detail)

    def mapped(self, field: str, detail: str) -> None:
        self.outcomes[field] = outcome(field, MAPPED, detail)

    def degraded(self, field: str, detail: str) -> None:
        self.outcomes[field] = outcome(field, DEGRADED, detail)

    def dropped(self, field: str, detail: str) -> None:
        self.outcomes[field] = outcome(field, DROPPED, detail)

    def omitted(self, field: str, detail: str) -> None:
        self.outcomes[field] = outcome(field, OMITTED, detail)

    def finish(self, where: str) -> Tuple[FieldOutcome, ...]:
        """The outcomes in the order of `expected`, then those of other fields by name."""
        expected, outcomes = self.expected, self.outcomes
        try:
            ordered = [outcomes[f] for f in expected]
        except KeyError:
            missing = [f for f in expected if f not in outcomes]
            raise UnreportedField(f"{where}: no fidelity outcome for {', '.join(missing)}") from None
        if len(outcomes) == len(expected) == len(set(expected)):
            return tuple(ordered)  # each field expected once, and no other: nothing to sort
        order = {f: i for i, f in enumerate(expected)}
        return tuple(sorted(outcomes.values(), key=lambda o: (order.get(o.field, len(order)), o.field)))
