"""JSON Schemas for every on-disk format; `validator(name)` returns a cached validator."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

_HERE = Path(__file__).parent


@lru_cache(maxsize=None)
def load(name: str) -> dict:
    return json.loads((_HERE / f"{name}.schema.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def validator(name: str, definition: str = ""):
    # Imported on first use: a build whose items all come from the memo never validates.
    from jsonschema import Draft202012Validator

    schema = load(name)
    if definition:
        schema = {**schema, "$ref": f"#/$defs/{definition}"}
    return Draft202012Validator(schema)
