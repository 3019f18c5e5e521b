"""A JSON form of build-memo entries, for results that cross a process boundary.

The Pants plugin's process mode runs parsing and rendering in sandboxed processes whose
outputs may come back from a remote cache: they must be plain data, never a pickle that
could run code when loaded. Only the model's own classes can be rebuilt (a whitelist),
tuples stay tuples, bytes travel as base64.
"""

from __future__ import annotations

import base64
import dataclasses
import json

from agentrc.diagnostics import Diagnostic
from agentrc.frozen import FrozenMap
from agentrc.model import BundleRef, HookSpec, Item, Kind, Ref, Resource
from agentrc.portable.directives import Block

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict

CLASSES = {cls.__name__: cls for cls in (Item, Ref, BundleRef, Resource, Diagnostic, Block, HookSpec)}


def _enc(value: Any) -> Any:
    if isinstance(value, Kind):  # before str: Kind is a str enum
        return {"k": value.value}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, bytes):
        return {"b": base64.b64encode(value).decode("ascii")}
    if isinstance(value, tuple):
        return [_enc(v) for v in value]
    if isinstance(value, frozenset):
        return {"s": sorted(_enc(v) for v in value)}
    if isinstance(value, FrozenMap):
        return {"m": [[_enc(k), _enc(v)] for k, v in value.items()]}
    if dataclasses.is_dataclass(value) and type(value).__name__ in CLASSES:
        return {"d": type(value).__name__,
                "f": {f.name: _enc(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    raise TypeError(f"cannot encode {type(value).__name__}")


def _dec(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_dec(v) for v in value)
    if not isinstance(value, dict):
        return value
    if "k" in value:
        return Kind(value["k"])
    if "b" in value:
        return base64.b64decode(value["b"])
    if "s" in value:
        return frozenset(_dec(v) for v in value["s"])
    if "m" in value:
        return FrozenMap((_dec(k), _dec(v)) for k, v in value["m"])
    if "d" in value:
        return CLASSES[value["d"]](**{k: _dec(v) for k, v in value["f"].items()})
    raise ValueError(f"unknown encoded value {sorted(value)}")


def dumps(entries: Dict[Any, Any]) -> bytes:
    return json.dumps([[_enc(k), _enc(v)] for k, v in sorted(entries.items(), key=lambda kv: repr(kv[0]))],
                      separators=(",", ":")).encode()


def loads(data: bytes) -> Dict[Any, Any]:
    return {_dec(k): _dec(v) for k, v in json.loads(data)}
