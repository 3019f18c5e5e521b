"""What every client importer is given: the Importer protocol, and a Reader that builds
one client's canonical document (spec 000 §3) from the project's files, with diagnostics.

What enters is the project's files (`files.ProjectFiles`, which decodes them) and, from the
importer, the entries it has mapped (`add`, `add_hook`, `add_server`, `add_context`,
`set_tools`); what leaves is the canonical document (`finish`), in the shape of
ai.config.json, and AR130 for whatever the canonical shapes cannot hold. `entries` is how an
importer finds its markdown items: each file read, its frontmatter split off and its item
name made valid, the ones that cannot be skipped with a diagnostic. Bodies go through
`body`, which cleans them (`cleanup.clean_body`) and reports what the cleaning changed.

An importer reads exactly the files the client adapter of the same name writes, plus the
forms people write by hand (`shapes` holds the forms several clients share). Pure: the
files come in as a SourceTree.
"""

from __future__ import annotations

import json
import posixpath
from typing import Any, Callable, Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from agentrc import names
from agentrc.diagnostics import Diagnostics
from agentrc.importers import hookfiles, namespaced
from agentrc.importers.cleanup import clean_body, unlink_escaping
from agentrc.importers.files import ProjectFiles
from agentrc.model import SourceTree
from agentrc.names import MAX_NAME_LENGTH, valid_name

try:
    from typing import Protocol
except ImportError:  # pragma: no cover - Python < 3.8
    Protocol = object  # type: ignore[assignment,misc]

# How an entry's raw name comes from its path and frontmatter (see `entries`).
Naming = Callable[[str, Dict[str, Any]], str]
# The key of an imported skill's fields (`Reader.fields`) holding the executable bits of its
# supporting files that differ from the canonical document's default ({path in the skill:
# bit}). No frontmatter key has a space, so it never reaches an item file as one.
EXECUTABLE = "executable bits"
# The key of a canonical hook entry, while an importer builds it, holding the portable fields
# the canonical document has no place for (`shapes.hook_entry`); `Reader.add_hook` moves them
# to `fields` under the hook's position ("hooks.PreToolUse.1").
PORTABLE = "portable fields"
# The longest Agent Skills name (clients.base.MAX_SKILL_NAME): a renamed command's is cut to it.
MAX_SKILL_NAME = 64


class Importer(Protocol):
    """One client's import: which files it needs, and how it reads them."""

    name: str
    family: str  # the directive family of the client's own body constructs

    @property
    def own(self) -> Tuple[str, ...]:
        """The files the client's own layout starts with: an importer also reads other
        clients' files its client loads (Copilot reads CLAUDE.md), which say nothing about
        who wrote them."""

    def wants(self, rel: str) -> bool:
        """Whether the file at `rel` (relative to the project root) is one this import reads."""
        ...

    def read(self, r: "Reader") -> None:
        """Read the client's files from `r` into `r.doc` (through r.add*)."""
        ...


class Entry(NamedTuple):
    """A markdown item file, read and named: what an importer maps onto a canonical entry."""

    rel: str
    name: str
    fm: Dict[str, Any]
    body: str


