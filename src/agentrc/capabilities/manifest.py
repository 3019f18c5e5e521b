"""`oas.json` and `oas-package.json` into the model, with every problem as a diagnostic.

The JSON Schemas in `agentrc/schemas/` (oas-capability, oas-package) decide the shape;
the rules spec 003 adds that a schema cannot say well get their own codes: a hook other
than soul-scaffold, spawn and retire (AR154), `required` on any hook but spawn (AR155),
paths that are absolute or climb with '..' (AR156), and the package rules of the
package-engine contract ('.' as the only capability root, one default template, not both
spellings of the templates). What needs the files (paths inside the root after symlinks,
declared files present) is checked by the reader of the tree (`agentrc.inputs.captree`).
"""

from __future__ import annotations

import re

from agentrc import schemas
from agentrc.capabilities.jsonread import read, schema_message
from agentrc.capabilities.model import HOOK_EVENTS, Capability, ConfigTemplate, Hook, Package, Requirement
from agentrc.diagnostics import Diagnostics
from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

# An id that names a directory under installed/: what a package may export.
MATERIAL_ID = pattern(r"[a-z0-9][a-z0-9._-]*")
PACKAGE_ID = pattern(r"[a-z0-9][a-z0-9._-]*")


def lexical_escape(rel: str) -> bool:
    """Whether a declared path is absolute or climbs with '..' (either separator)."""
    return rel.startswith("/") or rel.startswith("\\") or ".." in re.split(r"[\\/]", rel)


def parse_capability(path: str, raw: bytes, diags: Diagnostics, exported: bool = False) -> Optional[Capability]:
    """The capability `raw` declares, or None (with errors in `diags`). `exported`: it is
    exported by a package, so its id must also be usable as a directory name."""
    doc = read(path, raw, "AR150", diags)
    if not doc.ok:
        return None
    data = doc.data
    if not isinstance(data, dict):
        diags.error(path, (1, 1), "AR150", f"must be a JSON object, not {_kind(data)}")
        return None
    before = len(diags.items)
    data = dict(data)
    hooks = data.get("hooks")
    if isinstance(hooks, dict):
        kept = {}
        for event, value in hooks.items():
            where = doc.pos(("hooks", event))
            if event not in HOOK_EVENTS:
                diags.error(path, where, "AR154", f"hook {event!r} is not one of {', '.join(HOOK_EVENTS)}")
                continue
            if isinstance(value, dict) and value.get("required") is True and event != "spawn":
                diags.error(path, where, "AR155", f"the {event} hook cannot be required; only a spawn hook can")
                continue
            kept[event] = value
        data["hooks"] = kept
    for err in schemas.errors("oas-capability", data):
        diags.error(path, doc.pos(tuple(err.absolute_path)), "AR150", schema_message(err))
    if len(diags.items) > before:
        return None  # the shapes below are what the schema promised
    cid = data.get("capability")
    if exported and isinstance(cid, str) and not MATERIAL_ID.fullmatch(cid):
        diags.error(path, doc.pos(("capability",)), "AR150",
                    f"capability id {cid!r} cannot name a directory under installed/: a package exports ids of "
                    "lowercase letters, digits, '.', '_' and '-' only")
    for key in ("skills", "agents"):
        for i, rel in enumerate(data.get(key) or ()):
            if isinstance(rel, str) and lexical_escape(rel):
                diags.error(path, doc.pos((key, i)), "AR156", f"{key}: {rel!r} leaves the capability root")
    inject = data.get("inject")
    if isinstance(inject, str) and lexical_escape(inject):
        diags.error(path, doc.pos(("inject",)), "AR156", f"inject: {inject!r} leaves the capability root")
    for name, cmd in (data.get("commands") or {}).items() if isinstance(data.get("commands"), dict) else ():
        script = cmd.split()[0] if isinstance(cmd, str) and cmd.split() else ""
        if lexical_escape(script):
            diags.error(path, doc.pos(("commands", name)), "AR156", f"command {name!r} runs {script!r}, outside the "
                        "capability root")
    for event, value in (data.get("hooks") or {}).items():
        command = value if isinstance(value, str) else value.get("command") if isinstance(value, dict) else None
        script = command.split()[0] if isinstance(command, str) and command.split() else ""
        if lexical_escape(script):
            diags.error(path, doc.pos(("hooks", event)), "AR156", f"the {event} hook runs {script!r}, outside the "
                        "capability root")
    if len(diags.items) > before:
        return None
    return _capability(data)


