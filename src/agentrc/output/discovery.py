"""Cross-discovery: which built client also loads another built client's copy of an item
(its `also_reads`: opencode reads .claude/skills, Codex .agents/skills...), what that does
(a second copy, the only copy, a name clash, a copy outside the item's audience), the
switches agentrc writes to hide a copy, and the AR095 warnings and `also_loaded_by` report
entries that say so."""

from __future__ import annotations

import dataclasses

from agentrc.classcode import dataclass
from agentrc.clients import registry as client_registry
from agentrc.clients.base import SHARED_SKILL_DIR, ClientAdapter
from agentrc.diagnostics import Diagnostics
from agentrc.fidelity import ItemReport
from agentrc.files import Fragment, OutputFile
from agentrc.model import Item, Kind

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Set, Tuple

FOREIGN, ONLY, DIFFERS, SECOND, SHARED = "foreign", "only", "differs", "second", "shared"


@dataclass(frozen=True)
class Sighting:
    """One copy of an item that `reader` also loads from another client's directory: the
    facts behind both AR095 and the item's `also_loaded_by` in the fidelity report."""

    reader: str
    writers: Tuple[str, ...]  # the clients whose output `path` is
    kind: Kind
    name: str
    path: str
    why: str  # FOREIGN: outside its audience; ONLY: its only copy; DIFFERS: a name clash; SECOND: loaded too;
    # SHARED: the one copy written for both
    own: str = ""  # the reader's own copy of the item
    own_wins: bool = False  # DIFFERS: the reader documents that its own copy wins
    audience: Tuple[str, ...] = ()
    hidden: str = ""  # the reader's switch agentrc wrote to hide the copy ("" = it is loaded)

    @property
    def skill(self) -> str:
        """The skill name the copy is loaded by, or "" when it is not a skill."""
        return _skill_name(self.path)

    def detail(self) -> str:
        """What happens, in the words the report and AR095 share."""
        if self.hidden:
            return f"hidden from {self.reader} by {self.hidden}"
        if self.why == FOREIGN:
            return f"{self.reader} loads it although its audience ({', '.join(self.audience)}) excludes {self.reader}"
        if self.why == ONLY:
            return f"{self.reader} loads it from here (it has no copy of its own)"
        if self.why == SHARED:
            return (f"{self.reader} loads it from here as its own: the same bytes, so agentrc writes no second copy "
                    "(shared-copies)")
        if self.why == SECOND:
            return f"{self.reader} loads it a second time, beside its own copy {self.own}"
        which = "its own copy wins" if self.own_wins else "which of the two it loads is not defined"
        return f"{self.reader} has its own copy {self.own}, which differs; {which}"


def cross_discovery(clients: Sequence[ClientAdapter], items: Sequence[Item],
                    entries: Dict[Tuple[str, Kind, str], OutputFile]) -> List[Sighting]:
    """Every copy of an item that a built client also loads from another built client's
    directory (its `also_reads`), unless the copy is the same file as its own. A copy is
    hidden by the reader's own switch (`skill_switch`) when it is a skill the reader has no
    skill of its own by, and the reader is outside the item's audience or has the item in
    another form already (a rule it loads as an instruction, a command). A reader's entry
    that another client wrote (its owner) is the shared copy it loads as its own (`shared_view`):
    a SHARED sighting, and the other copies it finds are those bytes too."""
    built = {a.name for a in clients}
    of_kind: Dict[Kind, Dict[str, Item]] = {}
    for i in items:
        of_kind.setdefault(i.kind, {})[i.name] = i
    found: List[Sighting] = []
    # Client -> the skill names of its entrypoints, made when a copy could first be hidden
    # (one pass over every entry for all readers, not one per reader; none in most builds).
    skills_of: Optional[Dict[str, Set[str]]] = None
    for reader in clients:
        for kind, others in reader.also_reads.items():
            at: Dict[Tuple[str, str], List[str]] = {}  # (item, path) -> writers: .agents/skills is shared
            for other, prefix in _expand(others):
                if other not in built or other == reader.name:
                    continue
                for name in of_kind.get(kind, {}):
                    theirs = entries.get((other, kind, name))
                    if theirs is not None and theirs.path.startswith(prefix):
                        at.setdefault((name, theirs.path), []).append(other)
            by_name = of_kind.get(kind, {})
            for (name, path), writers in at.items():
                item, theirs = by_name[name], entries[(writers[0], kind, name)]
                mine = entries.get((reader.name, kind, name))
                if mine is not None and not mine.owner.startswith(reader.name + ":"):  # the shared copy
                    if mine.path == path:
                        found.append(Sighting(reader.name, tuple(writers), kind, name, path, SHARED, path,
                                              audience=tuple(item.audience)))
                    continue  # another copy of the same bytes (`shared_view` checked every one)
                if mine is not None and mine.path == path:
                    continue
                own = mine.path if mine is not None else ""
                if mine is None:
                    why = ONLY if item.targets(reader.family) else FOREIGN
                elif _same_slot(kind, mine.path, path):
                    if mine.same_bytes(theirs):
                        continue  # the same item under the same name: nothing changes
                    why = DIFFERS
                else:
                    why = SECOND
                sighting = Sighting(reader.name, tuple(writers), kind, name, path, why, own,
                                    kind in reader.prefers_own, tuple(item.audience))
                if reader.skill_switch and why in (FOREIGN, SECOND) and sighting.skill:
                    if skills_of is None:
                        skills_of = _skills_of(entries)
                    if sighting.skill not in skills_of.get(reader.name, ()):
                        hidden = reader.skill_switch.replace("<name>", sighting.skill)
                        sighting = dataclasses.replace(sighting, hidden=hidden)
                found.append(sighting)
    return found


