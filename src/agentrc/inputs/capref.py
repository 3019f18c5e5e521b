"""Capability references (ai-jue's `package.json#ai.capabilities` and the config's
`capabilities`): each names one capability in another repository or directory, which is
fetched through agentrc's sources (`agentrc.inputs.fetch`) and becomes one layer.

The format is ai-jue's (docs/canonical.md, "Capability references", says where it was
pinned): an object of NAME -> `{source, type, ref?, path?, config?, integrity?}`. NAME is
one safe path segment; `type` is one of rule, command, skill, agent, hook, mcp; `source`
is `github:owner/repo` (agentrc's `owner/repo`), `file:PATH` (a directory relative to the
file that holds the reference, inside its preset or project), or any locator of agentrc's
source DSL (`file:///repo.git`, `https://...`, `owner/repo`); `ref` is the git ref and
`path` the directory inside the source (agentrc's `@REF` and `#SUBPATH`). A reference with
`status` is not loadable. `npm:` sources are refused (agentrc fetches git and
directories only).

Each reference gives exactly one capability, read the way ai-jue reads a single leaf from
the selected directory: a skill's `SKILL.md` (and the files beside it), a rule's or an
agent's `prompt.md` (or `AGENTS.md`, an agent's `index.json`), a command's `prompt.md`, a
hook's `prompt.md` and/or `index.json`, an MCP server from the directory's `mcp.json` or
`package.json` (`servers`, `mcp.servers` or `ai.mcp.servers` under NAME, else an npm
package's `bin` as `npx -y PACKAGE` with `config` merged in).

What a reference resolved to is recorded (`Resolved`); the project's `agentrc.lock.json`
keeps those records under `capabilities`, and a git reference the lock records with the
same source and ref is read at the locked commit (from the cache) and must still have
the locked SHA-256 (AR222).
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re

from agentrc.canonical import document as canonical
from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostics
from agentrc.frozen import FrozenMap, freeze
from agentrc.inputs.fetch import Fetcher, display_root, read_tree_root
from agentrc.inputs.tree import real_path
from agentrc.model import SourceFile, SourceTree
from agentrc.patterns import pattern
from agentrc.sources.dsl import GIT, PATH, Source, SourceError, check_subpath, parse
from agentrc.sources.lock import CapabilityRecord

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Tuple

TYPES: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    "rule": ("rules", ("prompt.md", "AGENTS.md")),
    "command": ("commands", ("prompt.md",)),
    "skill": ("skills", ("SKILL.md",)),
    "agent": ("agents", ("prompt.md", "AGENTS.md")),
    "hook": ("hooks", ("prompt.md", "index.json")),
    "mcp": ("mcp", ("mcp.json", "package.json")),
}
FIELDS = ("source", "type", "ref", "path", "config", "integrity", "status")
_NAME = pattern(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


@dataclass(frozen=True)
class Reference:
    """A capability reference of the canonical document: its name, type and where its package comes from."""
    name: str
    type: str
    source: Source
    written: str  # the `source` as the reference writes it
    config: Tuple[Tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class Resolved:
    """One reference as it resolved: the lock's record, and the layer it gave."""

    record: CapabilityRecord
    layer: Optional[canonical.Layer]


