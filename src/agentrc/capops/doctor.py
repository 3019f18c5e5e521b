"""`agentrc cap doctor [DIR] --soul NAME`: which capabilities are active for a soul, and why
(spec 003, "Config and targets"), as the OAS kernel's `oas doctor --soul` resolves them.

Reads, from DIR upward: every `oas-config.yaml` (the chain, closest first), the capabilities
acquired at each config's scope (`installed/`, then `owned/`, which wins on an id clash;
inner scopes win over outer ones; `from: path:<dir>` entries add their directory), the
soul's agent type (`type:` in `agents/<name>/soul/soul.yaml`, or under `local-agents/`), and
the locks that govern installed capabilities. Then `agentrc.capabilities.activation`
decides. Reports only: nothing is written.
"""

from __future__ import annotations

import os
import shutil

from agentrc.capabilities import activation
from agentrc.capabilities import config as configs
from agentrc.capabilities.manifest import parse_capability
from agentrc.capabilities.model import CAPABILITIES_DIR, CAPABILITY_FILE, INSTALLED, LAYERS, OWNED, Capability
from agentrc.capops import health, legacy
from agentrc.capops import safe as capsafe
from agentrc.capops.failure import Failure, Outcome, fail
from agentrc.capops.scope import hash_or_empty, misplaced_diags, read_lock
from agentrc.diagnostics import Diagnostics
from agentrc.frozen import thaw
from agentrc.inputs import captree
from agentrc.text.yamlpos import YamlError
from agentrc.text.yamlpos import load as load_yaml

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple

# agentrc's own texts for the blocks and skills the kernel composes into every instance
# (spec 003, "Exact runtime composition"): written for agentrc, shipped with it.
DATA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
INJECTS_DIR = os.path.join(DATA_DIR, "injects")
KERNEL_SKILLS_DIR = os.path.join(DATA_DIR, "skills")
KERNEL_SKILLS = ("oas", "oas-config", "oas-packages")
WORK_MODES = ("worktree", "checkout", "attached", "workspace")


def config_chain(context: str) -> List[configs.Config]:
    """The `oas-config.yaml` files from `context` upward, closest first. Raises Failure."""
    chain = []
    d = Diagnostics()
    level = os.path.abspath(context)
    while True:
        if os.path.isfile(os.path.join(level, configs.CONFIG_FILE)):
            raw = captree.read_manifest(level, configs.CONFIG_FILE)
            path = os.path.join(level, configs.CONFIG_FILE)
            cfg = configs.parse(path, level, raw if raw is not None else b"", d)
            if cfg is not None:
                chain.append(cfg)
        parent = os.path.dirname(level)
        if parent == level:
            break
        level = parent
    if d.has_errors:
        raise Failure(d.items, "E_CONFIG_INVALID")
    return chain


def acquired(chain: List[configs.Config]) -> Dict[str, Tuple[Capability, str, str]]:
    """id -> (capability, origin, directory) for every capability acquired at the chain's
    scopes; closer scopes and owned/ win. Raises Failure (misplaced or invalid capabilities,
    one id twice in one store)."""
    out: Dict[str, Tuple[Capability, str, str]] = {}
    d = Diagnostics()
    for cfg in reversed(chain):
        d.extend(misplaced_diags(cfg.level, warning=False))
        seen_here: Dict[Tuple[str, str], str] = {}
        for directory, origin in _acquired_dirs(cfg):
            # An installed capability is read with the legacy marketplace exception (`legacy`).
            cap = legacy.parse(directory, cfg.level, d) if origin.startswith("installed:") else _parse(directory, d)
            if cap is None:
                continue
            key = (cap.id, origin)
            if key in seen_here and seen_here[key] != directory:
                d.error(directory, (0, 0), "AR152", f"capability {cap.id!r} is also at {seen_here[key]}")
                continue
            seen_here[key] = directory
            out[cap.id] = (cap, origin, directory)
    if d.has_errors:
        raise Failure(d.items)
    return out


def _parse(directory: str, d: Diagnostics) -> Optional[Capability]:
    raw = captree.read_manifest(directory, CAPABILITY_FILE)
    return None if raw is None else parse_capability(os.path.join(directory, CAPABILITY_FILE), raw, d)


