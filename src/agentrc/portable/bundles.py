"""Bundles (spec 001 §5): `*.bundle.yaml` files in, `Bundle`s with their MCP servers out.

Enters: the tree's `SourceFile`s by path and the paths the user named explicitly.
Leaves: one `Bundle` per bundle file that parses (its item and bundle references, its
`McpServer`s) and diagnostics appended to the caller's collector. Discovery is by suffix
anywhere in the tree; a discovered file without an integer `schema` is not a bundle and is
skipped silently (one whose YAML exceeds a parse bound is AR009, not skipped), while an
explicitly named one must parse (§2.2). It exists apart from items because a bundle has
no directory, body or resources: only YAML and references.
"""

from __future__ import annotations

from agentrc.diagnostics import Diagnostics
from agentrc.frozen import freeze
from agentrc.model import KIND_BY_PLURAL, Bundle, BundleRef, McpServer, Ref, SourceFile
from agentrc.names import bundle_stem, is_bundle_file
from agentrc.portable import checks
from agentrc.text.yamlpos import YamlError
from agentrc.text.yamlpos import load as load_yaml

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Tuple


def load_bundles(files: Mapping[str, SourceFile], explicit: FrozenSet[str], diags: Diagnostics) -> List[Bundle]:
    """Every bundle of the tree, in path order."""
    out = []
    for path in sorted(files):
        if not is_bundle_file(path):
            continue
        bundle = parse_bundle(files[path], path in explicit, diags)
        if bundle is not None:
            out.append(bundle)
    return out


def is_bundle_text(text: str) -> bool:
    """The discovery gate (§2.2): a discovered `*.bundle.yaml` is a bundle only when it is YAML
    holding a mapping with an integer `schema`; anything else is skipped silently. `pants
    tailor` asks the same question (`is_bundle_content`) before proposing a target.

    A document the parser stopped reading at one of its bounds (AR009: aliases that copy too
    much, nesting too deep) passes the gate: whether it holds a `schema` cannot be told
    without reading past the bound, and skipping it silently would make a bundle vanish
    from `lint`'s count with 0 errors. Parsed as a bundle, it is reported AR009 at its path."""
    try:
        probe = load_yaml(text)
    except YamlError as exc:
        return bool(exc.code)
    if not isinstance(probe.data, dict):
        return False
    schema = probe.data.get("schema")
    return isinstance(schema, int) and not isinstance(schema, bool)


def is_bundle_content(content: bytes) -> bool:
    """`is_bundle_text` of a file's bytes; bytes that are not UTF-8 are no bundle to discover."""
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return is_bundle_text(text.replace("\r\n", "\n").lstrip("\ufeff"))


def parse_bundle(f: SourceFile, explicit: bool, diags: Diagnostics) -> Optional[Bundle]:
    text = checks.decode(f, diags)
    if text is None:
        return None
    if not explicit and not is_bundle_text(text):
        return None
    located = checks.parse_yaml(f.path, text, 0, diags)
    if located is None or not checks.schema_ok(f.path, located.data, located, "bundle", diags):
        return None
    data = located.data
    stem = bundle_stem(f.path)
    if data["name"] != stem:
        diags.error(f.path, located.pos(("name",)), "AR060",
                    f"bundle name {data['name']!r} differs from the file stem {stem!r}")
    items = []
    for plural, names in (data.get("items") or {}).items():
        for i, n in enumerate(names):
            items.append(Ref(KIND_BY_PLURAL[plural], n, located.pos(("items", plural, i))))
    requires = tuple(BundleRef(r["name"], located.pos(("requires", i)), r.get("version"), r.get("source"))
                     for i, r in enumerate(data.get("requires") or ()))
    _ambiguous_plugins(f.path, data.get("plugins") or {}, located, diags)
    return Bundle(
        name=data["name"], path=f.path, schema=data["schema"], description=data["description"],
        items=tuple(items), requires=requires, license=data.get("license"),
        metadata=freeze(data.get("metadata", {})), plugins=freeze(data.get("plugins", {})),
        mcps=freeze(data.get("mcps", {})),
        servers=tuple(_server(name, entry, data["name"], f.path, located.pos(("mcps", name)))
                      for name, entry in sorted((data.get("mcps") or {}).items())),
    )


# The fields that decide a plugin descriptor's form (spec 001 §3.7), in the order they win.
PLUGIN_FORMS = (("auto-install", ("source", "marketplace", "plugin")), ("config-write", ("plugin_uri",)),
                ("instructions-only", ("instructions_url", "summary")))


def _ambiguous_plugins(path: str, plugins: Dict[str, Any], located, diags: Diagnostics) -> None:
    """A descriptor holding the fields of two forms installs as the first (auto-install wins);
    the spec asks lint to say so (AR213)."""
    for name, clients in sorted(plugins.items()):
        for client, d in sorted((clients or {}).items()):
            if not isinstance(d, dict):
                continue
            forms = [form for form, keys in PLUGIN_FORMS if any(k in d for k in keys)]
            if len(forms) > 1:
                diags.warning(path, located.pos(("plugins", name, client)), "AR213",
                              f"plugin {name} for {client} has the fields of {' and '.join(forms)} descriptors; "
                              f"it is installed as {forms[0]}")


def _server(name: str, entry: Dict[str, Any], bundle: str, path: str, pos: Tuple[int, int]) -> McpServer:
    """One `mcps:` entry of a bundle: a local (stdio) or a remote server."""
    local, remote = entry.get("local"), entry.get("remote")
    common = dict(name=name, bundle=bundle, path=path, pos=pos, requires_env=tuple(entry.get("requires-env", ())),
                  fields=freeze(entry))
    if local is not None:
        return McpServer(transport="stdio", command=local["command"], args=tuple(local.get("args", ())),
                         env=freeze(local.get("env", {})), **common)
    assert remote is not None  # the bundle schema (checked) requires local or remote
    return McpServer(transport=remote["type"], url=remote["url"], headers=freeze(remote.get("headers", {})), **common)