def references(value: Any, shown: str, base: str, inside: str, diags: Diagnostics,
               local_repos: bool = True) -> List[Reference]:
    """The references of one `capabilities` object, in name order (ai-jue merges them so);
    AR219 for a malformed one, AR220 for an `npm:` source, AR050 for a `file:` directory
    outside `inside` (the preset's directory, or the project). Without `local_repos` (a
    preset installed from npm, not the project's own), a `file://` repository is AR219:
    it would read whatever repository this machine holds at that path."""
    if value is None:
        return []
    if not isinstance(value, dict):
        diags.error(shown, (1, 1), "AR219", "capabilities: expected an object of NAME -> {source, type, ...}, "
                    f"not {_kind(value)}")
        return []
    out: List[Reference] = []
    for name in sorted(value, key=str):  # a YAML config may hold keys that are not strings
        ref = value[name]
        where = f"capabilities.{name}"
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            diags.error(shown, (1, 1), "AR219", f"{where}: a capability's name is one path segment of letters, "
                        "digits, '.', '_' and '-', starting with a letter or digit")
            continue
        if not isinstance(ref, dict):
            diags.error(shown, (1, 1), "AR219", f"{where}: expected an object {{source, type, ...}}, not "
                        f"{_kind(ref)}")
            continue
        problems = [f"unknown field {k!r}" for k in sorted(ref, key=str) if k not in FIELDS]
        if "status" in ref:
            problems.append(f"it is not loadable while it has a status ({str(ref['status'])[:80]!r})")
        if not isinstance(ref.get("type"), str) or ref["type"] not in TYPES:
            problems.append(f"type must be one of {', '.join(TYPES)}")
        for key in ("source", "ref", "path", "integrity"):
            if key in ref and not isinstance(ref[key], str):
                problems.append(f"{key} must be a string")
        if not isinstance(ref.get("source"), str) or not ref.get("source"):
            problems.append("source is required (github:owner/repo, file:PATH or a git URL)")
        if "config" in ref and not isinstance(ref["config"], dict):
            problems.append("config must be an object")
        if problems:
            diags.error(shown, (1, 1), "AR219", f"{where}: " + "; ".join(problems))
            continue
        try:
            source = _source(ref["source"], ref.get("ref"), ref.get("path"), base, inside)
        except SourceError as exc:
            diags.error(shown, (1, 1), exc.code, f"{where}: {exc}")
            continue
        if not local_repos and source.kind == GIT and source.location.lower().startswith("file://"):
            diags.error(shown, (1, 1), "AR219", f"{where}: a preset installed as a package cannot reference a "
                        f"repository on this machine ({ref['source']!r}); only the project's own config and presets "
                        "can")
            continue
        config = tuple(sorted(ref.get("config", {}).items(), key=lambda kv: str(kv[0])))
        out.append(Reference(name, ref["type"], source, ref["source"], config))
    return out


def _source(text: str, ref: Optional[str], path: Optional[str], base: str, inside: str) -> Source:
    subpath = check_subpath(path, text) if path is not None and path not in ("", ".", "./") else ""
    if text.startswith("npm:"):
        raise SourceError(f"{text!r}: npm: sources are not fetched by agentrc (git repositories and directories "
                          "are); publish the capability in a git repository and write github:owner/repo or its URL",
                          "AR220")
    if text.startswith("github:"):
        repo = text[len("github:"):]
        if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repo):
            raise SourceError(f"{text!r}: github: names owner/repository", "AR219")
        source = parse(repo)
    elif text.startswith("file:") and not text.startswith("file://"):
        source = _local(text[len("file:"):], text, base, inside)
    else:
        source = parse(text)
        if source.kind == PATH:
            source = _local(source.location, text, base, inside)
    if ref is not None:
        if source.kind != GIT:
            raise SourceError(f"{text!r}: a directory has no ref (ref {ref!r})", "AR219")
        if source.ref is not None:
            raise SourceError(f"{text!r}: the ref is given twice (@{source.ref} and ref {ref!r})", "AR219")
        source = source.at(ref)
    if subpath:
        joined = posixpath.join(source.subpath, subpath) if source.subpath else subpath
        source = Source(source.kind, source.location, source.written, source.ref, joined)
    return source


def _local(path: str, text: str, base: str, inside: str) -> Source:
    if not path or path.startswith("~"):
        raise SourceError(f"{text!r}: file: names a directory relative to the file that holds the reference",
                          "AR219")
    where = os.path.normpath(os.path.join(base, path))
    try:
        real, top = real_path(where), real_path(inside)
    except OSError:
        raise SourceError(f"{text!r} is a symlink loop, or a chain of too many symlinks", "AR050") from None
    if real != top and not real.startswith(top.rstrip(os.sep) + os.sep):
        raise SourceError(f"{text!r} leads outside {inside.replace(os.sep, '/')} (a capability's directory stays "
                          "inside the preset or project that names it)", "AR050")
    shown = where.replace(os.sep, "/")
    return Source(PATH, shown, shown, None, "")


def resolve(refs: List[Reference], layer: str, fetcher: Fetcher, pins: Mapping[Tuple[str, str], CapabilityRecord],
            language: str, diags: Diagnostics) -> List[Resolved]:
    """Each reference fetched (at the commit `pins` records for it, when the source and ref
    are the ones locked) and turned into a layer; `layer` names the preset or config that
    holds them (the records' key with the name)."""
    out: List[Resolved] = []
    for ref in refs:
        pin = pins.get((layer, ref.name))
        commit = pin.commit if (pin is not None and ref.source.kind == GIT and pin.source == ref.source.name
                                and pin.ref == ref.source.ref) else None
        fetched = fetcher.fetch(ref.source, commit)
        diags.extend(fetched.diagnostics)
        if not fetched.ok:
            continue
        files = _relative(fetched.tree, fetched.root)
        digest = _digest(files)
        if commit is not None and pin is not None and digest != pin.sha256:
            diags.error(ref.source.label, (0, 0), "AR222", f"capability {ref.name} ({layer}): the content at the "
                        f"locked commit {commit[:12]} is not what agentrc.lock.json records (sha256 {pin.sha256[:12]}"
                        f", now {digest[:12]})")
            continue
        shown = display_root(ref.source, fetched.commit)
        made = _layer(ref, layer, shown, files, language, diags)
        if made is None:
            continue
        # A directory is recorded as the reference writes it (its path here depends on
        # the working directory); a git source by its locator without the ref.
        recorded = ref.source.name if ref.source.kind == GIT else ref.written
        record = CapabilityRecord(layer, ref.name, ref.type, recorded, ref.source.ref, fetched.commit, digest)
        out.append(Resolved(record, made))
    return out


