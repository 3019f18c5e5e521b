"""`oas-config.yaml` (spec 003, "Config and targets") into the model: which capabilities a
scope activates, for which souls, with which settings.

The JSON Schema `oas-config` decides the shape (it accepts what the OAS kernel's config
schema accepts); on top of it come the kernel's rules a schema does not state: the
renamed keys of earlier releases (`groups`, a top-level `layers`, `injection`) are errors
naming their replacement, `from: bundled` is gone, and `injection-override` is refused on
an entry whose source the scope owns (`from: owned` or `path:`). All are AR168.
"""

from __future__ import annotations

from agentrc import schemas
from agentrc.capabilities.jsonread import schema_message
from agentrc.capabilities.model import LAYERS
from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostics
from agentrc.frozen import FrozenMap, freeze
from agentrc.text.yamlpos import YamlError
from agentrc.text.yamlpos import load as load_yaml

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Optional, Tuple

CONFIG_FILE = "oas-config.yaml"
MAX_BYTES = 16 << 20
_RENAMED = {
    "groups": "declare agent-types: (names and descriptions); each soul joins with type: in its soul.yaml",
    "layers": "the fundamental layers moved under capabilities.layers.<layer>",
}


@dataclass(frozen=True)
class Binding:
    """A target's value: `true`, `false`, or `{enabled, settings}`. `enabled` None means
    the object did not say (it counts as enabled)."""

    enabled: Optional[bool] = None
    settings: FrozenMap = FrozenMap()

    @property
    def on(self) -> bool:
        return self.enabled is not False


@dataclass(frozen=True)
class Entry:
    """One capability entry: under `capabilities.layers.<slot>` or `capabilities.additive`."""

    id: str
    slot: str = ""  # the layer, for an entry under capabilities.layers
    source: str = ""  # `from:` (installed, owned, path:<dir>), "" when not given
    global_: Optional[Binding] = None
    global_given: bool = False
    targets_given: bool = False  # agent-types: or souls: present (even empty), so no implicit global
    agent_types: Tuple[Tuple[str, Binding], ...] = ()
    souls: Tuple[Tuple[str, Binding], ...] = ()
    settings: FrozenMap = FrozenMap()
    injection_override: Optional[str] = None  # as written ("" is the default, as `default`); None: not set


@dataclass(frozen=True)
class Config:
    """One scope's `oas-config.yaml`. `none_layers`: layers set to `none` here."""

    path: str
    level: str  # the scope directory
    name: str = ""
    team: Optional[Tuple[str, str]] = None  # (name, id)
    agent_types: Tuple[str, ...] = ()
    entries: Tuple[Entry, ...] = ()
    none_layers: Tuple[str, ...] = ()
    skill_overrides: Tuple[Tuple[str, str], ...] = ()
    injections: Tuple[Tuple[str, str], ...] = ()  # agents-md-injection: (label, path as written)
    work_setups: Tuple[Tuple[str, str], ...] = ()  # work-modes.<mode>.setup: (mode, path as written)
    kernel_injection: Optional[str] = None  # oas.injection-override as written; None when not set here


