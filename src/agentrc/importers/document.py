"""`agentrc import`: a project's existing client files -> a canonical document (spec 000)
-> portable items (spec 001).

`import_tree()` reads one client's files (the ones its adapter writes, and the forms people
write by hand) into a canonical document, reporting with AR130 what the canonical shapes
cannot hold and with AR131 what cannot be read. `portable_from_document()` writes any
canonical document as portable item directories plus `imported.bundle.yaml`, which lists the
items and holds the MCP servers. One importer module per client lives in
agentrc.importers, listed once in IMPORTERS. Pure: files in, files out.
"""

from __future__ import annotations

import base64
import posixpath
from typing import Any, Dict, FrozenSet, List, NamedTuple, Optional, Tuple

from agentrc.canonical.document import HOOK_TOOLS, _slug, skill_fields
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.importers import hookfiles
from agentrc.importers.base import EXECUTABLE, Importer, Reader
from agentrc.importers.claude import ClaudeImporter
from agentrc.importers.cleanup import clean_body, project_command
from agentrc.importers.codex import CodexImporter
from agentrc.importers.copilot import CopilotImporter
from agentrc.importers.cursor import CursorImporter
from agentrc.importers.opencode import OpencodeImporter
from agentrc.importers.shapes import CLIENT_VARS, ENV_REF_RE, glob_list
from agentrc.model import HOOK_EVENTS, MATCHER_EVENTS, TOOL_EVENTS, SourceFile, SourceTree
from agentrc.portable.fmt import key_order
from agentrc.text.cut import DESCRIPTION_LIMIT, shorten
from agentrc.text.yamlemit import dump_yaml

IMPORTERS: Dict[str, Importer] = {i.name: i for i in (
    ClaudeImporter(), CopilotImporter(), OpencodeImporter(), CursorImporter(), CodexImporter())}
BUNDLE = "imported.bundle.yaml"


def wants(client: str, rel: str) -> bool:
    """Whether importing `client` reads the project file at `rel` (for the CLI's walk)."""
    return IMPORTERS[client].wants(rel)


class Imported(NamedTuple):
    """One import: the canonical document, the portable fields of its items beyond it
    ("agents.NAME" -> frontmatter: model, tools, license, the client's passthrough block),
    and what could not be imported."""

    document: Dict[str, Any]
    fields: Dict[str, Dict[str, Any]]
    diagnostics: Tuple[Diagnostic, ...]


def import_project(client: str, tree: SourceTree, root: str = "", source: str = "",
                   namespaces: Optional[Dict[str, Dict[str, str]]] = None) -> Imported:
    """`client`'s files in `tree` (paths below `root`), imported. The document has the shape
    of ai.config.json: context.global, the six capabilities and tools.<client> (settings
    the client keeps beside its hooks). Hooks are named after `source` (default: the
    client), e.g. a plugin's name, then their event and position (`hookfiles.hook_name`);
    the files their commands run resolve against `root`. `plugin:name` references in
    bodies become the installed names `namespaces` gives (plugin -> name -> installed name:
    a marketplace's plugins, after their renames), and `source`'s own names when it is a
    plugin; others are reported (`importers.namespaced`)."""
    importer = IMPORTERS[client]
    diags = Diagnostics()
    reader = Reader(client, importer.family, tree, root, diags, source, namespaces)
    importer.read(reader)
    document = reader.finish()
    return Imported(document, {k: v for k, v in sorted(reader.fields.items())}, diags.sorted())


def import_tree(client: str, tree: SourceTree, root: str = "") -> Tuple[Dict[str, Any], Tuple[Diagnostic, ...]]:
    """The canonical document of `client`'s files (see `import_project`) and the diagnostics."""
    result = import_project(client, tree, root)
    return result.document, result.diagnostics


# --- canonical document -> portable items ------------------------------------------------

