"""Discovery (spec 001 §2): which files of a tree make up which item, and what each item keeps.

Enters: the tree's `SourceFile`s by path. Leaves: the item directories (a directory is one
when it holds an entrypoint; the entrypoint filename alone decides the kind, and several
kinds may share a directory), each directory's files (every file below it, up to a nested
item directory) sorted into entrypoints, override files and candidate resources as an
`ItemDir`; then, per item, the `Resource`s it keeps and the checks of its body links.

It exists so that the rules of membership (overrides, `ignore:`, shared directories,
symlinks, links) live apart from what an item's fields mean (`checks`, `items`).
Diagnostics: AR016 and AR041 (override files), AR050 and AR051 (symlinks and links),
AR052 (ignore patterns).

It also holds the rule of registries (issue 10 point 14), shared by the CLI and the Pants
backend: a directory holding `agentrc-registry.yaml` is a registry root, every item and
bundle belongs to the nearest root above it (the unnamed registry "" when there is none),
names are unique per registry, and a `source:` that is a local path names another
registry's root, relative to the referencing registry's own root.
"""

from __future__ import annotations

import functools
import posixpath
from collections import defaultdict

from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostics
from agentrc.model import ENTRYPOINTS, Kind, Resource, SourceFile
from agentrc.names import is_registry_marker
from agentrc.patterns import pattern
from agentrc.portable import body as body_rules
from agentrc.text.lazy import lazy_module
from agentrc.text.markdown import Scanned
from agentrc.text.yamlpos import Located

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

    import pathspec
else:  # imported when an item has `ignore:` patterns: most have none
    pathspec = lazy_module("pathspec")

OVERRIDE_RE = pattern(r"^(" + "|".join(k.name for k in Kind) + r")\.([^/]+)\.md$")


@dataclass(frozen=True)
class ItemDir:
    """One item directory's files, sorted by role."""

    path: str  # '' for the root of the tree
    entrypoints: Tuple[SourceFile, ...]  # sorted by path; one per kind
    overrides: Mapping[Kind, Mapping[str, SourceFile]]  # kind -> client -> override file
    resources: Tuple[SourceFile, ...]  # every other file: what the items may keep as resources

    @property
    def entry_names(self) -> FrozenSet[str]:
        return frozenset(posixpath.basename(f.path) for f in self.entrypoints)

    @property
    def colocated(self) -> bool:
        """Several kinds share the directory."""
        return len(self.entrypoints) > 1

    def rel(self, f: SourceFile) -> str:
        return f.path[len(self.path) + 1:] if self.path else f.path


def item_dirs(paths: Iterable[str]) -> Dict[str, List[str]]:
    """Directory -> the entrypoint paths in it, in the order of `paths`."""
    out: Dict[str, List[str]] = defaultdict(list)
    for path in paths:
        if posixpath.basename(path) in ENTRYPOINTS:
            out[posixpath.dirname(path)].append(path)
    return dict(out)


def owner(path: str, dirs: Mapping[str, List[str]]) -> Optional[str]:
    """The nearest item directory above `path`, if any."""
    d = posixpath.dirname(path)
    while True:
        if d in dirs:
            return d
        parent = posixpath.dirname(d)
        if parent == d:  # '' for relative paths, '/' for absolute ones
            return None
        d = parent


def members(files: Mapping[str, SourceFile], dirs: Mapping[str, List[str]],
            diags: Diagnostics) -> Dict[str, List[SourceFile]]:
    """Item directory -> its files; an override file outside any item directory is AR016."""
    out: Dict[str, List[SourceFile]] = defaultdict(list)
    for path, f in files.items():
        base = posixpath.basename(path)
        d = owner(path, dirs)
        m = OVERRIDE_RE.match(base)
        if m and posixpath.dirname(path) not in dirs:
            diags.error(path, (1, 1), "AR016", f"override file without a {m.group(1)}.md beside it")
            continue
        if d is not None:
            out[d].append(f)
    return out


def item_dir(d: str, entrypoints: Sequence[str], files: Sequence[SourceFile], families: FrozenSet[str],
             diags: Diagnostics) -> ItemDir:
    """Sort the files of directory `d` (`entrypoints` among them) into an ItemDir."""
    entry_names = {posixpath.basename(p) for p in entrypoints}
    overrides: Dict[Kind, Dict[str, SourceFile]] = defaultdict(dict)
    resources: List[SourceFile] = []
    for f in files:
        rel = f.path[len(d) + 1:] if d else f.path
        m = OVERRIDE_RE.match(rel)
        if rel in entry_names:
            continue
        if m:
            kind = Kind(m.group(1).lower())
            allowed = sorted(families)
            if m.group(2) not in allowed:
                diags.error(f.path, (1, 1), "AR041",
                            f"override suffix {m.group(2)!r} is not one of {', '.join(allowed)}")
            elif kind.entrypoint not in entry_names:
                diags.error(f.path, (1, 1), "AR016", f"override file without a {kind.entrypoint} beside it")
            else:
                overrides[kind][m.group(2)] = f
            continue
        resources.append(f)
    by_path = {f.path: f for f in files}
    return ItemDir(d, tuple(by_path[p] for p in sorted(entrypoints)), dict(overrides), tuple(resources))


