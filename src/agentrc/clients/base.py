"""What every client adapter shares: output files, the adapter Protocol, and the common
steps of rendering an item (body selection, document assembly, SSOT-only fields).

An adapter turns one `Item` into files for one client and accounts for every field in a
fidelity `Tracker`. Adapters are pure: no I/O, no clock, no environment."""

from __future__ import annotations

import posixpath
from dataclasses import field

from agentrc.classcode import dataclass
from agentrc.clients.hookkit import (  # noqa: F401 - the adapters import these from here
    _own_files,
    hook_docs,
    hook_script,
    narrowing_lost,
    refuse_hook,
    resource_files,
    subagents_only,
    sync_only,
    tool_event,
)
from agentrc.clients.ignorefile import IgnoreFile
from agentrc.clients.pluginlayout import PluginLayout, json_file  # noqa: F401 - json_file re-exported
from agentrc.clients.servers import (  # noqa: F401 - the adapters import these from here
    DEFAULT_REF_RE,
    ENV_REF_RE,
    REDACTED,
    canonical_server_outcomes,
    claude_style_server,
    default_outcome,
    env_refs,
    has_defaults,
    redacted,
    server_outcomes,
    server_strings,
    server_without_defaults,
    stdio_entry,
    without_defaults,
)
from agentrc.clients.skillmeta import carry_unread
from agentrc.fidelity import ItemReport, Tracker
from agentrc.files import Fragment, OutputFile, fragment
from agentrc.frozen import FrozenMap, thaw
from agentrc.model import Item, Kind, McpServer
from agentrc.patterns import pattern
from agentrc.portable import directives
from agentrc.portable.body import rewrite_links
from agentrc.text.cut import DESCRIPTION_LIMIT, shorten
from agentrc.text.markdown import format_body
from agentrc.text.yamlemit import dump_yaml
from agentrc.vocabulary import split_model

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

    Rendering = Tuple[str, str, Sequence[OutputFile]]  # (entrypoint path, body, extra files)
    ModelChoice = Tuple[Optional[str], str, str]  # (value written, or None; fidelity status; detail)

SHARED_SKILL_DIR = ".agents/skills"  # Agent Skills read by Codex, Gemini CLI, OpenClaw, Hermes (and more)


@dataclass(frozen=True)
class Rendered:
    """What a client adapter made of one item: its files, its fidelity report and its fragments."""
    files: Tuple[OutputFile, ...]
    report: ItemReport
    fragments: Tuple[Fragment, ...] = ()


@dataclass(frozen=True)
class RenderContext:
    """What an adapter may know beyond the item: the families and the items being built."""

    families: FrozenSet[str]
    skills: FrozenSet[str] = frozenset()  # names of skills in the build (for preload lists)
    clients: FrozenSet[str] = frozenset()  # the clients being built together (shared-file decisions)
    # (passthrough block, client title) of every client whose block the writers of the shared
    # Agent Skills directory merge into it, in registry order (registry.shared_blocks()).
    shared_blocks: Tuple[Tuple[str, str], ...] = ()
    # (kind, name) -> the Agent Skill name of an item written as a skill whose own name a
    # skill (or a command, or an agent) of the build already takes: `skill_names()`.
    renamed: FrozenMap = FrozenMap()
    # Whether a client that reads another built client's directory writes no copy of an item it would get
    # there byte for byte (the project file's `shared-copies`, on by default): `output.plan.shared_view`.
    shared: bool = True
    # What `document` formatted, by the (title, body) it was given: None when formatting left
    # it as it was, else the formatted text. The clients of a build render an item's body
    # alike (15,000 renders of 5,000 items formatted 5,979 distinct documents). `plan` empties
    # it after each item; a body the clients share is one object whose hash Python keeps.
    formatted: Dict[Tuple[str, str], Optional[str]] = field(default_factory=dict, compare=False, hash=False, repr=False)


# Which kind keeps a name when items of several kinds with one name are all written as Agent
# Skills into one directory: a skill is invoked by its name, a command too, an agent is
# picked by description, a rule is loaded by description.
SKILL_NAME_PRIORITY = (Kind.SKILL, Kind.COMMAND, Kind.AGENT, Kind.RULE)
MAX_SKILL_NAME = 64