class _Portable:
    """What `portable_from_document` builds, shared by the writer of each capability: the
    item files, the item names the bundle lists (by kind), its MCP servers, and where
    losses are reported."""

    def __init__(self, diags: Diagnostics, source: str, fields: Dict[str, Dict[str, Any]],
                 skip: FrozenSet[Tuple[str, str]] = frozenset(), blocks: Tuple[str, ...] = ()):
        self.diags = diags
        self.blocks = blocks
        self.source = source
        self.fields = fields
        self.skip = skip
        self.files: List[SourceFile] = []
        self.listed: Dict[str, List[str]] = {}
        self.mcps: Dict[str, Any] = {}

    def lossy(self, message: str) -> None:
        self.diags.warning(self.source, (0, 0), "AR130", message)

    def item(self, kind: str, name: str, fm: Dict[str, Any], body: str) -> None:
        """One item file; the portable fields the import found beyond the document's entry
        (`fields`) join the frontmatter, in the key order `agentrc fmt` writes."""
        directory = "context" if kind == "context" else kind + "s"  # as examples/registry names them
        if (directory, name) in self.skip:
            return
        fm = dict({"schema": 1}, **fm)
        fm.update({k: v for k, v in self.fields.get(f"{kind}s.{name}", {}).items()
                   if k not in ("description", EXECUTABLE)})
        order = key_order(kind, self.blocks)
        fm = {k: fm[k] for k in sorted(fm, key=lambda k: (order.index(k) if k in order else len(order), 0))}
        entry = "".join(["---\n", dump_yaml(fm), "---\n", "\n" + body if body.strip() else ""])
        self.files.append(SourceFile(f"{directory}/{name}/{kind.upper()}.md", entry.encode("utf-8")))
        self.listed.setdefault(kind + "s", []).append(name)


def portable_from_document(doc: Dict[str, Any], diags: Optional[Diagnostics] = None,
                           source: str = "<document>",
                           fields: Optional[Dict[str, Dict[str, Any]]] = None,
                           skip: FrozenSet[Tuple[str, str]] = frozenset(),
                           blocks: Tuple[str, ...] = ()) -> SourceTree:
    """Portable item directories (rules/NAME/RULE.md, ...) and imported.bundle.yaml, in the
    form `agentrc fmt` writes. `fields` ("agents.NAME" -> frontmatter) are what an import
    found for an item beyond its canonical entry (`Imported.fields`): model, tools,
    passthrough blocks. What portable items cannot hold is reported to `diags` (AR130, at
    `source`). `skip` holds item directories ("rules", NAME) not to write (`item_dir`),
    nor list in the bundle: the import leaves out an item whose portable form fails lint.
    `blocks`: the registered clients' passthrough blocks, in the order `agentrc fmt` puts
    them (`ClientNames.blocks`)."""
    out = _Portable(diags if diags is not None else Diagnostics(), source, fields or {}, skip, blocks)
    for write in (_rules, _commands, _skills, _agents, _hooks, _context, _mcp):
        write(out, doc)
    if out.listed or out.mcps:
        out.files.append(_bundle(out))
    return SourceTree(tuple(sorted(out.files, key=lambda f: f.path)))


def _describe(entry: Dict[str, Any], fallback: str, out: Optional["_Portable"] = None, what: str = "") -> str:
    """The description, on one line; one over the Agent Skills limit is shortened at a word
    boundary, reported (so what an import writes lints clean, as `add` installs it)."""
    text = entry["description"] if isinstance(entry.get("description"), str) else ""
    text = " ".join(text.split()) or fallback
    if len(text) > DESCRIPTION_LIMIT and out is not None:
        out.lossy(f"{what}: description of {len(text)} characters shortened to the Agent Skills limit of "
                  f"{DESCRIPTION_LIMIT:,} at a word boundary")
        text = shorten(text, DESCRIPTION_LIMIT)
    return text


def _body(entry: Dict[str, Any], kind: str) -> str:
    """An item's body (its content, or a command's prompt), cleaned as a `kind` body."""
    return clean_body(str(entry.get("content") or entry.get("prompt") or ""), kind=kind)[0]


def _rules(out: _Portable, doc: Dict[str, Any]) -> None:
    for name, entry in sorted((doc.get("rules") or {}).items()):
        fm: Dict[str, Any] = {"description": _describe(entry, f"The {name} rule (imported)")}
        globs = glob_list(entry.get("globs"))
        if entry.get("alwaysApply") is True and globs:
            out.lossy(f"rules.{name}: alwaysApply: true wins over globs; the rule is always on")
        elif globs:
            fm["scope"] = {"paths": globs}
        elif entry.get("alwaysApply") is False:
            out.lossy(f"rules.{name}: applied when relevant or when mentioned (alwaysApply: false without globs) "
                      "has no portable form; the rule is always on")
        out.item("rule", name, fm, _body(entry, "rule"))