class Reader(ProjectFiles):
    """A project's files for one import, the document being built, and its diagnostics."""

    def __init__(self, client: str, family: str, tree: SourceTree, root: str, diags: Diagnostics,
                 source: str = "", namespaces: Optional[Dict[str, Dict[str, str]]] = None):
        super().__init__(tree, root, diags)
        self.client = client
        self.source = source or client  # what imported hooks are named after (`hookfiles.hook_name`)
        # plugin -> item name -> its installed name, of the other plugins imported with this one
        # (a marketplace's), for `plugin:name` references (`namespaced`)
        self.namespaces = namespaces or {}
        self.family = family
        self.doc: Dict[str, Any] = {}
        self.context: List[str] = []
        self.origin: Dict[str, str] = {}  # "rules.x" -> the file it came from
        # "agents.x" -> portable frontmatter the canonical entry cannot hold (model, tools,
        # passthrough blocks, ...): what the portable item carries beyond the document.
        self.fields: Dict[str, Dict[str, Any]] = {}
        # A skill directory -> its files whose executable bit is not the one the canonical
        # document implies (set for scripts/, clear elsewhere): the document cannot hold a
        # mode, so the skill's item carries them (EXECUTABLE) and the source's bits survive.
        self.modes: Dict[str, Dict[str, bool]] = {}

    # --- items -----------------------------------------------------------------------
    def name(self, raw: str, rel: str, what: str) -> Optional[str]:
        """A valid item name for `raw` (a file or directory name, or a name: field)."""
        if valid_name(raw, single_hyphens=True) and len(raw) <= MAX_NAME_LENGTH:
            return raw
        slug = names.slug(raw)[:MAX_NAME_LENGTH].rstrip("-")
        if not slug:
            self.lossy(rel, f"{what} {raw!r}: no usable name (lowercase letters, digits and hyphens); not imported")
            return None
        self.lossy(rel, f"{what} {raw!r} is imported as {slug!r}: names are lowercase letters, digits and "
                        "single hyphens, at most 64 characters")
        return slug

    def entries(self, rels: Iterable[str], what: str, naming: Naming, raw_keys: Sequence[str] = ()
                ) -> Iterator[Entry]:
        """Each markdown file of `rels` that reads (frontmatter and body, see `markdown`) and
        has a usable name (`naming` gives the raw one, `name` makes it valid), in order. The
        others are reported (AR131, AR130) and skipped. `what` names the kind in messages."""
        for rel in rels:
            parsed = self.markdown(rel, raw_keys)
            if parsed is None:
                continue
            fm, body = parsed
            name = self.name(naming(rel, fm), rel, what)
            if name is None:
                continue
            yield Entry(rel, name, fm, body)

    # --- the document ----------------------------------------------------------------
    def add(self, section: str, name: str, entry: Dict[str, Any], rel: str,
            fields: Optional[Dict[str, Any]] = None) -> bool:
        """The entry `name` of `section`, with the portable `fields` its item carries beyond it."""
        items = self.doc.setdefault(section, {})
        key = f"{section}.{name}"
        if name in items:
            self.lossy(rel, f"{section[:-1]} {name!r} is also defined by {self.path(self.origin[key])}; "
                            "the first one is imported")
            return False
        items[name] = entry
        self.origin[key] = rel
        modes = self.modes.get(posixpath.dirname(rel)) if section == "skills" else None
        if modes:
            fields = dict(fields or {}, **{EXECUTABLE: dict(sorted(modes.items()))})
        if fields:
            self.fields[key] = fields
        return True

    def add_hook(self, event: str, entry: Dict[str, Any], rel: str) -> None:
        """A hook of `event`; its portable fields (`PORTABLE`: script and files, if, the
        client's own keys) and its item name (`hookfiles.hook_name`) go to `fields` under
        "hooks.EVENT.POSITION", where `portable_from_document` finds them."""
        entry = dict(entry)
        portable = entry.pop(PORTABLE, {})
        hooks = self.doc.setdefault("hooks", {}).setdefault(event, [])
        hooks.append(entry)
        self.origin.setdefault(f"hooks.{event}", rel)
        self.fields[f"hooks.{event}.{len(hooks)}"] = dict(
            portable, **{hookfiles.NAME: hookfiles.hook_name(self.source, event, len(hooks))})

    def add_server(self, name: str, entry: Dict[str, Any], rel: str) -> bool:
        servers = self.doc.setdefault("mcp", {}).setdefault("servers", {})
        if name in servers:
            if servers[name] != entry:
                self.lossy(rel, f"mcp server {name!r} is also defined by "
                                f"{self.path(self.origin['mcp.servers.' + name])}; the first one is imported")
            return False
        servers[name] = entry
        self.origin[f"mcp.servers.{name}"] = rel
        return True

    def add_context(self, text: str, rel: str) -> None:
        text = text.strip("\n")
        if text.strip():
            self.context.append(text)
            self.origin.setdefault("context.global", rel)

    def add_context_file(self, rel: str) -> None:
        """An AGENTS.md-style file (see `context_file`) added to the global context."""
        text = self.context_file(rel)
        if text is not None:
            self.add_context(self.body(text, rel, context=True), rel)

    def set_tools(self, target: str, settings: Dict[str, Any]) -> None:
        if settings:
            self.doc.setdefault("tools", {})[target] = settings

    def extra_fields(self, rel: str, fm: Dict[str, Any], handled: Sequence[str], what: str,
                     why: str = "") -> None:
        """AR130 for each frontmatter key the import does not map."""
        for key in fm:
            if key not in handled:
                value = json.dumps(fm[key], ensure_ascii=False, default=str)
                if len(value) > 60:
                    value = value[:57] + "..."
                self.lossy(rel, f"{what}: {key}: {value} has no canonical field; not imported"
                                + (f" ({why})" if why else ""))

    def shared_names(self) -> None:
        """AR130 for a command with the name of a skill (a plugin ships both): Claude Code and
        Codex write commands as Agent Skills, where the skill keeps the name and the command
        becomes `NAME-command`, which the message says (the rule of `clients.base.skill_names`,
        which this layer cannot import; docs/format.md, One name, several kinds). An agent or
        rule sharing a name is renamed only by clients that write those as skills too."""
        skills, commands = set(self.doc.get("skills") or {}), set(self.doc.get("commands") or {})
        taken = skills | commands | set(self.doc.get("agents") or {}) | set(self.doc.get("rules") or {})
        for name in sorted(skills & commands):
            new = f"{name[:MAX_SKILL_NAME - len('-command')].rstrip('-')}-command"
            shown = new if new not in taken else f"{new}-2 (or the next number free)"
            self.lossy(self.origin[f"commands.{name}"], f"command {name} has the name of a skill: Claude Code, "
                       "Codex and the other clients that write commands as Agent Skills invoke it as "
                       f"{shown}, and the skill keeps {name}; rename one to choose the names")

    def namespaced(self) -> None:
        """`plugin:name` references in bodies rewritten to the name, or reported (`namespaced`):
        the plugin being imported (`source`) names its own items so."""
        names = namespaced.document_names(self.doc)
        known = dict(self.namespaces)
        if self.source != self.client:
            known.setdefault(self.source, {n: n for n in names})
        for section, name, ref in namespaced.rewrite_document(self.doc, known):
            owner = ref.lstrip("/").split(":")[0]
            self.lossy(self.origin.get(f"{section}.{name}", ""),
                       f"{section[:-1]} {name}: {ref} names an item of plugin {owner} that this import does not "
                       f"hold; kept as written (installed content is named without its plugin: import or install "
                       f"{owner} too and write the item's own name)")

    def finish(self) -> Dict[str, Any]:
        self.shared_names()
        self.namespaced()
        out: Dict[str, Any] = {}
        if self.context:
            out["context"] = {"global": "\n\n".join(self.context) + "\n"}
        for section in ("rules", "commands", "skills", "agents"):
            if self.doc.get(section):
                out[section] = {k: self.doc[section][k] for k in sorted(self.doc[section])}
        if self.doc.get("hooks"):
            out["hooks"] = {event: (entries[0] if len(entries) == 1 else entries)
                            for event, entries in self.doc["hooks"].items()}
            for event, value in out["hooks"].items():
                if isinstance(value, dict) and list(value) == ["script"]:
                    out["hooks"][event] = value["script"]
        if self.doc.get("mcp", {}).get("servers"):
            servers = self.doc["mcp"]["servers"]
            out["mcp"] = {"servers": {k: servers[k] for k in sorted(servers)}}
        if self.doc.get("tools"):
            out["tools"] = self.doc["tools"]
        return out

    # --- bodies ----------------------------------------------------------------------
    def body(self, text: str, rel: str, title: str = "", arguments: bool = False, context: bool = False,
             kind: Optional[str] = None) -> str:
        """A body as the canonical document holds it (see `cleanup`), with AR130 for what changed;
        `kind` (the item's) decides which client syntax counts."""
        text, found = clean_body(text, title, arguments, context, kind)
        for family, what in found:
            if context:
                self.lossy(rel, f"{what} ({family} syntax) in the global context is kept as inline code: every "
                                "client reads the same AGENTS.md")
            else:
                self.lossy(rel, f"{what} ({family} syntax) is kept inside a <!-- @client:{family} --> block: the "
                                "other clients do not get those lines")
        text, escaping = unlink_escaping(text)
        for target in escaping:
            self.lossy(rel, f"link {target!r} points outside the item; canonical items carry no files of their "
                            "own besides a skill's, so it is kept as plain text")
        return text


