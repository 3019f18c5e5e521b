"""Compiled schema validators kept in the CLI's cache directory (`schemas.use_code_cache`).

Compiling the item schema's validator is a tenth of a replayed one-edit build; a process
that finds it compiled by an earlier one executes the kept code instead. What must hold:
the validator kept validates as a freshly compiled one; a kept file that is damaged, cut
short or a symlink is compiled again (never followed, never trusted past its checksum);
builds without the cache keep nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import fastjsonschema
import pytest
from jsonschema import Draft7Validator

from agentrc import schemas
from agentrc.schemas import generated
from agentrc.cli.main import main
from helpers import ROOT

GOOD = {"schema": 1, "name": "a-rule", "description": "Use when testing the cache"}
BAD = {"schema": 1, "name": "Not A Name", "description": 5}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A code cache in `tmp_path`, the compiled validators forgotten before and after, and
    the compilations counted."""
    compiled = []
    real = fastjsonschema.compile_to_code
    monkeypatch.setattr(fastjsonschema, "compile_to_code", lambda s: compiled.append(1) or real(s))
    monkeypatch.setattr(schemas, "_PACKAGE_CACHE", None)  # the build's cache alone (see the package's below)
    schemas._compiled.cache_clear()
    schemas.use_code_cache(str(tmp_path))
    yield tmp_path, compiled
    schemas.use_code_cache(None)
    schemas._compiled.cache_clear()


def _errors(data):
    return sorted(e.message for e in schemas.errors("item", data, "rule", ("claude",)))


def test_a_kept_validator_validates_as_a_compiled_one(cache):
    where, compiled = cache
    first = (_errors(GOOD), _errors(BAD))
    assert compiled == [1] and len(list(where.glob("validator-*.bin"))) == 1
    schemas._compiled.cache_clear()  # as a new process
    assert (_errors(GOOD), _errors(BAD)) == first
    assert compiled == [1]  # read, not compiled again
    schemas.use_code_cache(None)
    schemas._compiled.cache_clear()
    assert (_errors(GOOD), _errors(BAD)) == first
    assert first[0] == [] and first[1]


def _lock(files: int) -> dict:
    sha = "0" * 64
    return {"version": 1, "clients": ["claude"], "bundles": [], "items": [
        {"kind": "rule", "name": "a-rule", "source": "file:///src", "ref": "v1", "commit": "1" * 40, "sha256": sha,
         "direct": True, "required_by": []}],
        "files": [{"path": f"f{i}.md", "sha256": sha} for i in range(files)]}


def test_a_kept_validator_names_no_element_unless_it_fails(cache):
    """fastjsonschema names each array element it hands to a subschema's function, for a
    failure's message; the kept text hands on the array's name (`errors` takes its messages
    from jsonschema): no element's name is made on the way, and a bad element deep in an
    array is still found."""
    for name in ("lock", "canonical", "item"):
        definition = "skill" if name == "item" else ""
        text = generated.source(schemas._rooted(name, definition, ()))
        eager = [line for line in text.split("\n") if "format(**locals())" in line and "raise " not in line]
        assert eager == [] and ", name_prefix)" in text, name
    good = _lock(50)
    bad = _lock(50)
    bad["files"][49]["sha256"] = "not a digest"
    assert list(schemas.errors("lock", good)) == []
    assert [list(e.absolute_path) for e in schemas.errors("lock", bad)] == [["files", 49, "sha256"]]
    with pytest.raises(generated.Rejected):
        schemas._compiled("lock", "", ())(bad)