def ignore_spec(path: str, located: Located, patterns: Sequence[str],
                diags: Diagnostics) -> Optional[pathspec.PathSpec]:
    """The item's `ignore:` patterns as a spec; a bad pattern is AR052 and left out."""
    if not patterns:
        return None
    good = []
    for i, pat in enumerate(patterns):
        try:
            pathspec.GitIgnoreSpec.from_lines([pat])
            good.append(pat)
        except Exception as exc:  # pathspec raises several types for bad patterns
            diags.error(path, located.pos(("ignore", i)), "AR052", f"ignore pattern {pat!r}: {exc}")
    return pathspec.GitIgnoreSpec.from_lines(good)


def resources(where: ItemDir, kind: Kind, spec: Optional[pathspec.PathSpec], bodies: List[str],
              diags: Diagnostics) -> Tuple[Resource, ...]:
    """The supporting files one item of `where` keeps: not ignored, not a symlink out of the
    directory and, in a shared directory, linked from one of its `bodies` (skills keep all)."""
    referenced: Optional[Set[str]] = None
    if where.colocated and kind is not Kind.SKILL:
        # Shared directory: rules and agents take only what their bodies link to (§2.4).
        referenced = {ln.path for b in bodies for ln in body_rules.links(b) if not ln.escapes}
    out = []
    for f in where.resources:
        rel = where.rel(f)
        if spec is not None and spec.match_file(rel):
            continue
        if referenced is not None and not any(rel == r or rel.startswith(r.rstrip("/") + "/") for r in referenced):
            continue
        if f.link is not None and not _inside(f.link, where.path):
            diags.error(f.path, (0, 0), "AR050", f"symlink points outside the item directory ({f.link})")
            continue
        out.append(Resource(rel, f.content, f.executable))
    return tuple(sorted(out, key=lambda r: r.path))


def check_links(where: ItemDir, path: str, body: str, line0: int, kept: Tuple[Resource, ...],
                diags: Diagnostics, scanned: Optional[Scanned] = None) -> None:
    """Each relative link of `body` (from file `path`) must stay in the directory (AR050) and
    target a file the item keeps (AR051 for a missing or ignored one). `scanned`: the
    body's `Scanned`, when the caller has it already."""
    found = body_rules.links(body, scanned)
    if not found:
        return  # most bodies: no relative link, nothing to look up
    present = {r.path for r in kept}
    entry_names = where.entry_names
    in_dir = {where.rel(f) for f in where.resources}
    in_dir |= entry_names
    for link in found:
        pos = (line0 + link.line, link.col + 1)
        if link.escapes:
            diags.error(path, pos, "AR050", f"link {link.target!r} leaves the item directory")
            continue
        target = link.path
        if target == "." or target in present or any(p.startswith(target + "/") for p in present):
            continue
        if target in in_dir or any(p.startswith(target + "/") for p in in_dir):
            if target not in entry_names:
                diags.warning(path, pos, "AR051", f"link {link.target!r} targets a file excluded by ignore:")
            continue
        diags.warning(path, pos, "AR051", f"link {link.target!r} targets a missing file")


def _inside(target: str, d: str) -> bool:
    if not d:
        return not target.startswith(("/", "../"))
    return target == d or target.startswith(d + "/")


def registry_roots(paths: Iterable[str]) -> Tuple[str, ...]:
    """The registry roots among `paths`: the directory of each `agentrc-registry.yaml`, sorted."""
    return tuple(sorted({posixpath.dirname(p) for p in paths if is_registry_marker(p)}))


def registry_of(directory: str, roots: Iterable[str]) -> str:
    """The registry of a directory (an item directory, the directory of a bundle file): the
    nearest root at or above it, or "" (the unnamed registry) when there is none. Asked once
    per item by several passes: the answer for a directory is kept (`_registry_of`)."""
    roots = roots if isinstance(roots, tuple) else tuple(roots)
    if not roots:
        return ""
    return _registry_of(directory, roots)


@functools.lru_cache(maxsize=1 << 16)
def _registry_of(directory: str, roots: Tuple[str, ...]) -> str:
    found = set(roots)
    d = directory
    while True:
        if d in found:
            return d
        parent = posixpath.dirname(d)
        if parent == d:  # '' for relative paths, '/' for absolute ones
            return ""
        d = parent


def is_local_source(source: str) -> bool:
    """A `source:` locator that is a local path (spec 001 §3.7 reuses `upskill add`'s source
    DSL, where `owner/repo@ref` and URLs are the other forms): `./x`, `../x` or `/x`."""
    return source in (".", "..") or source.startswith(("./", "../", "/"))


def source_root(root: str, source: str, roots: Iterable[str]) -> Optional[str]:
    """The registry root that the local `source:` path names, read relative to the referencing
    registry's root `root` (an absolute path as it is); None when it names none of `roots`."""
    target = posixpath.normpath(source if source.startswith("/") else posixpath.join(root, source))
    for r in roots:
        if posixpath.normpath(r or ".") == target:
            return r
    return None
