"""`agentrc cap init [--raw] [--knowledge ID|none] [--messaging ID|none] [--tasks ID|none]`:
start a capability scope with the `oas-config.yaml` the OAS kernel's `oas init` writes, the
first step a scope needs (a capability is found only through the config of its scope; `cap
use` points a first-time user here).

Enters: the scope directory and the layer choices. Leaves: `oas-config.yaml` (the kernel's
scaffold, byte for byte: name, the commented agent types, the three fundamental layers, the
commented additive entries, work modes and the kernel's injection override) and the
kernel's `--json` result (`file`, `level`, `raw`, `adopted`, `layers`, `acquired`,
`activated`, `requirements`).

A layer named with a capability id must be filled by a capability already acquired: in the
scope's own `installed/` or `owned/` store (read directly: no config exists there yet), or at
a scope above it; its manifest must declare that layer. The written config must resolve (as
`cap doctor` resolves it) or it is removed again and the run fails: nothing is left.

Deliberate differences from the kernel: `cap init` acquires nothing. The kernel fills the
knowledge and messaging layers with oas.okf and oas.aweb by default and fetches an official
package for an id it does not find; agentrc leaves a layer not named on the command line
unset (the commented line the kernel writes for an unset layer) and refuses an id that is
not acquired, naming `agentrc cap install` (fetching is `cap install`'s job, with its
checks). `--template`, `--package` and the interactive questions are not offered.
"""

from __future__ import annotations

import os
import shlex

from agentrc.capabilities.manifest import parse_capability
from agentrc.capabilities.model import CAPABILITIES_DIR, CAPABILITY_FILE, INSTALLED, LAYERS, OWNED, Capability
from agentrc.capops import doctor as capdoctor
from agentrc.capops import install as capinstall
from agentrc.capops.install import Failure, Outcome, fail
from agentrc.diagnostics import Diagnostics
from agentrc.inputs import captree

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

CONFIG = "oas-config.yaml"


def init(scope: str, raw: bool = False, chosen: Optional[Dict[str, str]] = None) -> Outcome:
    """Write `scope`'s oas-config.yaml. `chosen`: layer -> capability id or "none", for the
    layers named on the command line. Raises Failure; on failure nothing is written."""
    scope = os.path.abspath(scope)
    with capinstall.held(scope):
        path = os.path.join(scope, CONFIG)
        if os.path.lexists(path):
            raise fail(path, "AR265", "already exists: edit it, or change it with `agentrc cap use`",
                       "E_CONFIG_EXISTS")
        layers: Dict[str, Optional[str]] = {layer: ("none" if raw else None) for layer in LAYERS}
        layers.update(chosen or {})
        origins = _check_layers(scope, layers)
        capinstall.write_in(scope, path, scaffold(os.path.basename(scope), layers, origins).encode("utf-8"))
        try:
            resolved = capdoctor.doctor(scope)
        except Failure as exc:
            os.unlink(path)
            raise Failure(exc.diagnostics, "E_INIT_FAILED") from None
    return _outcome(scope, path, raw, layers, resolved)


def _check_layers(scope: str, layers: Dict[str, Optional[str]]) -> Dict[str, str]:
    """layer -> where its capability is (installed or owned), for each layer naming an id;
    AR170 (E_UNKNOWN_CAPABILITY, E_LAYER_MISMATCH) for an id not acquired or of another layer."""
    wanted = {layer: cid for layer, cid in layers.items() if cid and cid != "none"}
    if not wanted:
        return {}
    here = own_store(scope)
    above = _acquired_above(scope)
    origins: Dict[str, str] = {}
    for layer, cid in wanted.items():
        found = here.get(cid) or above.get(cid)
        if found is None:
            raise fail(cid, "AR170", f"capability {cid!r} (for --{layer}) is not acquired at {scope} or a scope "
                       f"above it: install its package first (`agentrc cap install SOURCE --dir "
                       f"{shlex.quote(scope)}`); cap init fetches nothing", "E_UNKNOWN_CAPABILITY")
        cap, origin = found
        if cap.layer != layer:
            raise fail(cid, "AR170", f"capability {cid!r} declares layer {cap.layer or 'none'!r}, not {layer!r}",
                       "E_LAYER_MISMATCH")
        origins[layer] = origin
    return origins


