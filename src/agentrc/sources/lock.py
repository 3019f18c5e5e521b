"""The lockfile `agentrc.lock.json`: what a consumer project installed, and from where.

`schemas/lock.schema.json` is what validates it. `dumps` gives deterministic bytes: keys
sorted, every array in a fixed order (bundles by name and source, items by kind, name and
source, files by path, provenance lists sorted), two-space indent, one trailing newline;
so two equal locks are equal bytes and a change diffs as the lines it changed.
"""

from __future__ import annotations

import json
from dataclasses import replace

from agentrc import schemas
from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.sources import lockcheck
from agentrc.text import jsonindent

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

LOCK_FILE = "agentrc.lock.json"
LOCK_VERSION = 1
MAX_LOCK_BYTES = 16 << 20


@dataclass(frozen=True)
class Entry:
    """A bundle (`kind` "bundle") or an item of the lock, with where it came from."""

    kind: str
    name: str
    source: str  # the locator without its ref (`Source.name`)
    ref: Optional[str]
    commit: Optional[str]
    sha256: str
    direct: bool = False
    required_by: Tuple[str, ...] = ()  # "KIND:NAME" of the entries that pulled it in
    # The digest of the executable surface (hooks, MCP servers, scripts, plugins) the
    # consumer consented to (`agentrc.sources.surface`); None for an entry that has none.
    trusted: Optional[str] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "required_by", tuple(sorted(set(self.required_by))))

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.name}"

    def to_json(self) -> Dict[str, Any]:
        data: Dict[str, Any] = {"name": self.name, "source": self.source, "ref": self.ref, "commit": self.commit,
                                "sha256": self.sha256, "direct": self.direct,
                                "required_by": sorted(set(self.required_by))}
        if self.kind != "bundle":
            data["kind"] = self.kind
        if self.trusted is not None:
            data["trusted"] = self.trusted
        return data


@dataclass(frozen=True)
class LockedFile:
    """A file the lock records: its path and digest, and whether agentrc merged into it."""
    path: str
    sha256: str
    merged: bool = False

    def to_json(self) -> Dict[str, Any]:
        data: Dict[str, Any] = {"path": self.path, "sha256": self.sha256}
        if self.merged:
            data["merged"] = True
        return data


@dataclass(frozen=True)
class CapabilityRecord:
    """What a capability reference (`package.json#ai.capabilities`, the config's
    `capabilities`) resolved to: `layer` is the preset (`preset NAME`) or config file that
    holds the reference, and with `name` the record's key."""

    layer: str
    name: str
    type: str
    source: str
    ref: Optional[str]
    commit: Optional[str]
    sha256: str

    def to_json(self) -> Dict[str, Any]:
        return {"layer": self.layer, "name": self.name, "type": self.type, "source": self.source, "ref": self.ref,
                "commit": self.commit, "sha256": self.sha256}


@dataclass(frozen=True)
class Lock:
    """`agentrc.lock` as read or to be written: the sources pinned, the files written and the records kept."""
    clients: Tuple[str, ...]
    entries: Tuple[Entry, ...] = ()
    files: Tuple[LockedFile, ...] = ()
    # Plugin and MCP records (spec 001 §3.7 shapes), kept as they are read until the
    # plugin/MCP reconciliation lands; sorted on output.
    plugins: Tuple[Tuple[Tuple[str, Any], ...], ...] = ()
    mcps: Tuple[Tuple[Tuple[str, Any], ...], ...] = ()
    mcps_removed: Tuple[str, ...] = ()  # servers `remove-mcp` took out; not configured again
    capabilities: Tuple[CapabilityRecord, ...] = ()  # capability references a build resolved
    user_skipped: Tuple[str, ...] = ()  # a global installation's outputs with no user location (AR217, once)

    def __post_init__(self) -> None:
        # One order for equal locks, whatever order they were built in.
        object.__setattr__(self, "entries", tuple(sorted(self.entries, key=_entry_order)))
        object.__setattr__(self, "files", tuple(sorted(self.files, key=lambda f: f.path)))
        object.__setattr__(self, "mcps", tuple(sorted(set(self.mcps), key=lambda m: _record_order(dict(m)))))
        object.__setattr__(self, "mcps_removed", tuple(sorted(set(self.mcps_removed))))
        object.__setattr__(self, "user_skipped", tuple(sorted(set(self.user_skipped))))
        object.__setattr__(self, "capabilities", tuple(sorted(set(self.capabilities),
                                                              key=lambda c: (c.layer, c.name))))

    @property
    def bundles(self) -> Tuple[Entry, ...]:
        return tuple(e for e in self.entries if e.kind == "bundle")

    @property
    def items(self) -> Tuple[Entry, ...]:
        return tuple(e for e in self.entries if e.kind != "bundle")

    def entry(self, kind: str, name: str) -> Optional[Entry]:
        return next((e for e in self.entries if e.kind == kind and e.name == name), None)

    def with_entries(self, entries: Iterable[Entry]) -> "Lock":
        return replace(self, entries=tuple(entries))

    def to_json(self) -> Dict[str, Any]:
        caps = {"capabilities": [c.to_json() for c in self.capabilities]} if self.capabilities else {}
        skipped = {"user_skipped": list(self.user_skipped)} if self.user_skipped else {}
        return {
            **caps,
            **skipped,
            "version": LOCK_VERSION,
            "clients": list(self.clients),
            "bundles": [e.to_json() for e in sorted(self.bundles, key=_entry_order)],
            "items": [e.to_json() for e in sorted(self.items, key=_entry_order)],
            "files": [f.to_json() for f in sorted(self.files, key=lambda f: f.path)],
            "plugins": sorted((dict(p) for p in self.plugins), key=_record_order),
            "mcps": sorted((dict(m) for m in self.mcps), key=_record_order),
            "mcps_removed": list(self.mcps_removed),
        }


