"""The validators fastjsonschema generates, made to run without importing fastjsonschema.

A validator's code is kept between processes (agentrc.schemas); running it executed the
imports fastjsonschema's generated module starts with: fastjsonschema itself (with its code
generator, its drafts and its reference resolver) for one exception class, and `decimal`
(with `numbers`, `math`, `contextvars`) for the `isinstance` checks of numbers: about 3 ms
of a one-edit build at 1,000 items, which validates one item and compiles nothing. So the kept text leaves out
those two import lines, and the module it runs in holds instead `Rejected` (raised where
fastjsonschema raises `JsonSchemaValueException`) and `Decimal` (whose `isinstance` is
`decimal.Decimal`'s once `decimal` is imported, and False before: no Decimal can exist
then). The entry function's name, which fastjsonschema's reference resolver computes, is
written at the end of the text. A generator that writes other imports keeps them: its code
runs as it was generated, and `errors` catches its own exception as before.
"""

from __future__ import annotations

import importlib
import os
import re
import sys

from agentrc.fdio import read_regular
from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict

ENTRY = "__agentrc_entry__"  # the validator's function, in the module its code runs in
FORMAT = "3"  # of the kept text: bumped when what `source` writes changes
_DROPPED = ("from decimal import Decimal", "from fastjsonschema import JsonSchemaValueException")
# The name of an array's element, made for each element handed to a subschema's function in
# case it fails (`"... [{i}]".format(**locals())`): only a failure's message holds it, and
# `errors` takes its messages from jsonschema. The kept text hands on the array's own name:
# a lock of 1,000 entries and 3,000 files validated in 22 -> 10 ms.
_ELEMENT_NAME = pattern(r', \(name_prefix or "data"\) \+ "[^"\n]*"\.format\(\*\*locals\(\)\)\)$',
                        re.MULTILINE)
_VERSION = pattern(r"""^VERSION\s*=\s*['"]([^'"]+)['"]""", re.MULTILINE)


class Rejected(ValueError):
    """The document is not valid (the first problem found): `JsonSchemaValueException`'s
    place in a kept validator. `errors` then asks jsonschema for every problem."""

    def __init__(self, message: str, value: Any = None, name: Any = None, definition: Any = None,
                 rule: Any = None) -> None:
        super().__init__(message)
        self.message, self.value, self.name, self.definition, self.rule = message, value, name, definition, rule


class _DecimalType(type):
    def __instancecheck__(cls, value: Any) -> bool:
        decimal = sys.modules.get("decimal")
        return decimal is not None and isinstance(value, decimal.Decimal)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        from decimal import Decimal

        return Decimal(*args, **kwargs)


class Decimal(metaclass=_DecimalType):
    """`decimal.Decimal` for a kept validator, without importing `decimal` to ask."""


def source(schema: dict) -> str:
    """The text kept for `schema`'s validator: fastjsonschema's module, its two imports left
    out, no element's name made unless it fails (`_ELEMENT_NAME`), its entry function named
    `ENTRY`."""
    import fastjsonschema
    from fastjsonschema.ref_resolver import RefResolver

    lines = [line for line in fastjsonschema.compile_to_code(schema).split("\n") if line not in _DROPPED]
    entry = RefResolver.from_schema(schema, handlers={}, store={}).get_scope_name()
    return _ELEMENT_NAME.sub(", name_prefix)", "\n".join(lines)) + f"\n{ENTRY} = {entry}\n"


def namespace() -> Dict[str, Any]:
    """The module a kept validator's code runs in."""
    return {"Decimal": Decimal, "JsonSchemaValueException": Rejected}


def version() -> str:
    """fastjsonschema's version (the kept code's key), read from its `version.py` where it
    is found without importing the package (as the import system would find it), else
    from the package."""
    # Another thread may be importing it (pantsd runs rules on several): a module still
    # being initialised may not have VERSION yet, and `import_module` waits for it.
    module: Any = sys.modules.get("fastjsonschema")
    if module is None or not hasattr(module, "VERSION"):
        try:
            from importlib.machinery import PathFinder

            spec = PathFinder.find_spec("fastjsonschema")
            where = list(spec.submodule_search_locations or ()) if spec is not None else []
            if where:
                found = _VERSION.search(read_regular(os.path.join(where[0], "version.py"), 1 << 16)[0].decode())
                if found:
                    return found.group(1)
        except (OSError, ValueError, ImportError):
            pass
        module = importlib.import_module("fastjsonschema")
    return str(module.VERSION)


def rejected(exc: BaseException) -> bool:
    """Whether `exc` is a validator's answer that the document is not valid: `Rejected`, or
    fastjsonschema's own exception (a validator compiled in this process, or generated with
    imports `source` keeps)."""
    if isinstance(exc, Rejected):
        return True
    # Asked of the module that defines the class, whatever another thread is importing (a
    # module still being initialised may not have it yet, and then nothing raised one).
    base = getattr(sys.modules.get("fastjsonschema.exceptions"), "JsonSchemaException", None)
    return base is not None and isinstance(exc, base)
