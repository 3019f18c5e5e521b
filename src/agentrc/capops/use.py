"""`agentrc cap use CAPABILITY [--global | --type T | --soul S] [--disable] [--settings k=v ...]`
and `cap use none --layer L`: edit the scope's `oas-config.yaml` activation (spec 003,
"Activation and exclusions"), writing the same bytes `oas use` writes.

A capability that declares a layer goes under `capabilities.layers.<layer>` (refused while
another capability holds that layer at this scope), anything else under
`capabilities.additive`; `from:` is filled from where the capability was found. The
`capabilities:` block is written again as a whole, in the kernel's layout (its comments,
the commented injection-override line of each entry); the rest of the file keeps its bytes.
Two deliberate differences: a setting value that YAML would read as something else (a
number, `true`, a string with `: `) is quoted so it stays the string given, and a list of
agent types is written as the map it means (the kernel's writer garbles a list).
"""

from __future__ import annotations

import json
import os
import re
import shlex

import yaml

from agentrc.capabilities.model import CAPABILITIES_DIR, INSTALLED, LAYERS, OWNED
from agentrc.capops import install as capinstall
from agentrc.capops import safe as capsafe
from agentrc.capops.doctor import acquired, config_chain
from agentrc.capops.install import Failure, Outcome, fail
from agentrc.diagnostics import ERROR, Diagnostic
from agentrc.patterns import pattern
from agentrc.text.yamlpos import YamlError
from agentrc.text.yamlpos import load as load_yaml

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Sequence

CONFIG = "oas-config.yaml"
_LEVEL_RE = pattern(r"^capabilities:\s*(#.*)?$")
_ID_RE = pattern(r"^[a-z0-9][a-z0-9._-]*$")


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if value is None:
        return "null"
    text = str(value) if not isinstance(value, float) or not value.is_integer() else str(int(value))
    if isinstance(value, str):
        try:
            plain = yaml.safe_load(f"k: {text}")
        except yaml.YAMLError:
            plain = None
        if not isinstance(plain, dict) or plain.get("k") != value or "\n" in text or text != text.strip():
            return json.dumps(value, ensure_ascii=False)
    return text


def _binding(value: Any, indent: str) -> str:
    if value is True or value is False:
        return f" {_scalar(value)}"
    lines = [""]
    if isinstance(value, dict):
        if "enabled" in value:
            lines.append(f"{indent}enabled: {_scalar(value['enabled'])}")
        settings = value.get("settings")
        if isinstance(settings, dict) and settings:
            lines.append(f"{indent}settings:")
            lines.extend(f"{indent}  {k}: {_scalar(v)}" for k, v in settings.items())
    return "\n".join(lines)


def _entry(cid: str, entry: Dict[str, Any], i: str) -> List[str]:
    lines = []
    if entry.get("capability"):
        lines.append(f"{i}capability: {entry['capability']}")
    if entry.get("from"):
        lines.append(f"{i}from: {entry['from']}")
    if "global" in entry:
        lines.append(f"{i}global:{_binding(entry['global'], i + '  ')}")
    for key in ("agent-types", "souls"):
        targets = entry.get(key)
        if isinstance(targets, list):
            targets = {t: True for t in targets}
        if isinstance(targets, dict) and targets:
            lines.append(f"{i}{key}:")
            lines.extend(f"{i}  {name}:{_binding(v, i + '    ')}" for name, v in targets.items())
    settings = entry.get("settings")
    if isinstance(settings, dict) and settings:
        lines.append(f"{i}settings:")
        lines.extend(f"{i}  {k}: {_scalar(v)}" for k, v in settings.items())
    source = str(entry.get("from") or "")
    if "injection-override" in entry:
        lines.append(f"{i}injection-override: {entry['injection-override']}")
    elif source == "owned" or source.startswith("path:"):
        lines.append(f"{i}# injection edited at source: .agents/capabilities/owned/{cid}/injects/")
    else:
        lines.append(f"{i}# injection-override: .agents/injections/capabilities/{cid}.md")
    return lines


def serialize(layers: Dict[str, Any], additive: Dict[str, Any]) -> str:
    """The `capabilities:` block, as `oas use` writes it."""
    lines = ["capabilities:", "  # Fundamental layers \u2014 exclusive slots; a capability entry or an explicit none.",
             "  layers:"]
    for layer in LAYERS:
        entry = layers.get(layer)
        if entry is None:
            continue
        if entry == "none":
            lines.append(f"    {layer}: none")
            continue
        lines.append(f"    {layer}:")
        lines.extend(_entry(entry.get("capability", ""), entry, "      "))
    if additive:
        lines.append("  additive:")
        for cid, entry in additive.items():
            lines.append(f"    {cid}:")
            lines.extend(_entry(cid, entry if isinstance(entry, dict) else {}, "      "))
    return "\n".join(lines) + "\n"