# Each kind's value, which `Kind.value` (an enum property) computes on every use: the render
# stage asks for it about 80,000 times at 5,000 items.
KIND_VALUE = {k: k.value for k in Kind}
# The method that maps each kind written as a markdown document (`render_item`).
_DOCUMENT_KINDS = {Kind.RULE: "rule", Kind.SKILL: "skill", Kind.AGENT: "agent", Kind.COMMAND: "command"}


def skill_names(items: Sequence[Item]) -> FrozenMap:
    """Names for the items that would collide as Agent Skills (spec 001 §2.1 co-locates a
    RULE.md and a SKILL.md with one name; clients that write rules, commands or agents as
    skills put both in one `<skill_dir>/<name>/`): the item of the kind first in
    SKILL_NAME_PRIORITY keeps the name, the others become `<name>-<kind>` (numbered if that
    is taken too). The same for every client, so a shared directory holds one file per item."""
    taken = {i.name for i in items}
    kinds: Dict[str, List[Kind]] = {}
    for i in items:
        if i.kind in SKILL_NAME_PRIORITY:
            kinds.setdefault(i.name, []).append(i.kind)
    out: Dict[Tuple[str, str], str] = {}
    for i in sorted(items, key=lambda i: (i.name, SKILL_NAME_PRIORITY.index(i.kind)
                                          if i.kind in SKILL_NAME_PRIORITY else 99)):
        if i.kind not in SKILL_NAME_PRIORITY or min(kinds[i.name], key=SKILL_NAME_PRIORITY.index) is i.kind:
            continue
        suffix, n = f"-{i.kind.value}", 1
        while True:
            candidate = i.name[:MAX_SKILL_NAME - len(suffix)].rstrip("-") + suffix
            if candidate not in taken:
                break
            n += 1
            suffix = f"-{i.kind.value}-{n}"
        taken.add(candidate)
        out[(i.kind.value, i.name)] = candidate
    return FrozenMap(sorted(out.items()))


# The Agent Skills limit on a skill's description (agentskills.io; skills-ref rejects a longer
# one). Codex, opencode and the Copilot CLI refuse a skill over it ("Skill description must be
# at most 1024 characters"); every client's copy is shortened (`identify`): copies are shared.
SKILL_DESCRIPTION_LIMIT = DESCRIPTION_LIMIT


