"""The spec 003 fuzz targets (issue 30): `oas.json`, `oas-package.json`, `oas-lock.json`
and `oas-config.yaml` through their parsers, the source grammars, and `agentrc cap list` /
`cap doctor` on a scope holding fuzzed files. See `fetchtargets` for the fence and the
case layout these share.

Why the parsers directly as well as the CLI: a parser's contract is "a document or
diagnostics", whoever calls it (install, restore, list, doctor, spawn, the Pants plugin),
and a parse costs a millisecond, so tens of thousands of documents fit where a hundred CLI
runs do. The lock's round trip is an oracle: what `parse` accepts, `dump` writes back into
bytes `parse` reads as the same lock.
"""

from __future__ import annotations

import functools
import json
import random
from pathlib import Path
from typing import Dict, List, Tuple

import fetchseeds as fs
import fuzzlib
import guard
import yaml
from fetchtargets import (
    CASE_SECRETS,
    SECONDS,
    Oracle,
    _cli,
    _lay_out,
    _unchanged,
    no_secret,
    secrets_in_sources,
    verdict,
)

from agentrc.capabilities import config as capconfig
from agentrc.capabilities import lock as caplock
from agentrc.capabilities import manifest as capmanifest
from agentrc.capabilities import source as capsource
from agentrc.diagnostics import Diagnostics
from agentrc.consumer import consume
from agentrc.sources import dsl

COMMIT = "0123456789abcdef0123456789abcdef01234567"
OAS_POOL: List[object] = [
    *fs.NAMES, "demo.chat", "demo.pkg", "Demo.Chat", "a..b", ".a", "a" * 300, "-x", "../x", "/etc/passwd",
    "..\\x", "C:\\x", "skills/../../x", "bin/../../evil.sh", "/bin/sh -c id", "", "0.0.0", "1.0", "v1.0.0",
    ">=0.19.0", "^1.2.3", ">=\u00b2", "^\u0663.0.0", "1.\u2460.0", "x.y.z", "spawn", "retire", "soul-scaffold",
    "beforeSpawn", "path:/", "path:.", "path:relative", "git:https://u:hunter2@example.invalid/r.git@v1", "https://user:hunter2@example.invalid/r.git",
    "git:file:///etc@" + COMMIT, "git:https://example.invalid/r.git@", "catalog:oas.okf", "catalog:-x@",
    "local", COMMIT, COMMIT.upper(), "sha256-" + "A" * 44, "sha512-x", "installed", "owned", "bundled", "path:../x",
    "none", "default", "../../../../outside/secret.txt", "/dev/stdin", "/dev/zero", "fifo", "@CASE@/outside/secret.txt",
    "messaging", "tasks", "memory", True, False, None, 0, -1, 2 ** 70, 1e400, [], {}, [None], {"": ""},
    {"command": "bin/x", "required": True}, {"command": "--help", "required": "yes"},
    {"runtime": "claude", "package": "--dangerously-skip-permissions@x", "why": "w"},
    {"capability": "demo.chat", "from": "path:../../outside"}, {"enabled": "no", "settings": [1]},
    {"source": "path:/", "path": ".", "version": "1", "commit": "local", "integrity": "x", "dependencies": ["self"]},
    {"version": "1", "package": "demo.pkg", "path": "..", "integrity": "", "trusted": "yes"},
]
SOURCE_STRINGS = [s for s in fs.SOURCES + OAS_POOL if isinstance(s, str)] + [
    "path:", "git:", "git:a/b", "git:host/org/repo@v1#x/../..", "oas.okf@", "oas.okf@v1#x", "file://",
    "https://example.invalid/r.git@v1#.", "https://example.invalid/r.git#", "~user/x", "./x#y", "git@h:#x"]


@functools.lru_cache(maxsize=None)
def _seeds() -> Dict[str, Tuple[bytes, ...]]:
    return {k: tuple(v) for k, v in fs.oas_seeds().items()}


FIELDS = ("source", "from", "path", "commit", "integrity", "package", "inject", "capability", "version",
          "description", "packagePath", "capabilityPath")


def _field_edit(raw: bytes, rng: random.Random) -> Tuple[bytes, str]:
    """A source, path, commit or id field given a source string (a token URL, `path:/`,
    `../..`): the values that name places, where the schema still lets them through."""
    try:
        doc = json.loads(raw)
    except ValueError:
        return fuzzlib._bytes(raw, rng)
    nodes = [p for p in fuzzlib._nodes(doc) if p and p[-1] in FIELDS]
    if not nodes:
        return raw, "no field to edit"
    path = rng.choice(nodes)
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    parent[path[-1]] = value = rng.choice(SOURCE_STRINGS if rng.random() < 0.7 else fs.NAMES)
    return json.dumps(doc, indent=2).encode("utf-8", "surrogatepass"), f"{'/'.join(map(str, path))} = {value!r:.80}"


