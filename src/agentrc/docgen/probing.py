"""The probe registry the client pages are made from: items of every kind with every field
set, and variants (directives, overrides, no resources, another audience, each mode and
model), loaded through `agentrc.pipeline.stages.load` and rendered through an adapter
(`render_probes`). `docgen.pages` tabulates the renderings' fidelity reports; changing an
adapter changes its page.
"""

from __future__ import annotations

import re
from dataclasses import field

import yaml

from agentrc.classcode import dataclass
from agentrc.clients import registry as client_registry
from agentrc.clients.base import ClientAdapter
from agentrc.docgen.markup import code
from agentrc.fidelity import ItemReport
from agentrc.files import Fragment, OutputFile
from agentrc.model import Item, Kind, SourceFile, SourceTree
from agentrc.pipeline import stages as pipeline
from agentrc.vocabulary import MODEL_ALIASES, TOOLS

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

PROBE_ROOT = "probe"

# Model values probed for every client: the portable aliases plus qualified ids of two
# providers and one bare id that is neither (lint warns AR081 and passes it on).
EXTRA_MODELS = ("anthropic/claude-sonnet-4-5", "openai/gpt-5", "gpt-5")

# Values for skill fields the probe sets; any other known field gets a string.
SKILL_FIELD_VALUES: Dict[str, Any] = {
    "allowed-tools": "Read Grep",
    "compatibility": "Requires git",
    "disable-model-invocation": True,
    "user-invocable": False,
    "argument-hint": "[target]",
    "arguments": ["target"],
    "when_to_use": "When a release is cut",
    "context": "fork",
    "agent": "Explore",
    "background": False,
    "effort": "high",
    "model": "sonnet",
    "paths": ["src/**"],
    "hooks": {},
    "shell": "bash",
    "disallowed-tools": "WebSearch",
}
UNKNOWN_SKILL_FIELD = "x-team-field"


@dataclass(frozen=True)
class Row:
    """A fidelity field a probe tabulates, and what the probe did with it."""
    field: str  # the fidelity field looked up in the report
    case: str  # what the probe did with it (markdown)


@dataclass
class Probe:
    """An item written to show how each client renders some fields (the docs' fidelity tables)."""
    kind: Kind
    name: str
    frontmatter: Dict[str, Any]
    body: str
    rows: Tuple[Row, ...]  # fields tabulated for this probe
    files: Dict[str, str] = field(default_factory=dict)  # extra files in the item directory
    whole_item: bool = False  # the probe is not generated for some clients: one row for the item

    @property
    def directory(self) -> str:
        return f"{PROBE_ROOT}/{self.kind.plural}/{self.name}"


def _families() -> List[str]:
    return sorted({a.family for a in client_registry.CLIENTS.values()})


def _passthrough_blocks() -> List[str]:
    return sorted(client_registry.passthrough_blocks())


def _skill_fields() -> List[str]:
    """Every skill field any adapter knows, in a stable order."""
    names = set()
    for adapter in client_registry.CLIENTS.values():
        names |= set(adapter.skill_fields)
    return sorted(names)


PLAIN_BODY = "## Guidance\n\nFollow the team conventions.\n"
DIRECTIVE_BODY = ("## Guidance\n\nFollow the team conventions.\n\n<!-- @client:claude -->\n"
                  "Claude-only advice.\n<!-- @endclient -->\n\n<!-- @client:!claude -->\n"
                  "Advice for everyone else.\n<!-- @endclient -->\n")