def _commands(out: _Portable, doc: Dict[str, Any]) -> None:
    for name, entry in sorted((doc.get("commands") or {}).items()):
        for key in ("triggers", "disableModelInvocation", "userInvocable"):
            if key in entry:
                out.lossy(f"commands.{name}.{key} has no portable command field; commands are user-invoked")
        text = str(entry.get("prompt") or entry.get("content") or "")
        out.item("command", name, {"description": _describe(entry, f"The {name} command (imported)")},
                 clean_body(text, arguments=True)[0])


def _skills(out: _Portable, doc: Dict[str, Any]) -> None:
    for name, entry in sorted((doc.get("skills") or {}).items()):
        fm = {"description": _describe(entry, f"The {name} skill (imported)", out, f"skill {name}"),
              **skill_fields(entry)}
        out.item("skill", name, fm, _body(entry, "skill"))
        if ("skills", name) in out.skip:
            continue
        # The source's bits where the import found them (`Reader.modes`); else the canonical
        # document's convention: scripts/ is executable, nothing else is.
        modes = out.fields.get(f"skills.{name}", {}).get(EXECUTABLE) or {}
        for group in ("references", "scripts", "assets", "files"):
            for rel, value in sorted((entry.get(group) or {}).items()):
                path = rel if group == "files" else f"{group}/{rel}"
                if isinstance(value, dict):
                    content = base64.b64decode(value.get("content", ""))
                else:
                    content = str(value).encode("utf-8")
                executable = bool(modes.get(path, group == "scripts"))
                out.files.append(SourceFile(f"skills/{name}/{path}", content, executable))


def _agents(out: _Portable, doc: Dict[str, Any]) -> None:
    for name, entry in sorted((doc.get("agents") or {}).items()):
        fm: Dict[str, Any] = {"description": _describe(entry, f"The {name} agent (imported)")}
        if entry.get("skills"):
            fm["preload-skills"] = list(entry["skills"])
        out.item("agent", name, fm, _body(entry, "agent"))


def _hooks(out: _Portable, doc: Dict[str, Any]) -> None:
    """One HOOK.md per hook. An imported hook's fields (see `Reader.add_hook`) name it and
    hold what the document cannot: its `./file` script with the files of its directory, its
    `if` condition and its client's passthrough block."""
    for event, value in sorted((doc.get("hooks") or {}).items()):
        hooks = value if isinstance(value, list) else [value]
        if event not in HOOK_EVENTS:
            out.lossy(f"hooks.{event}: not a portable hook event ({', '.join(HOOK_EVENTS)}); not written")
            continue
        for i, hook in enumerate(hooks, 1):
            hook = {"script": hook} if isinstance(hook, str) else dict(hook)
            extra = out.fields.get(f"hooks.{event}.{i}", {})
            name = extra.get(hookfiles.NAME) or _slug(event) + (f"-{i}" if len(hooks) > 1 else "")
            fm = _hook(out, event, hook)
            for key, value in extra.items():
                if key not in (hookfiles.NAME, hookfiles.FILES):
                    fm[key] = value
            fm["description"] = f"{event} hook: runs {_short(fm['script'])}"
            out.item("hook", name, fm, "")
            if ("hooks", name) not in out.skip:
                for f in hookfiles.files_of(extra):
                    out.files.append(SourceFile(f"hooks/{name}/{f.name}", f.content, f.executable))


def _hook(out: _Portable, event: str, hook: Dict[str, Any]) -> Dict[str, Any]:
    """The frontmatter of one hook item."""
    script = project_command(str(hook.get("script", "")))
    fm: Dict[str, Any] = {"description": f"{event} hook: runs {_short(script)}", "event": event}
    if hook.get("type", "command") != "command":
        out.lossy(f"hooks.{event}: type {hook['type']!r} is not portable; written as a command hook")
    if event in TOOL_EVENTS and hook.get("tools"):
        mapped = [HOOK_TOOLS.get(str(t).lower()) for t in hook["tools"]]
        if all(mapped):
            fm["tools"] = list(dict.fromkeys(mapped))
        else:
            fm["matcher"] = "|".join(hook["tools"])
    elif event in MATCHER_EVENTS and hook.get("matcher"):
        fm["matcher"] = hook["matcher"]
    elif hook.get("tools") or hook.get("matcher"):
        out.lossy(f"hooks.{event}: tools apply to {' and '.join(TOOL_EVENTS)} only, a matcher to "
                  f"{', '.join(MATCHER_EVENTS)}; not written")
    fm["script"] = script
    if "timeout" in hook:
        fm["timeout"] = max(1, int(round(hook["timeout"])))
    if "async" in hook:
        fm["async"] = bool(hook["async"])
    return fm