def replace_block(text: str, block: str) -> str:
    """`text` with its top-level `capabilities:` block replaced by `block` (appended when
    there is none), blank runs squeezed to one, one final newline."""
    lines = (text.rstrip("\n") + "\n").split("\n")
    start = next((n for n, line in enumerate(lines) if _LEVEL_RE.match(line)), -1)
    if start < 0:
        return text.rstrip("\n") + "\n\n" + block
    end = len(lines)
    for n in range(start + 1, len(lines)):
        if re.match(r"^[^\s#]", lines[n]):
            end = n
            break
        if lines[n].startswith("#") and n + 1 < len(lines) and re.match(r"^[^\s]", lines[n + 1] or ""):
            end = n
            break
    out = "\n".join(lines[:start] + block.rstrip("\n").split("\n") + [""] + lines[end:])
    out = re.sub(r"\n{3,}", "\n\n", out)
    return out.rstrip("\n") + "\n"


def use(scope: str, requested: str, target: str = "global", name: str = "", disable: bool = False,
        layer: str = "", settings: Sequence[str] = ()) -> Outcome:
    """Edit `scope`'s oas-config.yaml. `target`: global, type or soul (with `name`). Under
    the scope's lock, as every write of a scope's files."""
    scope = os.path.abspath(scope)
    with capinstall.held(scope):
        return _use(scope, requested, target, name, disable, layer, settings)


def _use(scope: str, requested: str, target: str, name: str, disable: bool, layer: str,
         settings: Sequence[str]) -> Outcome:
    path = os.path.join(scope, CONFIG)
    if os.path.islink(path):
        raise fail(path, "AR167", "is a symbolic link; agentrc edits only a real oas-config.yaml")
    text = _read(path, scope) if os.path.lexists(path) else f"name: {os.path.basename(scope)}\n"
    chain = config_chain(scope)  # validates every config of the chain first
    data = _load(path, text)
    raw_caps = data.get("capabilities")
    caps: Dict[str, Any] = raw_caps if isinstance(raw_caps, dict) else {}
    layers: Dict[str, Any] = dict(caps.get("layers") or {})
    additive: Dict[str, Any] = dict(caps.get("additive") or {})
    if layer and layer not in LAYERS:
        raise fail(path, "AR168", f"--layer {layer!r} is not one of {', '.join(LAYERS)}", "E_BAD_ARGS")
    if requested == "none":
        if not layer:
            raise fail(path, "AR168", "`cap use none` needs --layer", "E_USAGE")
        layers[layer] = "none"
        _write(path, replace_block(text, serialize(layers, additive)))
        return Outcome({"layer": layer, "disabled": True, "file": path}, [f"disabled the {layer} layer in {path}"])
    found = acquired(chain).get(requested)
    if found is None:
        raise _not_acquired(scope, requested, _again(scope, requested, target, name, disable, layer, settings))
    cap, origin, _dir = found
    if layer and cap.layer != layer:
        raise fail(requested, "AR170", f"{requested!r} declares layer {cap.layer or 'none'!r}, not {layer!r}",
                    "E_LAYER_MISMATCH")
    enabled = not disable
    entry = _activated_entry(path, cap, layers, additive, enabled)
    source = "installed" if origin.startswith("installed:") else "owned" if origin.startswith("owned:") else ""
    if source and not entry.get("from"):
        entry["from"] = source
    if settings:
        _set_settings(path, entry, settings)
    _set_target(entry, cap, target, name, enabled)
    _write(path, replace_block(text, serialize(layers, additive)))
    who = "global" if target == "global" else f"{target} {name}"
    return Outcome({"capability": cap.id, "target": who, "enabled": enabled, "file": path},
                   [f"{'activated' if enabled else 'excluded'} {cap.id} for {who} in {path}"])


def _activated_entry(path: str, cap: Any, layers: Dict[str, Any], additive: Dict[str, Any],
                     enabled: bool) -> Dict[str, Any]:
    """The config entry `cap` activates: its layer's binding (AR153 when another capability
    holds the layer and this one is being enabled) or its additive entry, made when missing."""
    if cap.layer:
        existing = layers.get(cap.layer)
        holds = isinstance(existing, dict) and existing.get("capability") == cap.id
        if isinstance(existing, dict) and not holds and enabled:
            raise fail(path, "AR153", f"the {cap.layer} layer already binds {existing.get('capability')!r} here; "
                        "disable it first", "E_LAYER_BOUND")
        entry: Dict[str, Any] = existing if holds and isinstance(existing, dict) else {"capability": cap.id}
        layers[cap.layer] = entry
        return entry
    prior = additive.get(cap.id)
    entry = prior if isinstance(prior, dict) else {}
    additive[cap.id] = entry
    return entry