def _acquired_dirs(cfg: configs.Config) -> List[Tuple[str, str]]:
    """(directory, origin) of each capability a config's scope holds, in the order that
    lets the later win: installed/, owned/, then its `from: path:<dir>` entries."""
    out = []
    for sub, kind in ((INSTALLED, "installed"), (OWNED, "owned")):
        store = os.path.join(cfg.level, CAPABILITIES_DIR, sub)
        try:
            names = sorted(os.listdir(store))
        except OSError:
            continue
        for name in names:
            full = os.path.join(store, name)
            if not name.startswith(".") and os.path.isdir(full) and not os.path.islink(full):
                out.append((full, f"{kind}:{cfg.level}"))
    for entry in cfg.entries:
        if entry.source.startswith("path:"):
            target = entry.source[5:]
            out.append((target if os.path.isabs(target) else os.path.join(cfg.level, target), f"path:{cfg.level}"))
    return out


def soul_type(context: str, soul: str) -> Optional[str]:
    """The soul's `type:` ("" when it declares none), None when there is no such soul."""
    return soul_field(context, soul, "type")


def soul_dir(context: str, soul: str) -> Optional[str]:
    """The soul's directory (`<agents-root>/<soul>/soul` or under `local-agents/`) holding a
    `soul.yaml`, None when there is no such soul."""
    d = os.path.abspath(context)
    root = None
    while True:
        if os.path.basename(d) == "agents" and os.path.isdir(d):
            root = d
            break
        if os.path.isdir(os.path.join(d, "agents")) or os.path.isdir(os.path.join(d, "local-agents")):
            root = os.path.join(d, "agents")
            break
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent
    for base in (root, os.path.join(os.path.dirname(root), "local-agents")):
        sdir = os.path.join(base, soul, "soul")
        if os.path.isdir(sdir) and captree.read_manifest(sdir, "soul.yaml") is not None:
            return sdir
    return None


def soul_field(context: str, soul: str, key: str) -> Optional[str]:
    """A string field of the soul's `soul.yaml` ("" when it declares none), None when there
    is no such soul."""
    sdir = soul_dir(context, soul)
    if sdir is None:
        return None
    raw = captree.read_manifest(sdir, "soul.yaml") or b""
    try:
        data = load_yaml(raw.decode("utf-8", "replace")).data
    except YamlError:
        data = None
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""


def doctor(context: str, soul: str = "", any_soul: bool = False) -> Outcome:
    """The resolution for `soul` at `context`, in the shape of `oas doctor --json`: chain,
    layers, capabilities (with their `trust`), acquired, the instance's composition for a
    soul, and the installed packages' health. Raises Failure. `any_soul`: a soul with no
    directory under the agents roots (a capability-defined agent) resolves with no type."""
    ctx = os.path.abspath(context)
    chain = config_chain(ctx)
    found = acquired(chain)
    stype = _soul_type(ctx, soul, any_soul)
    d = Diagnostics()
    result = activation.resolve(chain, soul, stype, {cid: (cap, origin) for cid, (cap, origin, _d) in found.items()}, d)
    _check_locked(result, found, d)
    if d.has_errors:
        raise Failure(d.items)
    caps = [_capability_row(chain, a, found[a.id]) for a in result.capabilities]
    notes = Diagnostics()
    needs = legacy.report(found, [a.id for a in result.capabilities], notes)
    doc = _document(ctx, soul, stype, chain, result, found, caps)
    if needs:
        doc["needsKernel"] = needs
    blocks = _composition(doc, ctx, soul, chain, caps)
    doc.update(health.packages(ctx))
    return Outcome(doc, _lines(doc, blocks) + health.package_lines(doc), tuple(notes.items))


def _soul_type(ctx: str, soul: str, any_soul: bool) -> str:
    """The soul's type ("" for none or no soul). Raises Failure for an unknown soul."""
    if not soul:
        return ""
    t = soul_type(ctx, soul)
    if t is None and not any_soul:
        raise fail(soul, "AR166", f"no soul {soul!r} under an agents/ or local-agents/ directory above {ctx}",
                   "E_UNKNOWN_SOUL")
    return t or ""