def _mutated(kind: str, rng: random.Random) -> Tuple[bytes, List[str]]:
    raw = rng.choice(_seeds()[kind])
    done = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        if kind.endswith(".yaml"):
            if rng.random() < 0.5:
                raw, what = fuzzlib._mutate_file(kind, raw, rng)
            else:
                try:
                    doc, what = fs.mutate_doc(yaml.safe_load(raw), rng, OAS_POOL)
                    raw = yaml.safe_dump(doc, allow_unicode=True).encode("utf-8", "surrogatepass")
                except (yaml.YAMLError, ValueError, TypeError):
                    raw, what = fuzzlib._bytes(raw, rng)
        elif rng.random() < 0.25:
            raw, what = _field_edit(raw, rng)
        else:
            raw, what = fs.mutate_json_bytes(raw, rng, OAS_POOL)
        done.append(what)
    return raw, done


def _note_secrets(raw: bytes) -> None:
    try:
        CASE_SECRETS.update(secrets_in_sources(yaml.safe_load(raw)))  # JSON is YAML
    except (yaml.YAMLError, ValueError, TypeError):
        pass


def run_capability(case: Path, rng: random.Random, done: List[str]) -> List[str]:
    raw, more = _mutated("oas.json", rng)
    done.extend(more)
    diags = Diagnostics()
    with guard.fenced(case, SECONDS):
        capmanifest.parse_capability("oas.json", raw, diags, exported=rng.random() < 0.5)
    done.append(verdict(diags.items))
    return done


def run_package(case: Path, rng: random.Random, done: List[str]) -> List[str]:
    raw, more = _mutated("oas-package.json", rng)
    done.extend(more)
    diags = Diagnostics()
    with guard.fenced(case, SECONDS):
        pkg = capmanifest.parse_package("oas-package.json", raw, diags)
        if pkg is not None:
            capmanifest.compatible(pkg.compatibility, "0.19.0")
    done.append(verdict(diags.items))
    return done


def run_oas_lock(case: Path, rng: random.Random, done: List[str]) -> List[str]:
    raw, more = _mutated("oas-lock.json", rng)
    done.extend(more)
    _note_secrets(raw)
    diags = Diagnostics()
    with guard.fenced(case, SECONDS):
        lock = caplock.parse("oas-lock.json", raw, diags)
        if lock is not None and lock.version == 2:
            again = caplock.parse("oas-lock.json", caplock.dump(lock), Diagnostics())
            if again is None or caplock.dump(again) != caplock.dump(lock):
                raise Oracle("oas-lock.json does not survive dump and parse")
    done.append(verdict(diags.items))
    return done


def run_config(case: Path, rng: random.Random, done: List[str]) -> List[str]:
    raw, more = _mutated("oas-config.yaml", rng)
    done.extend(more)
    diags = Diagnostics()
    with guard.fenced(case, SECONDS):
        capconfig.parse("oas-config.yaml", str(case), raw, diags)
    done.append(verdict(diags.items))
    return done


def run_source_strings(case: Path, rng: random.Random, done: List[str]) -> List[str]:
    """Each grammar on a string from the pool, spliced or cut; SourceError is the only
    failure a grammar may raise."""
    text = rng.choice(SOURCE_STRINGS)
    if rng.random() < 0.5:
        other = rng.choice(SOURCE_STRINGS)
        i, j = rng.randrange(len(text) + 1), rng.randrange(len(other) + 1)
        text = text[:i] + other[j:]
    text = text.replace("@CASE@", str(case))
    parent = rng.choice(["../src", "./x", dsl.parse(fs.REMOTE).location, "file:///tmp/r.git", "owner/repo@v1#sub"])
    refused = 0
    with guard.fenced(case, SECONDS):
        for name, call in (("sources.dsl.parse", lambda: dsl.parse(text)),
                           ("capabilities.source.parse", lambda: capsource.parse(text, str(case))),
                           ("capabilities.source.parse_locked", lambda: capsource.parse_locked(text)),
                           ("consume._required_source", lambda: consume._required_source(dsl.parse(parent), text))):
            try:
                call()
            except (dsl.SourceError, capsource.SourceError) as exc:
                no_secret(str(exc), f"the SourceError of {name}", set(fs.SECRETS))
                refused += 1
    done += [f"{text!r:.100} (parent {parent})", f"=> {refused} of 4 refused"]
    return done


