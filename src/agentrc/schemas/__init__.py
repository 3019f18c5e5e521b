"""JSON Schemas for every on-disk format, and the validators that use them.

The schema files are the single definition of what is valid. One part depends on the set
of clients: each registered client's passthrough block is a property of every item, of
type `$defs/passthrough`; callers pass the blocks (`agentrc.clients.registry`) and they
are added to `$defs/common` here, so the file lists no client. Validation runs in two
steps: a compiled validator (fastjsonschema, tens of times faster) accepts the common,
valid case; only when it rejects a document does jsonschema walk it again to report every
error with its path, since the compiled validator stops at the first one.

Compiling a validator generates Python source and compiles it: 14 ms for the item schema,
a tenth of a replayed one-edit build at 1,000 items, in every process that validates.
With `use_code_cache(directory)` (the CLI's build, in its cache directory) the compiled
code is kept there (marshalled behind the interpreter's magic number and a checksum, as
agentrc.pycache writes its files, under a key of the schema, fastjsonschema's version and
the interpreter's), and the next process executes it as it is; a file that cannot be
read, or whose magic number or checksum does not match, is compiled again. The cache directory is the
user's own, as for the build memo (a pickle): what it holds is trusted as that is.

The compiled validators are agentrc's own code, made from its own schema files alone, as
its bytecode is made from its modules: like Python's `__pycache__`, they are also kept
beside the schemas (`_PACKAGE_CACHE`), looked for there first, and written there when the
interpreter writes bytecode (not under PYTHONDONTWRITEBYTECODE) or by `precompile`
(what `compileall` is to bytecode: for read-only installations and benchmarks). Then a
build in a new project, whose cache is empty, compiles nothing (31 ms of a cold 1,000-item
build). Whoever can write there can write agentrc's modules too: it is trusted as they are.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from functools import lru_cache
from types import CodeType

from agentrc import __version__, pycache
from agentrc.pycache import cache_path, read_kept, write_kept
from agentrc.schemas import generated

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Iterator, List, Optional, Sequence, Tuple

    from jsonschema import Draft7Validator

_HERE = os.path.dirname(__file__)


def names() -> List[str]:
    """The schemas agentrc holds, by the name `errors` takes (`lock` for lock.schema.json)."""
    suffix = ".schema.json"
    return sorted(name[:-len(suffix)] for name in os.listdir(_HERE) if name.endswith(suffix))


@lru_cache(maxsize=None)
def _text(name: str) -> str:
    with open(os.path.join(_HERE, f"{name}.schema.json"), encoding="utf-8") as fh:
        return fh.read()


@lru_cache(maxsize=None)
def load(name: str) -> dict:
    """The schema `name`, one object for every caller: read it, never change it."""
    return json.loads(_text(name))


def _rooted(name: str, definition: str, blocks: Tuple[str, ...] = ()) -> dict:
    """The schema `errors(name, ..., definition, blocks)` validates against: a fresh object
    each time, as fastjsonschema changes what it compiles (it adds to the subschemas it
    resolves; a second validator of the same schema in one process was then keyed, and
    looked for, by the changed text)."""
    schema = json.loads(_text(name))
    if blocks:
        common = schema["$defs"]["common"]
        properties = {**common["properties"], **{b: {"$ref": "#/$defs/passthrough"} for b in blocks}}
        schema = {**schema, "$defs": {**schema["$defs"], "common": {**common, "properties": properties}}}
    if definition:
        schema = {**schema, "$ref": f"#/$defs/{definition}"}
    return schema


# Where the schemas' bytecode goes (their `__pycache__`, or under `sys.pycache_prefix`); None
# where the interpreter keeps no bytecode.
_KEPT_HERE = cache_path(__file__, "validator")
_PACKAGE_CACHE: Optional[str] = os.path.dirname(_KEPT_HERE) if _KEPT_HERE else None


def use_code_cache(directory: Optional[str]) -> None:
    """Keep compiled validators in `directory` from now on (None: nowhere); the build sets
    `pycache.code_dir` itself, which is the same."""
    pycache.code_dir = directory


def prepare(name: str, definition: str = "", blocks: Sequence[str] = ()) -> None:
    """Compile (or load) now the validator `errors(name, ..., definition, blocks)` uses: a
    cold build does so for the item kinds it will parse before it forks its workers
    (agentrc.pipeline.warm), which then inherit them instead of compiling them again."""
    _compiled(name, definition, tuple(blocks))


def precompile(wanted: Iterable[Tuple[str, str, Sequence[str]]]) -> int:
    """Compile into `_PACKAGE_CACHE` the validators `errors(name, ..., definition, blocks)`
    uses for each (name, definition, blocks) of `wanted`, whatever PYTHONDONTWRITEBYTECODE
    says (`agentrc.pipeline.warm.precompile_validators` names a build's). How many it wrote
    or found there."""
    done = 0
    for name, definition, blocks in wanted:
        if _cached(_rooted(name, definition, tuple(blocks)), always=True) is not None:
            done += 1
    return done


@lru_cache(maxsize=None)
def _compiled(name: str, definition: str, blocks: Tuple[str, ...]):
    schema = _rooted(name, definition, blocks)
    found = _cached(schema)
    if found is not None:
        return found
    import fastjsonschema

    return fastjsonschema.compile(schema)


def _cached(schema: dict, always: bool = False) -> Optional[Callable[[Any], Any]]:
    """`fastjsonschema.compile(schema)`, its code read from `_PACKAGE_CACHE` or the code
    cache (`use_code_cache`) when it was kept there before, else compiled and kept in the
    code cache; and kept beside the schemas, when it was not there, if bytecode is written
    (`always`: whatever the interpreter says). None when this cannot be done here (the
    caller compiles as usual)."""
    code_cache = pycache.code_dir
    if _PACKAGE_CACHE is None and code_cache is None:
        return None
    text = json.dumps(schema, sort_keys=True)
    key = hashlib.sha256("\0".join((text, generated.version(), generated.FORMAT, sys.version,
                                    __version__)).encode()).hexdigest()
    name = f"validator-{key[:32]}.bin"
    code = _read_code(os.path.join(_PACKAGE_CACHE, name)) if _PACKAGE_CACHE is not None else None
    beside = code is not None
    if code is None and code_cache is not None:
        code = _read_code(os.path.join(code_cache, name))
    if code is None:
        try:
            code = compile(generated.source(schema), f"<agentrc schema {key[:12]}>", "exec")
        except Exception:  # noqa: S110 - the ordinary compile reports what is wrong
            return None
        if code_cache is not None:
            _write_code(os.path.join(code_cache, name), code)
    # Kept beside the schemas whether compiled here or found in the build's cache: `precompile`
    # promises it is there afterwards.
    if not beside and _PACKAGE_CACHE is not None and (always or not sys.dont_write_bytecode):
        _write_code(os.path.join(_PACKAGE_CACHE, name), code, 0o644)  # readable as the modules are
    namespace = generated.namespace()
    try:
        exec(code, namespace)  # noqa: S102 - code fastjsonschema generated from our own schema
        return namespace[generated.ENTRY]
    except Exception:
        return None


def _read_code(path: str) -> Any:
    """A compiled validator kept in a cache: None (a miss) unless it is a regular file (not a
    link, not a FIFO: never blocked on) whose magic number and sha256 check (agentrc.pycache)."""
    code = read_kept(path)
    return code if isinstance(code, CodeType) else None


def _write_code(path: str, code: Any, mode: int = 0o600) -> None:
    """Kept atomically (a temporary file renamed), or not at all."""
    write_kept(path, code, mode)


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
    except Exception as exc:
        if not generated.rejected(exc):
            raise
        return validator(name, definition, key).iter_errors(data)