def _check_locked(result: activation.Activation, found: Dict[str, Tuple[Capability, str, str]],
                  d: Diagnostics) -> None:
    """An active installed capability must have its lock row (AR170) and, under a version 2
    lock, hash to its locked integrity (AR161)."""
    for a in result.capabilities:
        if not a.origin.startswith("installed:"):
            continue
        level = a.origin.split(":", 1)[1]
        lock = read_lock(level)
        row = lock.capability(a.id) if lock is not None and lock.version == 2 else None
        cdir = found[a.id][2]
        if row is None and not (lock is not None and lock.version == 1 and a.id in lock.legacy):
            d.error(cdir, (0, 0), "AR170", f"{a.id!r} is installed but not locked in {level}/oas-lock.json; "
                    "anything under installed/ needs its lock row")
        elif row is not None and hash_or_empty(cdir) != row.integrity:
            d.error(cdir, (0, 0), "AR161", f"{a.id!r} no longer hashes to its locked integrity; restore it with "
                    "`agentrc cap install`")


def _capability_row(chain: List[configs.Config], a: Any, entry: Tuple[Capability, str, str]) -> Dict[str, Any]:
    """One active capability as `oas doctor --json` lists it."""
    cap, origin, cdir = entry
    trust = health.trust(a.id, cap, origin, cdir)
    return {"id": a.id, "layer": a.layer or None, "command": a.command or None, "origin": a.origin,
            "provenance": list(a.provenance), "settings": thaw(a.settings),
            "skills": [os.path.join(cdir, s) for s in cap.skills if os.path.exists(os.path.join(cdir, s))],
            "inject": _inject(chain, a.id, cap, cdir),
            "hooks": [h.event for h in cap.hooks if trust["trusted"] and os.path.exists(os.path.join(cdir, h.script))],
            "trust": trust}


def _document(ctx: str, soul: str, stype: str, chain: List[configs.Config], result: activation.Activation,
              found: Dict[str, Tuple[Capability, str, str]], caps: List[Dict[str, Any]]) -> Dict[str, Any]:
    by_id = {c["id"]: c for c in caps}
    layers = dict(result.layers)
    provenance = dict(result.provenance)

    def layer_row(layer: str) -> Dict[str, Any]:
        if layer not in layers:
            return {"provenance": provenance.get(layer)}
        cid = layers[layer]
        return {"integration": cid, "level": next(a.level for a in result.capabilities if a.id == cid),
                "inject": by_id[cid]["inject"], "skills": by_id[cid]["skills"], "hooks": by_id[cid]["hooks"],
                "missingRequires": _missing(found[cid][0]), "provenance": provenance.get(layer)}

    return {
        "schemaVersion": 1, "context": ctx, "soul": soul or None, "type": stype or None,
        "chain": [{"file": c.path, "level": c.level} for c in chain],
        "layers": {layer: layer_row(layer) for layer in LAYERS},
        "capabilities": caps,
        "kernelInjection": kernel_injection(chain),
        "injects": config_injects(chain),
        "acquired": {cid: {"layer": cap.layer or None, "command": cap.command or None, "version": cap.version,
                           "dir": cdir, "origin": origin, "description": cap.description}
                     for cid, (cap, origin, cdir) in found.items()},
    }


def _composition(doc: Dict[str, Any], ctx: str, soul: str, chain: List[configs.Config],
                 caps: List[Dict[str, Any]]) -> List[Dict[str, str]]:
    """The instance's instruction blocks and composed AGENTS.md for a soul (without one
    there is no instance to compose: the kernel reports no blocks then), and the names of
    the skills its capabilities compose (`composedSkills`, agentrc's own field)."""
    sdir = soul_dir(ctx, soul) if soul else None
    work = (soul_field(ctx, soul, "work") or "checkout") if sdir else "checkout"
    kind = (soul_field(ctx, soul, "kind") or "") if sdir else ""
    blocks = (kernel_blocks(chain, work, "local" if kind == "tmp" else kind) if soul else []) + \
        instruction_blocks(caps, doc["injects"], chain)
    if soul:
        doc["instructionBlocks"] = blocks
    soul_md = captree.read_manifest(sdir, "AGENTS.md") if sdir else None
    if soul_md is not None:
        doc["composedInstructions"] = compose(soul_md.decode("utf-8", "replace"), blocks)
    names: Dict[str, List[str]] = {}
    for c in caps:
        for tree in c["skills"]:
            for skill in skill_entries(tree):
                names.setdefault(os.path.basename(skill), []).append(c["id"])
    doc["composedSkills"] = [{"name": n, "capabilities": names[n]} for n in sorted(names)]
    return blocks


