"""Discovery and parsing: a SourceTree in, a Registry and diagnostics out (spec 001 §2–§5).

Discovery follows the spec exactly: the entrypoint filename alone decides the kind, a
directory may co-locate several kinds, bundles are found by their `.bundle.yaml` suffix
anywhere, and every file below an item directory (up to a nested item directory) is a
supporting resource of that item.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections import defaultdict
from typing import Any, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

import pathspec

from agentrc import SUPPORTED_SCHEMA, schemas

from agentrc.portable import body as body_rules

from agentrc.portable import directives
from agentrc.memo.cache import digest
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.families import OVERRIDE_CLIENTS
from agentrc.text.frontmatter import split
from agentrc.frozen import FrozenMap, freeze
from agentrc.text.markdown import prose, scan
from agentrc.model import (ENTRYPOINTS, KIND_BY_PLURAL, Bundle, BundleRef, HookSpec, Item, Kind, McpServer, Ref,
                           Registry, Resource, SourceFile, SourceTree)
from agentrc.text.yamlpos import Located, YamlError, load as load_yaml

NAME_RE = re.compile(r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$")
OVERRIDE_RE = re.compile(r"^(" + "|".join(k.name for k in Kind) + r")\.([^/]+)\.md$")
BUNDLE_SUFFIX = ".bundle.yaml"
DESCRIPTION_MAX = 1024
SKILL_DESCRIPTION_SOFT = 200

COMMON_FIELDS = ("schema", "name", "description", "license", "audience", "metadata", "requires", "ignore")
KIND_FIELDS = {
    Kind.RULE: ("scope",),
    Kind.SKILL: (),
    Kind.AGENT: ("mode", "model", "tools", "preload-skills"),
    Kind.COMMAND: ("argument-hint", "model", "tools", "agent"),
    Kind.HOOK: ("event", "script", "tools", "matcher", "timeout", "async"),
    Kind.CONTEXT: ("order",),
}
TOOL_EVENTS = ("PreToolUse", "PostToolUse")


def load_registry(tree: SourceTree, families: FrozenSet[str], passthrough: FrozenSet[str],
                  explicit: Iterable[str] = (), memo=None) -> Tuple[Registry, Tuple[Diagnostic, ...]]:
    """Parse every item and bundle in `tree`. `explicit` paths were named by the user:
    a bundle file among them must parse, where discovery would silently skip it (§2.2)."""
    diags = Diagnostics()
    loader = _Loader(tree, families, passthrough, diags, frozenset(explicit), memo)
    items = loader.items()
    bundles = loader.bundles()
    _check_duplicates(items, bundles, diags)
    registry = Registry(tuple(sorted(items, key=lambda i: (i.kind.value, i.name, i.entrypoint))),
                        tuple(sorted(bundles, key=lambda b: (b.name, b.path))))
    return registry, diags.sorted()


class _Loader:
    def __init__(self, tree: SourceTree, families: FrozenSet[str], passthrough: FrozenSet[str],
                 diags: Diagnostics, explicit: FrozenSet[str], memo=None):
        self.memo = memo
        # Items built from a canonical document have no directory: a `./script` in a hook
        # is a path from the project root, run as written.
        self.from_data = False
        self.files = {f.path: f for f in tree.files}
        self.families = families
        self.passthrough = passthrough
        self.diags = diags
        self.explicit = explicit
        self.item_dirs: Dict[str, List[str]] = defaultdict(list)  # dir -> entrypoint paths
        for path in self.files:
            if posixpath.basename(path) in ENTRYPOINTS:
                self.item_dirs[posixpath.dirname(path)].append(path)

    # --- text ---------------------------------------------------------------------
    def text(self, f: SourceFile) -> Optional[str]:
        try:
            return f.content.decode("utf-8").replace("\r\n", "\n").lstrip("\ufeff")
        except UnicodeDecodeError as exc:
            self.diags.error(f.path, (1, 1), "AR008", f"not UTF-8 (byte {exc.start})")
            return None

    # --- items --------------------------------------------------------------------
    def owner(self, path: str) -> Optional[str]:
        d = posixpath.dirname(path)
        while True:
            if d in self.item_dirs:
                return d
            parent = posixpath.dirname(d)
            if parent == d:  # '' for relative paths, '/' for absolute ones
                return None
            d = parent

    def items(self) -> List[Item]:
        members: Dict[str, List[SourceFile]] = defaultdict(list)
        for path, f in self.files.items():
            base = posixpath.basename(path)
            owner = self.owner(path)
            m = OVERRIDE_RE.match(base)
            if m and posixpath.dirname(path) not in self.item_dirs:
                self.diags.error(path, (1, 1), "AR016", f"override file without a {m.group(1)}.md beside it")
                continue
            if owner is not None:
                members[owner].append(f)
        out: List[Item] = []
        for d in sorted(self.item_dirs):
            out.extend(self.parse_dir_memo(d, members[d]))
        return out

    def parse_dir_memo(self, d: str, files: List[SourceFile]) -> List[Item]:
        """parse_dir, reused when the directory's files are byte-identical to a previous run."""
        key = ("dir", d, digest(p for f in sorted(files, key=lambda f: f.path)
                               for p in (f.path.encode(), f.content, b"x" if f.executable else b"-",
                                         (f.link or "").encode())))
        if self.memo is not None:
            hit = self.memo.get(key)
            if hit is not None:
                self.diags.extend(hit[1])
                return list(hit[0])
        outer, self.diags = self.diags, Diagnostics()
        try:
            items = [dataclasses.replace(i, digest=key[2]) for i in self.parse_dir(d, files)]
            local = self.diags.items
        finally:
            self.diags = outer
        self.diags.extend(local)
        if self.memo is not None:
            self.memo.put(key, (tuple(items), tuple(local)))
        return items

    def parse_dir(self, d: str, files: List[SourceFile]) -> List[Item]:
        entry_names = {posixpath.basename(p) for p in self.item_dirs[d]}
        overrides: Dict[Kind, Dict[str, SourceFile]] = defaultdict(dict)
        resources: List[SourceFile] = []
        for f in files:
            rel = f.path[len(d) + 1:] if d else f.path
            m = OVERRIDE_RE.match(rel)
            if rel in entry_names:
                continue
            if m:
                kind = Kind(m.group(1).lower())
                allowed = sorted(set(OVERRIDE_CLIENTS) | set(self.families))
                if m.group(2) not in allowed:
                    self.diags.error(f.path, (1, 1), "AR041",
                                     f"override suffix {m.group(2)!r} is not one of {', '.join(allowed)}")
                elif kind.entrypoint not in entry_names:
                    self.diags.error(f.path, (1, 1), "AR016", f"override file without a {kind.entrypoint} beside it")
                else:
                    overrides[kind][m.group(2)] = f
                continue
            resources.append(f)
        colocated = len(entry_names) > 1
        out = []
        for entry in sorted(self.item_dirs[d]):
            kind = ENTRYPOINTS[posixpath.basename(entry)]
            item = self.parse_item(d, self.files[entry], kind, overrides[kind], resources, colocated)
            if item is not None:
                out.append(item)
        return out

    def parse_item(self, d: str, f: SourceFile, kind: Kind, override_files: Dict[str, SourceFile],
                   resource_files: List[SourceFile], colocated: bool) -> Optional[Item]:
        text = self.text(f)
        if text is None:
            return None
        parts = split(text)
        if parts.yaml_text is None or not parts.closed:
            self.diags.error(f.path, (1, 1), "AR002",
                             "missing frontmatter" if parts.yaml_text is None else "frontmatter is never closed with '---'")
            return None
        located = self.yaml(f.path, parts.yaml_text, parts.yaml_line - 1)
        if located is None:
            return None
        data = located.data
        if not self.schema_ok(f.path, data, located, kind.value):
            self.check_body(f.path, parts.body, parts.body_line)
            return None
        dir_name = posixpath.basename(d) if d else ""
        name = data.get("name", dir_name)
        self.check_name(f.path, located.pos(("name",)) if "name" in data else (1, 1), name, kind,
                        dir_name, "name" in data)
        self.check_description(f.path, located.pos(("description",)), data["description"], kind)
        self.check_fields(f.path, data, located, kind)
        readers = frozenset(data.get("audience", ())) & self.families or self.families
        blocks = self.check_body(f.path, parts.body, parts.body_line, readers, kind is Kind.COMMAND)
        overrides = {}
        for client, of in sorted(override_files.items()):
            ob = self.override_body(of, client)
            if ob is not None:
                overrides[client] = ob
        ignore = tuple(data.get("ignore", ()))
        spec = self.ignore_spec(f.path, located, ignore)
        bodies = [parts.body] + [b for b, _, _ in overrides.values()]
        if kind is Kind.HOOK and isinstance(data.get("script"), str) and data["script"].strip().startswith("./"):
            # A hook's script is one of its files even in a directory it shares (a link to it).
            bodies.append(f"[script]({data['script'].split()[0]})")
        resources = self.resources(d, f, kind, resource_files, spec, bodies, colocated, blocks)
        self.check_links(d, f.path, parts.body, parts.body_line, resource_files, resources)
        for client, (ob, opath, oline) in overrides.items():
            self.check_links(d, opath, ob, oline, resource_files, resources)
        return self.make_item(kind, name, d, f.path, data, located, parts.body, parts.body_line, blocks, overrides,
                              resources)

    def make_item(self, kind: Kind, name: str, d: str, path: str, data: Dict[str, Any], located: Located, body: str,
                  body_line: int, blocks: Tuple[directives.Block, ...], overrides: Dict[str, Any],
                  resources: Tuple[Resource, ...]) -> Item:
        """The Item of validated frontmatter `data` (both front doors end here)."""
        passthrough = {k: freeze(data[k]) for k in sorted(self.passthrough) if isinstance(data.get(k), dict)}
        known = set(COMMON_FIELDS) | set(KIND_FIELDS[kind]) | set(self.passthrough)
        extra = {k: v for k, v in data.items() if k not in known}
        tools = data.get("tools")
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
            requires=self.requires(data, located),
            ignore=tuple(data.get("ignore", ())),
            scope_paths=tuple(data.get("scope", {}).get("paths", ())) if kind is Kind.RULE else (),
            mode=data.get("mode"),
            model=data.get("model"),
            tools=tuple(tools) if tools is not None else None,
            preload_skills=tuple((s, located.pos(("preload-skills", i)))
                                 for i, s in enumerate(data.get("preload-skills", ()))),
            passthrough=FrozenMap(passthrough),
            extra=freeze(extra),
            overrides=FrozenMap(overrides),
            resources=resources,
            field_pos=FrozenMap((k[0], v) for k, v in located.key_pos.items() if len(k) == 1),
            blocks=blocks,
            hook=self.hook(path, data, located, resources) if kind is Kind.HOOK else None,
        )

    def hook(self, path: str, data: Dict[str, Any], located: Located, resources: Tuple[Resource, ...]) -> HookSpec:
        """The hook's command; a leading `./file` names a supporting file of the hook."""
        script = data["script"].strip()
        first, _, rest = script.partition(" ")
        script_file = None
        if first.startswith("./") and not self.from_data:
            rel = posixpath.normpath(first[2:])
            if rel.startswith("../"):
                self.diags.error(path, located.pos(("script",)), "AR050", f"script {first!r} leaves the item directory")
            elif rel not in {r.path for r in resources}:
                self.diags.error(path, located.pos(("script",)), "AR053",
                                 f"script {first!r} is not a file in the hook's directory")
            else:
                script_file = rel
        return HookSpec(event=data["event"], script=script, tools=tuple(data["tools"]) if "tools" in data else None,
                        matcher=data.get("matcher"), timeout=data.get("timeout"), run_async=bool(data.get("async", False)),
                        script_file=script_file, script_args=rest.strip() if script_file else "")

    def yaml(self, path: str, text: str, offset: int) -> Optional[Located]:
        try:
            located = load_yaml(text, offset)
        except YamlError as exc:
            self.diags.error(path, exc.pos, "AR001", exc.message)
            return None
        for key_path, pos in located.duplicates:
            self.diags.error(path, pos, "AR004", f"duplicate key {'.'.join(map(str, key_path))!r}")
        if not isinstance(located.data, dict):
            self.diags.error(path, (offset + 1, 1), "AR003",
                             f"expected a mapping, found {type(located.data).__name__ if located.data is not None else 'nothing'}")
            return None
        return located

    def schema_ok(self, path: str, data: Dict[str, Any], located: Located, definition: str) -> bool:
        ok = True
        version = data.get("schema")
        if isinstance(version, int) and not isinstance(version, bool) and version > SUPPORTED_SCHEMA:
            self.diags.error(path, located.pos(("schema",)), "AR005",
                             f"schema {version} requires a newer agentrc (this one supports schema {SUPPORTED_SCHEMA})")
            return False
        name = "bundle" if definition == "bundle" else "item"
        found = schemas.errors(name, data, "" if definition == "bundle" else definition)
        for err in sorted(found, key=lambda e: list(map(str, e.absolute_path))):
            ok = False
            err = _deepest(err)
            where = tuple(err.absolute_path)
            if err.validator == "required":
                missing = err.message.split("'")[1] if "'" in err.message else err.message
                where_text = ".".join(map(str, where))
                field = f"{where_text}.{missing}" if where_text else missing
                self.diags.error(path, located.pos(where), "AR006", f"{field}: required field is missing")
                continue
            field = ".".join(map(str, where)) or "(top level)"
            self.diags.error(path, located.pos(where), "AR006", f"{field}: {err.message}")
        return ok

    def check_name(self, path: str, pos: Tuple[int, int], name: Any, kind: Kind, dir_name: str,
                   declared: bool) -> None:
        if len(name) > 64:
            self.diags.error(path, pos, "AR011", f"name {name!r} has {len(name)} characters (at most 64)")
        if not NAME_RE.match(name) or (kind is Kind.SKILL and "--" in name):
            origin = "" if declared else " (taken from the directory name)"
            self.diags.error(path, pos, "AR010", f"invalid name {name!r}{origin}")
        if kind is Kind.SKILL and declared and name != dir_name:
            self.diags.error(path, pos, "AR012", f"skill name {name!r} differs from its directory {dir_name!r}")

    def check_description(self, path: str, pos: Tuple[int, int], text: str, kind: Kind) -> None:
        if len(text) > DESCRIPTION_MAX:
            self.diags.error(path, pos, "AR014", f"description has {len(text)} characters (at most {DESCRIPTION_MAX})")
        elif kind is Kind.SKILL and len(text) > SKILL_DESCRIPTION_SOFT:
            self.diags.warning(path, pos, "AR015",
                               f"skill description has {len(text)} characters (aim for ~{SKILL_DESCRIPTION_SOFT})")

    def check_fields(self, path: str, data: Dict[str, Any], located: Located, kind: Kind) -> None:
        for i, fam in enumerate(data.get("audience", ())):
            if fam not in self.families:
                self.diags.error(path, located.pos(("audience", i)), "AR006",
                                 f"audience: unknown client {fam!r} (known: {', '.join(sorted(self.families))})")
        for block in sorted(self.passthrough):
            if block in data and not isinstance(data[block], dict):
                self.diags.error(path, located.pos((block,)), "AR006", f"{block}: passthrough block must be a mapping")
        if kind is Kind.SKILL:
            return  # unknown skill fields pass through to clients (spec §3.3)
        known = set(COMMON_FIELDS) | set(KIND_FIELDS[kind]) | set(self.passthrough)
        for key in data:
            if key not in known:
                self.diags.warning(path, located.pos((key,)), "AR007",
                                   f"unknown {kind.value} field {key!r} is ignored")
        if kind is Kind.HOOK and data.get("event") not in TOOL_EVENTS:
            for key in ("tools", "matcher"):
                if key in data:
                    self.diags.warning(path, located.pos((key,)), "AR082",
                                       f"{key}: only {' and '.join(TOOL_EVENTS)} hooks match tools; "
                                       f"it is ignored for {data.get('event')}")
        if kind in (Kind.AGENT, Kind.COMMAND, Kind.HOOK):
            from agentrc.vocabulary import TOOLS, check_model

            for i, tool in enumerate(data.get("tools", ())):
                if tool not in TOOLS:
                    self.diags.error(path, located.pos(("tools", i)), "AR080",
                                     f"unknown tool {tool!r} (vocabulary: {', '.join(TOOLS)})")
            if "model" in data and not check_model(data["model"]):
                self.diags.warning(path, located.pos(("model",)), "AR081",
                                   f"model {data['model']!r} is neither a portable alias nor a provider/model id; "
                                   "each client's fidelity report says what it made of it")

    def check_body(self, path: str, body: str, line0: int, readers: Optional[FrozenSet[str]] = None,
                   arguments: bool = False) -> Tuple[directives.Block, ...]:
        """Validate a canonical body; `readers` are the families its audience lets read it."""
        blocks = directives.parse(body, self.families, self.diags, path, line0)
        body_rules.check(body, path, line0, self.diags, blocks, readers or self.families, arguments=arguments)
        return blocks

    def override_body(self, f: SourceFile, client: str) -> Optional[Tuple[str, str, int]]:
        text = self.text(f)
        if text is None:
            return None
        parts = split(text)
        if parts.yaml_text is not None:
            self.diags.error(f.path, (1, 1), "AR040", "override files hold body content only")
            return None
        body = text.strip("\n")
        line0 = 1 + (len(text) - len(text.lstrip("\n")))
        for ln in prose(scan(body)):
            if directives.OPEN_RE.match(ln.text) or directives.END_RE.match(ln.text):
                self.diags.error(f.path, (line0 + ln.index, 1), "AR034",
                                 f"directive in an override file: the whole file is already {client}-only")
        body_rules.check(body, f.path, line0, self.diags, (), self.families, reader=client)
        return (body, f.path, line0)

    def ignore_spec(self, path: str, located: Located, patterns: Sequence[str]) -> Optional[pathspec.PathSpec]:
        if not patterns:
            return None
        good = []
        for i, pat in enumerate(patterns):
            try:
                pathspec.GitIgnoreSpec.from_lines([pat])
                good.append(pat)
            except Exception as exc:  # pathspec raises several types for bad patterns
                self.diags.error(path, located.pos(("ignore", i)), "AR052", f"ignore pattern {pat!r}: {exc}")
        return pathspec.GitIgnoreSpec.from_lines(good)

    def resources(self, d: str, entry: SourceFile, kind: Kind, files: List[SourceFile],
                  spec: Optional[pathspec.PathSpec], bodies: List[str], colocated: bool,
                  blocks: Tuple[directives.Block, ...]) -> Tuple[Resource, ...]:
        referenced: Optional[Set[str]] = None
        if colocated and kind is not Kind.SKILL:
            # Shared directory: rules and agents take only what their bodies link to (§2.4).
            referenced = {ln.path for b in bodies for ln in body_rules.links(b) if not ln.escapes}
        out = []
        for f in files:
            rel = f.path[len(d) + 1:] if d else f.path
            if spec is not None and spec.match_file(rel):
                continue
            if referenced is not None and not any(rel == r or rel.startswith(r.rstrip("/") + "/") for r in referenced):
                continue
            if f.link is not None and not _inside(f.link, d):
                self.diags.error(f.path, (0, 0), "AR050", f"symlink points outside the item directory ({f.link})")
                continue
            out.append(Resource(rel, f.content, f.executable))
        return tuple(sorted(out, key=lambda r: r.path))

    def check_links(self, d: str, path: str, body: str, line0: int, files: List[SourceFile],
                    resources: Tuple[Resource, ...]) -> None:
        present = {r.path for r in resources}
        in_dir = {(f.path[len(d) + 1:] if d else f.path) for f in files}
        in_dir |= {posixpath.basename(p) for p in self.item_dirs[d]}
        for link in body_rules.links(body):
            pos = (line0 + link.line, link.col + 1)
            if link.escapes:
                self.diags.error(path, pos, "AR050", f"link {link.target!r} leaves the item directory")
                continue
            target = link.path
            if target == "." or target in present or any(p.startswith(target + "/") for p in present):
                continue
            if target in in_dir or any(p.startswith(target + "/") for p in in_dir):
                if target not in {posixpath.basename(p) for p in self.item_dirs[d]}:
                    self.diags.warning(path, pos, "AR051", f"link {link.target!r} targets a file excluded by ignore:")
                continue
            self.diags.warning(path, pos, "AR051", f"link {link.target!r} targets a missing file")

    def requires(self, data: Dict[str, Any], located: Located) -> Tuple[Ref, ...]:
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

    # --- bundles ------------------------------------------------------------------
    def bundles(self) -> List[Bundle]:
        out = []
        for path in sorted(self.files):
            if not path.endswith(BUNDLE_SUFFIX):
                continue
            bundle = self.parse_bundle(self.files[path], path in self.explicit)
            if bundle is not None:
                out.append(bundle)
        return out

    def parse_bundle(self, f: SourceFile, explicit: bool) -> Optional[Bundle]:
        text = self.text(f)
        if text is None:
            return None
        if not explicit:
            # Discovery gate (§2.2): YAML without an integer schema is not a bundle.
            try:
                probe = load_yaml(text)
            except YamlError:
                return None
            if not isinstance(probe.data, dict) or not isinstance(probe.data.get("schema"), int):
                return None
        located = self.yaml(f.path, text, 0)
        if located is None or not self.schema_ok(f.path, located.data, located, "bundle"):
            return None
        data = located.data
        stem = posixpath.basename(f.path)[: -len(BUNDLE_SUFFIX)]
        if data["name"] != stem:
            self.diags.error(f.path, located.pos(("name",)), "AR060",
                             f"bundle name {data['name']!r} differs from the file stem {stem!r}")
        items = []
        for plural, names in (data.get("items") or {}).items():
            for i, n in enumerate(names):
                items.append(Ref(KIND_BY_PLURAL[plural], n, located.pos(("items", plural, i))))
        requires = tuple(BundleRef(r["name"], located.pos(("requires", i)), r.get("version"), r.get("source"))
                         for i, r in enumerate(data.get("requires") or ()))
        return Bundle(
            name=data["name"], path=f.path, schema=data["schema"], description=data["description"],
            items=tuple(items), requires=requires, license=data.get("license"),
            metadata=freeze(data.get("metadata", {})), plugins=freeze(data.get("plugins", {})),
            mcps=freeze(data.get("mcps", {})),
            servers=tuple(_server(name, entry, data["name"], f.path, located.pos(("mcps", name)))
                          for name, entry in sorted((data.get("mcps") or {}).items())),
        )