class ClientAdapter(PluginLayout):
    """One client: how each kind of item, an MCP server and `tools.<client>` settings become
    that client's files. A Protocol in spirit, subclassed for the shared rendering frame.

    Subclasses set the attributes below and implement the hooks their `kinds` need; the
    registry (`agentrc.clients.registry`) lists the instances, and everything else that
    depends on the set of clients (families, passthrough blocks, fmt's key order, the item
    schema, the shared Agent Skills writers, docs) is derived from these attributes.
    """

    # --- identity --------------------------------------------------------------------
    name: str = ""  # what users pass to --client and clients=
    family: str = ""  # the audience/directive family whose content this client reads
    title: str = ""  # the human name in reports and docs
    layout: str = "project"  # or "plugin": the client's plugin/extension package (`--layout plugin`)
    # Its loader refuses a skill whose description is over the Agent Skills limit (checked:
    # Codex, opencode, the Copilot CLI); every client's copy is shortened anyway (`identify`).
    rejects_long_description: bool = False
    aliases: Tuple[str, ...] = ()  # other names `tools.<name>` of a canonical document may use

    # --- what it renders -------------------------------------------------------------
    kinds: Tuple[Kind, ...] = (Kind.RULE, Kind.SKILL, Kind.AGENT)  # others are reported dropped
    capabilities: FrozenSet[str] = frozenset({"mcp"})  # "mcp": the client has project MCP configuration
    passthrough_block: str = ""  # the frontmatter block (`<name>:`) copied into this client's output
    passthrough_example: Mapping[str, Any] = {"key": "value"}  # a typical block, for the docs' probes
    # Whether every writer of the shared `.agents/skills` SKILL.md merges this client's block
    # into it (the client reads extra keys there: OpenClaw's gating, Hermes' settings).
    shared_block: bool = False
    skill_fields: FrozenSet[str] = frozenset()  # skill frontmatter read beyond name/description
    # Capability (spec 001 §4) -> the client's tool name, or, for a client with a
    # `permission:` map instead of a tool list, -> its permission key. For the docs' tables.
    tool_names: Optional[Mapping[str, str]] = None
    permissions: Optional[Mapping[str, str]] = None

    # --- where it writes -------------------------------------------------------------
    skill_dir: str = ""  # <skill_dir>/<name>/SKILL.md
    # Where rules' and agents' supporting files go (<resource_root>/<kind>s/<name>/): a
    # directory the client does not scan, so a resource never loads as a rule or agent.
    resource_root: str = ""
    context_file: str = "AGENTS.md"  # the global context document
    tools_file: str = ""  # the user-owned settings file `tools.<name>`'s keys go into
    tools_format: str = "json"
    ignore_file: IgnoreFile = IgnoreFile()  # where the project's `ignore:` list goes (clients.ignorefile)

    # --- what it also loads ------------------------------------------------------------
    # Other clients' output trees this client also discovers natively, per kind (opencode loads .claude/skills too);
    # SHARED_SKILL_DIR stands for every client's files under that directory (skills, and rules, commands and agents
    # written as skills). The build writes one shared copy where the bytes are the same, and names the rest (AR095).
    also_reads: Mapping[Kind, Tuple[str, ...]] = {}
    prefers_own: FrozenSet[Kind] = frozenset()  # kinds where the client's own copy wins a name clash
    # The client's own project-level switch that hides one skill by name, written into a file
    # agentrc already merges for it (see hide_skills); "" when it has none that works.
    skill_switch: str = ""
    # Directory the client also reads -> how a consumer turns that reading off for a project
    # (AR095's hint names it): a switch agentrc cannot write itself (an environment variable).
    discovery_off: Mapping[str, str] = {}

    def render(self, item: Item, ctx: RenderContext) -> Rendered:
        tracker = Tracker(item.fields.keys())
        tracker.expected.extend(["body", "resources"])
        if not item.targets(self.family):
            for f in tracker.expected:
                tracker.omitted(f, f"audience {', '.join(item.audience)} excludes {self.family}")
            return Rendered((), self._report(item, False, (), tracker))
        if item.kind not in self.kinds:
            for f in tracker.expected:
                tracker.dropped(f, f"{self.title} has no {item.kind.value}s")
            return Rendered((), self._report(item, False, (), tracker))
        common_fields(item, tracker, self.passthrough_block)
        out = list(self.render_item(item, ctx, tracker))
        files = tuple(f for f in out if isinstance(f, OutputFile))
        frags = tuple(f for f in out if isinstance(f, Fragment))
        # The entrypoint first: for hooks and context items that is the shared file.
        first, rest = (frags, files) if item.kind in (Kind.HOOK, Kind.CONTEXT) else (files, frags)
        paths = tuple(dict.fromkeys([f.path for f in first] + [f.path for f in rest]))
        return Rendered(files, self._report(item, True, paths, tracker), frags)

    def hide_skills(self, names: Sequence[Tuple[str, str]]) -> Tuple[Fragment, ...]:
        """What keeps this client from loading the skills `names` ((skill name, owner)) that it
        would otherwise find in other clients' directories (`skill_switch`). The build asks
        only for names the client has no skill of its own by, and only for copies outside its
        audience or of items it already has in another form (docs/fidelity.md#cross-discovery)."""
        return ()

    def render_server(self, server: McpServer) -> Rendered:
        """An MCP server of the selected bundles, reported like an item (kind "mcp")."""
        tracker = Tracker(server.fields.keys())
        out = list(self.server(server, tracker)) if "mcp" in self.capabilities else []
        if "mcp" not in self.capabilities:
            for f in tracker.expected:
                tracker.dropped(f, f"{self.title} has no project MCP configuration")
        frags = tuple(f for f in out if isinstance(f, Fragment))
        files = tuple(f for f in out if isinstance(f, OutputFile))
        paths = tuple(dict.fromkeys([f.path for f in files] + [f.path for f in frags]))
        report = ItemReport(self.name, "mcp", server.name, server.path, bool(paths), paths,
                            tracker.finish(f"{self.name} {server.label}"))
        return Rendered(files, report, frags)

    def render_tools(self, config: Mapping[str, Any], source: str) -> Rendered:
        """`tools.<name>`'s keys into its settings file (`ignore`: clients.ignorefile's)."""
        config = {k: v for k, v in config.items() if k != "ignore"}
        tracker = Tracker(config.keys())
        frags = []
        for key, value in config.items():
            if self.tools_file:
                frags.append(fragment(self.tools_file, self.tools_format, (key,), value, f"{self.name}:tools"))
                tracker.emitted(key, f"key {key} of {self.tools_file}")
            else:
                tracker.dropped(key, f"{self.title} has no project settings file agentrc writes")
        report = ItemReport(self.name, "tools", self.name, source, bool(frags), (self.tools_file,) if frags else (),
                            tracker.finish(f"{self.name} tools"))
        return Rendered((), report, tuple(frags))

    def server(self, server: McpServer, tracker: Tracker) -> Sequence[Any]:
        raise NotImplementedError

    # --- the rendering frame ----------------------------------------------------------
    def render_item(self, item: Item, ctx: RenderContext, tracker: Tracker) -> Sequence[Any]:
        """Shared frame: `prepare`, then either a kind whose files the adapter writes whole
        (`whole_file`: hooks, context, ...) or a markdown document (body, the kind's own
        mapping, passthrough block, shared blocks), then `finish`."""
        item = self.prepare(item, tracker)
        whole = self.whole_file(item.kind)
        if whole is not None:
            out = list(whole(item, ctx, tracker))
            if self.passthrough_block in item.passthrough and self.passthrough_block not in tracker.outcomes:
                tracker.dropped(self.passthrough_block,
                                f"a {item.kind.value} has no {self.title} frontmatter to merge it into")
            return self.finish(item, ctx, tracker, out)
        body = self.body(item, ctx, tracker)
        fm: Dict[str, Any] = {}
        entry, body, extra = getattr(self, _DOCUMENT_KINDS[item.kind])(item, ctx, tracker, fm, body)
        if item.kind is Kind.SKILL and entry.endswith("/SKILL.md") and "license" in item.fields:
            skill_license(item, fm, tracker)
        shared = dict(ctx.shared_blocks)
        if (self.passthrough_in_frontmatter and self.passthrough_block in item.passthrough
                and self.passthrough_block not in shared):
            fm.update(self.passthrough(item))
            tracker.emitted(self.passthrough_block, "merged into frontmatter")
        if entry.startswith(SHARED_SKILL_DIR + "/"):
            self.merge_shared_blocks(item, fm, tracker, shared)
        carry_unread(item, entry, fm, tracker)
        out = [OutputFile(entry, document(fm, item.name, body, ctx.formatted), False, self.owner(item))] + list(extra)
        return self.finish(item, ctx, tracker, out)

    # Whether the client's passthrough block is merged into the generated frontmatter (Codex
    # writes it to a sidecar file instead, in `finish`).
    passthrough_in_frontmatter: bool = True

    def whole_file(self, kind: Kind) -> Optional[Callable[[Item, RenderContext, Tracker], Sequence[Any]]]:
        """What writes a `kind` that is no markdown document with frontmatter whole: hooks, context."""
        return {Kind.HOOK: self.hook, Kind.CONTEXT: self.context}.get(kind)

    def prepare(self, item: Item, tracker: Tracker) -> Item:
        """The item as this client renders it (a client may report a block dropped and remove it)."""
        return item

    def finish(self, item: Item, ctx: RenderContext, tracker: Tracker, out: List[Any]) -> List[Any]:
        """The rendered files and fragments, last touches added (a sidecar file, a manifest key)."""
        return out

    def merge_shared_blocks(self, item: Item, fm: Dict[str, Any], tracker: Tracker, shared: Mapping[str, str]) -> None:
        """The shared `.agents/skills` SKILL.md is one file for every client that reads it, so
        each writer merges the same blocks into it: those of the clients that read extra keys
        there (`openclaw: {metadata: {openclaw: ...}}` is OpenClaw's gating). `shared` maps
        each such block to its client's title, in registry order."""
        for block, title in shared.items():
            if block not in item.passthrough:
                continue
            deep_merge(fm, thaw(item.passthrough[block]))
            if block == self.passthrough_block:
                tracker.emitted(block, f"merged into the frontmatter of the shared {SHARED_SKILL_DIR} SKILL.md")
            else:
                tracker.emitted(block, f"merged into the shared {SHARED_SKILL_DIR} SKILL.md, which "
                                       f"{title} also reads; {self.title} ignores keys it does not know")

    # --- models -------------------------------------------------------------------------

    def model_choice(self, provider: Optional[str], ident: str) -> ModelChoice:
        """What `model: [provider/]ident` (spec 001 §3.4) becomes for this client: the value to
        write, or None, and the field's outcome. Clients with agents or commands define it."""
        raise NotImplementedError(f"{self.title} maps no models")

    def map_model(self, model: Optional[str], out: Dict[str, Any], tracker: Tracker, field: str = "model") -> None:
        """`model` through `model_choice` into `out["model"]`, its outcome reported as `field`."""
        if model is None:
            return
        value, status, detail = self.model_choice(*split_model(model))
        if value is not None:
            out["model"] = value
        tracker.set(field, status, detail)

    # --- hooks per kind (implemented for the kinds in `kinds`) ------------------------
    def rule(self, item: Item, ctx: RenderContext, tracker: Tracker, fm: Dict[str, Any], body: str) -> Rendering:
        raise NotImplementedError

    def agent(self, item: Item, ctx: RenderContext, tracker: Tracker, fm: Dict[str, Any], body: str) -> Rendering:
        raise NotImplementedError

    def command(self, item: Item, ctx: RenderContext, tracker: Tracker, fm: Dict[str, Any], body: str) -> Rendering:
        raise NotImplementedError

    def hook(self, item: Item, ctx: RenderContext, tracker: Tracker) -> Sequence[Any]:
        """Files and fragments for a hook (its config entry, its script)."""
        raise NotImplementedError

    def context(self, item: Item, ctx: RenderContext, tracker: Tracker) -> Sequence[Any]:
        """A context item is one section of the shared global context document; every
        client that reads AGENTS.md gets the same bytes (spec 000 §4.3: layered append)."""
        return context_section(self, item, ctx, tracker, self.context_file)

    def skill(self, item: Item, ctx: RenderContext, tracker: Tracker, fm: Dict[str, Any], body: str) -> Rendering:
        """Skills are Agent Skills directories everywhere; clients differ in which extra
        frontmatter they read (`skill_fields`) and where the directory goes (`skill_dir`)."""
        base = f"{self.skill_dir}/{item.name}"
        self.identify(item, fm, tracker)
        for key, value in item.extra.items():
            if key in self.skill_fields:
                fm[key] = value
                tracker.emitted(key, f"skill field {self.title} reads")
            else:
                tracker.dropped(key, f"not a skill field {self.title} reads")
        extra = resource_files(item, base, self.owner(item))
        tracker.emitted("resources", f"{len(extra)} file(s) copied beside SKILL.md")
        return f"{base}/SKILL.md", body, extra

    def place(self, item: Item, entry_dir: str, body: str, tracker: Tracker) -> Tuple[str, List[OutputFile]]:
        """Resources of a rule or agent whose entrypoint sits in `entry_dir`, links rewritten."""
        return place_resources(item, entry_dir, f"{self.resource_root}/{item.kind.plural}/{item.name}", body,
                               self.owner(item), tracker)

    def identify(self, item: Item, fm: Dict[str, Any], tracker: Tracker, name_in_file: bool = True,
                 description_detail: str = "") -> None:
        """`name` and `description`, which every output carries in some form."""
        if name_in_file:
            fm["name"] = item.name
        fm["description"] = item.description
        over = len(item.description) - SKILL_DESCRIPTION_LIMIT
        if item.kind is not Kind.SKILL or over <= 0:
            tracker.emitted("description", description_detail)
        else:
            # Every client's copy is cut alike: copies are shared (one SKILL.md several clients
            # read), and a directory one client writes another loads (.agents/skills).
            fm["description"] = shorten(item.description, SKILL_DESCRIPTION_LIMIT)
            who = (f"{self.title or self.name} does not load a skill with a longer one"
                   if self.rejects_long_description
                   else "skills-ref and clients that load the copies other clients read reject a longer one")
            tracker.degraded("description", f"shortened from {len(item.description)} to {len(fm['description'])} "
                             f"characters at a word boundary, the Agent Skills limit: {who}")
        if "name" in item.fields:
            if name_in_file:
                tracker.emitted("name")
            else:
                tracker.mapped("name", "file name")

    def project_files(self, reports: Sequence[ItemReport]) -> Tuple[OutputFile, ...]:
        """Files the client needs once per project (config registrations); none by default."""
        return ()

    # --- helpers for subclasses ----------------------------------------------------
    def body(self, item: Item, ctx: RenderContext, tracker: Tracker) -> str:
        """The body for this client: its override file verbatim, else directives processed (§2.3)."""
        override = item.overrides.get(self.family)
        if override is not None:
            tracker.mapped("body", f"override {posixpath.basename(override[1])} used verbatim")
            return override[0]
        blocks = item.blocks
        if blocks:
            kept = sum(1 for b in blocks if b.matches(self.family))
            tracker.mapped("body", f"{len(blocks)} directive block(s), {kept} kept for {self.family}")
        else:
            tracker.emitted("body")
        return directives.process(item.body, self.family, blocks)

    def as_skill(self, item: Item, ctx: RenderContext, fm: Optional[Dict[str, Any]] = None,
                 tracker: Optional[Tracker] = None) -> str:
        """The name `item` has when written as an Agent Skill (`skill_names`); with `fm` and
        `tracker`, that name is put in the frontmatter and a rename is reported on `name`."""
        name = ctx.renamed.get((KIND_VALUE[item.kind], item.name), item.name)
        if fm is not None and name != item.name:
            fm["name"] = name
            if tracker is not None:  # reported even when `name:` is not written: it is how it is invoked
                tracker.degraded("name", f"invoked as {name}: another kind's {item.name} keeps the name (docs/"
                                         "format.md#one-name-several-kinds); rename one to choose the names")
        return name

    def native_tools(self, tools: Sequence[str]) -> List[str]:
        """The client's names for portable tools, each once, in order; tools it has no name
        for are left out (the caller reports them)."""
        names = self.tool_names or {}
        return list(dict.fromkeys(names[t] for t in tools if t in names))

    def merge_block(self, item: Item, into: Dict[str, Any], tracker: Tracker, detail: str) -> None:
        """The client's passthrough block, when the item has one, merged into `into` (a hook
        handler, an agent's TOML table): its keys are the client's own."""
        if self.passthrough_block in item.passthrough:
            into.update(self.passthrough(item))
            tracker.emitted(self.passthrough_block, detail)

    def passthrough(self, item: Item) -> Dict[str, Any]:
        return thaw(item.passthrough.get(self.passthrough_block, {})) if self.passthrough_block else {}

    def owner(self, item: Item) -> str:
        return f"{self.name}:{KIND_VALUE[item.kind]}:{item.name}"

    def _report(self, item: Item, generated: bool, outputs: Tuple[str, ...], tracker: Tracker) -> ItemReport:
        kind = KIND_VALUE[item.kind]
        return ItemReport(self.name, kind, item.name, item.entrypoint, generated, outputs,
                          tracker.finish(f"{self.name} {kind} {item.name}"))  # f"{self.name} {item.label}"