def _lines(doc: Dict[str, Any], blocks: List[Dict[str, str]]) -> List[str]:
    """The text report: the chain, the layers, each active capability with its trust,
    instruction file, skills and hooks, the composed skills and AGENTS.md."""
    soul, stype = doc["soul"], doc["type"]
    lines = [f"resolved from {doc['context']}" + (f" for soul {soul} (type {stype or 'none'})" if soul else "")]
    lines += [f"  config {c['file']}" for c in doc["chain"]]
    lines += [f"{layer}: {doc['layers'][layer].get('provenance') or '(none)'}" for layer in LAYERS]
    for c in doc["capabilities"]:
        settings = ", ".join(f"{k}={v!r}" for k, v in c["settings"].items())
        lines.append(f"capability {c['id']} ({c['origin']}){' settings: ' + settings if settings else ''}")
        lines += [f"  {p}" for p in c["provenance"]]
        t = c["trust"]
        lines.append("  trust: " + ("approved" if t["trusted"] else f"BLOCKED ({t.get('reason', 'untrusted')})"))
        if c["inject"]:
            lines.append(f"  inject: {c['inject']}")
        if c["skills"]:
            lines.append(f"  skills: {', '.join(c['skills'])}")
        if c["hooks"]:
            lines.append(f"  hooks: {', '.join(c['hooks'])}")
    if not doc["capabilities"]:
        lines.append("no active capabilities")
    for n in doc.get("needsKernel", ()):
        lines.append(f"capability {n['capability']}: the skills {', '.join(n['skills'])} need the OAS kernel "
                     f"(`{n['command']}`): {n['reason']}")
    if doc["composedSkills"]:
        lines.append("skills: " + ", ".join(s["name"] for s in doc["composedSkills"]))
    lines += [f"instructions {b['source']}: {b['file']}" for b in blocks]
    if "composedInstructions" in doc:
        lines.append("composed AGENTS.md:")
        lines += [f"  {ln}".rstrip() for ln in doc["composedInstructions"].splitlines()]
    return lines


def _inject(chain: List[configs.Config], cid: str, cap: Capability, cdir: str) -> Optional[str]:
    """The capability's instruction file: the closest `injection-override` (a path relative
    to its config, `none`, or `default`), else what the manifest's `inject` names."""
    packaged = os.path.join(cdir, cap.inject) if cap.inject and os.path.exists(os.path.join(cdir, cap.inject)) \
        else None
    for cfg in chain:
        for entry in cfg.entries:
            if entry.id != cid or entry.injection_override is None:
                continue
            value = entry.injection_override
            if value == "default":
                return packaged
            if value == "none":
                return None
            return resolve_inject_value(value, cfg.level, packaged)
    return packaged


def skill_entries(tree: str) -> List[str]:
    """The skills a tree contributes (the kernel's rule): the tree itself when it holds a
    SKILL.md file, else each child directory (not a link) holding one."""
    if not os.path.isdir(tree):
        return []
    if os.path.isfile(os.path.join(tree, "SKILL.md")):
        return [tree]
    try:
        names = sorted(os.listdir(tree))
    except OSError:
        return []
    # A symlinked child contributes nothing, as in the kernel's discovery.
    return [os.path.join(tree, n) for n in names
            if not os.path.islink(os.path.join(tree, n)) and os.path.isfile(os.path.join(tree, n, "SKILL.md"))]


def skill_overrides(chain: List[configs.Config]) -> Dict[str, str]:
    """`skill-overrides` of the chain, skill name -> winning source; the closest config wins."""
    overrides: Dict[str, str] = {}
    for cfg in reversed(chain):
        overrides.update(dict(cfg.skill_overrides))
    return overrides


def pick_skills(sources: List[Tuple[str, str]], overrides: Dict[str, str], where: str, placeholder: str,
                kernel_code: str) -> List[Tuple[str, str, str]]:
    """(name, source, directory) of each skill the (source, tree) pairs contribute, one per
    name, sorted by name. One name from two places is AR171 unless `overrides` names the
    winning source; `placeholder` is what the hint calls a source (`<capability id>`,
    `<source>`). Raises Failure with `kernel_code`."""
    by_name: Dict[str, List[Tuple[str, str]]] = {}
    for source, tree in sources:
        for skill in skill_entries(tree):
            by_name.setdefault(os.path.basename(skill), []).append((source, skill))
    d = Diagnostics()
    out: List[Tuple[str, str, str]] = []
    for name in sorted(by_name):
        cands = by_name[name]
        if len(cands) > 1:
            winner = [c for c in cands if c[0] == overrides.get(name)]
            if len(winner) != 1:
                d.error(where, (0, 0), "AR171", f"skill {name!r} comes from {', '.join(s for s, _p in cands)}; name "
                        f"the winner in skill-overrides ({name}: {placeholder})")
                continue
            cands = winner
        out.append((name, cands[0][0], cands[0][1]))
    if d.has_errors:
        raise Failure(d.items, kernel_code)
    return out


