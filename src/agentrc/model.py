"""The one internal model every front door parses into and every client adapter consumes.

All classes are frozen and hashable (tuples and FrozenMap, never lists or dicts), so the
Pants plugin can pass them between rules and cache them, and so two equal inputs are
equal values. Positions (1-based line, column) are kept where later stages may need to
point at the source: requires entries, preloaded skills, bundle item references.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import field
from enum import Enum

from agentrc.classcode import dataclass
from agentrc.frozen import FrozenMap

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, FrozenSet, List, Optional, Tuple
    Pos = Tuple[int, int]


class Kind(str, Enum):
    """Item kinds. The first three are spec 001's portable items; commands, hooks and the
    global context are agentrc's items for the capability kinds spec 000 §2 adds, authored
    the same way (an entrypoint with frontmatter in an item directory)."""

    RULE = "rule"
    SKILL = "skill"
    AGENT = "agent"
    COMMAND = "command"
    HOOK = "hook"
    CONTEXT = "context"

    @property
    def entrypoint(self) -> str:
        return f"{self.name}.md"

    @property
    def plural(self) -> str:
        return self.value + "s"


ENTRYPOINTS = {kind.entrypoint: kind for kind in Kind}
KIND_BY_PLURAL = {kind.plural: kind for kind in Kind}


@dataclass(frozen=True)
class SourceFile:
    """One input file. `path` is the display path (posix), as diagnostics show it.

    `link` is set when the file on disk was a symlink: the display path of its target, or
    an absolute path when the target lies outside every root that was read.
    """

    path: str
    content: bytes
    executable: bool = False
    link: Optional[str] = None

    def sha256(self) -> bytes:
        """The sha256 of `content` (a source known by its digest need not be read for it),
        computed once: Pants keeps a target's files between runs, and each run's plan keys
        every item directory by its files' digests."""
        known = self.__dict__.get("_sha256")
        if known is None:
            known = hashlib.sha256(self.content).digest()
            object.__setattr__(self, "_sha256", known)  # not a field: equality and hash stay the fields'
        return known

    def release(self) -> None:
        """Let go of `content` if it can be had again (`agentrc.inputs.read`): the parser
        calls this once an item directory is parsed. An ordinary file keeps its bytes."""


@dataclass(frozen=True)
class SourceTree:
    """A snapshot of input files, the only thing the pure core reads."""

    files: Tuple[SourceFile, ...]

    def digest(self) -> str:
        h = hashlib.sha256()
        for f in self.files:
            h.update(f.path.encode() + b"\0" + f.sha256())
        return h.hexdigest()


@dataclass(frozen=True)
class Ref:
    """A reference to an item (`requires.<kind>` entry, bundle `items` entry)."""

    kind: Kind
    name: str
    pos: Pos = (0, 0)
    source: Optional[str] = None


@dataclass(frozen=True)
class BundleRef:
    """A bundle named by another bundle's `requires`, as written (with its version and source)."""
    name: str
    pos: Pos = (0, 0)
    version: Optional[str] = None
    source: Optional[str] = None


@dataclass(frozen=True)
class Resource:
    """A supporting file copied beside an item's generated entrypoint."""

    path: str  # relative to the item directory, posix
    content: bytes
    executable: bool = False


HOOK_EVENTS = ("SessionStart", "SessionEnd", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop",
               "SubagentStop", "PreCompact", "Notification")
# The events about a tool call: only their hooks take `tools:` (lint AR082).
TOOL_EVENTS = ("PreToolUse", "PostToolUse")
# The events whose hooks take a `matcher:`: the tool events (tool names) and those Claude Code
# matches on what started them (SessionStart: startup|resume|clear|compact; SessionEnd: the
# reason; PreCompact: manual|auto; Notification: its type; SubagentStop: the agent type).
# UserPromptSubmit and Stop have nothing to match (lint AR082).
MATCHER_EVENTS = TOOL_EVENTS + ("SessionStart", "SessionEnd", "PreCompact", "Notification", "SubagentStop")
# Programs a hook's command may start its script file with (`python3 ./check.py`): the file
# after them is the hook's script file when the hook directory holds it.
HOOK_RUNNERS = ("bash", "sh", "zsh", "python", "python3", "node", "ruby", "perl", "pwsh", "deno", "bun")