_SSOT_ONLY = ("schema", "license", "metadata", "requires", "ignore", "audience")


def skill_license(item: Item, fm: Dict[str, Any], tracker: Tracker) -> None:
    """`license` is an Agent Skills field (agentskills.io/specification): every client reading a SKILL.md
    reads it, and so does the reference validator: it goes right after the description, as the standard lists it."""
    out = {}
    for key, value in fm.items():
        out[key] = value
        if key == "description":
            out["license"] = str(item.fields["license"])
    if "license" not in out:
        out["license"] = str(item.fields["license"])
    fm.clear()
    fm.update(out)
    tracker.emitted("license", "Agent Skills field, in SKILL.md")


def common_fields(item: Item, tracker: Tracker, own_block: str) -> None:
    """Outcomes that are the same for every client: SSOT-only fields and foreign blocks."""
    fields = item.fields.keys()  # the dict's own view: `in` without a Python call
    for key in _SSOT_ONLY:
        if key in fields:
            tracker.omitted(key, "SSOT-only authoring field (spec 001 §3.1)")
    for block in item.passthrough:
        if block != own_block:
            tracker.omitted(block, f"passthrough block for {block}")
    if item.kind is not Kind.SKILL:
        for key in item.extra:
            tracker.omitted(key, f"unknown {item.kind.value} field, ignored (spec 001 §8.2; lint reports AR007)")
    if "preload-skills" in fields and not item.preload_skills:
        # Adapters map the skills an agent preloads; an empty list names none, for any client.
        tracker.omitted("preload-skills", "an empty list: no skill to preload")