def skill_dirs(context: str, soul: str = "") -> Tuple[List[Tuple[str, str, str]], Outcome]:
    """The skills the capabilities active for `soul` contribute: (skill name, capability id,
    skill directory), one per name. A declared tree holding SKILL.md is one skill, else each
    of its subdirectories holding one is. Two capabilities giving one name is AR171 unless
    `skill-overrides` (closest config first) names the capability that wins."""
    outcome = doctor(context, soul)
    chain = config_chain(context)
    sources = [(cap["id"], tree) for cap in outcome.result["capabilities"] for tree in cap["skills"]]
    return pick_skills(sources, skill_overrides(chain), chain[0].path if chain else context, "<capability id>",
                       "E_SKILL_CONFLICT"), outcome


def _missing(cap: Capability) -> List[Dict[str, str]]:
    """The host commands `cap` requires that are not on PATH (runtime packages are checked
    in their runtime's own list, not here)."""
    out = []
    for r in cap.requires:
        if r.command and shutil.which(r.command) is None:
            item = {"command": r.command, "why": r.why}
            if r.install:
                item["install"] = r.install
            out.append(item)
    return out


def config_injects(chain: List[configs.Config]) -> List[Dict[str, str]]:
    """`agents-md-injection` files of the chain, outermost first, each `{source, file}`; a
    closer scope's file of the same source takes the outer one's place. Missing files are
    left out, as the kernel leaves them out."""
    out: List[Dict[str, str]] = []
    for cfg in reversed(chain):
        name = ""
        for label, path in cfg.injections:
            name = name or cfg.name or os.path.basename(cfg.level)
            file = path if os.path.isabs(path) else os.path.join(cfg.level, path)
            if not os.path.exists(file):
                continue
            item = {"source": f"{name}:{label}", "file": file}
            prior = next((i for i, x in enumerate(out) if x["source"] == item["source"]), None)
            if prior is None:
                out.append(item)
            else:
                out[prior] = item
    return out


def resolve_inject_value(value: str, level: str, fallback: Optional[str]) -> Optional[str]:
    """An `injection-override` value as the kernel resolves it: empty or `default` is
    `fallback` (the packaged text), `none` is no text, a relative path is joined (and
    normalised) to its config's level."""
    if value in ("", "default"):
        return fallback
    if value == "none":
        return None
    return value if os.path.isabs(value) else os.path.normpath(os.path.join(level, value))


def packaged_inject(name: str) -> Optional[str]:
    """agentrc's own default text `name` (oas, local-soul, instance-boundary, work-MODE)."""
    path = os.path.join(INJECTS_DIR, f"{name}.md")
    return path if os.path.isfile(path) else None


def kernel_injection(chain: List[configs.Config]) -> Dict[str, str]:
    """The `kernel:oas` block's file, `{inject, provenance}` as `oas doctor --json`'s
    `kernelInjection`: the closest config with `oas.injection-override` decides (a path
    relative to that config, `none`, or `default`), else agentrc's packaged text. `inject` is
    left out when there is none."""
    for cfg in chain:
        if cfg.kernel_injection is not None:
            inject = resolve_inject_value(cfg.kernel_injection, cfg.level, packaged_inject("oas"))
            out = {"inject": inject} if inject else {}
            out["provenance"] = f"oas @ {cfg.level}"
            return out
    inject = packaged_inject("oas")
    return dict({"inject": inject} if inject else {}, provenance="default")