def _relative(tree: SourceTree, root: str) -> Dict[str, SourceFile]:
    prefix = (root if "://" in root else read_tree_root(root)) + "/"
    return {f.path[len(prefix):] if f.path.startswith(prefix) else f.path: f for f in tree.files}


def _digest(files: Mapping[str, SourceFile]) -> str:
    h = hashlib.sha256()
    for rel in sorted(files):
        h.update(rel.encode() + b"\0" + hashlib.sha256(files[rel].content).hexdigest().encode() + b"\n")
    return h.hexdigest()


def _layer(ref: Reference, layer: str, shown: str, files: Mapping[str, SourceFile], language: str,
           diags: Diagnostics) -> Optional[canonical.Layer]:
    """The one capability `ref` selects, as a layer in the §4.2 layout."""
    section, wanted = TYPES[ref.type]
    label = f"capability {ref.name}" + (f" ({layer})" if layer.startswith("preset ") else "")
    if ref.type == "mcp":
        return _mcp(ref, label, shown, files, diags)
    localized = [f"{posixpath.splitext(n)[0]}.{language}{posixpath.splitext(n)[1]}" for n in wanted] if language else []
    if not any(n in files for n in list(wanted) + localized):
        diags.error(ref.source.label, (0, 0), "AR221", f"capability {ref.name}: the {ref.type} has no "
                    f"{' or '.join(wanted)} in {shown}")
        return None
    if ref.type == "skill":
        chosen = files  # SKILL.md and everything beside it
    else:
        chosen = {p: f for p, f in files.items() if "/" not in p}
    layout = {f"{shown}/{p}": f"{section}/{ref.name}/{p}" for p in chosen}
    tree = SourceTree(tuple(sorted((SourceFile(f"{shown}/{p}", f.content) for p, f in chosen.items()),
                                   key=lambda f: f.path)))
    made = canonical.layer_from_tree(label, shown, tree, diags, language=language, layout=layout)
    return made


def _mcp(ref: Reference, label: str, shown: str, files: Mapping[str, SourceFile],
         diags: Diagnostics) -> Optional[canonical.Layer]:
    name = "mcp.json" if "mcp.json" in files else "package.json"
    f = files.get(name)
    if f is None:
        diags.error(ref.source.label, (0, 0), "AR221", f"capability {ref.name}: the mcp has no mcp.json or "
                    f"package.json in {shown}")
        return None
    try:
        manifest = json.loads(f.content.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        diags.error(f"{shown}/{name}", (1, 1), "AR110", f"invalid JSON: {exc}")
        return None
    server: Any = None
    if isinstance(manifest, dict):
        for declared in (manifest.get("servers"), _get(manifest, "mcp", "servers"), _get(manifest, "ai", "mcp",
                                                                                            "servers")):
            if isinstance(declared, dict) and ref.name in declared:
                server = declared[ref.name]
                break
        if server is None and manifest.get("bin") and isinstance(manifest.get("name"), str):
            server = {"command": "npx", "args": ["-y", manifest["name"]], **dict(ref.config)}
    if not isinstance(server, dict) or not isinstance(server.get("command"), str):
        diags.error(f"{shown}/{name}", (1, 1), "AR221", f"capability {ref.name}: no MCP server {ref.name!r} is "
                    "declared (servers, mcp.servers or ai.mcp.servers), and the package has no bin")
        return None
    path = f"{shown}/{name}"
    return canonical.Layer(label, shown, freeze({"mcp": {"servers": {ref.name: server}}}),
                           FrozenMap({f"mcp.servers.{ref.name}": path}))


def _get(data: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(k)
    return data


def _kind(value: Any) -> str:
    return "a list" if isinstance(value, list) else "null" if value is None else f"a {type(value).__name__}"