def document(frontmatter: Optional[Mapping[str, Any]], title: str, body: str,
             formatted: Optional[Dict[Tuple[str, str], Optional[str]]] = None) -> bytes:
    """A generated markdown file: frontmatter, an H1 derived from the name (§5.1), the body. `formatted`
    (`RenderContext.formatted`): what was formatted so far, so a body every client renders alike is formatted once."""
    text = f"# {title}\n\n{body}"
    if formatted is None:
        markdown = format_body(text)
    else:
        key = (title, body)
        if key in formatted:
            kept = formatted[key]
            markdown = text if kept is None else kept
        else:
            markdown = _format_document(text)
            formatted[key] = None if markdown == text else markdown
    if frontmatter:
        return ("---\n" + dump_yaml(frontmatter) + "---\n\n" + markdown).encode("utf-8")
    return markdown.encode("utf-8")


# `format_body` without its process-wide memo (`__wrapped__`, when it has one): the
# digests above serve a build, and a generated document is not formatted again elsewhere,
# so keeping each (and its formatted copy) for the life of the process only costs memory.
_format_document = getattr(format_body, "__wrapped__", format_body)


_BRACE_RE = pattern(r"\{([^{}]*,[^{}]*)\}")


def expand_braces(patterns: Sequence[str]) -> List[str]:
    """Scope patterns for clients whose globs are one comma-separated string (Cursor `globs:`, Copilot
    `applyTo:`): `{a,b}` alternatives, whose commas they would split on, expanded into separate patterns."""
    out: List[str] = []
    todo = list(patterns)
    while todo:
        p = todo.pop(0).strip()
        m = _BRACE_RE.search(p)
        if m is None:
            if p and p not in out:
                out.append(p)
            continue
        todo[:0] = [p[:m.start()] + alt + p[m.end():] for alt in m.group(1).split(",")]
    return out


