"""`agentrc inspect`: the normalized canonical document, and where every part came from."""

from __future__ import annotations

from agentrc.canonical.document import CAPABILITIES, Document
from agentrc.frozen import thaw

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import List


def render_text(root: str, document: Document) -> str:
    lines: List[str] = [f"project {root}", ""]
    lines.append(f"context.global: {len(document.context)} fragment(s), appended in this order")
    for i, (text, layer, path) in enumerate(document.context, 1):
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        lines.append(f"  {i}. {layer}: {path} ({len(text.splitlines())} lines: {first[:60]})")
    caps = thaw(document.capabilities)
    entries = {o.key: o for o in document.origins}
    for section in CAPABILITIES:
        names = sorted(((caps.get("mcp") or {}).get("servers") or {}) if section == "mcp"
                       else (caps.get(section) or {}))
        lines += ["", f"{'mcp.servers' if section == 'mcp' else section}: {len(names)}"]
        for name in names:
            key = f"mcp.servers.{name}" if section == "mcp" else f"{section}.{name}"
            o = entries.get(key)
            line = f"  {name}: {o.layer} ({o.file})" if o else f"  {name}"
            if o and o.replaced:
                line += "; overrides " + ", ".join(f"{lyr} ({f})" for lyr, f in o.replaced)
            lines.append(line)
    overridden = [o for o in document.origins if o.replaced and o.key.count(".") >= 2 and
                  not (o.key.startswith("mcp.servers.") and o.key.count(".") == 2)]
    if overridden:
        lines += ["", "overridden keys (the later layer won):"]
        for o in overridden:
            lines.append(f"  {o.key}: {o.layer} ({o.file}) over " + ", ".join(f"{lyr} ({f})" for lyr, f in o.replaced))
    if document.tools:
        lines += ["", "tools (target-only configuration): " + ", ".join(sorted(document.tools))]
    return "\n".join(lines) + "\n"