def own_store(scope: str) -> Dict[str, Tuple[Capability, str]]:
    """id -> (capability, installed|owned) in the scope's own store, owned winning; an entry
    whose manifest cannot be read is left out (resolving the config reports it)."""
    out: Dict[str, Tuple[Capability, str]] = {}
    for sub, origin in ((INSTALLED, "installed"), (OWNED, "owned")):
        store = os.path.join(scope, CAPABILITIES_DIR, sub)
        try:
            names = sorted(os.listdir(store)) if not os.path.islink(store) else []
        except OSError:
            continue
        for name in names:
            d = os.path.join(store, name)
            if name.startswith(".") or os.path.islink(d) or not os.path.isdir(d):
                continue
            raw = captree.read_manifest(d, CAPABILITY_FILE)
            cap = parse_capability(os.path.join(d, CAPABILITY_FILE), raw, Diagnostics()) if raw is not None else None
            if cap is not None:
                out[cap.id] = (cap, origin)
    return out


def _acquired_above(scope: str) -> Dict[str, Tuple[Capability, str]]:
    """What the scopes above `scope` acquire (its own has no config yet)."""
    parent = os.path.dirname(scope)
    if parent == scope:
        return {}
    found = capdoctor.acquired(capdoctor.config_chain(parent))
    return {cid: (cap, origin.split(":", 1)[0]) for cid, (cap, origin, _d) in found.items()}


def scaffold(name: str, layers: Dict[str, Optional[str]], origins: Dict[str, str]) -> str:
    """The kernel's `oas init` config, byte for byte."""
    lines = [f"name: {name}", "",
             "# ── Agent types (families) — declared here by name (or via `oas type add`);",
             "# each soul opts in via `type: <name>` in its soul.yaml. Capability entries can target them.",
             "# agent-types:", "#   reviewers:", "#     description: Agents that review changes", "",
             "capabilities:", "  # Fundamental layers — exclusive slots; a capability entry or an explicit none.",
             "  layers:"]
    for layer in LAYERS:
        cid = layers.get(layer)
        if not cid:
            lines.append(f'    # {layer}: (unset — inherits from outer config scopes; set an entry or "none")')
        elif cid == "none":
            lines.append(f"    {layer}: none")
        else:
            lines += [f"    {layer}:", f"      capability: {cid}"]
            if origins.get(layer) == "installed":
                lines += ["      from: installed",
                          f"      # injection-override: .agents/injections/capabilities/{cid}.md"]
            elif origins.get(layer) == "owned":
                lines += ["      from: owned",
                          f"      # injection edited at source: .agents/capabilities/owned/{cid}/injects/"]
    lines += ["  # Additive capabilities — non-exclusive; target global, agent-types, or souls.",
              "  # additive:", "  #   <capability-id>:", "  #     from: installed", "  #     global: true",
              "  #     # injection-override: .agents/injections/capabilities/<capability-id>.md", "",
              "# ── Work modes — optional per-mode env bootstrap.",
              "# `setup:` runs inside each NEW worktree right after `git worktree add` — use it",
              "# for env setup scripts (installs, .env copying, direnv, mise, etc.).",
              "# The path is relative to this config's directory.",
              "work-modes:", "  worktree:", "    # setup: scripts/setup-worktree.sh", "",
              "# ── OAS defaults — the framework's baseline instruction block.",
              "oas:", "  # injection-override: .agents/injections/oas-defaults/oas.md"]
    return "\n".join(lines) + "\n"


def level_of(directory: str) -> str:
    """The kernel's level of a directory: laptop (the home directory), repo (.git), else
    workspace."""
    d = os.path.abspath(directory)
    if d == os.path.abspath(os.path.expanduser("~")):
        return "laptop"
    return "repo" if os.path.lexists(os.path.join(d, ".git")) else "workspace"


def _outcome(scope: str, path: str, raw: bool, layers: Dict[str, Optional[str]], resolved: Outcome) -> Outcome:
    doc = resolved.result
    activated = [{"capability": c["id"], "layer": c["layer"]} for c in doc["capabilities"]]
    requirements: List[Dict[str, Any]] = []
    for c in doc["capabilities"]:
        missing = doc["layers"].get(c["layer"] or "", {}).get("missingRequires") or [] if c["layer"] else []
        requirements += [{"capability": c["id"], "command": m["command"], "why": m.get("why") or None,
                          "install": m.get("install") or None,
                          "consentCommand": f"agentrc cap install --accept-requirement {m['command']} --dir "
                                            f"{shlex.quote(scope)}"} for m in missing]
    level = level_of(scope)
    lines = [f"created {path} ({level} level{', raw' if raw else ''})"]
    lines += [f"activated: {a['capability']}" + (f" -> {a['layer']}" if a["layer"] else "") for a in activated]
    lines += [f"warning: required command {r['command']!r} is not on PATH ({r['why'] or 'required'}); consent with "
              f"{r['consentCommand']}" for r in requirements]
    return Outcome({"file": path, "level": level, "raw": raw, "adopted": False,
                    "layers": {layer: layers.get(layer) for layer in LAYERS}, "acquired": [], "activated": activated,
                    "requirements": requirements}, lines)