# --- the files hook commands run ------------------------------------------------------------

# Directories whose files a hook command may run (`.claude/hooks/x.sh`, a plugin's
# `hooks/x.py`, `scripts/y.sh`): every importer reads them too (`wants`), so that the file a
# command names can travel with its hook (`hookfiles`).
SCRIPT_DIRS = frozenset({"hooks", "scripts", "bin"})


def may_run(rel: str) -> bool:
    """Whether the file at `rel` may be one a hook command runs (see SCRIPT_DIRS)."""
    parts = rel.split("/")[:-1]
    return bool(SCRIPT_DIRS.intersection(parts)) and "node_modules" not in parts and ".git" not in parts


# --- naming: the raw name of an entry, from its path and frontmatter ----------------------

def stem(rel: str, suffix: str) -> str:
    base = posixpath.basename(rel)
    return base[:-len(suffix)] if suffix and base.endswith(suffix) else posixpath.splitext(base)[0]


def by_stem(suffix: str) -> Naming:
    """The file name without `suffix` (`.claude/commands/review.md` -> review)."""
    return lambda rel, fm: stem(rel, suffix)


def by_name_field(suffix: str) -> Naming:
    """The frontmatter's `name:` when it is a string, else the file name without `suffix`."""
    return lambda rel, fm: fm["name"] if isinstance(fm.get("name"), str) else stem(rel, suffix)


def by_path(prefix: str) -> Naming:
    """The path below `prefix` without its extension, `/` read as `-` (rules in subdirectories)."""
    return lambda rel, fm: rel[len(prefix):].rsplit(".", 1)[0].replace("/", "-")


def by_directory(rel: str, fm: Dict[str, Any]) -> str:
    """The name of the directory holding the file (a skill's SKILL.md)."""
    return posixpath.basename(posixpath.dirname(rel))
