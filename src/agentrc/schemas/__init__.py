"""JSON Schemas for every on-disk format, and the validators that use them.

The schema files are the single definition of what is valid. Validation runs in two
steps: a compiled validator (fastjsonschema, tens of times faster) accepts the common,
valid case; only when it rejects a document does jsonschema walk it again to report every
error with its path, since the compiled validator stops at the first one.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

_HERE = Path(__file__).parent


@lru_cache(maxsize=None)
def load(name: str) -> dict:
    return json.loads((_HERE / f"{name}.schema.json").read_text(encoding="utf-8"))


def _rooted(name: str, definition: str) -> dict:
    schema = load(name)
    if definition:
        schema = {**schema, "$ref": f"#/$defs/{definition}"}
    return schema


@lru_cache(maxsize=None)
def _compiled(name: str, definition: str):
    import fastjsonschema

    return fastjsonschema.compile(_rooted(name, definition))


@lru_cache(maxsize=None)
def validator(name: str, definition: str = ""):
    """A jsonschema validator (Draft 7), for the full list of errors."""
    from jsonschema import Draft7Validator

    return Draft7Validator(_rooted(name, definition))


def errors(name: str, data: Any, definition: str = "") -> Iterator:
    """Every schema error of `data` (jsonschema ValidationError objects); none when valid."""
    import fastjsonschema

    try:
        _compiled(name, definition)(data)
        return iter(())
    except fastjsonschema.JsonSchemaException:
        return validator(name, definition).iter_errors(data)