def _set_settings(path: str, entry: Dict[str, Any], settings: Sequence[str]) -> None:
    """`--settings key=value ...` merged into the entry's settings (AR168 for a malformed one)."""
    had = entry.get("settings")
    current: Dict[str, Any] = had if isinstance(had, dict) else {}
    for kv in settings:
        key, eq, value = kv.partition("=")
        if not eq or not key:
            raise fail(path, "AR168", f"--settings takes key=value, not {kv!r}", "E_USAGE")
        current[key] = value
    entry["settings"] = current


def _set_target(entry: Dict[str, Any], cap: Any, target: str, name: str, enabled: bool) -> None:
    """The entry enabled or excluded for everyone, an agent type or a soul."""
    if target == "global":
        entry["global"] = enabled
        return
    key = "agent-types" if target == "type" else "souls"
    if cap.layer and "global" not in entry and not entry.get("agent-types") and not entry.get("souls"):
        entry["global"] = True  # a layer entry without targets was global; keep everyone else
    targets = entry.get(key)
    if isinstance(targets, list):
        targets = {t: True for t in targets}
    targets = targets if isinstance(targets, dict) else {}
    targets[name] = enabled
    entry[key] = targets


def _not_acquired(scope: str, requested: str, again: str) -> Exception:
    """AR170 for a capability no scope of the chain acquires. The kernel finds capabilities
    only through each scope's `oas-config.yaml`, so one installed beside no config (a first
    `cap install` into a plain directory) is invisible; agentrc keeps that rule and says
    instead which config to create (`cap init`) and the command to run again, so the user is not left
    guessing why a successful install is "not acquired"."""
    level = scope
    while _ID_RE.match(requested):  # an id names a directory of the store; nothing else is looked up
        for sub in (INSTALLED, OWNED):
            there = os.path.join(level, CAPABILITIES_DIR, sub, requested)
            if os.path.isdir(there) and not os.path.lexists(os.path.join(level, CONFIG)):
                config = os.path.join(level, CONFIG)
                where = _shown(level) or "the working directory"
                create = "agentrc cap init" + (f" --dir {shlex.quote(_shown(level))}" if _shown(level) else "")
                return Failure([Diagnostic(
                    requested, 0, 0, ERROR, "AR170",
                    f"capability {requested!r} is {sub} in {_shown(there)}, but {where} has no "
                    f"{CONFIG}: a capability is found only through the config of the scope that holds it",
                    f"create {_shown(config)} (`agentrc cap init` writes the kernel's) and run the command again: "
                    f"{create} && {again}")], "E_UNKNOWN_CAPABILITY")
        parent = os.path.dirname(level)
        if parent == level:
            break
        level = parent
    return fail(requested, "AR170", f"capability {requested!r} is not acquired in this scope's chain; install "
                "its package first", "E_UNKNOWN_CAPABILITY")


def _again(scope: str, requested: str, target: str, name: str, disable: bool, layer: str,
           settings: Sequence[str]) -> str:
    """The `agentrc cap use` command line that asked for `requested`, quoted for a shell."""
    argv = ["agentrc", "cap", "use", requested]
    if target != "global":
        argv += ["--type" if target == "type" else "--soul", name]
    argv += ["--disable"] if disable else []
    argv += ["--layer", layer] if layer else []
    argv += ["--settings", *settings] if settings else []
    if os.path.abspath(scope) != os.path.abspath(os.getcwd()):
        argv += ["--dir", _shown(scope)]
    return " ".join(shlex.quote(a) for a in argv)


def _shown(path: str) -> str:
    """`path` relative to the working directory when it lies below it (as diagnostics show
    paths), else absolute."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else ("" if rel == "." else rel)


def _load(path: str, text: str) -> Dict[str, Any]:
    try:
        data = load_yaml(text).data
    except YamlError as exc:
        raise fail(path, "AR001", exc.message) from None
    return data if isinstance(data, dict) else {}


def _read(path: str, scope: str) -> str:
    """The config's text, read with the bounded reader (a FIFO there is AR054, not a hang)."""
    try:
        raw = capsafe.read_bounded(path, scope)
    except capsafe.Escape as exc:
        raise fail(path, exc.code, exc.message) from None
    try:
        return raw.decode("utf-8").replace("\r\n", "\n")
    except UnicodeDecodeError as exc:
        raise fail(path, "AR008", f"not UTF-8 (byte {exc.start})") from None


def _write(path: str, text: str) -> None:
    capinstall.write_in(os.path.dirname(path), path, text.encode("utf-8"))
