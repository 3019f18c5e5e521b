"""What client adapters produce and the output stage consumes.

`OutputFile` is a whole file of the generated tree; `Fragment` is one part of a file that
several items and clients contribute to (an MCP server key, a hook entry, a section of the
global context). Kept at the top so `output/`, `pipeline/`, `importers/`, `docgen/` and the
Pants backend need not depend on the adapter base.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Sequence, Tuple

from agentrc.frozen import thaw


@dataclass(frozen=True)
class OutputFile:
    path: str  # posix, relative to the output root
    content: bytes
    executable: bool = False
    owner: str = ""  # "<client>:<kind>:<name>" for conflict messages, or "<client>" for project files
    # Config files users also own ("json" or "toml"): agentrc owns only `keys` in them, as
    # (key path, value as canonical JSON, appended array element?) triples, and the writer
    # merges those into whatever the file holds (agentrc.output.merge). `content` is the file
    # with agentrc's keys alone, which is what a fresh tree (dist/, Pants) holds.
    merge: str = ""
    keys: Tuple[Tuple[Tuple[str, ...], str, bool], ...] = ()


@dataclass(frozen=True)
class Fragment:
    """A part of a file that several items and clients contribute to: a key of a JSON or
    TOML config (an MCP server, a hook entry appended to an event's list), or a section of
    the global context document. build.plan assembles fragments into files."""

    path: str
    format: str  # "json", "toml" or "sections"
    key: Tuple[str, ...]  # key path; for "sections", (sort key, name)
    value: str  # canonical JSON of the value; for "sections", the section's markdown
    append: bool = False  # an element appended to the array at `key`, not the key's whole value
    owner: str = ""


def fragment(path: str, fmt: str, key: Sequence[str], value: Any, owner: str, append: bool = False) -> Fragment:
    return Fragment(path, fmt, tuple(key), json.dumps(thaw(value), sort_keys=False, ensure_ascii=False), append, owner)