@functools.lru_cache(maxsize=None)
def _scope() -> Tuple[Tuple[str, bytes], ...]:
    """A scope that installed the fuzz package, with a soul, a config and injection files."""
    installed = fuzzlib._built(fuzzlib._cap_seed(), ["cap", "install", "./in/pkg", "--dir", "."])
    files = {f"scope/{p}": b for p, b in installed.items() if not p.startswith("in/")}
    files["scope/oas-config.yaml"] = fs.oas_seeds()["oas-config.yaml"][-1]
    files["scope/agents/dev/soul/soul.yaml"] = b"name: dev\ntype: developers\n"
    files["scope/injects/custom.md"] = b"Custom.\n"
    files["scope/notes/team.md"] = b"Team.\n"
    files["outside/secret.txt"] = b"SECRET\n"
    return tuple(sorted(files.items()))


INJECTIONS = ["fifo", "/dev/stdin", "/dev/zero", "../outside/secret.txt", "@CASE@/outside/secret.txt",
              "injects/../../outside/secret.txt", "injects", "missing.md", "", "none", "default", "/", "~/x",
              "notes/team.md\x1b[2K\rall good"]


def _injection(raw: bytes, rng: random.Random) -> Tuple[bytes, str]:
    """A file the config names, from the paths that must stay inside the scope and must not
    block: an entry's injection-override, the kernel's, an agents-md-injection, a setup."""
    try:
        doc = yaml.safe_load(raw)
    except yaml.YAMLError:
        return raw, "not YAML, no injection"
    if not isinstance(doc, dict):
        return raw, "not a mapping, no injection"
    value = rng.choice(INJECTIONS)
    where = rng.randrange(4)
    entries = [e for group in ("layers", "additive") for e in
               ((doc.get("capabilities") or {}).get(group) or {}).values() if isinstance(e, dict)]
    if where == 0 and entries:
        rng.choice(entries)["injection-override"] = value
    elif where == 1:
        doc["oas"] = {"injection-override": value}
    elif where == 2:
        doc["agents-md-injection"] = {"team": value} if rng.random() < 0.5 else value
    else:
        doc["work-modes"] = {"checkout": {"setup": value}}
    text = yaml.safe_dump(doc, allow_unicode=True).encode("utf-8", "surrogatepass")
    return text, f"injection {where} = {value!r}"


def run_cap_scope(case: Path, rng: random.Random, done: List[str]) -> List[str]:
    files = dict(_scope())
    fuzzed = [p for p in sorted(files) if p.endswith(("oas-config.yaml", "oas-lock.json", "oas.json",
                                                      "oas-package.json", ".oas-installation.json", "soul.yaml"))]
    for _ in range(rng.choice([1, 1, 2, 3])):
        path = rng.choice(fuzzed)
        if path.endswith("oas-config.yaml") and rng.random() < 0.3:
            files[path], what = _injection(files[path], rng)
        elif path.endswith(".json") and rng.random() < 0.3:
            files[path], what = _field_edit(files[path], rng)
        elif path.endswith(".json"):
            files[path], what = fs.mutate_json_bytes(files[path], rng, OAS_POOL)
        elif rng.random() < 0.5:
            files[path], what = fuzzlib._mutate_file(path, files[path], rng)
        else:
            try:
                doc, what = fs.mutate_doc(yaml.safe_load(files[path]), rng, OAS_POOL)
                files[path] = yaml.safe_dump(doc, allow_unicode=True).encode("utf-8", "surrogatepass")
            except (yaml.YAMLError, ValueError, TypeError):
                files[path], what = fuzzlib._bytes(files[path], rng)
        done.append(f"{path}: {what}")
    for path in fuzzed:
        _note_secrets(files[path])
    specials = {"scope/fifo": "fifo"}
    _lay_out(case, files, {}, specials)
    argv = rng.choice([["cap", "list", "--dir", ".", "--json"], ["cap", "list", "--dir", "."],
                       ["cap", "doctor", ".", "--json"], ["cap", "doctor", ".", "--soul", "dev", "--json"],
                       ["cap", "doctor", "."], ["cap", "doctor", ".", "--soul", "dev"],
                       ["cap", "trust", "demo.chat", "--dir", "."]])
    done.append(" ".join(argv))
    with guard.fenced(case, SECONDS):
        result = _cli(case / "scope", argv)
    _unchanged(case, {"outside/secret.txt": b"SECRET\n"})
    done.append(result)
    return done

