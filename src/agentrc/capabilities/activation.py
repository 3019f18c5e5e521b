"""Which capabilities are active for one soul, with which settings (spec 003, "Config and
targets"), over a chain of `oas-config.yaml` files, closest scope first.

For each capability, every matching binding counts: `global` (specificity 0), the soul's
agent type (1), the soul by name (2), at the scope of the config that declares it. A layer
entry with no targets is global at its scope. Settings compose from the weakest binding to
the strongest (soul > agent type > global, then the closer scope), and two different
values at the same specificity and scope are an error (AR169), as are `enabled` values that
disagree there; the strongest binding decides whether the capability is on. Then the
layers: `none` at a scope removes an integration activated further out, and two active
integrations on one layer are AR153. An activated capability must be acquired, sit under
the layer its manifest declares (or under additive when it declares none), come from
where `from:` says, and own its command namespace alone (AR170).
"""

from __future__ import annotations

import json

from agentrc.capabilities.config import Binding, Config, Entry
from agentrc.capabilities.integrity import collation_key
from agentrc.capabilities.manifest import compatible
from agentrc.capabilities.model import LAYERS, OAS_CONTRACT, Capability
from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostics
from agentrc.frozen import FrozenMap, freeze, thaw

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, List, Mapping, Optional, Sequence, Tuple


@dataclass(frozen=True)
class Active:
    """One capability the activation chose, with the binding (level, scope, settings) that decided it."""
    id: str
    layer: str
    level: str  # the scope of the binding that decided it
    origin: str  # where the manifest was found: installed:<level>, owned:<level>, path:<level>
    settings: FrozenMap
    provenance: Tuple[str, ...]  # "<target> @ <level>" of every binding that matched
    scope: int  # index in the chain of `level` (0 = closest)
    command: str = ""  # the CLI namespace its manifest claims


@dataclass(frozen=True)
class Activation:
    """The activation's answer: the capabilities active, the layers they fill and how each was decided."""
    capabilities: Tuple[Active, ...]
    layers: Tuple[Tuple[str, str], ...]  # (layer, capability id)
    provenance: Tuple[Tuple[str, str], ...]  # (layer, how it was decided)


@dataclass(frozen=True)
class _Candidate:
    """A binding that matches a capability, with what ranks it against the others (specificity, then scope)."""
    binding: Binding
    specificity: int
    scope: int
    level: str
    target: str
    entry: Entry
    path: str


def _js_compare_key(target: str):
    try:
        return collation_key(target)
    except ValueError:
        return ((), ())


def resolve(chain: Sequence[Config], soul: str, soul_type: str,
            manifests: Mapping[str, Tuple[Capability, str]], diags: Diagnostics) -> Activation:
    """The activation for `soul` (of agent type `soul_type`; "" for none; soul "" for the
    global bindings only). `manifests`: acquired capabilities by id, with their origin."""
    active: List[Active] = []
    for cid, found in _candidates(chain, soul, soul_type).items():
        if not found:
            continue
        pair = manifests.get(cid)
        if pair is None:
            diags.error(found[0].path, (0, 0), "AR170", f"capability {cid!r} is activated, but no scope of the chain "
                        "has acquired it (install its package, or author it under .agents/capabilities/owned/)")
            continue
        cap, origin = pair
        if not _placed(cid, cap, origin, found, diags):
            continue
        settings, bad = _settings(cid, found, diags)
        strongest = sorted(found, key=lambda c: (-c.specificity, c.scope, _js_compare_key(c.target)))
        top = strongest[0]
        tied = [c for c in strongest if c.specificity == top.specificity and c.scope == top.scope]
        enabled = {c.binding.on for c in tied}
        if len(enabled) > 1:
            diags.error(top.path, (0, 0), "AR169", f"{cid!r} is both enabled and disabled at the same specificity "
                        f"({', '.join(c.target for c in tied)})")
            continue
        if bad or not enabled.pop():
            continue
        if cap.compatibility and not _compatible_range(cap.compatibility):
            diags.error(top.path, (0, 0), "AR163", f"{cid!r} needs OAS {cap.compatibility}; agentrc implements the "
                        f"OAS {OAS_CONTRACT} contract")
            continue
        active.append(Active(cid, cap.layer, top.level, origin, freeze(settings),
                             tuple(f"{c.target} @ {c.level}" for c in found), top.scope, cap.command))
    return _layers(chain, active, diags)


def _candidates(chain: Sequence[Config], soul: str, soul_type: str) -> Dict[str, List[_Candidate]]:
    """Every binding of the chain that applies to `soul` (global, by its agent type, by its
    name), by capability id, in the chain's order."""
    candidates: Dict[str, List[_Candidate]] = {}
    for scope, cfg in enumerate(chain):
        for entry in cfg.entries:
            add = candidates.setdefault(entry.id, []).append
            glob = _global(entry)
            if glob is not None:
                add(_Candidate(glob, 0, scope, cfg.level, "global", entry, cfg.path))
            if soul:
                for t, b in entry.agent_types:
                    if t == soul_type:
                        add(_Candidate(b, 1, scope, cfg.level, f"type:{t}", entry, cfg.path))
                for s, b in entry.souls:
                    if s == soul:
                        add(_Candidate(b, 2, scope, cfg.level, f"soul:{soul}", entry, cfg.path))
    return candidates