def _skills_of(entries: Dict[Tuple[str, Kind, str], OutputFile]) -> Dict[str, Set[str]]:
    """Each client's skill names: those of its entrypoints (`cross_discovery`'s `entries`)."""
    out: Dict[str, Set[str]] = {}
    for (c, _, _), f in entries.items():
        out.setdefault(c, set()).add(_skill_name(f.path))
    return out


def _skill_name(path: str) -> str:
    parts = path.split("/")
    return parts[-2] if len(parts) > 2 and parts[-1] == "SKILL.md" else ""


def _same_slot(kind: Kind, mine: str, theirs: str) -> bool:
    """Whether two copies compete for one name (two skills, two agents, two commands of
    the same form) rather than both loading (a rule is an instruction file in one place and
    a skill in another; instruction files all load)."""
    skills = (mine.endswith("/SKILL.md"), theirs.endswith("/SKILL.md"))
    if skills[0] != skills[1]:
        return False
    return skills[0] or kind is not Kind.RULE


def _switches(clients: Sequence[ClientAdapter], sightings: Sequence[Sighting]) -> List[Fragment]:
    out: List[Fragment] = []
    for reader in clients:
        names = sorted({(s.skill, f"{reader.name}:{s.kind.value}:{s.name}") for s in sightings
                        if s.reader == reader.name and s.hidden})
        out.extend(reader.hide_skills(names))
    return out


def _with_sightings(reports: Sequence[ItemReport], sightings: Sequence[Sighting]) -> List[ItemReport]:
    """Each writer's report of an item names the other clients that also load its copy."""
    notes: Dict[Tuple[str, str, str], List[Tuple[str, str, str]]] = {}
    for s in sightings:
        for writer in s.writers:
            notes.setdefault((writer, s.kind.value, s.name), []).append((s.reader, s.path, s.detail()))
    if not notes:
        return list(reports)
    return [_also_loaded(r, tuple(sorted(notes[(r.client, r.kind, r.name)])))
            if (r.client, r.kind, r.name) in notes else r for r in reports]


def _also_loaded(report: ItemReport, by: Tuple[Tuple[str, str, str], ...]) -> ItemReport:
    """`report` with `also_loaded_by` set: every other field's value as it is, in one update
    of the new report's dict (`dataclasses.replace` checks and passes each field again: 2.8
    against 1 microsecond, for every skill opencode and Copilot also load from .claude/)."""
    new = object.__new__(ItemReport)
    new.__dict__.update(report.__dict__)
    new.__dict__["also_loaded_by"] = by
    return new