def with_skills_section(item: Item, body: str, tracker: Tracker) -> str:
    """preload-skills as prose, for clients without a frontmatter field (spec 001 §3.4); agentrc's own
    lines within markdownlint's default 80 columns, read back by importers.cleanup.split_skills_section."""
    if not item.preload_skills:
        return body
    lines = ["## Skills", "", "This agent relies on the following skills, installed alongside it.",
             "Use them when relevant:", ""]
    lines += [f"- {name}" for name, _ in item.preload_skills]
    tracker.mapped("preload-skills", "## Skills section in the body")
    return body.rstrip("\n") + "\n\n" + "\n".join(lines)


def place_resources(item: Item, entry_dir: str, resource_dir: str, body: str, owner: str,
                    tracker: Tracker) -> Tuple[str, List[OutputFile]]:
    """Copy resources to `resource_dir`; when it is not the entrypoint's directory, rewrite
    the body's relative links so they still resolve from the generated entrypoint."""
    if not item.resources:
        tracker.emitted("resources", "none")
        return body, []
    files = resource_files(item, resource_dir, owner)
    if resource_dir == entry_dir:
        tracker.emitted("resources", f"{len(files)} file(s) copied beside the entrypoint")
        return body, files
    prefix = posixpath.relpath(resource_dir, entry_dir or ".")
    tracker.mapped("resources", f"{len(files)} file(s) copied to {resource_dir}/, links rewritten")
    return rewrite_links(body, prefix), files