def _global(entry: Entry) -> Optional[Binding]:
    """An entry's global binding: as written, or on for a layer named with no target at all;
    its entry-wide settings under the binding's own."""
    glob = entry.global_
    if glob is None and entry.slot and not entry.global_given and not entry.targets_given:
        glob = Binding(True)
    if glob is not None and entry.settings:
        glob = Binding(glob.enabled, FrozenMap({**dict(entry.settings), **dict(glob.settings)}))
    return glob


def _placed(cid: str, cap: Capability, origin: str, found: List[_Candidate], diags: Diagnostics) -> bool:
    """Whether every binding of `cid` puts it where its manifest says (its layer, or
    additive) and names the origin it was found at (AR170 for each that does not)."""
    ok = True
    for c in found:
        if c.entry.slot and cap.layer != c.entry.slot:
            diags.error(c.path, (0, 0), "AR170", f"{cid!r} is under capabilities.layers.{c.entry.slot}, but its "
                        f"manifest declares layer {cap.layer or 'none'!r}")
            ok = False
        elif not c.entry.slot and cap.layer:
            diags.error(c.path, (0, 0), "AR170", f"{cid!r} implements the {cap.layer} layer: declare it under "
                        f"capabilities.layers.{cap.layer}, not additive")
            ok = False
        if c.entry.source and not _origin_matches(origin, c.entry.source):
            diags.error(c.path, (0, 0), "AR170", f"{cid!r} must come from {c.entry.source!r}, but it was found "
                        f"at {origin}")
            ok = False
    return ok


def _settings(cid: str, found: List[_Candidate], diags: Diagnostics) -> Tuple[Dict[str, object], bool]:
    """The settings of `cid`, the more specific (then the nearer) binding's value winning,
    and whether two bindings at the same specificity and scope disagree (AR169)."""
    ranked = sorted(found, key=lambda c: (c.specificity, -c.scope, _js_compare_key(c.target)))
    settings: Dict[str, object] = {}
    rank: Dict[str, Tuple[int, int]] = {}
    bad = False
    for c in ranked:
        for key, value in c.binding.settings.items():
            here = (c.specificity, c.scope)
            if rank.get(key) == here and _same(settings[key], value) is False:
                diags.error(c.path, (0, 0), "AR169", f"setting {cid}.{key} has two values at the same "
                            f"specificity ({c.target}, {c.level})")
                bad = True
            settings[key] = value
            rank[key] = here
    return settings, bad


def _layers(chain: Sequence[Config], active: List[Active], diags: Diagnostics) -> Activation:
    disabled: Dict[str, Tuple[int, Config]] = {}
    provenance: Dict[str, str] = {}
    for layer in LAYERS:
        for scope, cfg in enumerate(chain):
            if layer in cfg.none_layers:
                disabled[layer] = (scope, cfg)
                provenance[layer] = f"none @ {cfg.level}"
                break
            if any(e.slot == layer for e in cfg.entries):
                break
    active.sort(key=lambda a: (-a.scope, a.id))
    holders: Dict[str, Active] = {}
    kept: List[Active] = []
    for cap in active:
        if cap.layer and cap.layer in disabled:
            scope, cfg = disabled[cap.layer]
            if cap.scope == scope:
                diags.error(cfg.path, (0, 0), "AR153", f"the {cap.layer} layer is none here, and {cap.id!r} is "
                            "activated at the same scope")
                continue
            if cap.scope > scope:
                continue  # an outer integration, switched off closer in
        if cap.layer:
            current = holders.get(cap.layer)
            if current is not None and current.id != cap.id:
                diags.error(chain[min(cap.scope, current.scope)].path, (0, 0), "AR153",
                            f"the {cap.layer} layer has two active capabilities: {current.id!r} and {cap.id!r}")
                continue
            holders[cap.layer] = cap
            provenance[cap.layer] = f"{cap.id} [{' + '.join(cap.provenance)}]"
        kept.append(cap)
    owners: Dict[str, Active] = {}
    for cap in kept:
        if cap.command and cap.command in owners and owners[cap.command].id != cap.id:
            diags.error(chain[cap.scope].path, (0, 0), "AR170", f"{owners[cap.command].id!r} and {cap.id!r} both "
                        f"claim the command namespace {cap.command!r}")
        owners.setdefault(cap.command, cap)
    return Activation(tuple(kept), tuple((layer, holders[layer].id) for layer in LAYERS if layer in holders),
                      tuple((layer, provenance[layer]) for layer in LAYERS if layer in provenance))


def _origin_matches(origin: str, source: str) -> bool:
    if source == "installed":
        return origin.startswith("installed:")
    if source == "owned":
        return origin.startswith("owned:")
    if source.startswith("path:"):
        return origin.startswith("path:")
    return False


def _compatible_range(spec: str) -> bool:
    # A capability's own compatibility.oas is free text in the schema; only the package
    # grammar (>=, ^, exact x.y.z) is checked, anything else is taken as met.
    head = spec.lstrip(">=^")
    if not all(p.isdigit() for p in head.split(".")) or head.count(".") != 2:
        return True
    return compatible(spec, OAS_CONTRACT)


def _same(a: object, b: object) -> Optional[bool]:
    return json.dumps(thaw(a)) == json.dumps(thaw(b))
