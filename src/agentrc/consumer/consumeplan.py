"""What a consumer command would change, and how a lock differs from what its sources give.

Pure comparisons for `agentrc.consumer.consume`: the plan `--dry-run` prints (MCP servers,
plugins and hooks registered or removed; the files come from the writer's diff), and the
differences `install --frozen` and `install --check` refuse (a lock is only frozen when
installing it would write it back unchanged).
"""

from __future__ import annotations

from dataclasses import replace

from agentrc.classcode import dataclass
from agentrc.sources import plugins as plugin_forms
from agentrc.sources.lock import Entry, Lock
from agentrc.sources.surface import Exposure

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple
    Surfaces = Dict[str, Tuple[Exposure, ...]]


@dataclass(frozen=True)
class Planned:
    """What a command would register with, or remove from, the clients besides files."""

    mcp_add: Tuple[str, ...] = ()
    mcp_remove: Tuple[str, ...] = ()
    plugins_add: Tuple[str, ...] = ()
    plugins_remove: Tuple[str, ...] = ()
    hooks_add: Tuple[str, ...] = ()
    hooks_remove: Tuple[str, ...] = ()

    def to_json(self) -> Dict[str, Dict[str, List[str]]]:
        return {"mcp_servers": {"register": list(self.mcp_add), "remove": list(self.mcp_remove)},
                "plugins": {"install": list(self.plugins_add), "uninstall": list(self.plugins_remove)},
                "hooks": {"add": list(self.hooks_add), "remove": list(self.hooks_remove)}}

    def lines(self) -> List[str]:
        out: List[str] = []
        for verb, what, names in (("register", "MCP server", self.mcp_add), ("remove", "MCP server", self.mcp_remove),
                                  ("install", "plugin", self.plugins_add),
                                  ("uninstall", "plugin", self.plugins_remove),
                                  ("add", "hook", self.hooks_add), ("remove", "hook", self.hooks_remove)):
            out.extend(f"would {verb} {what} {n}" for n in names)
        return out


def _mcp_labels(records: Iterable[Tuple[Tuple[str, object], ...]]) -> Set[str]:
    out = set()
    for m in (dict(r) for r in records):
        where = m.get("config") or "via its CLI"
        out.add(f"{m.get('name')} ({m.get('client')}, {m.get('scope', 'project')}, {where})")
    return out


def _hooks(surfaces: Optional[Surfaces]) -> Set[str]:
    return {f"{x.name}: {x.what}" for exposures in (surfaces or {}).values() for x in exposures if x.kind == "hook"}


def planned(old: Lock, new: Lock, wanted: Sequence[plugin_forms.PluginAction], new_surfaces: Surfaces,
            old_surfaces: Optional[Surfaces]) -> Planned:
    """The plan between the lock as it was (`old`, its surfaces `old_surfaces`) and the one a
    command would write (`new`, the plugin actions `wanted`). A plugin the lock records as
    installed is not installed again; one it records for a bundle no longer locked is
    uninstalled (as `write.plugins` does)."""
    before, after = _mcp_labels(old.mcps), _mcp_labels(new.mcps)
    keep = {(a.client, a.identifier) for a in wanted if a.form == plugin_forms.INSTALL}
    installed = {(str(r.get("client")), str(r.get("identifier"))) for r in (dict(p) for p in old.plugins)
                 if r.get("status", "installed") == "installed" and "@" in str(r.get("identifier", ""))}
    h_old, h_new = _hooks(old_surfaces), _hooks(new_surfaces)

    def shown(pairs: Set[Tuple[str, str]]) -> Tuple[str, ...]:
        return tuple(sorted(f"{ident} ({client})" for client, ident in pairs))

    return Planned(tuple(sorted(after - before)), tuple(sorted(before - after)), shown(keep - installed),
                   shown(installed - keep), tuple(sorted(h_new - h_old)), tuple(sorted(h_old - h_new)))


def _same(old: Optional[Entry], new: Optional[Entry]) -> bool:
    """Whether two entries are the same but for consent (`trusted`: the consumer's, not the
    resolution's). Compared as they are first: a copy of each of 2,000 entries made without
    their consent was most of a frozen install's comparison (13 ms at 1,000 items)."""
    if old is None or new is None:
        return False
    return old == new or replace(old, trusted=new.trusted) == new


def entry_drift(locked: Sequence[Entry], resolved: Sequence[Entry]) -> List[str]:
    """How the lock's entries differ from resolving its direct entries at the locked commits
    again (empty when they are the same): what `install --frozen` refuses to rewrite."""
    have = {e.id: e for e in locked}
    want = {e.id: e for e in resolved}
    out = []
    for ident in sorted(set(have) | set(want)):
        old, new = have.get(ident), want.get(ident)
        if _same(old, new):
            continue
        if old is None and new is not None:
            why = f"the locked sources require it ({', '.join(new.required_by) or 'directly'}); the lock does not " \
                  "record it"
        elif new is None and old is not None:
            why = "the lock records it; resolving the locked sources no longer gives it"
        elif old is not None and new is not None and old.sha256 != new.sha256:
            why = f"{new.source} holds other content than the lock records (sha256 {old.sha256[:12]}..., found " \
                  f"{new.sha256[:12]}...)"
        elif old is not None and new is not None and old.commit != new.commit:
            why = f"its ref {old.ref or 'HEAD'} resolves to {str(new.commit)[:12]}, the lock records " \
                  f"{str(old.commit)[:12] if old.commit else 'no commit'}"
        else:
            why = "resolving the locked sources records it otherwise (what requires it, or whether it is direct)"
        out.append(f"{ident}: {why}")
    return out


def _targets(lock: Lock) -> Set[Tuple[str, ...]]:
    return {tuple(str(dict(m).get(k)) for k in ("name", "client", "scope", "bundle", "config")) for m in lock.mcps}


def lock_drift(locked: Lock, expected: Lock) -> List[str]:
    """How the lock's files and MCP records differ from what its sources give (`expected`):
    what `install --check` lists and `install --frozen` refuses."""
    out = []
    recorded = {f.path: f for f in locked.files}
    for f in expected.files:
        old = recorded.pop(f.path, None)
        if old != f:
            out.append(f"{f.path}: the locked sources give " + ("a file the lock does not record" if old is None
                                                                 else "other bytes than the lock records"))
    out.extend(f"{path}: the lock records a file the locked sources do not give" for path in sorted(recorded))
    if _targets(locked) != _targets(expected):
        out.append("the locked sources configure other MCP servers than the lock records")
    return out
