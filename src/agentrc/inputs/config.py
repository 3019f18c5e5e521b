"""Reading a project's canonical layers from disk (spec 000 §4): the shell around agentrc.canonical.document.

A project is a directory holding `ai.config.{js,mjs,cjs,json,yaml,yml,toml}` and/or an `.ai/`
directory. Its presets are local directories (`./presets/base`) or npm packages in
`node_modules/` (ai-jue's names: `base` means `jue-preset-base` when no package `base`
exists), each with its own presets in `package.json#ai.presets`; chains are resolved depth
first and cycles are reported with the chain. `ai.config.js` is evaluated by Node (a small
loader prints the default export as JSON and refuses functions and cycles).

A config is code from the repository being built, so Node runs it sandboxed
(docs/security.md, "What a configuration can do"): Node's permission model lets it read the
project and the `node_modules` directories above it and nothing else, write nothing, start
no process, worker or native addon; its environment is empty; the loader closes the network
doors Node 20's model leaves open (best effort); and it gets NODE_TIMEOUT seconds (AR121).
A refusal is AR122.
"""

from __future__ import annotations

import bisect
import json
import os
import shutil
import subprocess
from functools import lru_cache

from agentrc.canonical import document as canonical
from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.frozen import FrozenMap, freeze
from agentrc.inputs import capref
from agentrc.inputs.fetch import Fetcher
from agentrc.inputs.tree import (
    CONFIG_NAMES,
    ESCAPE_HINT,
    MAX_LINK_HOPS,
    Root,
    leaves,
    read_file,
    read_text,
    real_path,
    walk,
)
from agentrc.inputs.tree import is_project as is_project  # kept here too: callers ask the front door
from agentrc.model import SourceFile, SourceTree
from agentrc.patterns import pattern
from agentrc.sources import lock as lockfile
from agentrc.text import tomledit
from agentrc.text.position import Lines, TextError
from agentrc.text.yamlpos import YamlError
from agentrc.text.yamlpos import load as load_yaml

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

# Seconds a config may run (AGENTRC_NODE_TIMEOUT overrides), and Node's heap, which bounds
# what it can print.
NODE_TIMEOUT = 5.0
NODE_HEAP_MB = 256
# How deep a configuration's data may nest (YAML's own bound is the same, AR009).
MAX_CONFIG_DEPTH = 100

# Prints the config's default export as JSON; exit 3 when it is not plain data, 4 when the
# sandbox refused something. Node 20's permission model has no network permission, so the
# network entry points are replaced before the config is imported (best effort: a config
# could reach a socket some other way this does not know of).
NODE_LOADER = r"""
const { pathToFileURL } = require('url');
const deny = (what) => function () {
  const e = new Error(`network access (${what}) is not allowed`);
  e.code = 'ERR_ACCESS_DENIED'; e.permission = 'Network';
  throw e;
};
const net = require('net');
net.Socket.prototype.connect = deny('net'); net.Server.prototype.listen = deny('net');
net.connect = net.createConnection = deny('net');
const dgram = require('dgram');
dgram.createSocket = deny('dgram');
for (const mod of [require('dns'), require('dns').promises]) {
  for (const k of Object.keys(mod)) if (/^(lookup|resolve|reverse)/.test(k)) mod[k] = deny('dns');
  if (mod.Resolver) for (const k of Object.getOwnPropertyNames(mod.Resolver.prototype)) {
    if (/^(lookup|resolve|reverse)/.test(k)) mod.Resolver.prototype[k] = deny('dns');
  }
}
for (const k of ['fetch', 'WebSocket', 'EventSource']) if (k in globalThis) globalThis[k] = deny(k);
const denied = (e) => {
  if (!e || e.code !== 'ERR_ACCESS_DENIED') return false;
  const what = e.permission === 'Network' ? e.message
    : `${e.permission || 'access'}${e.resource ? ' ' + e.resource : ''}: ${e.message}`;
  process.stderr.write(what + '\n');
  process.exit(4);
};
(async () => {
  const mod = await import(pathToFileURL(process.argv[1]).href);
  let value = mod && mod.default !== undefined ? mod.default : mod;
  if (value && typeof value.then === 'function') value = await value;
  const seen = new Set();
  const check = (v, path) => {
    const t = typeof v;
    if (t === 'function' || t === 'symbol' || t === 'bigint' || t === 'undefined') {
      throw new Error(`${path} is a ${t}, not plain data`);
    }
    if (v && t === 'object') {
      if (seen.has(v)) throw new Error(`${path} refers back to an enclosing object (a cycle)`);
      seen.add(v);
      for (const [k, x] of Object.entries(v)) check(x, `${path}.${k}`);
      seen.delete(v);
    }
  };
  try { check(value, 'config'); } catch (e) { process.stderr.write(e.message + '\n'); process.exit(3); }
  process.stdout.write(JSON.stringify(value));
})().catch((e) => { denied(e); process.stderr.write(String(e && e.stack || e) + '\n'); process.exit(2); });
"""