@pytest.mark.parametrize("damage", ["flipped", "cut", "empty", "symlink"])
def test_a_damaged_kept_validator_is_compiled_again(cache, tmp_path, damage):
    where, compiled = cache
    expected = _errors(BAD)
    (kept,) = where.glob("validator-*.bin")
    data = kept.read_bytes()
    if damage == "flipped":
        kept.write_bytes(data[:-10] + bytes([data[-10] ^ 1]) + data[-9:])
    elif damage == "cut":
        kept.write_bytes(data[:len(data) // 2])
    elif damage == "empty":
        kept.write_bytes(b"")
    else:
        elsewhere = tmp_path / "elsewhere.bin"
        elsewhere.write_bytes(data)
        kept.unlink()
        kept.symlink_to(elsewhere)
    schemas._compiled.cache_clear()
    assert _errors(BAD) == expected
    assert len(compiled) == 2
    # Kept again, whole (marshal's bytes of two compilations may differ: it is read back).
    assert not kept.is_symlink() and schemas._read_code(str(kept)) is not None
    if damage == "symlink":
        assert (tmp_path / "elsewhere.bin").read_bytes() == data


def test_a_build_keeps_its_validators_beside_its_memo_and_no_cache_keeps_none(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    # None kept beside the schemas (a checkout where a run wrote them there would serve them).
    monkeypatch.setattr(schemas, "_PACKAGE_CACHE", str(tmp_path / "package"))
    monkeypatch.setattr(schemas.sys, "dont_write_bytecode", True)
    schemas._compiled.cache_clear()
    try:
        reg = str(ROOT / "examples" / "registry")
        assert main(["build", reg, "--client", "claude", "--out", str(tmp_path / "a"), "--no-cache"]) == 0
        assert not (tmp_path / "cache").exists()
        schemas._compiled.cache_clear()  # as a new process: what the first compiled is forgotten
        assert main(["build", reg, "--client", "claude", "--out", str(tmp_path / "b")]) == 0
        kept = sorted(p.name for p in (tmp_path / "cache").iterdir() if p.name.startswith("validator-"))
        assert kept and all(p.endswith(".bin") for p in kept)
        assert not [p for p in os.listdir(tmp_path / "cache") if p.endswith(".tmp")]
    finally:
        schemas.use_code_cache(None)
        schemas._compiled.cache_clear()


@pytest.fixture
def package_cache(tmp_path, monkeypatch):
    """`_PACKAGE_CACHE` in `tmp_path` (the one beside the schemas is left alone), no build
    cache, the compiled validators forgotten, and the compilations counted."""
    compiled = []
    real = fastjsonschema.compile_to_code
    monkeypatch.setattr(fastjsonschema, "compile_to_code", lambda s: compiled.append(1) or real(s))
    where = tmp_path / "__pycache__"
    monkeypatch.setattr(schemas, "_PACKAGE_CACHE", str(where))
    schemas.use_code_cache(None)
    schemas._compiled.cache_clear()
    yield where, compiled
    schemas._compiled.cache_clear()


def test_precompiled_validators_beside_the_schemas_serve_a_build_with_an_empty_cache(package_cache, monkeypatch):
    """What `compileall` is to bytecode: `precompile_validators()` keeps the build's validators beside
    the schemas, readable by all, and a process with an empty build cache (a new project)
    then compiles none of them."""
    from agentrc.clients import registry as client_registry

    blocks = client_registry.client_names().blocks  # a build's: every registered client's

    def errors(data):
        return sorted(e.message for e in schemas.errors("item", data, "rule", blocks))

    where, compiled = package_cache
    expected = (errors(GOOD), errors(BAD))
    schemas._compiled.cache_clear()
    compiled.clear()
    monkeypatch.setattr(schemas.sys, "dont_write_bytecode", True)
    from agentrc.pipeline import warm

    assert warm.precompile_validators() >= 5  # every item kind, bundles, registry markers
    kept = sorted(where.glob("validator-*.bin"))
    assert len(kept) == len(compiled) and all(p.stat().st_mode & 0o777 == 0o644 for p in kept)
    compiled.clear()
    schemas._compiled.cache_clear()  # as a new process
    assert (errors(GOOD), errors(BAD)) == expected
    assert compiled == []
    assert warm.precompile_validators() == len(kept) and compiled == []  # found, not compiled again


@pytest.mark.parametrize("writes", [True, False])
def test_a_compiled_validator_is_kept_beside_the_schemas_as_bytecode_is(package_cache, monkeypatch, writes):
    """Without `precompile_validators`, a validator compiled is kept beside the schemas only when the
    interpreter writes bytecode (not under PYTHONDONTWRITEBYTECODE); a damaged one there is
    compiled again, as in the build's cache."""
    where, compiled = package_cache
    monkeypatch.setattr(schemas.sys, "dont_write_bytecode", not writes)
    expected = _errors(BAD)
    assert compiled == [1] and len(list(where.glob("validator-*.bin"))) == (1 if writes else 0)
    if writes:
        (kept,) = where.glob("validator-*.bin")
        data = bytearray(kept.read_bytes())
        data[40] ^= 0xFF
        kept.write_bytes(bytes(data))
        schemas._compiled.cache_clear()
        assert _errors(BAD) == expected and compiled == [1, 1]


def test_precompile_keeps_beside_the_schemas_a_validator_found_in_the_builds_cache(package_cache, tmp_path,
                                                                                   monkeypatch):
    """A validator the build's cache already holds is still written beside the schemas by
    `precompile_validators` (what it promises), without compiling it again."""
    from agentrc.pipeline import warm

    where, compiled = package_cache
    build_cache = tmp_path / "build-cache"
    monkeypatch.setattr(schemas.sys, "dont_write_bytecode", True)
    schemas.use_code_cache(str(build_cache))
    try:
        warm.precompile_validators()  # into both: compiled once each
        for kept in where.glob("validator-*.bin"):
            kept.unlink()
        compiled.clear()
        done = warm.precompile_validators()
    finally:
        schemas.use_code_cache(None)
    assert compiled == [] and len(list(where.glob("validator-*.bin"))) == done >= 5


def test_the_package_copy_goes_where_bytecode_goes(tmp_path):
    """Under PYTHONPYCACHEPREFIX the schemas' bytecode goes to the prefix's mirror of their
    directory, and so do their compiled validators (not into the installed package)."""
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), PYTHONPYCACHEPREFIX=str(tmp_path / "prefix"))
    out = subprocess.run([sys.executable, "-c", "from agentrc import schemas; print(schemas._PACKAGE_CACHE)"],
                         env=env, capture_output=True, text=True, check=True).stdout.strip()
    schemas_dir = os.path.abspath(ROOT / "src" / "agentrc" / "schemas")
    assert out == str(tmp_path / "prefix") + str(schemas_dir)


def test_a_kept_value_that_is_not_code_is_a_miss(tmp_path):
    from agentrc import pycache

    path = str(tmp_path / "validator-x.bin")
    assert pycache.write_kept(path, "print('not code')")
    assert schemas._read_code(path) is None


def test_every_schema_is_precompiled_the_lock_s_too(package_cache, monkeypatch):
    """`install` and `add` read the lock through its schema: its validator is kept with the
    build's (it was compiled again by every consumer command, 30 ms at 1,000 entries)."""
    where, compiled = package_cache
    monkeypatch.setattr(schemas.sys, "dont_write_bytecode", True)
    from agentrc.pipeline import warm

    schemas._compiled.cache_clear()
    warm.precompile_validators()
    assert {"lock", "project", "canonical", "oas-lock"} <= set(schemas.names())
    compiled.clear()
    schemas._compiled.cache_clear()  # as a new process
    for name in schemas.names():
        if name != "item":
            list(schemas.errors(name, {}))
    assert compiled == []


def test_a_kept_validator_runs_without_fastjsonschema_or_decimal(tmp_path):
    """A process that finds the validators kept accepts a valid document without importing
    fastjsonschema or `decimal` (agentrc.schemas.generated: 5 ms of a one-edit build), and
    gives the answers of a validator fastjsonschema compiles."""
    script = """
import json, sys
from agentrc import schemas
schemas.use_code_cache(sys.argv[1])
good = {"schema": 1, "name": "a-rule", "description": "Use when testing the cache"}
bad = {"schema": 1, "name": "Not A Name", "description": 5}
answers = [sorted(e.message for e in schemas.errors("item", good, "rule", ("claude",)))]
imported = [m for m in ("fastjsonschema", "decimal") if m in sys.modules]  # (jsonschema, for a rejection, imports them)
answers.append(sorted(e.message for e in schemas.errors("item", bad, "rule", ("claude",))))
print(json.dumps([answers, imported]))
"""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), PYTHONDONTWRITEBYTECODE="1")

    def run():
        out = subprocess.run([sys.executable, "-c", script, str(tmp_path)], env=env, capture_output=True,
                             text=True, check=True)
        return json.loads(out.stdout)

    first, imported_first = run()  # compiles and keeps it (in the build's cache directory)
    again, imported_again = run()
    assert again == first and first[0] == [] and first[1]
    assert "fastjsonschema" in imported_first and imported_again == []
    fresh = sorted(e.message for e in Draft7Validator(schemas._rooted("item", "rule", ("claude",))).iter_errors(
        {"schema": 1, "name": "Not A Name", "description": 5}))
    assert first[1] == fresh


