"""Discovery and parsing: a SourceTree in, a Registry and diagnostics out (spec 001 §2–§5).

The entry point, and the only module here that knows the order of the steps: `discovery`
finds the item directories and sorts their files, `items` parses each entrypoint (running
`checks`) into an `Item`, `bundles` parses the `.bundle.yaml` files; then duplicates are
reported and everything is sorted into a `Registry`. An item directory whose files are
byte-identical to a previous run is taken from the memo (items and diagnostics) instead.
"""

from __future__ import annotations

import posixpath

from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.fingerprint import digest
from agentrc.model import ENTRYPOINTS, Bundle, ClientNames, Item, Kind, Registry, SourceFile, SourceTree
from agentrc.names import is_registry_marker
from agentrc.portable import checks, discovery
from agentrc.portable.bundles import load_bundles
from agentrc.portable.items import parse_item

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, FrozenSet, Iterable, List, Mapping, Sequence, Tuple


def load_registry(tree: SourceTree, clients: ClientNames, explicit: Iterable[str] = (),
                  memo=None) -> Tuple[Registry, Tuple[Diagnostic, ...]]:
    """Parse every item and bundle in `tree`. `explicit` paths were named by the user:
    a bundle file among them must parse, where discovery would silently skip it (§2.2)."""
    diags = Diagnostics()
    named = frozenset(explicit)
    files = {f.path: f for f in tree.files if not is_registry_marker(f.path)}
    markers = [f for f in tree.files if is_registry_marker(f.path)]
    for marker in markers:
        _check_marker(marker, diags)
    roots = discovery.registry_roots(f.path for f in markers)
    items = _items(files, clients.families, clients.blocks, diags, memo)
    bundles = load_bundles(files, named, diags)
    _check_duplicates(items, bundles, roots, diags)
    registry = Registry(tuple(sorted(items, key=lambda i: (i.kind.value, i.name, i.entrypoint))),
                        tuple(sorted(bundles, key=lambda b: (b.name, b.path))), roots=roots)
    return registry, diags.sorted()


def _check_marker(f: SourceFile, diags: Diagnostics) -> None:
    """A registry marker is a YAML mapping with `schema: 1` (and an optional `description`);
    whatever it holds, its directory is a registry root."""
    text = checks.decode(f, diags)
    if text is None:
        return
    located = checks.parse_yaml(f.path, text, 0, diags)
    if located is not None:
        checks.schema_ok(f.path, located.data, located, "registry", diags)


def _items(files: Mapping[str, SourceFile], families: FrozenSet[str], passthrough: Sequence[str],
           diags: Diagnostics, memo) -> List[Item]:
    dirs = discovery.item_dirs(files)
    members = discovery.members(files, dirs, diags)
    out: List[Item] = []
    for d in sorted(dirs):
        out.extend(_parse_dir_memo(d, dirs[d], members[d], families, passthrough, diags, memo))
    return out


def _parse_dir_memo(d: str, entrypoints: Sequence[str], files: List[SourceFile], families: FrozenSet[str],
                    passthrough: Sequence[str], diags: Diagnostics, memo) -> List[Item]:
    """_parse_dir, reused when the directory's files are byte-identical to a previous run."""
    # By each file's sha256, not its bytes: a file the source stamp vouches for is not read.
    key = ("dir", d, digest(p for f in sorted(files, key=lambda f: f.path)
                           for p in (f.path.encode(), f.sha256(), b"x" if f.executable else b"-",
                                     (f.link or "").encode())))
    if memo is not None:
        hit = memo.get(key)
        if hit is not None:
            diags.extend(hit[1])
            _release(files)
            return list(hit[0])
    local = Diagnostics()
    # The digest goes in as each Item is made (a `dataclasses.replace` per item cost a second
    # construction of every Item, 8% of parsing).
    items = _parse_dir(d, entrypoints, files, families, passthrough, local, key[2])
    diags.extend(local.items)
    if memo is not None:
        memo.put(key, (tuple(items), tuple(local.items)))
        _release(files)
    return items


def _release(files: Sequence[SourceFile]) -> None:
    """A build (the one caller with a memo) is done with a directory's bytes once its items
    are parsed: the items hold their bodies (and supporting files) from here on, and the
    sources need not stay beside them until the output is written (an entrypoint's bytes
    were a tenth of a cold build's memory at 5,000 items). `lint` (no memo) reads them
    again, for the formatting check, and keeps them."""
    for f in files:
        f.release()


def _parse_dir(d: str, entrypoints: Sequence[str], files: List[SourceFile], families: FrozenSet[str],
               passthrough: Sequence[str], diags: Diagnostics, dir_digest: str = "") -> List[Item]:
    """The items of directory `d`, each with `dir_digest` (the memo key's digest of its files)."""
    where = discovery.item_dir(d, entrypoints, files, families, diags)
    out = []
    for entry in where.entrypoints:
        item = parse_item(where, entry, ENTRYPOINTS[posixpath.basename(entry.path)], families, passthrough, diags,
                          dir_digest)
        if item is not None:
            out.append(item)
    return out


def _check_duplicates(items: List[Item], bundles: List[Bundle], roots: Sequence[str], diags: Diagnostics) -> None:
    """Names are unique within a registry; two registries may reuse them (issue 10 point 14)."""
    seen: Dict[Tuple[str, Kind, str], Item] = {}
    for item in sorted(items, key=lambda i: i.entrypoint):
        first = seen.setdefault((discovery.registry_of(item.directory, roots),) + item.key, item)
        if first is not item:
            diags.error(item.entrypoint, (1, 1), "AR013",
                        f"{item.label} is also defined by {first.entrypoint}")
    seen_b: Dict[Tuple[str, str], Bundle] = {}
    for b in sorted(bundles, key=lambda b: b.path):
        first_b = seen_b.setdefault((discovery.registry_of(posixpath.dirname(b.path), roots), b.name), b)
        if first_b is not b:
            diags.error(b.path, (1, 1), "AR064", f"bundle {b.name} is also defined by {first_b.path}")