@dataclass(frozen=True)
class HookSpec:
    """What a HOOK.md declares: run `script` on `event`, for the portable `tools` (or a raw
    client `matcher`), only when `condition` (`if:`, a Claude Code permission rule such as
    `Bash(git commit:*)`) holds, within `timeout` seconds. `script_file` is the supporting
    file the command runs (`./check.sh ...`, or `python3 ./check.py ...` with `runner`
    "python3"), which each client gets a path to. A client that cannot express `condition`,
    or a matcher on an event that is not about tools, does not get the hook: it would run
    more often than written."""

    event: str
    script: str
    tools: Optional[Tuple[str, ...]] = None
    matcher: Optional[str] = None
    timeout: Optional[int] = None
    run_async: bool = False
    script_file: Optional[str] = None  # relative to the item directory
    script_args: str = ""  # what follows the script file in `script`
    condition: Optional[str] = None  # `if:`
    runner: str = ""  # the program before the script file (`python3`), or ""


@dataclass(frozen=True)
class McpServer:
    """One entry of a bundle's `mcps` map (spec 001 §3.6): a local (stdio) or remote server."""

    name: str
    bundle: str
    path: str  # the bundle file
    pos: Pos
    transport: str  # "stdio", "http" or "sse"
    command: Optional[str] = None
    args: Tuple[str, ...] = ()
    env: FrozenMap = field(default_factory=FrozenMap)
    url: Optional[str] = None
    headers: FrozenMap = field(default_factory=FrozenMap)
    requires_env: Tuple[str, ...] = ()
    fields: FrozenMap = field(default_factory=FrozenMap)  # the raw entry, for fidelity reports

    @property
    def label(self) -> str:
        return f"mcp server {self.name}"


@dataclass(frozen=True)
class Item:
    """An item of any kind, parsed from its entrypoint and item directory."""

    kind: Kind
    name: str
    directory: str  # display path of the item directory
    entrypoint: str  # display path of RULE.md / SKILL.md / AGENT.md
    schema: int
    description: str
    body: str  # canonical body, directives unprocessed
    body_line: int  # 1-based line of the body's first line in the entrypoint
    fields: FrozenMap  # the whole frontmatter, frozen: what fidelity reports walk
    license: Optional[str] = None
    audience: Tuple[str, ...] = ()  # empty: every client
    metadata: FrozenMap = field(default_factory=FrozenMap)
    requires: Tuple[Ref, ...] = ()
    ignore: Tuple[str, ...] = ()
    scope_paths: Tuple[str, ...] = ()
    mode: Optional[str] = None
    model: Optional[str] = None
    tools: Optional[Tuple[str, ...]] = None  # None: the client's default set
    preload_skills: Tuple[Tuple[str, Pos], ...] = ()
    passthrough: FrozenMap = field(default_factory=FrozenMap)  # client -> FrozenMap
    extra: FrozenMap = field(default_factory=FrozenMap)  # unknown top-level fields
    overrides: FrozenMap = field(default_factory=FrozenMap)  # client -> (body, path, line)
    resources: Tuple[Resource, ...] = ()
    digest: str = ""  # digest of the item directory's files: the render memo's key
    field_pos: FrozenMap = field(default_factory=FrozenMap)  # top-level field -> (line, col)
    blocks: Tuple[Any, ...] = ()  # the body's directive blocks (agentrc.portable.directives.Block), parsed once
    hook: Optional["HookSpec"] = None  # set for hooks


    @property
    def key(self) -> Tuple[Kind, str]:
        return (self.kind, self.name)

    @property
    def label(self) -> str:
        return f"{self.kind.value} {self.name}"

    def targets(self, client_family: str) -> bool:
        return not self.audience or client_family in self.audience


