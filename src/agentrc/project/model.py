"""`agentrc.yaml`, the project file: the manifest of a project, as `package.json` is for npm
and `agents.toml` for others, with `agentrc.lock.json` as its lock.

It holds what every command would otherwise need as flags: the clients the project builds
and installs for, the build's registries, output, layout, report and strictness, the level
of each code (a warning turned off or made an error), and for a consumer project the
sources it installs. Paths in it are relative to the file's directory (`root`). Flags on
the command line override it; a project without it works as before.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import field, replace

from agentrc import schemas
from agentrc.classcode import dataclass
from agentrc.diagnostics import ERROR, Diagnostic, Diagnostics
from agentrc.model import IgnoreList
from agentrc.project import FILE_NAME
from agentrc.sources.dsl import SourceError, parse
from agentrc.text import yamlpos

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, Optional, Sequence, Tuple

SCHEMA_VERSION = 1
LEVELS = ("off", "warning", "error")
CODE = "AR243"


@dataclass(frozen=True)
class Declared:
    """A source the project installs (what `agentrc add` recorded)."""

    source: str
    ref: Optional[str] = None
    bundles: Tuple[str, ...] = ()
    items: Tuple[str, ...] = ()  # KIND:NAME


@dataclass(frozen=True)
class ProjectFile:
    """`agentrc.yaml` as read: the clients, paths, output and options it sets, relative to its directory."""
    path: str  # the file, as found
    root: str  # its directory: what relative paths in it are relative to
    clients: Tuple[str, ...] = ()  # empty: not set
    paths: Tuple[str, ...] = ()  # build.paths, relative to root
    out: Optional[str] = None
    layout: Optional[str] = None
    report: Optional[str] = None
    strict: Optional[bool] = None
    levels: Tuple[Tuple[str, str], ...] = ()  # (code, level), sorted
    sources: Tuple[Declared, ...] = field(default_factory=tuple)
    # `shared-copies`: one copy of an item for the clients that read each other's directories
    # (output.plan.shared_view); None when not set (the default, on).
    shared_copies: Optional[bool] = None
    # `ignore`: paths the project's AI clients must not read (gitignore lines), which every
    # built client with an ignore file gets (agentrc.clients.ignorefile); empty when not set.
    ignore: IgnoreList = IgnoreList()

    @property
    def shares(self) -> bool:
        """Whether builds of this project write shared copies (`shared-copies`, default true)."""
        return self.shared_copies is not False

    def at(self, rel: str) -> str:
        """A path of the file (relative to its directory) as a path from the working directory."""
        return os.path.normpath(os.path.join(self.root, rel))


def parse_file(text: str, path: str, known_clients: Sequence[str], known_codes: Sequence[str]
               ) -> Tuple[Optional[ProjectFile], Tuple[Diagnostic, ...]]:
    """The project file in `text`, or None and every problem (AR243, AR009) at once."""
    diags = Diagnostics()
    try:
        located = yamlpos.load(text)
    except yamlpos.YamlError as exc:
        diags.error(path, exc.pos, exc.code or CODE, f"not YAML: {exc.message}")
        return None, diags.sorted()
    data = located.data
    if not isinstance(data, dict):
        diags.error(path, (1, 1), CODE, "not a mapping of keys to values")
        return None, diags.sorted()
    for err in sorted(schemas.errors("project", data), key=lambda e: [str(p) for p in e.absolute_path]):
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        diags.error(path, located.pos(tuple(err.absolute_path)), CODE, f"{where}: {err.message}")
    if diags.has_errors:
        return None, diags.sorted()
    _meanings(data, located, path, known_clients, known_codes, diags)
    if diags.has_errors:
        return None, diags.sorted()
    build: Dict[str, Any] = data.get("build", {})
    root = posixpath.dirname(path.replace(os.sep, "/")) or "."
    return ProjectFile(
        path, root, tuple(data.get("clients", ())), tuple(build.get("paths", ())), build.get("out"),
        build.get("layout"), build.get("report"), build.get("strict"),
        tuple(sorted((code, "off" if level is False else level) for code, level in data.get("codes", {}).items())),
        tuple(Declared(s["source"], s.get("ref"), tuple(s.get("bundles", ())), tuple(s.get("items", ())))
              for s in data.get("sources", ())), data.get("shared-copies"), _ignore(data, located, path)), ()


def _ignore(data: Dict[str, Any], located: Any, path: str) -> IgnoreList:
    """The `ignore:` list, named by this file and the position of its key (AR092's place)."""
    if not data.get("ignore"):
        return IgnoreList()
    line, col = located.pos(("ignore",))
    return IgnoreList(path, tuple(data["ignore"]), (line, col))


def _meanings(data: dict, located: Any, path: str, known_clients: Sequence[str], known_codes: Sequence[str],
              diags: Diagnostics) -> None:
    for i, name in enumerate(data.get("clients", ())):
        if name not in known_clients:
            diags.error(path, located.pos(("clients", i)), CODE, f"clients: unknown client {name!r} (known: "
                        f"{', '.join(known_clients)})")
    for code, level in sorted(data.get("codes", {}).items()):
        if code not in known_codes:
            diags.error(path, located.pos(("codes", code)), CODE, f"codes: {code} is not a code of this agentrc")
        elif level not in ("warning",) and code in ERRORS_ONLY:
            diags.error(path, located.pos(("codes", code)), CODE, f"codes: {code} is an error; errors cannot "
                        "be turned off or changed")
    for i, s in enumerate(data.get("sources", ())):
        try:
            parse(s["source"] + (f"@{s['ref']}" if s.get("ref") else ""))
        except SourceError as exc:
            diags.error(path, located.pos(("sources", i, "source")), exc.code if exc.code == "AR225" else CODE,
                        f"sources: {exc}")
    for key in ("paths",):
        for i, p in enumerate(data.get("build", {}).get(key, ())):
            if "\x00" in p:
                diags.error(path, located.pos(("build", key, i)), CODE, f"build.{key}: a path holds a NUL byte")


# Codes that are always errors: a level in the project file would hide a broken output,
# an escape or an unreadable file, so it is refused. (Warnings are the codes a level is for.)
ERRORS_ONLY = frozenset({"AR050", "AR054", "AR090", "AR091", "AR093", "AR094", "AR140", "AR141", "AR142",
                         "AR203", "AR204", "AR224", "AR225", "AR226", "AR229", "AR241", "AR242"})


def apply_levels(diagnostics: Sequence[Diagnostic], levels: Sequence[Tuple[str, str]]) -> Tuple[Diagnostic, ...]:
    """`diagnostics` as the project's levels say: a warning whose code is `off` is dropped,
    one whose code is `error` becomes an error (the command fails); errors stay errors."""
    if not levels:
        return tuple(diagnostics)
    wanted = dict(levels)
    out = []
    for d in diagnostics:
        level = wanted.get(d.code)
        if d.is_error or level is None or level == "warning":
            out.append(d)
        elif level == "error":
            out.append(replace(d, severity=ERROR, message=d.message + f" (an error in {FILE_NAME})"))
    return tuple(out)
