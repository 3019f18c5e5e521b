"""`agentrc outdated`: the locked sources their remotes have moved past.

For each git source of the lock (at each ref it is locked at), one `git ls-remote` through
the fetcher's hardened runner (`Fetcher.remote_refs`): a branch (or no ref: the remote's
HEAD) is outdated when it names another commit than the locked one; a tag is outdated
when the remote has tags of higher semantic versions (`agentrc.portable.semver`; a
pre-release only when the locked tag is one), or when the tag itself was moved. A full
commit id is pinned: nothing is newer. A local directory has no remote and is not listed.
Nothing is fetched, and nothing is written.
"""

from __future__ import annotations

from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.inputs.fetch import Fetcher
from agentrc.patterns import pattern
from agentrc.portable.semver import parse_version
from agentrc.sources.dsl import PATH, SourceError, parse
from agentrc.sources.lock import Entry, Lock

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Tuple

    from agentrc.portable.semver import Key


TAGS = "refs/tags/"
HEADS = "refs/heads/"
_SHORT = pattern(r"v?(0|[1-9][0-9]{0,8})(?:\.(0|[1-9][0-9]{0,8}))?")
_RELEASE: Tuple[Tuple[int, object], ...] = ((2, ""),)  # semver's key of a release (no pre-release)


@dataclass(frozen=True)
class Outdated:
    """One locked (source, ref): what its remote has now. `kind` is "branch", "tag", "head"
    (no ref: the remote's default branch) or "commit"; `latest` is the commit the ref names
    now (a branch, HEAD, a moved tag); `newer_tags` the higher tags, lowest first."""

    source: str
    label: str  # the locator as written back: SOURCE@REF#SUBPATH
    ref: Optional[str]
    commit: Optional[str]
    kind: str
    entries: Tuple[str, ...]
    latest: Optional[str] = None
    newer_tags: Tuple[str, ...] = ()

    @property
    def outdated(self) -> bool:
        return bool(self.newer_tags) or (self.latest is not None and self.latest != self.commit)

    def to_json(self) -> Dict[str, object]:
        return {"source": self.source, "label": self.label, "ref": self.ref, "commit": self.commit, "kind": self.kind,
                "entries": list(self.entries), "latest": self.latest, "newer_tags": list(self.newer_tags),
                "outdated": self.outdated}


def check(lock: Lock, fetcher: Fetcher) -> Tuple[Tuple[Outdated, ...], Tuple[Diagnostic, ...]]:
    """Every locked git (source, ref) as its remote has it now, in the lock's order; the
    problems (a remote git cannot list: AR201, an error; a ref the remote no longer has:
    AR201, a warning)."""
    diags = Diagnostics()
    groups: Dict[Tuple[str, Optional[str], Optional[str]], List[Entry]] = {}
    for e in lock.entries:
        groups.setdefault((e.source, e.ref, e.commit), []).append(e)
    listed: Dict[Tuple[str, str, str], Optional[Dict[str, str]]] = {}
    out: List[Outdated] = []
    for (name, ref, commit), group in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or "",
                                                                              kv[0][2] or "")):
        try:
            source = parse(name).at(ref)
        except SourceError as exc:
            diags.error(name, (0, 0), exc.code, str(exc))
            continue
        if source.kind == PATH:
            continue
        ids = tuple(sorted(e.id for e in group))
        if source.pinned:
            out.append(Outdated(name, source.label, ref, commit, "commit", ids))
            continue
        repo = (source.kind, source.location, "")
        if repo not in listed:  # one ls-remote per repository, whatever its subpaths and refs
            listed[repo] = fetcher.remote_refs(source, diags)
        refs = listed[repo]
        if refs is not None:
            got = _judge(name, source.label, ref, commit, ids, refs, diags)
            if got is not None:
                out.append(got)
    return tuple(out), diags.sorted()


def _judge(name: str, label: str, ref: Optional[str], commit: Optional[str], ids: Tuple[str, ...],
           refs: Dict[str, str], diags: Diagnostics) -> Optional[Outdated]:
    if ref is None:
        return Outdated(name, label, ref, commit, "head", ids, refs.get("HEAD"))
    if TAGS + ref in refs:
        return Outdated(name, label, ref, commit, "tag", ids, refs[TAGS + ref], newer_tags(ref, refs))
    if HEADS + ref in refs:
        return Outdated(name, label, ref, commit, "branch", ids, refs[HEADS + ref])
    diags.warning(name, (0, 0), "AR201", f"the remote has no branch or tag {ref!r} any more: 'agentrc outdated' "
                  "cannot tell what is newer (update NAME --ref REF moves the source to one it has)")
    return None


def version(tag: str) -> Optional[Key]:
    """The semantic version a tag names (`v1.2.3`, `1.2.3-rc.1`; `v2` and `v2.1` as 2.0.0
    and 2.1.0, as action-style tags are written); None for any other tag."""
    try:
        return parse_version(tag)
    except ValueError:
        m = _SHORT.fullmatch(tag)
        return (int(m.group(1)), int(m.group(2) or 0), 0, _RELEASE) if m else None


def newer_tags(ref: str, refs: Dict[str, str]) -> Tuple[str, ...]:
    """The remote's tags of higher semantic versions than `ref`, lowest first; none when
    `ref` is not a version. Pre-releases count only when `ref` is one."""
    locked = version(ref)
    if locked is None:
        return ()
    found = []
    for full in refs:
        tag = full[len(TAGS):] if full.startswith(TAGS) else None
        v = version(tag) if tag is not None else None
        if tag is not None and v is not None and v > locked and (v[3] == _RELEASE or locked[3] != _RELEASE):
            found.append((v, tag))
    return tuple(tag for _, tag in sorted(found))


def listing(results: Sequence[Outdated]) -> List[str]:
    """The text lines: one per outdated (source, ref)."""
    lines = []
    for r in results:
        if not r.outdated:
            continue
        label = r.label
        was = (r.commit or "")[:12]
        if r.newer_tags:
            moved = f"; the tag now names {r.latest[:12]}" if r.latest and r.latest != r.commit else ""
            lines.append(f"{label} ({was}): newer tags {', '.join(r.newer_tags)}{moved}")
        else:
            lines.append(f"{label} ({was}): {r.kind} now at {(r.latest or '')[:12]}")
    return lines
