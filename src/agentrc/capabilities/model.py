"""The model of spec 003: capabilities, distribution packages and the lock, frozen.

A *capability* (`oas.json`) is what a scope activates and trusts; a *package*
(`oas-package.json`) is how capabilities travel: one source, one version, one integrity,
exporting one or more capability roots. Installing a package copies each capability into
`.agents/capabilities/installed/<id>/` and records both levels in `oas-lock.json`.
These types hold what the files say, already validated (`agentrc.capabilities.manifest`,
`agentrc.capabilities.lock`); nothing here reads the disk.
"""

from __future__ import annotations

from agentrc.classcode import dataclass

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Optional, Tuple

LAYERS = ("knowledge", "messaging", "tasks")
HOOK_EVENTS = ("soul-scaffold", "spawn", "retire")
LOCK_FILE = "oas-lock.json"
CAPABILITY_FILE = "oas.json"
PACKAGE_FILE = "oas-package.json"
INSTALLATION_FILE = ".oas-installation.json"
CAPABILITIES_DIR = ".agents/capabilities"
INSTALLED = "installed"
OWNED = "owned"
DEFAULT_PACKAGE_PATH = "oas-package"
# The OAS contract these files follow: package-engine contract and schemas of OAS 0.20.0.
# A package's compatibility.oas is checked against it.
OAS_CONTRACT = "0.20.0"


@dataclass(frozen=True)
class Requirement:
    """What must exist before a capability works: a `command` on PATH, or a `package` of a
    `runtime`'s own package manager (pi or claude), registered from `marketplace` first."""

    why: str
    command: str = ""
    runtime: str = ""
    package: str = ""
    marketplace: str = ""
    install: str = ""

    @property
    def name(self) -> str:
        """The name `--accept-requirement` takes: the command, or runtime:package."""
        return self.command or f"{self.runtime}:{self.package}"


@dataclass(frozen=True)
class Hook:
    """A capability's lifecycle hook: the event it runs on and the script it runs."""
    event: str  # one of HOOK_EVENTS
    command: str  # "<script> [args...]", the script relative to the capability root
    required: bool = False

    @property
    def script(self) -> str:
        parts = self.command.split()
        return parts[0] if parts else ""


@dataclass(frozen=True)
class Capability:
    """One `oas.json`."""

    id: str
    version: str
    description: str
    command: str = ""
    layer: str = ""
    compatibility: str = ""
    skills: Tuple[str, ...] = ()
    inject: str = ""
    requires: Tuple[Requirement, ...] = ()
    commands: Tuple[Tuple[str, str], ...] = ()  # (name, "<script> [args...]"), in file order
    hooks: Tuple[Hook, ...] = ()
    agents: Tuple[str, ...] = ()

    @property
    def executable(self) -> bool:
        """Whether it has commands or hooks, which run only once trusted."""
        return bool(self.commands or self.hooks)

    def declared_paths(self) -> Tuple[Tuple[str, str], ...]:
        """Every (what, path) the capability declares, each of which must stay inside its root."""
        out = [("skill", s) for s in self.skills] + [("agent", a) for a in self.agents]
        if self.inject:
            out.append(("injection", self.inject))
        for name, cmd in self.commands:
            script = cmd.split()[0] if cmd.split() else ""
            if script:
                out.append((f"script of command {name!r}", script))
        for hook in self.hooks:
            if hook.script:
                out.append((f"script of the {hook.event} hook", hook.script))
        return tuple(out)


@dataclass(frozen=True)
class ConfigTemplate:
    """A configuration template a capability offers, by name and path."""
    name: str
    path: str
    description: str = ""
    default: bool = False


@dataclass(frozen=True)
class Package:
    """One `oas-package.json`."""

    id: str
    version: str
    description: str
    compatibility: str
    capabilities: Tuple[str, ...]  # capability roots, relative to the package root
    templates: Tuple[ConfigTemplate, ...] = ()
    legacy_templates: bool = False  # spelled `configs` (read only)
    dependencies: Tuple[str, ...] = ()  # source specs


@dataclass(frozen=True)
class LockedPackage:
    """A row of the lock's `packages`: where the bytes came from."""

    source: str  # git:<url>@<ref>, path:<absolute dir> or catalog:<id>[@selector]
    path: str  # the package root inside the source, canonical ("." for the root)
    version: str
    commit: str  # 40 hex digits, or "local" for a path source
    integrity: str  # sha256-<hex> of the package payload
    dependencies: Tuple[str, ...] = ()  # package ids, each a row of the same lock


@dataclass(frozen=True)
class LockedCapability:
    """A row of the lock's `capabilities`: one materialised artifact."""

    version: str
    package: str
    path: str  # the capability root inside its package, canonical
    integrity: str  # sha256-<hex> of everything under installed/<id>/
    trusted: bool = False


@dataclass(frozen=True)
class Lock:
    """`oas-lock.json`. Version 1 locks are read (their capability ids in `legacy`) but
    never written."""

    version: int = 2
    packages: Tuple[Tuple[str, LockedPackage], ...] = ()
    capabilities: Tuple[Tuple[str, LockedCapability], ...] = ()
    legacy: Tuple[str, ...] = ()

    def package(self, pid: str) -> Optional[LockedPackage]:
        return next((p for k, p in self.packages if k == pid), None)

    def capability(self, cid: str) -> Optional[LockedCapability]:
        return next((c for k, c in self.capabilities if k == cid), None)

    def exports(self, pid: str) -> Tuple[str, ...]:
        return tuple(cid for cid, c in self.capabilities if c.package == pid)


@dataclass(frozen=True)
class Installation:
    """`.oas-installation.json`, written inside each installed capability: where it came
    from, derived from the lock rows only, so any tool reprojecting the same locked bytes
    writes the same file (and the artifact keeps its integrity)."""

    capability: str
    version: str
    package: str
    package_version: str
    source: str
    commit: str
    package_path: str
    capability_path: str
