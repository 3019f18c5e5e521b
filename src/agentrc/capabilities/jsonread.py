"""Reading one JSON document of spec 003 (oas.json, oas-package.json, oas-lock.json) from
untrusted bytes: bounded, strict JSON (no NaN, no duplicate keys, no byte order mark, the
grammar JSON.parse accepts), and a 1-based position for any key path, for diagnostics."""

from __future__ import annotations

import json
from dataclasses import field

from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostics
from agentrc.text.yamlpos import YamlError
from agentrc.text.yamlpos import load as load_yaml

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, Tuple

MAX_BYTES = 16 << 20  # the bound of every source file (AR054)


class _Duplicate(ValueError):
    pass


def _pairs(pairs):
    out: Dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _Duplicate(k)
        out[k] = v
    return out


def _constant(name: str):
    raise ValueError(f"{name} is not JSON")


@dataclass
class Document:
    """A parsed document; `pos(path)` is where a key path starts in the text."""

    path: str
    data: Any = None
    ok: bool = False
    positions: Dict[Tuple[Any, ...], Tuple[int, int]] = field(default_factory=dict)
    _located: Any = None

    def pos(self, key_path: Tuple[Any, ...] = ()) -> Tuple[int, int]:
        if self._located is None:
            return (1, 1)
        return self._located.pos(tuple(key_path))


def read(path: str, raw: bytes, code: str, diags: Diagnostics) -> Document:
    """Parse `raw` (the file at `path`); problems are `code` errors (AR004 for a repeated
    key, AR008 for bytes that are not UTF-8)."""
    doc = Document(path)
    if len(raw) > MAX_BYTES:
        diags.error(path, (0, 0), code, f"is larger than {MAX_BYTES >> 20} MiB")
        return doc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        diags.error(path, (0, 0), "AR008", f"is not valid UTF-8 (byte {exc.start})")
        return doc
    try:
        doc.data = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
    except _Duplicate as exc:
        located = _locate(text)
        pos = located.duplicates[0][1] if located is not None and located.duplicates else (1, 1)
        diags.error(path, pos, "AR004", f"the key {exc.args[0]!r} appears more than once")
        return doc
    except json.JSONDecodeError as exc:
        diags.error(path, (exc.lineno, exc.colno), code, f"is not valid JSON: {exc.msg}")
        return doc
    except (ValueError, RecursionError) as exc:
        what = "nests too deeply" if isinstance(exc, RecursionError) else str(exc)
        diags.error(path, (1, 1), code, f"is not valid JSON: {what}")
        return doc
    doc._located = _locate(text)
    doc.ok = True
    return doc


def _locate(text: str):
    """Positions through the YAML reader (JSON is YAML); none when it declines the text."""
    try:
        return load_yaml(text)
    except (YamlError, RecursionError):
        return None


def schema_message(err) -> str:
    """A jsonschema error as one line: where, then what."""
    where = "/".join(str(p) for p in err.absolute_path)
    return f"{where or '(top level)'}: {err.message}"