@dataclass(frozen=True)
class Project:
    """A canonical project as read: its root, its config file, its layers and what its references resolved to."""
    root: str
    config_path: Optional[str]
    layers: Tuple[canonical.Layer, ...]
    # What its capability references resolved to (the lock's `capabilities` records).
    capabilities: Tuple[lockfile.CapabilityRecord, ...] = ()


class _Capabilities:
    """The capability references of one project: one Fetcher (each source fetched once),
    the pins of the project's agentrc.lock.json, and what resolved."""

    def __init__(self, root: str, diags: Diagnostics, unpin: Optional[Tuple[str, ...]] = None):
        self.root = root
        self.fetcher = Fetcher(".")  # local references are resolved against the project already
        self.records: List[lockfile.CapabilityRecord] = []
        self.pins: Dict[Tuple[str, str], lockfile.CapabilityRecord] = {}
        path = os.path.join(root, lockfile.LOCK_FILE)
        if os.path.lexists(path):
            f = read_file(path, _posix(path), Root(root), diags)
            lock, problems = lockfile.loads(f.content, _posix(path)) if f is not None else (None, ())
            diags.extend(problems)
            self.pins = {(c.layer, c.name): c for c in (lock.capabilities if lock is not None else ())
                         if unpin is None or (unpin and c.name not in unpin)}

    def layers(self, value: Any, shown: str, layer: str, base: str, inside: str, diags: Diagnostics,
               language: str, local_repos: bool = True) -> List[canonical.Layer]:
        refs = capref.references(value, shown, base, inside, diags, local_repos)
        if not refs:
            return []
        got = capref.resolve(refs, layer, self.fetcher, self.pins, language, diags)
        self.records.extend(r.record for r in got)
        return [r.layer for r in got if r.layer is not None]


def load_project(root: str, unpin: Optional[Tuple[str, ...]] = None) -> Tuple[Project, Tuple[Diagnostic, ...]]:
    """The layers of the project at `root`, in merge order (§4.3). Every file read resolves
    inside the project, or inside the preset's own directory for a preset's files (AR050).
    Capability references are read at the commits agentrc.lock.json pins, except those
    `unpin` names (all of them when it is empty): `agentrc update` resolves their refs again."""
    diags = Diagnostics()
    root = os.path.normpath(root)
    project = Root(root, f"the project {_posix(root)}")
    config_path = next((_join(root, n) for n in CONFIG_NAMES if os.path.lexists(_join(root, n))), None)
    config: Dict[str, Any] = {}
    config_positions: Dict[str, Tuple[int, int]] = {}
    if config_path is not None:
        loaded = read_config(config_path, diags, project, config_positions)
        if loaded is not None:
            config = loaded
    language = str(config.get("language") or "")
    layers: List[canonical.Layer] = []
    done: set = set()
    caps = _Capabilities(root, diags, unpin)
    for name in _preset_names(config, _posix(config_path or root), diags):
        _preset(name, root, root, [], layers, diags, language, done, _posix(config_path or root), caps)
    for layer in (_ai_layer(root, project, diags, language), _agents_md_layer(root, project, diags)):
        if layer is not None:
            layers.append(layer)
    if config_path is not None and "capabilities" in config:
        # ai-jue's order: the config's capability references after AGENTS.md, before the
        # config's own keys.
        layers.extend(caps.layers(config["capabilities"], _posix(config_path), os.path.basename(config_path), root,
                                  root, diags, language))
    if config_path is not None:
        layers.append(canonical.layer_from_tree(os.path.basename(config_path), _posix(config_path), SourceTree(()),
                                                diags, config=config, config_path=_posix(config_path),
                                                config_positions=config_positions))
    return (Project(_posix(root), _posix(config_path) if config_path else None, tuple(layers), tuple(caps.records)),
            diags.sorted())