def _warn_cross_discovery(sightings: Sequence[Sighting], diags: Diagnostics,
                          clients: Sequence[ClientAdapter] = ()) -> None:
    """AR095: one line per reader and directory it also loads copies from, with their count
    and, by kind, writers and reason, their names; the hint is a fix for one tree. A shared
    copy is the reader's own and a hidden one is not loaded: neither is named."""
    groups: Dict[Tuple[str, str], List[Sighting]] = {}
    for s in sightings:
        if not s.hidden and s.why != SHARED:
            groups.setdefault((s.reader, s.path.rsplit("/", 2 if s.skill else 1)[0]), []).append(s)
    switches = {a.name: a.discovery_off for a in clients}
    for (reader, where), found in sorted(groups.items()):
        parts: Dict[Tuple[str, Tuple[str, ...], str, bool], List[Sighting]] = {}
        for s in found:
            parts.setdefault((s.kind.value, s.writers, s.why, s.own_wins), []).append(s)
        if len(parts) == 1:
            message = f"{reader} also loads {_part(found, where)}"
        else:
            message = (f"{reader} also loads {len(found)} copies from {where}: "
                       + "; ".join(_part(group) for _, group in sorted(parts.items())))
        writers = sorted({w for s in found for w in s.writers})
        switch = switches.get(reader, {}).get(where, "")
        diags.warning("<build>", (0, 0), "AR095", message, hint=(
            (f"{switch}, or " if switch else "") + f"leave {reader} (or {', '.join(writers)}) out of clients: in "
            "agentrc.yaml for this tree; copies with the same bytes are written once already (shared-copies; "
            "docs/fidelity.md#cross-discovery)"))


def _part(found: List[Sighting], where: str = "") -> str:
    """One kind, writers and reason of an AR095 line: "2 skills written for claude[ from
    <where>], outside its audience (a, b)" (the directory is said once per line)."""
    first = found[0]
    names = _names(sorted(s.name for s in found))
    noun = first.kind.plural if len(found) > 1 else first.kind.value
    copies = "copies" if len(found) > 1 else "copy"
    how = {FOREIGN: f"outside its audience ({names})",
           ONLY: f"as its only {copies} ({names})",
           SECOND: f"as {'second copies' if len(found) > 1 else 'a second copy'} beside its own ({names})",
           DIFFERS: f"different from its own {copies} ({names}); "
                    + ("its own copy wins" if first.own_wins else "which of the two it loads is not defined"),
           }[first.why]
    return f"{len(found)} {noun} written for {' and '.join(first.writers)}{f' from {where}' if where else ''}, {how}"


def _expand(clients: Sequence[str]) -> Tuple[Tuple[str, str], ...]:
    """`also_reads` names as (client, the prefix of the copies read: "" for all): SHARED_SKILL_DIR
    stands for what every client writing there puts under it (Codex's agents are TOML files
    elsewhere, OpenClaw's are skills there). A client named itself is read whole."""
    out: Dict[str, str] = {}
    for name in clients:
        if name == SHARED_SKILL_DIR:
            for writer in client_registry.agent_skills_writers():
                out.setdefault(writer, SHARED_SKILL_DIR + "/")
        else:
            out[name] = ""
    return tuple(out.items())


def _shared_context(clients: Sequence[ClientAdapter], items: Sequence[Item], reports: Sequence[ItemReport],
                    diags: Diagnostics) -> None:
    """A context item's section lands in a file every client reads (AGENTS.md): `audience`
    cannot keep it from the clients it leaves out. Say so rather than pretend."""
    written: Dict[str, set] = {}  # context item -> the files its section went to (by name: not n^2)
    for r in reports:
        if r.kind == "context" and r.generated:
            written.setdefault(r.name, set()).update(r.outputs[:1])
    for item in items:
        if item.kind is not Kind.CONTEXT or not item.audience:
            continue
        for path in sorted(written.get(item.name, ())):
            readers = [a.name for a in clients if a.layout == "project" and not item.targets(a.family)
                       and Kind.CONTEXT in a.kinds and getattr(a, "context_file", "") == path]
            if readers:
                diags.warning(item.entrypoint, item.field_pos.get("audience", (1, 1)), "AR095",
                              f"context {item.name} is for {', '.join(item.audience)}, but {', '.join(readers)} "
                              f"also read {path}, which holds it")


def _names(names: List[str], most: int = 5) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")