def _entry_order(e: Entry):
    return (e.kind, e.name, e.source)


def _record_order(r: Dict[str, Any]):
    return (str(r.get("name")), str(r.get("client")), str(r.get("scope")), str(r.get("bundle")),
            str(r.get("config")))


def record(data: Dict[str, Any]) -> Tuple[Tuple[str, Any], ...]:
    """A plugin or MCP record as a hashable value (lists become tuples)."""
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in data.items()))


def dumps(lock: Lock) -> bytes:
    """The lock's bytes: `json.dumps(indent=2, sort_keys=True, ensure_ascii=False)`'s text
    (`jsonindent`, which writes it without json's pure-Python encoder) and a newline."""
    return (jsonindent.dumps(lock.to_json()) + "\n").encode("utf-8")


def loads(raw: bytes, path: str = LOCK_FILE, clients: Optional[Sequence[str]] = None
          ) -> Tuple[Optional[Lock], Tuple[Diagnostic, ...]]:
    """The lock in `raw`, or None and every problem (AR203) at once: its shape (the
    schema) and its values (`lockcheck`; `clients` the client names this agentrc knows)."""
    diags = Diagnostics()
    if len(raw) > MAX_LOCK_BYTES:
        diags.error(path, (0, 0), "AR203", f"larger than {MAX_LOCK_BYTES} bytes")
        return None, diags.sorted()
    try:
        data = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except UnicodeDecodeError as exc:
        diags.error(path, (1, 1), "AR203", f"not UTF-8 (byte {exc.start})")
        return None, diags.sorted()
    except ValueError as exc:
        pos = (getattr(exc, "lineno", 1), getattr(exc, "colno", 1))
        diags.error(path, pos, "AR203", f"not JSON: {getattr(exc, 'msg', exc)}")
        return None, diags.sorted()
    except RecursionError:
        diags.error(path, (1, 1), "AR203", "nested too deeply")
        return None, diags.sorted()
    # Only an escape can spell a lone surrogate (UTF-8 holds none): a lock without one is
    # not written out again to find out (5 ms of 800 KB at 1,000 items).
    if b"\\u" in raw:
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate escaped as \ud800: no lock written back could hold it
            diags.error(path, (1, 1), "AR203", "holds an escaped lone surrogate (\\ud800-\\udfff), which is not text")
            return None, diags.sorted()
        except (RecursionError, ValueError):
            diags.error(path, (1, 1), "AR203", "nested too deeply")
            return None, diags.sorted()
    problems = sorted(schemas.errors("lock", data), key=lambda e: [str(p) for p in e.absolute_path])
    for err in problems:
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        diags.error(path, (0, 0), "AR203", f"{where}: {err.message}")
    if problems:
        return None, diags.sorted()
    entries: List[Entry] = []
    for kind_key in ("bundles", "items"):
        for e in data[kind_key]:
            entries.append(Entry(e.get("kind", "bundle"), e["name"], e["source"], e["ref"], e["commit"], e["sha256"],
                                 e["direct"], tuple(sorted(set(e["required_by"]))), e.get("trusted")))
    seen: Dict[Tuple[str, str], Entry] = {}
    for e in entries:
        other = seen.setdefault((e.kind, e.name), e)
        if other is not e:
            diags.error(path, (0, 0), "AR203", f"{e.kind} {e.name} is locked twice (from {other.source} and "
                        f"{e.source})")
    if diags.has_errors:
        return None, diags.sorted()
    files = tuple(LockedFile(f["path"], f["sha256"], bool(f.get("merged", False))) for f in data.get("files", []))
    caps = tuple(CapabilityRecord(c["layer"], c["name"], c["type"], c["source"], c["ref"], c["commit"], c["sha256"])
                 for c in data.get("capabilities", []))
    lock = Lock(tuple(data["clients"]), (), files, tuple(record(p) for p in data.get("plugins", [])),
                tuple(record(m) for m in data.get("mcps", [])), tuple(data.get("mcps_removed", [])), caps,
                tuple(data.get("user_skipped", []))).with_entries(entries)
    lockcheck.check(lock, path, diags, clients)
    if diags.has_errors:
        return None, diags.sorted()
    return lock, ()


def _no_duplicates(pairs):
    out: Dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"the key {k!r} is repeated")
        out[k] = v
    return out