def test_the_stand_in_decimal_answers_as_decimal_does():
    """`isinstance(x, Decimal)` in a kept validator is `decimal.Decimal`'s answer (False for
    anything while `decimal` is not imported: none can exist), and calling it makes one."""
    import decimal

    stand_in = generated.Decimal
    assert isinstance(decimal.Decimal("1.5"), stand_in)
    assert not isinstance(1.5, stand_in) and not isinstance("1.5", stand_in) and not isinstance(None, stand_in)
    assert stand_in("2.5") == decimal.Decimal("2.5") and type(stand_in("1")) is decimal.Decimal


def test_the_version_is_read_as_the_package_says_it():
    """The kept code's key names fastjsonschema's version, read from its version.py without
    importing it: the version the package itself gives."""
    script = "import sys; from agentrc.schemas import generated; print(generated.version(), 'fastjsonschema' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", script], env=dict(os.environ, PYTHONPATH=str(ROOT / "src")),
                         capture_output=True, text=True, check=True)
    assert out.stdout.split() == [fastjsonschema.VERSION, "False"]


def test_a_generated_import_left_in_place_still_runs(monkeypatch):
    """A generator whose module imports more than the two lines left out keeps those
    imports; its exceptions are still a rejection (`generated.rejected`)."""
    real = fastjsonschema.compile_to_code
    monkeypatch.setattr(fastjsonschema, "compile_to_code",
                        lambda s: real(s).replace("from decimal import Decimal", "from decimal import Decimal, Context"))
    schema = schemas._rooted("item", "rule", ("claude",))
    text = generated.source(schema)
    assert "from decimal import Decimal, Context" in text
    assert "from fastjsonschema import JsonSchemaValueException" not in text
    namespace = generated.namespace()
    exec(compile(text, "<test>", "exec"), namespace)  # noqa: S102 - fastjsonschema's code for our schema
    with pytest.raises(generated.Rejected) as caught:
        namespace[generated.ENTRY]({"schema": 1, "name": "Not A Name", "description": 5})
    assert generated.rejected(caught.value)
    assert generated.rejected(fastjsonschema.JsonSchemaValueException("x"))
    assert not generated.rejected(TypeError("x"))


def test_a_fastjsonschema_another_thread_is_still_importing_is_not_asked_for_what_it_lacks(monkeypatch):
    """pantsd validates on several threads: while one imports fastjsonschema, another found it
    in sys.modules without `JsonSchemaException` yet (AttributeError, "partially initialized
    module", a 10,000-item cold `package`). Its exception class is asked of the module that
    defines it, and the version of a module still without one is read from its files."""
    import types

    import fastjsonschema
    from fastjsonschema.exceptions import JsonSchemaValueException

    from agentrc.schemas import generated

    assert generated.rejected(JsonSchemaValueException("no")) and not generated.rejected(ValueError("no"))
    monkeypatch.setitem(sys.modules, "fastjsonschema", types.ModuleType("fastjsonschema"))
    monkeypatch.setitem(sys.modules, "fastjsonschema.exceptions", types.ModuleType("fastjsonschema.exceptions"))
    assert generated.rejected(ValueError("no")) is False
    assert generated.version() == fastjsonschema.VERSION
