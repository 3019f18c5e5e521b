"""The official package catalog (spec 003, "Distribution packages": `oas install oas.okf`), in
the OAS kernel's format (`schemas/oas-package-catalog.schema.json`): `packages` maps a package
id to its git source `{url, ref?, path?}`, `capabilities` maps a capability id of an earlier
release to the package that now exports it. Resolving through the catalog gives a source,
never trust. Pure: the caller reads the file (`capops/install.read_catalog`)."""

from __future__ import annotations

from agentrc import schemas
from agentrc.capabilities.jsonread import read, schema_message
from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostics

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Optional, Tuple


@dataclass(frozen=True)
class Entry:
    """A catalog's entry for a package: where to fetch it (url, ref, path)."""
    url: str
    ref: str = ""
    path: Optional[str] = None  # as written; None when the entry names none


@dataclass(frozen=True)
class Catalog:
    """A capability catalog: the packages it names and the aliases of their capabilities."""
    path: str
    packages: Tuple[Tuple[str, Entry], ...] = ()
    aliases: Tuple[Tuple[str, str], ...] = ()  # capability id -> package id

    def entry(self, package_id: str) -> Optional[Entry]:
        return next((e for pid, e in self.packages if pid == package_id), None)

    def resolve(self, package_id: str, selector: str = "") -> Optional[Tuple[str, str, Optional[str]]]:
        """(url, ref, path) of `package_id`; `selector` (the @ of `id@selector`) replaces the
        entry's ref. None when the catalog has no such package."""
        e = self.entry(package_id)
        return (e.url, selector or e.ref, e.path) if e else None

    def package_of(self, capability_id: str) -> Tuple[str, str]:
        """(package id, "alias" or "identity") that supplies a capability id."""
        alias = next((p for c, p in self.aliases if c == capability_id), None)
        return (alias, "alias") if alias else (capability_id, "identity")


def parse_catalog(path: str, raw: bytes, diags: Diagnostics) -> Optional[Catalog]:
    """The catalog in `raw`, or None with AR253 errors in `diags`."""
    doc = read(path, raw, "AR253", diags)
    if not doc.ok:
        return None
    data = doc.data
    if not isinstance(data, dict):
        diags.error(path, (1, 1), "AR253", "must be a JSON object")
        return None
    before = len(diags.items)
    for err in schemas.errors("oas-package-catalog", data):
        diags.error(path, doc.pos(tuple(err.absolute_path)), "AR253", schema_message(err))
    if len(diags.items) > before:
        return None
    packages = tuple((pid, Entry(e["url"], e.get("ref", ""), e.get("path")))
                     for pid, e in (data.get("packages") or {}).items())
    aliases = tuple((cid, t if isinstance(t, str) else t["package"])
                    for cid, t in (data.get("capabilities") or {}).items())
    return Catalog(path, packages, aliases)
