"""Items (spec 001 §3): an entrypoint file, or already-parsed frontmatter, in; an `Item` out.

Enters: for `parse_item`, one entrypoint `SourceFile` of an `ItemDir` (from `discovery`);
for `make_item`, frontmatter data that has passed `checks`, with its body, directive
blocks, override bodies and resources. Leaves: the frozen `Item` of `agentrc.model` (with
its `HookSpec` and `requires` refs) and diagnostics appended to the caller's collector.

`parse_item` is the item-directory front door: it reads the file and runs, in order, the
frontmatter and body checks, the override files, `ignore:`, resources and links, then
`make_item`. The canonical document (`canonical.document`) is the other front door: it
runs the same `checks` on its own data and ends in `make_item` too. This module exists so
that both build an Item the same way.
"""

from __future__ import annotations

import posixpath

from agentrc.diagnostics import Diagnostics
from agentrc.frozen import FrozenMap, freeze
from agentrc.model import HOOK_RUNNERS, KIND_BY_PLURAL, HookSpec, Item, Kind, Ref, Resource, SourceFile
from agentrc.patterns import pattern
from agentrc.portable import checks, directives, discovery
from agentrc.text.frontmatter import Split, split
from agentrc.text.markdown import Scanned
from agentrc.text.yamlpos import Located

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Collection, Dict, FrozenSet, Optional, Sequence, Tuple


def parse_item(where: discovery.ItemDir, f: SourceFile, kind: Kind, families: FrozenSet[str],
               passthrough: Sequence[str], diags: Diagnostics, digest: str = "") -> Optional[Item]:
    """The item of entrypoint `f` in directory `where`, or None when its frontmatter is unusable.
    `digest`: the digest of the directory's files, kept on the Item (the render memo's key)."""
    d = where.path
    text = checks.decode(f, diags)
    if text is None:
        return None
    parts = split_entrypoint(text)
    if parts.yaml_text is None or not parts.closed:
        diags.error(f.path, (1, 1), "AR002",
                    "missing frontmatter" if parts.yaml_text is None else "frontmatter is never closed with '---'")
        return None
    located = checks.parse_yaml(f.path, parts.yaml_text, parts.yaml_line - 1, diags)
    if located is None:
        return None
    data = located.data
    if not checks.schema_ok(f.path, data, located, kind.value, diags, passthrough):
        checks.check_body(f.path, parts.body, parts.body_line, families, diags, kind=kind)
        return None
    dir_name = posixpath.basename(d) if d else ""
    name = data.get("name", dir_name)
    checks.check_name(f.path, located.pos(("name",)) if "name" in data else (1, 1), name, kind, dir_name,
                      "name" in data, diags)
    checks.check_description(f.path, located.pos(("description",)), data["description"], kind, diags)
    checks.check_fields(f.path, data, located, kind, families, passthrough, diags)
    readers = frozenset(data.get("audience", ())) & families or families
    scanned = Scanned(parts.body)
    blocks = checks.check_body(f.path, parts.body, parts.body_line, families, diags, readers, kind is Kind.COMMAND,
                               kind, scanned)
    overrides: Dict[str, Tuple[str, str, int]] = {}
    for client, of in sorted(where.overrides.get(kind, {}).items()):
        ob = checks.override_body(of, client, families, diags)
        if ob is not None:
            overrides[client] = ob
    spec = discovery.ignore_spec(f.path, located, tuple(data.get("ignore", ())), diags)
    bodies = [parts.body] + [b for b, _, _ in overrides.values()]
    if kind is Kind.HOOK and isinstance(data.get("script"), str) and data["script"].strip().startswith("./"):
        # A hook's script is one of its files even in a directory it shares (a link to it).
        bodies.append(f"[script]({data['script'].split()[0]})")
    resources = discovery.resources(where, kind, spec, bodies, diags)
    discovery.check_links(where, f.path, parts.body, parts.body_line, resources, diags, scanned)
    for client, (obody, opath, oline) in overrides.items():
        discovery.check_links(where, opath, obody, oline, resources, diags)
    script_file = hook_script(f.path, data, located, resources, diags) if kind is Kind.HOOK else None
    return make_item(kind, name, d, f.path, data, located, parts.body, parts.body_line, blocks, overrides,
                     resources, passthrough, script_file, digest)


# The line closing the frontmatter (`---` or `...`, then only whitespace) and the blank
# lines `split` leaves out of the body, found in the text itself. `\s` is `str.isspace`,
# what `split`'s strip and rstrip take away.
_CLOSING_RE = pattern(r"\n(?:---|\.\.\.)[^\S\n]*(?=\n|\Z)")
_BLANK_LINES_RE = pattern(r"(?:[^\S\n]*\n)*")


def split_entrypoint(text: str) -> Split:
    """`frontmatter.split(text)`, without a string per line for a file that starts with a
    '---' line of its own and closes its frontmatter (every entrypoint that parses): two
    searches and three slices instead of splitting the file into lines and joining the
    body again. Anything else is `split`'s."""
    if not text.startswith("---\n"):
        return split(text)
    m = _CLOSING_RE.search(text, 3)
    if m is None:
        return split(text)
    yaml_text = text[4:m.start()] + "\n"
    blank = _BLANK_LINES_RE.match(text, m.end() + 1)  # past the closing line's newline, if any
    start = blank.end() if blank is not None else len(text)
    rest = text[start:]
    if not rest.strip() and "\n" not in rest:  # only blank lines after the frontmatter
        return Split(yaml_text, 2, "", text.count("\n") + 2)  # the line after the last
    return Split(yaml_text, 2, rest, text.count("\n", 0, start) + 1)