def parse(path: str, level: str, raw: bytes, diags: Diagnostics) -> Optional[Config]:
    """The config in `raw` (the file at `path`, governing `level`), or None with errors."""
    if len(raw) > MAX_BYTES:
        diags.error(path, (0, 0), "AR168", f"is larger than {MAX_BYTES >> 20} MiB")
        return None
    try:
        located = load_yaml(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        diags.error(path, (0, 0), "AR008", f"is not valid UTF-8 (byte {exc.start})")
        return None
    except YamlError as exc:
        diags.error(path, exc.pos, exc.code or "AR001", exc.message)
        return None
    for key_path, pos in located.duplicates:
        diags.error(path, pos, "AR004", f"the key {'.'.join(map(str, key_path))!r} appears more than once")
    data = located.data if located.data is not None else {}
    before = len(diags.items)
    if not isinstance(data, dict):
        diags.error(path, (1, 1), "AR168", "must be a mapping of keys to values")
        return None
    for key, why in _RENAMED.items():
        if key in data:
            diags.error(path, located.pos((key,)), "AR168", f"{key!r} is no longer a key: {why}")
    raw_caps = data.get("capabilities")
    caps: dict = raw_caps if isinstance(raw_caps, dict) else {}
    for group in ("layers", "additive"):
        raw_entries = caps.get(group)
        entries: dict = raw_entries if isinstance(raw_entries, dict) else {}
        for name, entry in entries.items():
            if not isinstance(entry, dict):
                continue
            where = located.pos(("capabilities", group, name))
            if "injection" in entry:
                diags.error(path, where, "AR168", "injection: was renamed injection-override: (a path, none or "
                            "default)")
            source = str(entry.get("from", ""))
            if source == "bundled":
                diags.error(path, where, "AR168", "from: bundled is gone; install the capability's package and "
                            "write from: installed")
            if "injection-override" in entry and (source == "owned" or source.startswith("path:")):
                diags.error(path, where, "AR168", f"injection-override on a from: {source} entry: the scope owns "
                            "that source, so edit its injects/ file instead")
    if len(diags.items) > before:
        return None
    data = _empty_maps(data)
    for err in schemas.errors("oas-config", data):
        diags.error(path, located.pos(tuple(err.absolute_path)), "AR168", schema_message(err))
    if len(diags.items) > before:
        return None
    return _config(path, level, data)


_MAP_KEYS = ("capabilities", "agent-types", "skill-overrides", "templates", "oas", "work-modes")


def _empty_maps(data: dict) -> dict:
    """A key with nothing under it (`layers:`) is YAML null; the kernel reads it, and writes
    it (`oas use` leaves an empty `layers:`), as an empty map, so agentrc does too."""
    out = {k: ({} if v is None and k in _MAP_KEYS else v) for k, v in data.items()}
    caps = out.get("capabilities")
    if isinstance(caps, dict):
        caps = {k: ({} if v is None and k in ("layers", "additive") else v) for k, v in caps.items()}
        if isinstance(caps.get("additive"), dict):
            caps["additive"] = {k: ({} if v is None else v) for k, v in caps["additive"].items()}
        out["capabilities"] = caps
    return out


def _binding(value: Any) -> Optional[Binding]:
    if value is True:
        return Binding(True)
    if value is False:
        return Binding(False)
    if isinstance(value, dict):
        return Binding(value.get("enabled"), freeze(value.get("settings") or {}))
    return None


def _entry(cid: str, slot: str, spec: dict) -> Entry:
    types = spec.get("agent-types") or {}
    if isinstance(types, list):
        types = {t: True for t in types}
    return Entry(
        id=cid, slot=slot, source=str(spec.get("from", "")), global_=_binding(spec.get("global")),
        global_given="global" in spec,
        targets_given=spec.get("agent-types") is not None or spec.get("souls") is not None,
        agent_types=tuple((t, b) for t, b in ((t, _binding(v)) for t, v in types.items()) if b is not None),
        souls=tuple((s, b) for s, b in ((s, _binding(v)) for s, v in (spec.get("souls") or {}).items())
                    if b is not None),
        settings=freeze(spec.get("settings") or {}), injection_override=(
            str(spec.get("injection-override") or "") if "injection-override" in spec else None))


def _config(path: str, level: str, data: dict) -> Config:
    caps = data.get("capabilities") or {}
    entries = []
    nones = []
    for layer in LAYERS:
        spec = (caps.get("layers") or {}).get(layer)
        if spec == "none":
            nones.append(layer)
        elif isinstance(spec, dict):
            entries.append(_entry(spec["capability"], layer, spec))
    for cid, spec in (caps.get("additive") or {}).items():
        entries.append(_entry(cid, "", spec if isinstance(spec, dict) else {}))
    team = data.get("team")
    raw_inj = data.get("agents-md-injection")
    if isinstance(raw_inj, str):
        injections: Tuple[Tuple[str, str], ...] = ((data.get("name") or "level", raw_inj),) if raw_inj else ()
    else:
        injections = tuple((str(k), v) for k, v in (raw_inj or {}).items() if isinstance(v, str) and v)
    modes = data.get("work-modes") or {}
    setups = tuple((m, v["setup"]) for m, v in modes.items() if isinstance(v, dict) and isinstance(v.get("setup"), str)
                   and v["setup"])
    kernel = data.get("oas")
    kernel_injection = None
    if isinstance(kernel, dict) and "injection-override" in kernel:
        value = kernel["injection-override"]
        kernel_injection = value if isinstance(value, str) else ""
    return Config(path=path, level=level, name=data.get("name") or "",
                  team=(team["name"], team.get("id", "")) if isinstance(team, dict) else None,
                  agent_types=tuple(data.get("agent-types") or ()), entries=tuple(entries), none_layers=tuple(nones),
                  skill_overrides=tuple((data.get("skill-overrides") or {}).items()), injections=injections,
                  work_setups=setups, kernel_injection=kernel_injection)
