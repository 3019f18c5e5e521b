"""Several clients' imports as one canonical document: adoption in one step (issue 17).

A repository adopted by agentrc often holds the same content for several clients: CLAUDE.md
and AGENTS.md sharing paragraphs, a skill in `.claude/skills` and `.github/skills`, one MCP
server in `.mcp.json` and `.vscode/mcp.json`. Combined, an item of one kind and name that
every client gave alike is kept once; the same name with different content is kept apart
(the later client's copy named `NAME-CLIENT`, reported); the global contexts are joined
paragraph by paragraph, each paragraph once, in the order the clients were given; hooks are
kept once per identical entry. Pure: the imports come in, one document goes out.
"""

from __future__ import annotations

import json

from agentrc.diagnostics import WARNING, Diagnostic
from agentrc.importers.document import Imported
from agentrc.names import valid_name

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Sequence, Tuple

KINDS = ("rules", "skills", "agents", "commands")


def combine(imports: Sequence[Tuple[str, Imported]], where: str = "<import>") -> Imported:
    """One document of `imports` ((client, import) pairs, in the order given)."""
    if len(imports) == 1:
        return imports[0][1]
    doc: Dict[str, Any] = {}
    fields: Dict[str, Dict[str, Any]] = {}
    found: List[Diagnostic] = []
    for client, imported in imports:
        found.extend(imported.diagnostics)
        _items(doc, fields, client, imported, found, where)
        _context(doc, imported.document)
        _hooks(doc, imported.document)
        _servers(doc, client, imported.document, found, where)
        for key, value in imported.document.items():
            if key == "tools" and isinstance(value, dict):
                doc.setdefault("tools", {}).update(value)
            elif key not in doc and key not in KINDS + ("context", "hooks", "mcp"):
                doc[key] = value
    return Imported(doc, {k: fields[k] for k in sorted(fields)}, tuple(sorted(set(found))))


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def _items(doc: Dict[str, Any], fields: Dict[str, Dict[str, Any]], client: str, imported: Imported,
           found: List[Diagnostic], where: str) -> None:
    for kind in KINDS:
        for name, entry in sorted((imported.document.get(kind) or {}).items()):
            mine = imported.fields.get(f"{kind}.{name}")
            have = doc.setdefault(kind, {})
            if name not in have:
                have[name] = entry
                if mine is not None:
                    fields[f"{kind}.{name}"] = mine
                continue
            if _same(have[name], entry):
                if mine is not None:  # a field one client gives (its passthrough block) joins the others'
                    fields[f"{kind}.{name}"] = {**mine, **fields.get(f"{kind}.{name}", {})}
                continue
            other = f"{name}-{client}"
            if not valid_name(other) or other in have:
                found.append(Diagnostic(where, 0, 0, WARNING, "AR130", f"{kind[:-1]} {name} of {client} differs from "
                                        f"the one already imported, and cannot be named {other}; not imported"))
                continue
            have[other] = entry
            if mine is not None:
                fields[f"{kind}.{other}"] = mine
            found.append(Diagnostic(where, 0, 0, WARNING, "AR130", f"{kind[:-1]} {name} of {client} differs from the "
                                    f"one already imported; kept apart as {other}"))


def _paragraphs(text: str) -> List[str]:
    return [p.strip("\n") for p in text.replace("\r\n", "\n").split("\n\n") if p.strip()]


def _context(doc: Dict[str, Any], incoming: Dict[str, Any]) -> None:
    """The global contexts joined: each paragraph once, in order (CLAUDE.md importing
    AGENTS.md and AGENTS.md itself give the shared text once)."""
    new = (incoming.get("context") or {}).get("global")
    if not isinstance(new, str) or not new.strip():
        return
    context = doc.setdefault("context", {})
    old = context.get("global")
    if not isinstance(old, str) or not old.strip():
        context["global"] = new
        return
    kept = _paragraphs(old)
    seen = {" ".join(p.split()) for p in kept}
    for p in _paragraphs(new):
        if " ".join(p.split()) not in seen:
            kept.append(p)
            seen.add(" ".join(p.split()))
    context["global"] = "\n\n".join(kept) + "\n"
    for key, value in (incoming.get("context") or {}).items():
        context.setdefault(key, value)


def _hooks(doc: Dict[str, Any], incoming: Dict[str, Any]) -> None:
    for event, value in (incoming.get("hooks") or {}).items():
        entries = value if isinstance(value, list) else [value]
        have = doc.setdefault("hooks", {}).setdefault(event, [])
        for entry in entries:
            if not any(_same(entry, h) for h in have):
                have.append(entry)


def _servers(doc: Dict[str, Any], client: str, incoming: Dict[str, Any], found: List[Diagnostic],
             where: str) -> None:
    servers = ((incoming.get("mcp") or {}).get("servers") or {})
    if not servers:
        return
    mcp = doc.setdefault("mcp", {})
    for key, value in (incoming.get("mcp") or {}).items():
        if key != "servers":
            mcp.setdefault(key, value)
    have = mcp.setdefault("servers", {})
    for name, server in sorted(servers.items()):
        if name not in have or _same(have[name], server):
            have.setdefault(name, server)
            continue
        other = f"{name}-{client}"
        have[other] = server
        found.append(Diagnostic(where, 0, 0, WARNING, "AR130", f"MCP server {name} of {client} differs from the one "
                                "already imported; kept apart as " + other))