def make_item(kind: Kind, name: str, d: str, path: str, data: Dict[str, Any], located: Located, body: str,
              body_line: int, blocks: Tuple[directives.Block, ...], overrides: Dict[str, Any],
              resources: Tuple[Resource, ...], passthrough: Collection[str],
              script_file: Optional[str] = None, digest: str = "") -> Item:
    """The Item of checked frontmatter `data` (both front doors end here). `script_file` is
    the supporting file a hook's command runs (`hook_script`), if any; `digest` the digest
    of the item directory's files, if it has one."""
    passthrough_blocks = {k: freeze(data[k]) for k in sorted(passthrough) if isinstance(data.get(k), dict)}
    known = set(checks.COMMON_FIELDS) | set(checks.KIND_FIELDS[kind]) | set(passthrough)
    extra = {k: v for k, v in data.items() if k not in known}
    # A field of another kind (a context's `tools: 1`) is unchecked, AR007 says it is ignored: so it is.
    fields = checks.KIND_FIELDS[kind]
    tools = data.get("tools") if "tools" in fields else None
    preload = data.get("preload-skills", ()) if "preload-skills" in fields else ()
    return Item(
        kind=kind,
        name=name,
        directory=d,
        entrypoint=path,
        schema=data.get("schema", 1),
        description=data["description"],
        body=body,
        body_line=body_line,
        fields=freeze(data),
        license=data.get("license"),
        audience=tuple(data.get("audience", ())),
        metadata=freeze(data.get("metadata", {})),
        requires=requires(data, located),
        ignore=tuple(data.get("ignore", ())),
        scope_paths=tuple(data.get("scope", {}).get("paths", ())) if kind is Kind.RULE else (),
        mode=data.get("mode"),
        model=data.get("model"),
        tools=tuple(tools) if tools is not None else None,
        preload_skills=tuple((s, located.pos(("preload-skills", i)))
                             for i, s in enumerate(preload)),
        passthrough=FrozenMap(passthrough_blocks),
        extra=freeze(extra),
        overrides=FrozenMap(overrides),
        resources=resources,
        field_pos=FrozenMap((k[0], v) for k, v in located.key_pos.items() if len(k) == 1),
        blocks=blocks,
        hook=hook_spec(data, script_file) if kind is Kind.HOOK else None,
        digest=digest,
    )


def hook_script(path: str, data: Dict[str, Any], located: Located, resources: Tuple[Resource, ...],
                diags: Diagnostics) -> Optional[str]:
    """The supporting file a hook's leading `./file` names: it must be one of the hook's
    resources (AR050 when it leaves the directory, AR053 when it is not there). After a
    runner (`python3 ./check.py`) the file is the script file only when the directory holds
    it: otherwise the command runs as written (a path from the project root)."""
    runner, first, _ = split_script(data["script"])
    if not first.startswith("./"):
        return None
    rel = posixpath.normpath(first[2:])
    if runner and rel not in {r.path for r in resources}:
        return None
    if rel.startswith("../"):
        diags.error(path, located.pos(("script",)), "AR050", f"script {first!r} leaves the item directory")
        return None
    if rel not in {r.path for r in resources}:
        diags.error(path, located.pos(("script",)), "AR053", f"script {first!r} is not a file in the hook's directory")
        return None
    return rel


def split_script(script: str) -> Tuple[str, str, str]:
    """A hook command as (runner, first word after it, the rest): `python3 ./x.py -q` ->
    ("python3", "./x.py", "-q"); without a runner, ("", first word, rest)."""
    first, _, rest = script.strip().partition(" ")
    if first in HOOK_RUNNERS:
        second, _, after = rest.strip().partition(" ")
        if second.startswith("./"):
            return first, second, after.strip()
    return "", first, rest.strip()


def hook_spec(data: Dict[str, Any], script_file: Optional[str]) -> HookSpec:
    """The hook's command; with a `script_file`, the rest of the command is its arguments."""
    script = data["script"].strip()
    runner, _, rest = split_script(script)
    return HookSpec(event=data["event"], script=script, tools=tuple(data["tools"]) if "tools" in data else None,
                    matcher=data.get("matcher"), timeout=data.get("timeout"), run_async=bool(data.get("async", False)),
                    script_file=script_file, script_args=rest if script_file else "", condition=data.get("if"),
                    runner=runner if script_file else "")


def requires(data: Dict[str, Any], located: Located) -> Tuple[Ref, ...]:
    """The items `requires:` names, each with its position."""
    out = []
    for plural, entries in (data.get("requires") or {}).items():
        kind = KIND_BY_PLURAL[plural]
        for i, entry in enumerate(entries):
            pos = located.pos(("requires", plural, i))
            if isinstance(entry, str):
                out.append(Ref(kind, entry, pos))
            else:
                out.append(Ref(kind, entry["name"], pos, entry.get("source")))
    return tuple(out)