def _server(name: str, entry: Dict[str, Any], bundle: str, path: str, pos: Tuple[int, int]) -> McpServer:
    local, remote = entry.get("local"), entry.get("remote")
    common = dict(name=name, bundle=bundle, path=path, pos=pos, requires_env=tuple(entry.get("requires-env", ())),
                  fields=freeze(entry))
    if local is not None:
        return McpServer(transport="stdio", command=local["command"], args=tuple(local.get("args", ())),
                         env=freeze(local.get("env", {})), **common)
    return McpServer(transport=remote["type"], url=remote["url"], headers=freeze(remote.get("headers", {})), **common)


def _deepest(err):
    """For oneOf/anyOf failures, the sub-error that went deepest is the useful one."""
    while err.context:
        err = max(err.context, key=lambda e: (len(e.absolute_path), -len(e.message)))
    return err


def _inside(target: str, d: str) -> bool:
    if not d:
        return not target.startswith(("/", "../"))
    return target == d or target.startswith(d + "/")


def _check_duplicates(items: List[Item], bundles: List[Bundle], diags: Diagnostics) -> None:
    seen: Dict[Tuple[Kind, str], Item] = {}
    for item in sorted(items, key=lambda i: i.entrypoint):
        first = seen.setdefault(item.key, item)
        if first is not item:
            diags.error(item.entrypoint, (1, 1), "AR013",
                        f"{item.label} is also defined by {first.entrypoint}")
    seen_b: Dict[str, Bundle] = {}
    for b in sorted(bundles, key=lambda b: b.path):
        first_b = seen_b.setdefault(b.name, b)
        if first_b is not b:
            diags.error(b.path, (1, 1), "AR064", f"bundle {b.name} is also defined by {first_b.path}")


def items_from_data(entries: Sequence[Tuple[Kind, str, str, str, Dict[str, Any], str, Tuple[Resource, ...]]],
                    families: FrozenSet[str], passthrough: FrozenSet[str]) -> Tuple[List[Item], Tuple[Diagnostic, ...]]:
    """Items from already-parsed data (the canonical document's front door): each entry is
    (kind, name, directory, source path, portable frontmatter, body, resources). They go
    through the same schema, name, field and body checks as items read from entrypoints."""
    diags = Diagnostics()
    loader = _Loader(SourceTree(()), families, passthrough, diags, frozenset())
    loader.from_data = True
    out = []
    for kind, name, d, path, data, body, resources in entries:
        located = Located(data)
        if not loader.schema_ok(path, data, located, kind.value):
            continue
        loader.check_name(path, (1, 1), name, kind, name, False)
        loader.check_description(path, (1, 1), data["description"], kind)
        loader.check_fields(path, data, located, kind)
        readers = frozenset(data.get("audience", ())) & families or families
        blocks = loader.check_body(path, body, 1, readers, kind is Kind.COMMAND)
        out.append(loader.make_item(kind, name, d, path, data, located, body, 1, blocks, {}, tuple(resources)))
    return out, diags.sorted()