def _context(out: _Portable, doc: Dict[str, Any]) -> None:
    context = (doc.get("context") or {}).get("global")
    if isinstance(context, str) and context.strip():
        out.item("context", "project", {"description": "The project's global context (imported)", "order": 0},
                 clean_body(context, context=True)[0])


def _mcp(out: _Portable, doc: Dict[str, Any]) -> None:
    """MCP servers, which the bundle holds (`out.mcps`) rather than an item."""
    for name, server in sorted(((doc.get("mcp") or {}).get("servers") or {}).items()):
        if "url" in server:
            remote: Dict[str, Any] = {"type": server.get("type", "http"), "url": server["url"]}
            if server.get("headers"):
                remote["headers"] = dict(server["headers"])
            out.mcps[name] = {"remote": remote}
        else:
            local: Dict[str, Any] = {"command": server["command"]}
            for key in ("args", "env"):
                if server.get(key):
                    local[key] = server[key]
            out.mcps[name] = {"local": local}
        needed = required_env(server)
        if needed:
            out.mcps[name]["requires-env"] = needed
        for key in ("disabled", "autoApprove"):
            if key in server:
                out.lossy(f"mcp.servers.{name}.{key} has no portable field; the server is enabled and its tools "
                          "need approval as usual")
        if server.get("scope", "project") != "project":
            out.lossy(f"mcp.servers.{name}: scope {server['scope']} has no portable field; bundles declare project "
                      "servers")


def required_env(server: Dict[str, Any]) -> List[str]:
    """The variables a server's values refer to as `${VAR}`, which `requires-env` lists so that a
    consumer whose environment lacks one is told (AR209) rather than handed a server that
    fails to start: not one every use of which has a default (`${VAR:-x}`, `${VAR:-}`), nor
    one the client itself sets (`${CLAUDE_PLUGIN_ROOT}`)."""
    values: List[str] = [str(server.get("command") or ""), str(server.get("url") or "")]
    values += [str(a) for a in server.get("args") or ()]
    for key in ("env", "headers"):
        values += [str(v) for v in (server.get(key) or {}).values()]
    return sorted({m.group(1) for v in values for m in ENV_REF_RE.finditer(v)} - set(CLIENT_VARS))


def _bundle(out: _Portable) -> SourceFile:
    """imported.bundle.yaml: the items written, by kind, and the MCP servers."""
    bundle: Dict[str, Any] = {"schema": 1, "name": "imported",
                              "description": "Everything agentrc import found in the project"}
    order = ("rules", "skills", "agents", "commands", "hooks", "contexts")
    if out.listed:
        bundle["items"] = {k: sorted(out.listed[k]) for k in order if k in out.listed}
    if out.mcps:
        bundle["mcps"] = out.mcps
    return SourceFile(BUNDLE, dump_yaml(bundle).encode("utf-8"))


def _short(script: str, most: int = 80) -> str:
    script = " ".join(script.split())
    return script if len(script) <= most else script[:most - 3] + "..."


def item_dir(rel: str) -> Optional[Tuple[str, str]]:
    """The item directory ("rules", NAME) that `portable_from_document` wrote the file at
    `rel` (relative to the registry) for; None for the bundle."""
    parts = rel.split("/")
    return (parts[0], parts[1]) if len(parts) > 2 else None


def relative(tree: SourceTree, prefix: str) -> SourceTree:
    """`tree` with `prefix/` put before every path (display paths below an output directory)."""
    return SourceTree(tuple(SourceFile(posixpath.join(prefix, f.path), f.content, f.executable, f.link)
                            for f in tree.files))