def _article(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


def _common(kind: Kind, name: str, requires: Mapping[str, List[str]]) -> Dict[str, Any]:
    fm: Dict[str, Any] = {
        "schema": 1,
        "name": name,
        "description": f"Use when probing how agentrc renders {_article(kind.value)}",
        "audience": _families(),
        "license": "proprietary",
        "metadata": {"version": "1.0.0", "author": "docs"},
    }
    if requires:
        fm["requires"] = dict(requires)
    fm["ignore"] = ["*.bak"]
    return fm


def _base_rows(fm: Mapping[str, Any], extra: Sequence[Row] = ()) -> Tuple[Row, ...]:
    labels = {
        "schema": "`schema: 1`",
        "name": "declared",
        "description": "any text",
        "audience": "lists every client",
        "license": "any text",
        "metadata": "any map",
        "requires": "same-source names",
        "ignore": "`*.bak`",
        "scope": "`scope.paths` set",
        "mode": "`subagent`",
        "model": "`sonnet`",
        "tools": "`read`, `grep`, `glob`, `bash`",
        "preload-skills": "a skill in the build",
        "argument-hint": "`<ticket>`",
        "agent": "an agent in the build",
        "event": "`PreToolUse`",
        "script": "`./check.sh --strict` (a supporting file)",
        "timeout": "`30` (seconds)",
        "async": "`true`",
        "order": "`5`",
    }
    rows = []
    for key, value in fm.items():
        if key in _passthrough_blocks():
            rows.append(Row(key, f"`{key}:` passthrough block"))
        elif key in labels:
            rows.append(Row(key, labels[key]))
        else:
            rows.append(Row(key, "set" if key != UNKNOWN_SKILL_FIELD else "a field no client defines"))
    rows.append(Row("body", "no directives"))
    rows.append(Row("resources", "a linked file"))
    return tuple(rows) + tuple(extra)


def probes() -> List[Probe]:
    """The probe items, one base probe per kind with every field set, then variants."""
    blocks = {a.passthrough_block: dict(a.passthrough_example) for a in client_registry.ADAPTERS
              if a.passthrough_block}
    blocks = {b: blocks[b] for b in _passthrough_blocks()}
    out: List[Probe] = []
    for kind_probes in (_rule_probes, _skill_probes, _agent_probes, _command_probes, _hook_probes, _context_probes):
        out += kind_probes(blocks)
    return out


_LINK = "\n\nSee [the notes](./notes.md) for details.\n"


def _rule_probes(blocks: Dict[str, Any]) -> List[Probe]:
    fm = _common(Kind.RULE, "example-rule", {"skills": ["skill-no-resources"]})
    fm["scope"] = {"paths": ["src/api/**/*.ts", "src/handlers/**/*.ts"]}
    fm.update(blocks)
    return [Probe(Kind.RULE, "example-rule", fm, PLAIN_BODY.rstrip("\n") + _LINK, _base_rows(fm),
                  {"notes.md": "# Notes\n", "draft.bak": "not copied\n"})] + _variants(Kind.RULE)


def _skill_probes(blocks: Dict[str, Any]) -> List[Probe]:
    fm = _common(Kind.SKILL, "example-skill", {"rules": ["example-rule"]})
    for key in _skill_fields():
        fm[key] = SKILL_FIELD_VALUES.get(key, "example")
    fm[UNKNOWN_SKILL_FIELD] = "example"
    fm.update(blocks)
    return [Probe(Kind.SKILL, "example-skill", fm,
                  PLAIN_BODY.rstrip("\n") + "\n\nSee [the guide](./references/guide.md).\n",
                  _base_rows(fm), {"references/guide.md": "# Guide\n", "draft.bak": "not copied\n"})
            ] + _variants(Kind.SKILL)


def _agent_probes(blocks: Dict[str, Any]) -> List[Probe]:
    fm = _common(Kind.AGENT, "example-agent", {"skills": ["example-skill"]})
    fm.update({"mode": "subagent", "model": "sonnet", "tools": ["read", "grep", "glob", "bash"],
               "preload-skills": ["example-skill"]})
    fm.update(blocks)
    out = [Probe(Kind.AGENT, "example-agent", fm, PLAIN_BODY.rstrip("\n") + _LINK, _base_rows(fm),
                 {"notes.md": "# Notes\n", "draft.bak": "not copied\n"})] + _variants(Kind.AGENT)
    for mode in ("primary", "all"):
        out.append(_minimal(Kind.AGENT, f"agent-mode-{mode}", {"mode": mode}, Row("mode", code(mode))))
    for model in MODEL_ALIASES + EXTRA_MODELS:
        slug = re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-")
        out.append(_minimal(Kind.AGENT, f"agent-model-{slug}", {"model": model}, Row("model", code(model))))
    tools = list(TOOLS)
    out.append(_minimal(Kind.AGENT, "agent-tools-all", {"tools": tools}, Row("tools", "every capability")))
    out.append(_minimal(Kind.AGENT, "agent-defaults", {}, None))
    return out


def _command_probes(blocks: Dict[str, Any]) -> List[Probe]:
    fm = _common(Kind.COMMAND, "example-command", {})
    fm.update({"argument-hint": "<ticket>", "agent": "example-agent", "model": "sonnet", "tools": ["read", "bash"]})
    fm.update(blocks)
    return [Probe(Kind.COMMAND, "example-command", fm,
                  "## Task\n\nHandle ticket $ARGUMENTS.\n\nSee [the notes](./notes.md) for details.\n",
                  _base_rows(fm), {"notes.md": "# Notes\n", "draft.bak": "not copied\n"})] + _variants(Kind.COMMAND)


def _hook_probes(blocks: Dict[str, Any]) -> List[Probe]:
    fm = _common(Kind.HOOK, "example-hook", {})
    fm.update({"event": "PreToolUse", "tools": ["bash", "edit"], "script": "./check.sh --strict", "timeout": 30,
               "async": True})
    fm.update(blocks)
    return [
        Probe(Kind.HOOK, "example-hook", fm, "## Why\n\nBlocks unsafe commands.\n", _base_rows(fm),
              {"check.sh": "#!/bin/sh\nexit 0\n", "draft.bak": "not copied\n"}),
        _minimal(Kind.HOOK, "hook-matcher", {"event": "PostToolUse", "matcher": "Edit|Write", "script": "make fmt"},
                 Row("matcher", "a raw matcher")),
        _minimal(Kind.HOOK, "hook-other-audience", {"audience": ["codex"], "event": "Stop", "script": "true"},
                 Row("audience", "does not list this client"), whole=True),
    ]


def _context_probes(blocks: Dict[str, Any]) -> List[Probe]:
    fm = _common(Kind.CONTEXT, "example-context", {})
    fm["order"] = 5
    fm.update(blocks)
    return [
        Probe(Kind.CONTEXT, "example-context", fm, PLAIN_BODY.rstrip("\n") + _LINK, _base_rows(fm),
              {"notes.md": "# Notes\n", "draft.bak": "not copied\n"}),
        _minimal(Kind.CONTEXT, "context-other-audience", {"audience": ["codex"]},
                 Row("audience", "does not list this client"), whole=True),
    ]


def _minimal(kind: Kind, name: str, fields: Dict[str, Any], row: Optional[Row], body: str = PLAIN_BODY,
             files: Optional[Dict[str, str]] = None, whole: bool = False) -> Probe:
    fm: Dict[str, Any] = {"schema": 1, "name": name,
                          "description": f"Use when probing how agentrc renders {_article(kind.value)}"}
    fm.update(fields)
    return Probe(kind, name, fm, body, (row,) if row else (), dict(files or {}), whole)


def _variants(kind: Kind) -> List[Probe]:
    entry = kind.entrypoint[: -len(".md")]
    k = kind.value
    overrides = {f"{entry}.{c}.md": f"## Guidance\n\nThe {c} version.\n"
                 for c in sorted(client_registry.CLIENTS)}
    return [
        _minimal(kind, f"{k}-directives", {}, Row("body", "with `@client` directive blocks"), DIRECTIVE_BODY),
        _minimal(kind, f"{k}-overrides", {}, Row("body", f"an override file `{entry}.<client>.md`"),
                 files=overrides),
        _minimal(kind, f"{k}-no-resources", {}, Row("resources", "no supporting files")),
        _minimal(kind, f"{k}-other-audience", {"audience": ["codex"]},
                 Row("audience", "does not list this client"), whole=True),
    ]


def probe_tree(items: Sequence[Probe]) -> SourceTree:
    files: List[SourceFile] = []
    for p in items:
        text = "---\n" + yaml.safe_dump(p.frontmatter, sort_keys=False, default_flow_style=False) + "---\n\n" + p.body
        files.append(SourceFile(f"{p.directory}/{p.kind.entrypoint}", text.encode()))
        for rel, content in sorted(p.files.items()):
            files.append(SourceFile(f"{p.directory}/{rel}", content.encode()))
    return SourceTree(tuple(sorted(files, key=lambda f: f.path)))


@dataclass(frozen=True)
class Rendering:
    """One client's rendering of a probe: the item, its files and its report."""
    probe: Probe
    item: Item
    files: Tuple[OutputFile, ...]
    report: ItemReport
    fragments: Tuple[Fragment, ...] = ()


def render_probes(adapter: ClientAdapter, items: Sequence[Probe]) -> List[Rendering]:
    loaded = pipeline.load(probe_tree(items))
    if not loaded.ok:
        errors = "\n".join(d.format() for d in loaded.diagnostics if d.is_error)
        raise RuntimeError(f"docgen probe items do not load:\n{errors}")
    by_name = {(i.kind, i.name): i for i in loaded.registry.items}
    ctx = client_registry.render_context(frozenset(i.name for i in loaded.registry.items if i.kind is Kind.SKILL))
    out = []
    for p in items:
        item = by_name[(p.kind, p.name)]
        rendered = adapter.render(item, ctx)
        out.append(Rendering(p, item, rendered.files, rendered.report, rendered.fragments))
    return out
