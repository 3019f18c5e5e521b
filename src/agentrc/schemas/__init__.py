"""JSON Schemas for every on-disk format, and the validators that use them.

The schema files are the single definition of what is valid. One part depends on the set
of clients: each registered client's passthrough block is a property of every item, of
type `$defs/passthrough`; callers pass the blocks (`agentrc.clients.registry`) and they
are added to `$defs/common` here, so the file lists no client. Validation runs in two
steps: a compiled validator (fastjsonschema, tens of times faster) accepts the common,
valid case; only when it rejects a document does jsonschema walk it again to report every
error with its path, since the compiled validator stops at the first one.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Sequence, Tuple

import fastjsonschema

if TYPE_CHECKING:
    from jsonschema import Draft7Validator

_HERE = Path(__file__).parent


@lru_cache(maxsize=None)
def load(name: str) -> dict:
    return json.loads((_HERE / f"{name}.schema.json").read_text(encoding="utf-8"))


def _rooted(name: str, definition: str, blocks: Tuple[str, ...] = ()) -> dict:
    schema = load(name)
    if blocks:
        common = schema["$defs"]["common"]
        properties = {**common["properties"], **{b: {"$ref": "#/$defs/passthrough"} for b in blocks}}
        schema = {**schema, "$defs": {**schema["$defs"], "common": {**common, "properties": properties}}}
    if definition:
        schema = {**schema, "$ref": f"#/$defs/{definition}"}
    return schema


@lru_cache(maxsize=None)
def _compiled(name: str, definition: str, blocks: Tuple[str, ...]):
    return fastjsonschema.compile(_rooted(name, definition, blocks))


@lru_cache(maxsize=None)
def validator(name: str, definition: str = "", blocks: Tuple[str, ...] = ()) -> "Draft7Validator":
    """A jsonschema validator (Draft 7), for the full list of errors."""
    # Imported here on purpose: jsonschema is needed only for an invalid document, and
    # importing it costs about 70 ms, a quarter of a no-change build's start-up.
    from jsonschema import Draft7Validator

    return Draft7Validator(_rooted(name, definition, blocks))


def errors(name: str, data: Any, definition: str = "", blocks: Sequence[str] = ()) -> Iterator:
    """Every schema error of `data` (jsonschema ValidationError objects); none when valid.
    `blocks`: the passthrough blocks items may hold (item schema only)."""
    key = tuple(blocks)
    try:
        _compiled(name, definition, key)(data)
        return iter(())
    except fastjsonschema.JsonSchemaException:
        return validator(name, definition, key).iter_errors(data)
