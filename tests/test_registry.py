"""The client registry is the one list of clients: everything that depends on the set of
clients is derived from it or from the adapters' attributes. These tests fail when a
hand-kept list appears or a derived one disagrees, so adding a client stays one module
plus one registry line."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from helpers import ROOT

from agentrc.clients import registry
from agentrc.clients.base import SHARED_SKILL_DIR, ClientAdapter
from agentrc.families import SPEC_FAMILIES
from agentrc.importers.document import IMPORTERS
from agentrc.model import SourceFile, SourceTree
from agentrc.pipeline import stages
from agentrc.pipeline.fmt import format_text
from agentrc.portable.fmt import key_order

SRC = ROOT / "src" / "agentrc"
ADAPTERS = registry.ADAPTERS + tuple(registry.PLUGIN_LAYOUTS.values())


def test_names_families_and_blocks_are_unique_and_declared():
    names = [a.name for a in registry.ADAPTERS]
    assert len(set(names)) == len(names) and all(names)
    blocks = registry.passthrough_blocks()
    assert len(set(blocks)) == len(blocks)
    assert set(registry.families()) == set(SPEC_FAMILIES) | {a.family for a in registry.ADAPTERS}
    for a in ADAPTERS:
        assert a.name in registry.CLIENTS, f"{type(a).__name__}: a plugin layout of an unregistered client"
        assert a.title and a.family and a.kinds, type(a).__name__
        assert (a.tool_names is None) != (a.permissions is None), f"{a.name}: declare tool_names or permissions"
    assert set(IMPORTERS) <= set(registry.CLIENTS)


def test_the_clis_list_of_names_is_the_registrys():
    """agentrc.clients.names lets the command line check --client without importing an
    adapter (a no-change build needs none): it must say what the registry says."""
    from agentrc.clients import names

    assert names.CLIENTS == tuple(registry.CLIENTS)
    assert names.DEFAULT_CLIENTS == registry.DEFAULT_CLIENTS
    assert names.PLUGIN_LAYOUTS == tuple(registry.PLUGIN_LAYOUTS)


def test_derived_lists_follow_the_adapters():
    assert registry.agent_skills_writers() == tuple(
        a.name for a in registry.ADAPTERS if a.skill_dir == SHARED_SKILL_DIR)
    assert {"codex", "gemini", "openclaw", "hermes"} <= set(registry.agent_skills_writers())
    for block, title in registry.shared_blocks():
        adapter = next(a for a in registry.ADAPTERS if a.passthrough_block == block)
        assert adapter.title == title and adapter.skill_dir == SHARED_SKILL_DIR
    for a in ADAPTERS:
        for kind, others in a.also_reads.items():
            unknown = [o for o in others if o not in registry.CLIENTS and o != SHARED_SKILL_DIR]
            assert not unknown, f"{a.name}.also_reads[{kind}] names unregistered clients {unknown}"


def test_fmt_orders_every_registered_block_after_the_fixed_keys():
    order = key_order("rule", registry.passthrough_blocks())
    assert order[-len(registry.passthrough_blocks()):] == registry.passthrough_blocks()
    blocks = list(reversed(registry.passthrough_blocks()))
    text = "---\n" + "".join(f"{b}:\n  x: 1\n" for b in blocks) + "description: d\n---\n\nText.\n"
    out = format_text("r/x/RULE.md", text).text
    positions = [out.index(f"\n{b}:") for b in registry.passthrough_blocks()]
    assert positions == sorted(positions)


def test_every_registered_block_is_a_passthrough_block_of_the_item_schema():
    for block in registry.passthrough_blocks():
        text = f"---\ndescription: d\n{block}: 5\n---\n\nText.\n"
        loaded = stages.load(SourceTree((SourceFile("r/x/RULE.md", text.encode()),)))
        codes = {(d.code, d.message.split(":")[0]) for d in loaded.diagnostics if d.is_error}
        assert ("AR006", block) in codes, f"{block}: not validated as a passthrough block ({codes})"


def test_no_hand_kept_list_of_clients_outside_the_registry():
    """A literal naming three or more registered clients is a list someone must keep in
    step by hand. Allowed: the registry, the spec's families, and a client's own module
    (its data about the others, e.g. which output trees it also reads), and the names alone
    for the command line (clients/names.py, which the test above keeps equal to the registry)."""
    names = set(registry.CLIENTS)
    allowed = {SRC / "clients" / "registry.py", SRC / "families.py", SRC / "clients" / "names.py"}
    allowed |= {SRC / "clients" / f"{n}.py" for n in names}
    found = []
    for path in SRC.rglob("*.py"):
        if path in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
                elts = node.keys if isinstance(node, ast.Dict) else node.elts
                hits = [e.value for e in elts if isinstance(e, ast.Constant) and e.value in names]
                if len(hits) >= 3:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {hits}")
    for path in (SRC / "schemas").glob("*.json"):
        text = json.dumps(json.loads(path.read_text(encoding="utf-8")))
        hits = [n for n in sorted(names) if f'"{n}"' in text]
        if len(hits) >= 3:
            found.append(f"{path.relative_to(ROOT)}: {hits}")
    assert not found, "lists of clients kept by hand:\n" + "\n".join(found)


def test_the_adapter_base_declares_every_hook_its_users_call():
    """Hooks the pipeline calls on adapters exist on the base class, typed."""
    for hook in ("render", "render_server", "render_tools", "project_files", "manifest", "marketplace",
                 "prepare", "whole_file", "finish"):
        assert callable(getattr(ClientAdapter, hook, None)), hook
        assert getattr(ClientAdapter, hook).__annotations__.get("return"), f"{hook}: no return type"