def _preset_names(config: Dict[str, Any], shown: str, diags: Diagnostics) -> List[str]:
    """The presets the config names (`preset`, then `presets`), in order; AR115 when they
    are not names or paths."""
    names = config.get("presets", [])
    if isinstance(config.get("preset"), str):
        names = [config["preset"]] + list(names if isinstance(names, list) else [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        diags.error(shown, (1, 1), "AR115", "presets: expected a list of preset names or paths")
        return []
    return names


def _ai_layer(root: str, project: Root, diags: Diagnostics, language: str) -> Optional[canonical.Layer]:
    """The project's `.ai/` directory as a layer, when there is one inside the project."""
    ai_dir = _join(root, ".ai")
    try:
        ai_real = real_path(ai_dir) if os.path.lexists(ai_dir) else None
    except OSError:
        diags.error(_posix(ai_dir), (0, 0), "AR054", "is a symlink loop, or a chain of more than "
                    f"{MAX_LINK_HOPS} symlinks")
        ai_real = None
    if ai_real is None:
        return None
    if not project.inside(ai_real):
        diags.error(_posix(ai_dir), (0, 0), "AR050", leaves(ai_dir, project), ESCAPE_HINT)
    elif not os.path.isdir(ai_dir):
        diags.error(_posix(ai_dir), (0, 0), "AR054", "is not a directory (the .ai/ layer belongs here)")
    else:
        tree = _tree(Root(ai_dir, project.label, within=project), diags)
        return canonical.layer_from_tree(".ai", _posix(ai_dir), tree, diags, language=language)
    return None


def _agents_md_layer(root: str, project: Root, diags: Diagnostics) -> Optional[canonical.Layer]:
    """The project's AGENTS.md (outside agentrc's managed block) as the global context, when
    it says anything."""
    agents_md = _join(root, "AGENTS.md")
    raw = read_text(agents_md, _posix(agents_md), project, diags) if os.path.lexists(agents_md) else None
    if raw is None:
        return None
    text = canonical.strip_managed_block(raw)
    if not text.strip():
        return None
    return canonical.Layer("AGENTS.md", _posix(agents_md), freeze({"context": {"global": text}}),
                           FrozenMap({"context.global": _posix(agents_md)}))


def key_positions(text: str) -> Dict[str, Tuple[int, int]]:
    """`a.b.c` -> (line, column) of each mapping key of a YAML or JSON text (JSON is read
    as YAML here, for positions only); none when it does not read as YAML."""
    try:
        located = load_yaml(text)
    except YamlError:
        return {}
    return {".".join(str(k) for k in path): pos for path, pos in located.key_pos.items()
            if path and all(isinstance(k, str) for k in path)}


# An object literal's key: an identifier or a quoted string (no escapes), then a colon.
_JS_KEY = pattern(r"""(?<![\w$.])(?:([A-Za-z_$][\w$]*)|"([^"\\\n]*)"|'([^'\\\n]*)')\s*:""")


def js_positions(text: str, data: Dict[str, Any], most: int = 10_000) -> Dict[str, Tuple[int, int]]:
    """Where an ai.config.js most likely writes each key of the object it evaluated to:
    the path's keys found in order in the source (`rules:` then `style:` after it, then
    `alwaysApply:` after that), as an object literal spells them. A key built at run time
    (computed, spread, from another module) is not found and keeps no position, so its
    diagnostics point at the file. One scan of the text, then a binary search per key;
    at most `most` keys."""
    where: Dict[str, List[int]] = {}
    for m in _JS_KEY.finditer(text):
        where.setdefault(next(g for g in m.groups() if g is not None), []).append(m.start())
    out: Dict[str, Tuple[int, int]] = {}
    lines = Lines(text)
    stack: List[Tuple[Tuple[str, ...], Any, int]] = [((), data, 0)]
    while stack and len(out) < most:
        path, value, start = stack.pop()
        if not isinstance(value, dict):
            continue
        for key, child in value.items():
            spots = where.get(str(key), [])
            i = bisect.bisect_left(spots, start)
            if i == len(spots):
                continue
            spot = path + (str(key),)
            out[".".join(spot)] = lines.line_col(spots[i])
            stack.append((spot, child, spots[i] + 1))
    return out


def _toml_positions(text: str) -> Dict[str, Tuple[int, int]]:
    """Like `key_positions`, for TOML: none when agentrc's own TOML scanner cannot read it
    (the parser that read the data may accept more)."""
    try:
        return tomledit.key_positions(text)
    except TextError:
        return {}


def read_config(path: str, diags: Diagnostics, project: Root,
                positions: Optional[Dict[str, Tuple[int, int]]] = None) -> Optional[Dict[str, Any]]:
    """The config's data. `positions`, when given, gets the line and column of each dotted
    key of a JSON, YAML or TOML config, so diagnostics about a key point at it (an
    ai.config.js is evaluated by Node: its diagnostics point at the file)."""
    shown = _posix(path)
    ext = os.path.splitext(path)[1]
    try:
        if ext in (".js", ".mjs", ".cjs"):
            if read_file(path, shown, project, diags) is None:
                return None
            data = _node(path, shown, diags, project)
            text = read_text(path, shown, project, Diagnostics())
            if positions is not None and isinstance(data, dict) and text is not None:
                positions.update(js_positions(text, data))
        else:
            text = read_text(path, shown, project, diags)
            if text is None:
                return None
            if ext == ".json":
                data = json.loads(text)
            elif ext == ".toml":
                data = _toml(text)
            else:
                data = load_yaml(text).data
            if positions is not None:
                positions.update(_toml_positions(text) if ext == ".toml" else key_positions(text))
    except YamlError as exc:
        diags.error(shown, exc.pos, exc.code or "AR110", exc.message)
        return None
    except ValueError as exc:
        pos = (getattr(exc, "lineno", 1) or 1, getattr(exc, "colno", 1) or 1)
        diags.error(shown, pos, "AR110", f"cannot read the config: {getattr(exc, 'msg', exc)}")
        return None
    except RecursionError:
        diags.error(shown, (1, 1), "AR110", "cannot read the config: nested too deeply")
        return None
    if data is None:
        return None
    if _depth(data) > MAX_CONFIG_DEPTH:
        diags.error(shown, (1, 1), "AR110", f"the config nests more than {MAX_CONFIG_DEPTH} levels deep")
        return None
    if not isinstance(data, dict):
        diags.error(shown, (1, 1), "AR112", f"the config is a {type(data).__name__}, not an object of settings")
        return None
    return data


def _depth(data: Any) -> int:
    """How deep `data` nests (iteratively: deep data must not exhaust the stack here)."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            deepest = max(deepest, depth)
            if depth <= MAX_CONFIG_DEPTH:
                stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
    return deepest


def node_reads(root: str) -> List[str]:
    """What a config may read: its project and every `node_modules` above it (where its
    imports and the presets' packages are found), by real path."""
    allowed = [os.path.realpath(root)]
    d = allowed[0]
    while True:
        modules = os.path.join(d, "node_modules")
        if os.path.isdir(modules) and not modules.startswith(allowed[0] + os.sep):
            allowed.append(os.path.realpath(modules))
        parent = os.path.dirname(d)
        if parent == d:
            return allowed
        d = parent


@lru_cache(maxsize=None)
def no_network_prefix() -> Tuple[str, ...]:
    """`unshare -rn`: Node runs in a new user and network namespace, whose only interface is
    a loopback of its own, so no connection leaves it whatever the config does. Node 20's
    permission model has no network switch; the loader's closed doors (NODE_LOADER) are the
    guard where namespaces are unavailable (not Linux, or unprivileged user namespaces
    turned off), which docs/security.md states."""
    unshare, true = shutil.which("unshare"), shutil.which("true")
    if unshare is None or true is None:
        return ()
    try:
        probe = subprocess.run([unshare, "-rn", true], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=10, env={})
    except (OSError, subprocess.SubprocessError):
        return ()
    return (unshare, "-rn") if probe.returncode == 0 else ()


def node_timeout() -> float:
    try:
        return float(os.environ.get("AGENTRC_NODE_TIMEOUT", "")) or NODE_TIMEOUT
    except ValueError:
        return NODE_TIMEOUT


def _node(path: str, shown: str, diags: Diagnostics, project: Root) -> Optional[Any]:
    node = shutil.which("node")
    if node is None:
        diags.error(shown, (1, 1), "AR111", "evaluating a JavaScript config needs Node.js, which is not on PATH")
        return None
    allowed = node_reads(project.path)
    if any("," in p for p in allowed):
        diags.error(shown, (1, 1), "AR110", "cannot sandbox the config: Node 20's --allow-fs-read takes a "
                    f"comma-separated list, and {next(p for p in allowed if ',' in p)!r} holds a comma")
        return None
    timeout = node_timeout()
    args = [*no_network_prefix(), node, "--experimental-permission", "--allow-fs-read=" + ",".join(allowed),
            "--no-addons", "--no-warnings", f"--max-old-space-size={NODE_HEAP_MB}", "-e", NODE_LOADER,
            os.path.realpath(path)]
    try:
        # env={}: no inherited variable (tokens live there); Node needs none.
        proc = subprocess.run(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              encoding="utf-8", errors="replace", timeout=timeout, env={})
    except subprocess.TimeoutExpired:
        diags.error(shown, (1, 1), "AR121", f"evaluating the config took longer than {timeout:g} s; it was stopped")
        return None
    if proc.returncode == 3:
        diags.error(shown, (1, 1), "AR112", proc.stderr.strip())
        return None
    if proc.returncode == 4:
        diags.error(shown, (1, 1), "AR122", f"the sandbox refused: {proc.stderr.strip()}")
        return None
    if proc.returncode != 0:
        first = next((ln for ln in proc.stderr.splitlines() if ln.strip()), "node failed")
        diags.error(shown, (1, 1), "AR110", f"node could not evaluate it: {first}")
        return None
    return json.loads(proc.stdout)


def _toml(text: str) -> Any:
    try:
        import tomllib  # type: ignore[import-not-found]  # Python >= 3.11
        return tomllib.loads(text)
    except ImportError:
        pass
    try:
        import tomli  # type: ignore[import-not-found]
        return tomli.loads(text)
    except ImportError:
        import toml  # type: ignore[import-untyped]
        try:
            return toml.loads(text)
        except toml.TomlDecodeError as exc:
            raise ValueError(str(exc)) from exc


def _preset(name: str, base: str, root: str, chain: List[Tuple[str, str]], layers: List[canonical.Layer],
            diags: Diagnostics, language: str, done: set, config_file: str, caps: _Capabilities) -> None:
    """Depth first: the preset's own presets, then the preset itself. `chain` holds the
    (real path, name) of the presets being resolved, to report a cycle with its chain."""
    where = _find_preset(name, base, root)
    if where is None:
        looked = (f"no directory {_posix(os.path.normpath(os.path.join(base, name)))}" if name.startswith((".", "/"))
                  else f"neither node_modules/{name} nor node_modules/jue-preset-{name} exists")
        diags.error(_posix(os.path.join(base, "package.json")) if chain else config_file, (1, 1), "AR113",
                    f"preset {name!r} not found: {looked}"
                    + (f" (required by {' -> '.join(n for _, n in chain)})" if chain else ""))
        return
    key = os.path.realpath(where)
    keys = [k for k, _ in chain]
    if key in keys:
        cycle = [n for _, n in chain[keys.index(key):]] + [name]
        diags.error(_posix(os.path.join(where, "package.json")), (1, 1), "AR114", "preset cycle: " + " -> ".join(cycle))
        return
    if key in done:
        return  # a preset two others share loads once, at its first (deepest) position
    for inner in _package_presets(where, diags):
        _preset(inner, where, root, chain + [(key, name)], layers, diags, language, done, config_file, caps)
    done.add(key)
    meta = _package_json(where, diags)
    section = meta.get("ai") or meta.get("jue") or {}
    if isinstance(section, dict) and "capabilities" in section:
        # ai-jue's order inside a preset: its presets, its capability references, its own files.
        # A preset found in node_modules came from a registry: it may not point at this
        # machine's repositories (file://), as a preset named by its path may.
        layers.extend(caps.layers(section["capabilities"], _posix(os.path.join(where, "package.json")),
                                  f"preset {name}", where, where, diags, language,
                                  local_repos=name.startswith((".", "/"))))
    tree = _tree(Root(where, f"the preset {name} ({_posix(where)})"), diags)
    layers.append(canonical.layer_from_tree(f"preset {name}", _posix(where), tree, diags, language=language))


def _find_preset(name: str, base: str, root: str) -> Optional[str]:
    if name.startswith((".", "/")):
        path = os.path.normpath(os.path.join(base, name))
        return path if os.path.isdir(path) else None
    for start in (base, root):
        d = os.path.abspath(start)
        while True:
            for candidate in (name, f"jue-preset-{name}"):
                path = os.path.join(d, "node_modules", candidate)
                if os.path.isdir(path):
                    return os.path.relpath(path) if not os.path.isabs(root) else path
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
    return None


def _package_json(where: str, diags: Diagnostics) -> Dict[str, Any]:
    path = os.path.join(where, "package.json")
    if not os.path.lexists(path):
        return {}
    text = read_text(path, _posix(path), Root(where), diags)
    if text is None:
        return {}
    try:
        data = json.loads(text)
        return data if isinstance(data, dict) else {}
    except ValueError as exc:
        diags.error(_posix(path), (1, 1), "AR110", f"invalid JSON: {exc}")
        return {}


def _package_presets(where: str, diags: Diagnostics) -> List[str]:
    meta = _package_json(where, diags)
    section = meta.get("ai") or meta.get("jue") or {}
    names = section.get("presets", []) if isinstance(section, dict) else []
    return [str(n) for n in names if isinstance(n, str) and n.strip()] if isinstance(names, list) else []


def _tree(root: Root, diags: Diagnostics) -> SourceTree:
    """A layer directory's files (hidden directories included: the layer may be `.ai/`)."""
    files: List[SourceFile] = []
    walk(root, files, diags, lambda entry: entry.name not in ("node_modules", ".git"), lambda rel, name: True)
    return SourceTree(tuple(sorted(files, key=lambda f: f.path)))


def _join(root: str, name: str) -> str:
    """`root/name` as the walk of `Root(root)` displays it: `.ai`, not `./.ai`, for the
    project `.` (a layer's files are matched against its root by that prefix)."""
    return os.path.normpath(os.path.join(root, name))


def _posix(path: Optional[str]) -> str:
    return (path or "").replace(os.sep, "/")
