"""A light read of one entrypoint or bundle: its identity and what it references.

Build tools (the Pants plugin's dependency inference, a future watch mode) need the graph
of items without validating or rendering anything; this reads frontmatter only and never
raises: what it cannot read it leaves out, and full validation reports it.
"""

from __future__ import annotations

import posixpath

from agentrc.classcode import dataclass
from agentrc.model import ENTRYPOINTS, KIND_BY_PLURAL, Kind
from agentrc.names import bundle_stem, is_bundle_file
from agentrc.text.frontmatter import split
from agentrc.text.yamlpos import YamlError
from agentrc.text.yamlpos import load as load_yaml

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import List, Optional, Tuple


@dataclass(frozen=True)
class Peek:
    """What a quick look at an item's frontmatter tells: its kind, name and the items it refers to."""
    kind: str  # "rule" | "skill" | "agent" | "bundle"
    name: str
    refs: Tuple[Tuple[str, str], ...] = ()  # (kind, name): requires, bundle items, preloads
    soft: Tuple[str, ...] = ()  # preloaded skills: dependencies only when they exist
    bundles: Tuple[str, ...] = ()  # bundle requires
    # `{ name, source }` entries: (kind or "bundle", name, source), resolved in another
    # registry (agentrc.portable.resolve.lookup)
    sourced: Tuple[Tuple[str, str, str], ...] = ()


def peek(path: str, content: bytes) -> Optional[Peek]:
    base = posixpath.basename(path)
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if is_bundle_file(base):
        return _bundle(bundle_stem(base), text)
    kind = ENTRYPOINTS.get(base)
    if kind is None:
        return None
    parts = split(text)
    data = _mapping(parts.yaml_text or "")
    name = data.get("name")
    if not isinstance(name, str) or kind is Kind.SKILL:
        name = posixpath.basename(posixpath.dirname(path))
    refs: List[Tuple[str, str]] = []
    sourced: List[Tuple[str, str, str]] = []
    requires = data.get("requires")
    if isinstance(requires, dict):
        for plural, entries in requires.items():
            if plural in KIND_BY_PLURAL and isinstance(entries, list):
                for e in entries:
                    kind_value = KIND_BY_PLURAL[plural].value
                    if isinstance(e, dict) and isinstance(e.get("source"), str) and isinstance(e.get("name"), str):
                        sourced.append((kind_value, e["name"], e["source"]))
                        continue
                    n = (e if isinstance(e, str)
                         else e.get("name") if isinstance(e, dict) and "source" not in e else None)
                    if isinstance(n, str):
                        refs.append((kind_value, n))
    soft = data.get("preload-skills") if kind is Kind.AGENT else None
    return Peek(kind.value, name, tuple(refs), tuple(s for s in soft or () if isinstance(s, str)),
                sourced=tuple(sourced))


def _bundle(stem: str, text: str) -> Optional[Peek]:
    data = _mapping(text)
    if not isinstance(data.get("schema"), int):
        return None  # not a bundle (spec 001 §2.2 discovery gate)
    refs: List[Tuple[str, str]] = []
    items = data.get("items")
    if isinstance(items, dict):
        for plural, names in items.items():
            if plural in KIND_BY_PLURAL and isinstance(names, list):
                refs.extend((KIND_BY_PLURAL[plural].value, n) for n in names if isinstance(n, str))
    listed = data.get("requires")
    entries = [r for r in (listed if isinstance(listed, list) else ())
               if isinstance(r, dict) and isinstance(r.get("name"), str)]
    requires = tuple(r["name"] for r in entries if "source" not in r)
    sourced = tuple(("bundle", r["name"], r["source"]) for r in entries if isinstance(r.get("source"), str))
    declared = data.get("name")
    name = declared if isinstance(declared, str) else stem
    return Peek("bundle", name, tuple(refs), (), requires, sourced)


def _mapping(text: str) -> dict:
    try:
        data = load_yaml(text).data
    except YamlError:
        return {}
    return data if isinstance(data, dict) else {}
