"""What the render stage shares between clients and items, and the shortcuts it takes,
give what the plain computation gives: PyYAML's remembered dumps, the fidelity report's
order without a sort, a document formatted once for the clients of an item."""

from __future__ import annotations

import random

import pytest
import yaml

from agentrc import fidelity
from agentrc.clients import base
from agentrc.clients import registry as client_registry
from agentrc.frozen import FrozenMap
from agentrc.model import Item, Kind, Registry
from agentrc.output import plan as planning
from agentrc.text import yamlemit


def _fresh_dump(data) -> str:
    yamlemit._DUMPED.clear()
    return yamlemit.dump_yaml(data)


@pytest.mark.parametrize("value", [
    {"a": 0.0}, {"a": -0.0}, {"a": 1}, {"a": True}, {"a": "1"}, {"a": 1.0}, {"a": None}, {"a": "true"},
    {1: "x"}, {"1": "x"}, {True: "x"}, {"a": [1, "1", 1.0, True, None]}, {"a": {"b": [{"c": 1e-05}]}},
    [{"a": 1}, {"a": "1"}], {"a": float("nan")}, {"b": 2, "a": 1}, {"a": 1, "b": 2},
])
def test_a_remembered_dump_is_the_dump_of_that_very_value(value):
    """Values equal in Python but written differently (0.0 and -0.0, 1 and True, key order)
    never share a remembered dump."""
    others = [{"a": 0.0}, {"a": -0.0}, {"a": 1}, {"a": True}, {"a": 1.0}, {"b": 2, "a": 1}, {"a": 1, "b": 2},
              {1: "x"}, {True: "x"}]
    for other in others:  # whatever was dumped before
        yamlemit.dump_yaml({"k": other})
    assert yamlemit.dump_yaml({"k": value}) == _fresh_dump({"k": value})


def test_remembered_dumps_are_bounded(monkeypatch):
    monkeypatch.setattr(yamlemit, "_MOST_DUMPED", 8)
    yamlemit._DUMPED.clear()
    for i in range(50):
        assert yamlemit.dump_yaml({"m": {"k": i}}) == f"m:\n  k: {i}\n"
    assert len(yamlemit._DUMPED) <= 8


def _reference_finish(tracker: fidelity.Tracker, where: str):
    missing = [f for f in tracker.expected if f not in tracker.outcomes]
    if missing:
        raise fidelity.UnreportedField(f"{where}: no fidelity outcome for {', '.join(missing)}")
    order = {f: i for i, f in enumerate(tracker.expected)}
    return tuple(sorted(tracker.outcomes.values(), key=lambda o: (order.get(o.field, len(order)), o.field)))


def test_finish_orders_outcomes_as_the_sort_did():
    """Expected fields in their order (a field expected twice: by its last place), then the
    others by name; with each field expected once and no other, no sort is needed."""
    names = list("abcdefg") + ["body", "resources"]
    for seed in range(3000):
        rng = random.Random(seed)
        tracker = fidelity.Tracker([rng.choice(names) for _ in range(rng.randrange(0, 8))])
        for f in rng.sample(names, rng.randrange(0, len(names))):
            getattr(tracker, rng.choice(["emitted", "mapped", "degraded", "dropped", "omitted"]))(f, "why")
        for f in tracker.expected:
            if rng.random() < 0.9 and f not in tracker.outcomes:
                tracker.set(f, fidelity.EMITTED)
        results = []
        for finish in (_reference_finish, fidelity.Tracker.finish):
            try:
                results.append(finish(tracker, "x"))
            except fidelity.UnreportedField as e:
                results.append(str(e))
        assert results[0] == results[1]


def _agent(name: str, body: str) -> Item:
    return Item(kind=Kind.AGENT, name=name, directory=f"agents/{name}", entrypoint=f"agents/{name}/AGENT.md",
                schema=1, description=f"{name} agent", body=body, body_line=4,
                fields=FrozenMap({"name": name, "description": f"{name} agent"}),
                preload_skills=(("helper", (1, 1)),))


def test_a_document_is_formatted_once_per_item_and_body(monkeypatch):
    """The clients of a build render an item's body alike: it is formatted once for all of
    them, and the documents kept for that are let go of after each item."""
    formatted = []
    real = base._format_document
    monkeypatch.setattr(base, "_format_document", lambda text: formatted.append(text) or real(text))
    items = [_agent("a", "Do a.\n"), _agent("b", "Do b.\n")]
    adapters = client_registry.get(["claude", "copilot", "opencode"])
    result = planning.plan(Registry(tuple(items)), adapters)
    # claude's agent body has no skills section, copilot's and opencode's have the same one.
    assert len(formatted) == 4
    by_path = {f.path: f.content.decode() for f in result.files}
    assert by_path[".github/agents/a.agent.md"].endswith("# a\n\nDo a.\n\n## Skills\n\nThis agent relies on the "
                                                         "following skills, installed alongside it.\nUse them when "
                                                         "relevant:\n\n- helper\n")
    assert [(r.client, r.name) for r in result.reports] == [(c, n) for c in ("claude", "copilot", "opencode")
                                                            for n in ("a", "b")]


def test_remembered_scalars_are_written_as_before_and_bounded(monkeypatch):
    monkeypatch.setattr(yamlemit, "_MOST_SCALARS", 8)
    yamlemit._SCALARS.clear()
    values = ["plain", "yes", "a: b", "null", "1.5", "x #y", "caf\u00e9", "tab\there", "", "~"] * 3
    for i, v in enumerate(values):
        yamlemit._SCALARS.clear()
        fresh = yamlemit.dump_yaml({"k": v})
        for n in range(i % 9):  # other strings remembered since, up to the bound
            yamlemit.dump_yaml({"k": f"{v}-{n}"})
        assert yamlemit.dump_yaml({"k": v}) == fresh
        assert yaml.safe_load(fresh) == {"k": v}
        assert len(yamlemit._SCALARS) <= 8