def kernel_blocks(chain: List[configs.Config], work: str = "checkout", kind: str = "") -> List[Dict[str, str]]:
    """The blocks the kernel puts before the capabilities', in its order: `kernel:oas`,
    `kernel:local-soul` (a soul of kind local), `kernel:instance-boundary`, then
    `work-mode:WORK`. The texts are agentrc's own, except an `oas.injection-override`, which
    must resolve inside the scope of the config naming it (`_read_blocks`)."""
    wanted = []
    oas = kernel_injection(chain).get("inject")
    if oas and os.path.exists(oas):
        level = next((c.level for c in chain if c.kernel_injection is not None), INJECTS_DIR)
        wanted.append(("kernel:oas", oas, level))
    for source, name in (("kernel:local-soul", "local-soul" if kind == "local" else ""),
                         ("kernel:instance-boundary", "instance-boundary"),
                         (f"work-mode:{work}", f"work-{work}" if work in WORK_MODES else "")):
        path = packaged_inject(name) if name else None
        if path:
            wanted.append((source, path, INJECTS_DIR))
    return _read_blocks(wanted)


def instruction_blocks(caps: List[Dict[str, Any]], injects: List[Dict[str, str]],
                       chain: Sequence[configs.Config] = ()) -> List[Dict[str, str]]:
    """The instruction blocks an instance's AGENTS.md gets from capabilities (in the order
    of the active set) and from config, `{source, file, content}` with the content trimmed;
    `kernel_blocks` come before them. A capability's file must resolve inside the scope of the
    config that overrides it, else of the scope it was acquired at; a config's
    `agents-md-injection` inside that config's scope (`_read_blocks`)."""
    wanted = [(f"capability:{c['id']}", c["inject"], _inject_level(chain, c))
              for c in caps if c.get("inject") and os.path.exists(c["inject"])]
    levels = {f"{cfg.name or os.path.basename(cfg.level)}:{label}": cfg.level
              for cfg in chain for label, _p in cfg.injections}
    wanted += [(f"config:{i['source']}", i["file"], levels.get(i["source"], "")) for i in injects]
    return _read_blocks(wanted)


def _inject_level(chain: Sequence[configs.Config], cap: Dict[str, Any]) -> str:
    """The scope a capability's instruction file must lie in: the closest config overriding
    it, else the level its origin names (`installed:LEVEL`, `owned:LEVEL`)."""
    for cfg in chain:
        if any(e.id == cap["id"] and e.injection_override not in (None, "", "default", "none") for e in cfg.entries):
            return cfg.level
    return str(cap.get("origin") or "").partition(":")[2]


def _read_blocks(wanted: List[Tuple[str, str, str]]) -> List[Dict[str, str]]:
    """The blocks' texts, each read with the bounded reader inside its root (agentrc's own
    default texts inside their directory): a file outside, a FIFO, a device is a Failure
    (AR050, AR054) and never opened. The OAS kernel reads such a file; agentrc does not."""
    out = []
    for source, file, root in wanted:
        if file.startswith(INJECTS_DIR + os.sep):
            root = INJECTS_DIR
        try:
            raw = capsafe.read_bounded(file, root or os.path.dirname(file))
        except capsafe.Escape as exc:
            raise fail(file, exc.code, f"the instruction file of {source}: {exc.message}", "E_CONFIG_INVALID") \
                from None
        content = raw[:captree.MAX_MANIFEST_BYTES].decode("utf-8", "replace").strip()
        out.append({"source": source, "file": file, "content": content})
    return out


def compose(soul_agents_md: str, blocks: List[Dict[str, str]]) -> str:
    """AGENTS.md of an instance as the kernel writes it: the soul's text, then each block
    between `<!-- oas:SOURCE src=FILE -->` and `<!-- /oas:SOURCE -->`."""
    text = soul_agents_md.rstrip("\n") + "\n"
    for b in blocks:
        text += f"\n<!-- oas:{b['source']} src={b['file']} -->\n{b['content']}\n<!-- /oas:{b['source']} -->\n"
    return text


def souls(context: str) -> List[str]:
    """The souls under the agents root above `context` (agents/ and local-agents/)."""
    d = os.path.abspath(context)
    while True:
        for base in ("agents", "local-agents"):
            if os.path.isdir(os.path.join(d, base)):
                names = set()
                for b in ("agents", "local-agents"):
                    try:
                        names |= {n for n in os.listdir(os.path.join(d, b))
                                  if os.path.isfile(os.path.join(d, b, n, "soul", "soul.yaml"))}
                    except OSError:
                        pass
                return sorted(names)
        parent = os.path.dirname(d)
        if parent == d:
            return []
        d = parent