@dataclass(frozen=True)
class Bundle:
    """A bundle: a named set of items, with the bundles it requires, its metadata and its plugins."""
    name: str
    path: str
    schema: int
    description: str
    items: Tuple[Ref, ...]
    requires: Tuple[BundleRef, ...] = ()
    license: Optional[str] = None
    metadata: FrozenMap = field(default_factory=FrozenMap)
    plugins: FrozenMap = field(default_factory=FrozenMap)
    mcps: FrozenMap = field(default_factory=FrozenMap)
    servers: Tuple[McpServer, ...] = ()  # `mcps`, parsed


@dataclass(frozen=True)
class ClientNames:
    """What the front doors need to know about the registered clients, handed to them by
    the pipeline so that reading content never depends on the adapters: the families
    `audience:` and directives may name, the passthrough blocks (in registry order) and the
    names `tools.<name>` of a canonical document may use."""

    families: FrozenSet[str]
    blocks: Tuple[str, ...]
    tool_targets: FrozenSet[str]


@dataclass(frozen=True)
class IgnoreList:
    """Paths a project's AI clients must not read or index, as gitignore lines, and the file
    that lists them (the project file's `ignore:`; agentrc.clients.ignorefile writes them)."""

    source: str = ""  # the project file's path
    patterns: Tuple[str, ...] = ()
    pos: Tuple[int, int] = (1, 1)  # where `ignore:` is in it

    MAX_PATTERNS = 10_000
    MAX_PATTERN = 4096

    @staticmethod
    def problem(value: object) -> Optional[str]:
        """Why `value` cannot be a line of an ignore file, or None. One line each: a line
        break would slip a second pattern (a `!` that lets a secret back in) past review."""
        if not isinstance(value, str):
            return "expected a string (one gitignore pattern)"
        if any(c in value for c in "\n\r\x00"):
            return "a pattern is one line (no line break or NUL)"
        if len(value) > IgnoreList.MAX_PATTERN:
            return f"a pattern of more than {IgnoreList.MAX_PATTERN} characters"
        return None

    def key(self) -> List[Any]:
        """What the list adds to a build's no-change key (nothing without one: keys made
        before ignore files stay valid)."""
        return [["ignore", self.source, list(self.patterns)]] if self.patterns else []


@dataclass(frozen=True)
class Registry:
    """Every item and bundle found in the inputs, in a stable order."""

    items: Tuple[Item, ...]
    bundles: Tuple[Bundle, ...] = ()
    # Target-only configuration of canonical documents (spec 000 `tools.<target>`), by
    # target name; each adapter gets only its own (`tools_file`).
    tools: FrozenMap = field(default_factory=FrozenMap)
    # The registry roots found in the inputs (directories holding `agentrc-registry.yaml`),
    # sorted: each is a namespace of its own; items and bundles under none of them share the
    # unnamed registry "" (agentrc.portable.discovery.registry_of).
    roots: Tuple[str, ...] = ()
    # The project file's `ignore:` list: every built client with an ignore file gets it.
    ignore: "IgnoreList" = field(default_factory=lambda: IgnoreList())

    def item(self, kind: Kind, name: str) -> Optional[Item]:
        """The first item of `kind` named `name` (a plain string kind is taken as the Kind it
        names). By an index made at the first lookup: a closure of N entries looked each up
        in a pass over N items (issue 36)."""
        try:
            key = (kind if isinstance(kind, Kind) else Kind(kind), name)
        except ValueError:
            return None
        return self._by_key.get(key)

    @functools.cached_property
    def _by_key(self) -> Dict[Tuple[Kind, str], Item]:
        index: Dict[Tuple[Kind, str], Item] = {}
        for it in self.items:
            index.setdefault((it.kind, it.name), it)
        return index

    def __getstate__(self) -> Dict[str, Any]:
        """The fields only: the index is this process's, and a pickled registry's bytes must
        not depend on whether it was looked into."""
        state = dict(self.__dict__)
        state.pop("_by_key", None)
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)

    def bundle(self, name: str) -> Optional[Bundle]:
        for b in self.bundles:
            if b.name == name:
                return b
        return None