# --- commands, hooks, MCP servers, context: helpers several clients share ---------------



def deep_merge(into: Dict[str, Any], extra: Dict[str, Any]) -> None:
    """`extra` over `into`; maps present in both (a `metadata:` map) are merged key by key."""
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merged = dict(into[key])
            deep_merge(merged, value)
            into[key] = merged
        else:
            into[key] = value

def context_section(adapter: "ClientAdapter", item: Item, ctx: RenderContext, tracker: Tracker,
                    path: str) -> List[Any]:
    """One section of the global context document `path`, ordered by (order, name)."""
    body = adapter.body(item, ctx, tracker)
    tracker.omitted("description", "documentation of the context item; the document carries its text")
    if "name" in item.fields:
        tracker.mapped("name", "orders sections with the same order:")
    order = item.fields.get("order", 0)
    if "order" in item.fields:
        tracker.mapped("order", f"position of the section in {path}")
    files: List[Any] = []
    if item.resources:
        res_dir = f".agentrc/context/{item.name}"
        prefix = posixpath.relpath(res_dir, posixpath.dirname(path) or ".")
        body = rewrite_links(body, prefix)
        files = resource_files(item, res_dir, f"context:{item.name}")
        tracker.mapped("resources", f"{len(files)} file(s) copied to {res_dir}/, links rewritten")
    else:
        tracker.emitted("resources", "none")
    key = (f"{order + 10 ** 9:010d}", item.name)
    files.append(Fragment(path, "sections", key, format_body(body.strip("\n") + "\n") if body.strip() else "",
                          False, adapter.owner(item)))
    return files