def _capability(data: Dict[str, Any]) -> Capability:
    requires = tuple(Requirement(why=r["why"], command=r.get("command", ""), runtime=r.get("runtime", ""),
                                 package=r.get("package", ""), marketplace=r.get("marketplace", ""),
                                 install=r.get("install", "")) for r in data.get("requires", ()))
    hooks = []
    for event, value in data.get("hooks", {}).items():
        if isinstance(value, str):
            hooks.append(Hook(event, value))
        else:
            hooks.append(Hook(event, value["command"], value.get("required") is True))
    return Capability(
        id=data["capability"], version=data["version"], description=data["description"],
        command=data.get("command", ""), layer=data.get("layer", ""),
        compatibility=(data.get("compatibility") or {}).get("oas", ""),
        skills=tuple(data.get("skills", ())), inject=data.get("inject", ""), requires=requires,
        commands=tuple(data.get("commands", {}).items()), hooks=tuple(hooks), agents=tuple(data.get("agents", ())))


def parse_package(path: str, raw: bytes, diags: Diagnostics) -> Optional[Package]:
    """The package `raw` declares, or None (with errors in `diags`)."""
    doc = read(path, raw, "AR151", diags)
    if not doc.ok:
        return None
    data = doc.data
    if not isinstance(data, dict):
        diags.error(path, (1, 1), "AR151", f"must be a JSON object, not {_kind(data)}")
        return None
    before = len(diags.items)
    for err in schemas.errors("oas-package", data):
        diags.error(path, doc.pos(tuple(err.absolute_path)), "AR151", schema_message(err))
    if len(diags.items) > before:
        return None
    if "configs" in data and "configTemplates" in data:
        diags.error(path, doc.pos(("configs",)), "AR151", "has both configTemplates and the older spelling configs; "
                    "keep configTemplates")
    roots: List[str] = data["capabilities"]
    if "." in roots and len(roots) > 1:
        diags.error(path, doc.pos(("capabilities",)), "AR151", "lists '.' (the package root as its one capability) "
                    "together with other capability roots")
    if "." in roots and "configTemplates" in data:
        diags.error(path, doc.pos(("capabilities",)), "AR151", "lists '.' as a capability root; a package with "
                    "configTemplates gives each capability its own directory, e.g. capabilities/<name>")
    for i, rel in enumerate(roots):
        if lexical_escape(rel):
            diags.error(path, doc.pos(("capabilities", i)), "AR156", f"capability root {rel!r} leaves the package")
    legacy = "configs" in data
    raw_templates = data.get("configs" if legacy else "configTemplates") or {}
    templates = tuple(ConfigTemplate(name, t["path"], t.get("description", ""), t.get("default") is True)
                      for name, t in raw_templates.items())
    for t in templates:
        if lexical_escape(t.path):
            diags.error(path, doc.pos(("configs" if legacy else "configTemplates", t.name)), "AR156",
                        f"config template {t.name!r} path {t.path!r} leaves the package")
    if sum(t.default for t in templates) > 1:
        diags.error(path, doc.pos(("configs" if legacy else "configTemplates",)), "AR151",
                    "marks more than one config template as the default")
    if len(diags.items) > before:
        return None
    return Package(id=data["package"], version=data["version"], description=data["description"],
                   compatibility=data["compatibility"]["oas"], capabilities=tuple(roots), templates=templates,
                   legacy_templates=legacy, dependencies=tuple(data.get("dependencies", ())))


def compatible(spec: str, version: str) -> bool:
    """Whether `version` (x.y.z) satisfies a compatibility floor: >=x.y.z, ^x.y.z or x.y.z."""
    if not spec:
        return True

    def nums(v: str) -> Tuple[int, ...]:
        parts = [int(p) if p.isdigit() else 0 for p in v.lstrip("v").split(".")]
        return tuple((parts + [0, 0, 0])[:3])

    current = nums(version)
    if spec.startswith(">="):
        return current >= nums(spec[2:])
    if spec.startswith("^"):
        wanted = nums(spec[1:])
        return current[0] == wanted[0] and current >= wanted
    return current == nums(spec)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {list: "an array", str: "a string", bool: "a boolean"}.get(type(value), "a number")
