"""Checks of one source file of the portable format (spec 001 §3): text in, diagnostics out.

Enters: a `SourceFile` (or its already-split text and frontmatter data with positions),
the client families of the run and the passthrough blocks. Leaves: diagnostics appended
to the caller's `Diagnostics`, plus what a check had to compute anyway: the decoded text,
the `Located` frontmatter mapping, the body's directive blocks, an override file's body.

Both front doors run these checks: item directories (`portable.items.parse_item`) and the
canonical document (`canonical.document`), which holds frontmatter data but no files.
They live apart from discovery and from building `Item`s so that what a field may hold is
decided in one place. Nothing here decides which files make up an item (`discovery`).
"""

from __future__ import annotations

import _thread
import contextlib

from agentrc import SUPPORTED_SCHEMA, schemas
from agentrc.diagnostics import Diagnostics
from agentrc.model import MATCHER_EVENTS, TOOL_EVENTS, Kind, SourceFile
from agentrc.names import MAX_NAME_LENGTH, valid_name
from agentrc.portable import body as body_rules
from agentrc.portable import directives
from agentrc.suggest import closest, did_you_mean
from agentrc.text.frontmatter import split
from agentrc.text.markdown import Scanned, literal_lines
from agentrc.text.yamlpos import Located, YamlError
from agentrc.text.yamlpos import load as load_yaml
from agentrc.vocabulary import TOOLS, check_model

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Collection, Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple

DESCRIPTION_MAX = 1024
SKILL_DESCRIPTION_SOFT = 200


class _Consuming(_thread._local):
    """Whether the files checked are someone else's, being consumed (`agentrc add`,
    `install`, `update`): then a description over DESCRIPTION_MAX is a warning, not an error
    (issue 31). Each thread's own, as a context variable would be (agentrc checks in no
    coroutine), without importing `contextvars` (an extension module: 0.4 ms of a replayed
    edit, which parses its item)."""

    on = False


_CONSUMED = _Consuming()


@contextlib.contextmanager
def consuming() -> Iterator[None]:
    """Check what is read inside the block as consumed content: a consumer cannot shorten
    another repository's description, so AR014 does not block the install; the clients
    that would reject the description get it shortened (`clients.base.Adapter.identify`).
    An author's `lint` and `build` stay strict: AR014 is an error there."""
    was, _CONSUMED.on = _CONSUMED.on, True
    try:
        yield
    finally:
        _CONSUMED.on = was

COMMON_FIELDS = ("schema", "name", "description", "license", "audience", "metadata", "requires", "ignore")
KIND_FIELDS = {
    Kind.RULE: ("scope",),
    Kind.SKILL: (),
    Kind.AGENT: ("mode", "model", "tools", "preload-skills"),
    Kind.COMMAND: ("argument-hint", "model", "tools", "agent"),
    Kind.HOOK: ("event", "script", "tools", "matcher", "if", "timeout", "async"),
    Kind.CONTEXT: ("order",),
}
# A skill's fields that clients read and agentrc passes through as written (spec §3.3): an
# unknown skill field is a client's business, unless it is a near miss of one of these or
# of agentrc's own (`descripton:`, `alowed-tools:` would reach no client as meant).
SKILL_CLIENT_FIELDS = ("allowed-tools", "compatibility", "argument-hint", "disable-model-invocation",
                       "user-invocable", "model", "context", "agent", "hooks", "when_to_use", "version")
SKILL_NEAR_MISS = 0.8  # closer than the default: a skill's other fields are legitimate
# What other tools call a field agentrc has: shown instead of the generic hint (AR007's is
# a passthrough block, which would hide a rule's file patterns from every client).
FOREIGN_FIELDS = {
    Kind.RULE: {"globs": "scope.paths", "applyTo": "scope.paths", "apply-to": "scope.paths", "paths": "scope.paths",
                "files": "scope.paths"},
    Kind.AGENT: {"allowed-tools": "tools"},
    Kind.COMMAND: {"allowed-tools": "tools"},
}


# --- source text -----------------------------------------------------------------------

def decode(f: SourceFile, diags: Diagnostics) -> Optional[str]:
    """The file's text with CRLF and a BOM normalised away; None (AR008) if it is not UTF-8."""
    try:
        return f.content.decode("utf-8").replace("\r\n", "\n").lstrip("\ufeff")
    except UnicodeDecodeError as exc:
        diags.error(f.path, (1, 1), "AR008", f"not UTF-8 (byte {exc.start})")
        return None


def parse_yaml(path: str, text: str, offset: int, diags: Diagnostics) -> Optional[Located]:
    """`text` (starting `offset` lines into the file) as a mapping with positions, or None."""
    try:
        located = load_yaml(text, offset)
    except YamlError as exc:
        diags.error(path, exc.pos, exc.code or "AR001", exc.message)
        return None
    for key_path, pos in located.duplicates:
        diags.error(path, pos, "AR004", f"duplicate key {'.'.join(map(str, key_path))!r}")
    if not isinstance(located.data, dict):
        found = type(located.data).__name__ if located.data is not None else "nothing"
        diags.error(path, (offset + 1, 1), "AR003", f"expected a mapping, found {found}")
        return None
    return located


# --- frontmatter -----------------------------------------------------------------------

def schema_ok(path: str, data: Dict[str, Any], located: Located, definition: str, diags: Diagnostics,
              blocks: Sequence[str] = ()) -> bool:
    """Validate `data` against the JSON schema of `definition` (an item kind, "bundle" or
    "registry", the registry root marker)."""
    ok = True
    version = data.get("schema")
    if isinstance(version, int) and not isinstance(version, bool) and version > SUPPORTED_SCHEMA:
        diags.error(path, located.pos(("schema",)), "AR005",
                    f"schema {version} requires a newer agentrc (this one supports schema {SUPPORTED_SCHEMA})")
        return False
    name = definition if definition in ("bundle", "registry") else "item"
    found = schemas.errors(name, data, "" if name != "item" else definition, () if name != "item" else blocks)
    for err in sorted(found, key=lambda e: list(map(str, e.absolute_path))):
        ok = False
        err = _deepest(err)
        where = tuple(err.absolute_path)
        if err.validator == "required":
            missing = err.message.split("'")[1] if "'" in err.message else err.message
            where_text = ".".join(map(str, where))
            field = f"{where_text}.{missing}" if where_text else missing
            near = closest(missing, err.instance) if isinstance(err.instance, dict) else None
            tail = f"; is {near!r} a misspelling of it?" if near else ""
            diags.error(path, located.pos(where), "AR006", f"{field}: required field is missing{tail}")
            continue
        field = ".".join(map(str, where)) or "(top level)"
        if err.validator == "additionalProperties" and err.validator_value is False and \
                isinstance(err.instance, dict):
            _unknown_keys(path, err, where, field, located, diags)
            continue
        diags.error(path, located.pos(where), "AR006", f"{field}: {err.message}")
    if name == "item" and definition in Kind._value2member_map_:
        unknown_fields(path, data, located, Kind(definition), blocks, diags)
    elif name == "bundle":
        props = schemas.load("bundle").get("properties", {})
        for key in data:
            if isinstance(key, str) and key not in props:
                diags.warning(path, located.pos((key,)), "AR007",
                              f"unknown bundle field {key!r} is ignored{did_you_mean(key, props)}")
    return ok


def _unknown_keys(path: str, err: Any, where: Tuple[Any, ...], field: str, located: Located,
                  diags: Diagnostics) -> None:
    """A mapping with keys its schema does not allow (`scope: {path: ...}`, a bundle's
    `items: {skill: ...}`): each key named at its place with the nearest allowed one, instead
    of jsonschema's "Additional properties are not allowed (... was unexpected)"."""
    import re

    props = list(err.schema.get("properties", {})) if isinstance(err.schema, dict) else []
    patterns = list(err.schema.get("patternProperties", {})) if isinstance(err.schema, dict) else []
    extra = [k for k in err.instance if k not in props and not any(re.search(p, str(k)) for p in patterns)]
    for key in extra or [None]:
        if key is None:  # nothing found to name: jsonschema's own words
            diags.error(path, located.pos(where), "AR006", f"{field}: {err.message}")
            continue
        known = f" (known: {', '.join(props)})" if props else ""
        diags.error(path, located.pos(where + (key,)), "AR006",
                    f"{field}: unknown key {str(key)!r}{did_you_mean(str(key), props)}{known}")


def unknown_fields(path: str, data: Dict[str, Any], located: Located, kind: Kind, passthrough: Collection[str],
                   diags: Diagnostics) -> None:
    """AR007 for top-level fields the format does not define, each with the field it was
    probably meant to be. A rule or agent's unknown field is ignored; a skill's is passed to
    clients as written (spec §3.3), so only a near miss of a known field is reported. Run
    with the schema check, whether or not it passed: a misspelt `descripton:` is both a
    missing field and an unknown one, and both are said at once."""
    if kind is Kind.SKILL:
        skill_known = list(COMMON_FIELDS) + list(SKILL_CLIENT_FIELDS) + sorted(passthrough)
        for key in data:
            near = closest(key, skill_known, SKILL_NEAR_MISS) if isinstance(key, str) and key not in skill_known \
                else None
            if near:
                diags.warning(path, located.pos((key,)), "AR007",
                              f"unknown skill field {key!r} is passed to clients as written; did you mean {near!r}?")
        return
    known = list(COMMON_FIELDS) + list(KIND_FIELDS[kind]) + sorted(passthrough)
    for key in data:
        if key in known:
            continue
        foreign = FOREIGN_FIELDS.get(kind, {}).get(key) if isinstance(key, str) else None
        if foreign == "scope.paths":
            tail = "; did you mean scope.paths? A rule's file patterns are written 'scope: {paths: [...]}'"
        elif foreign:
            tail = f"; did you mean {foreign!r}?"
        else:
            tail = did_you_mean(str(key), known)
        diags.warning(path, located.pos((key,)), "AR007", f"unknown {kind.value} field {key!r} is ignored{tail}")


def check_name(path: str, pos: Tuple[int, int], name: Any, kind: Kind, dir_name: str, declared: bool,
               diags: Diagnostics) -> None:
    """`declared` is False when the name was taken from the directory (or the document key)."""
    if len(name) > MAX_NAME_LENGTH:
        diags.error(path, pos, "AR011", f"name {name!r} has {len(name)} characters (at most {MAX_NAME_LENGTH})")
    if not valid_name(name, single_hyphens=kind is Kind.SKILL):
        origin = "" if declared else " (taken from the directory name)"
        diags.error(path, pos, "AR010", f"invalid name {name!r}{origin}")
    if kind is Kind.SKILL and declared and name != dir_name:
        diags.error(path, pos, "AR012", f"skill name {name!r} differs from its directory {dir_name!r}")


def check_description(path: str, pos: Tuple[int, int], text: str, kind: Kind, diags: Diagnostics) -> None:
    if len(text) > DESCRIPTION_MAX and _CONSUMED.on:
        diags.warning(path, pos, "AR014", f"description has {len(text)} characters (at most {DESCRIPTION_MAX}): "
                      "installed; the fidelity report names each client that rejects it, and those that would "
                      "not load the item get it shortened", "The source's author can shorten it; nothing to do here.")
    elif len(text) > DESCRIPTION_MAX:
        diags.error(path, pos, "AR014", f"description has {len(text)} characters (at most {DESCRIPTION_MAX})")
    elif kind is Kind.SKILL and len(text) > SKILL_DESCRIPTION_SOFT:
        diags.warning(path, pos, "AR015",
                      f"skill description has {len(text)} characters (aim for ~{SKILL_DESCRIPTION_SOFT})")


def check_fields(path: str, data: Dict[str, Any], located: Located, kind: Kind, families: FrozenSet[str],
                 passthrough: Collection[str], diags: Diagnostics) -> None:
    """Audience, passthrough blocks, tools and model: what the schema cannot say (unknown
    fields are `unknown_fields`', run with the schema check)."""
    for i, fam in enumerate(data.get("audience", ())):
        if fam not in families:
            diags.error(path, located.pos(("audience", i)), "AR006",
                        f"audience: unknown client {fam!r}{did_you_mean(fam, sorted(families))} "
                        f"(known: {', '.join(sorted(families))})")
    for block in sorted(passthrough):
        if block in data and not isinstance(data[block], dict):
            diags.error(path, located.pos((block,)), "AR006", f"{block}: passthrough block must be a mapping")
    if kind is Kind.SKILL:
        return  # unknown skill fields pass through to clients (spec §3.3); near misses: unknown_fields
    if kind is Kind.HOOK and data.get("event") not in TOOL_EVENTS:
        # A matcher also selects what started SessionStart, SessionEnd, ... (MATCHER_EVENTS).
        for key in ("tools", "matcher"):
            if key in data and (key == "tools" or data.get("event") not in MATCHER_EVENTS):
                events = TOOL_EVENTS if key == "tools" else MATCHER_EVENTS
                diags.warning(path, located.pos((key,)), "AR082",
                              f"{key}: only {(' and ' if key == 'tools' else ', ').join(events)} hooks match "
                              f"{'tools' if key == 'tools' else 'anything'}; it is ignored for {data.get('event')}")
    if kind in (Kind.AGENT, Kind.COMMAND, Kind.HOOK):
        for i, tool in enumerate(data.get("tools", ())):
            if tool not in TOOLS:
                diags.error(path, located.pos(("tools", i)), "AR080",
                            f"unknown tool {tool!r}{did_you_mean(tool, TOOLS)} (vocabulary: {', '.join(TOOLS)})")
        if "model" in data and not check_model(data["model"]):
            diags.warning(path, located.pos(("model",)), "AR081",
                          f"model {data['model']!r} is neither a portable alias nor a provider/model id; "
                          "each client's fidelity report says what it made of it")


# --- file names --------------------------------------------------------------------------

# Other tools' names for an item's file, and the entrypoint agentrc reads instead.
FOREIGN_ENTRYPOINTS = {"prompt.md": "COMMAND.md", "instructions.md": "RULE.md", "subagent.md": "AGENT.md"}
FOREIGN_SUFFIXES = ((".prompt.md", "COMMAND.md"), (".instructions.md", "RULE.md"), (".mdc", "RULE.md"),
                    (".agent.md", "AGENT.md"), (".chatmode.md", "AGENT.md"))
# Files a project holds for a client's own reading, never meant as an item's entrypoint.
CLIENT_FILES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md", "README.md", "CHANGELOG.md", "LICENSE.md")


def misnamed_entrypoints(paths: Sequence[str]) -> List[Tuple[str, str]]:
    """(path, the entrypoint it was probably meant to be) for each file that sits where no
    item is (no entrypoint in its directory or above it) and whose name is an entrypoint's
    in another case (`skill.md`), a near miss (`SKILLS.md`) or another tool's name for one
    (`PROMPT.md`, `x.instructions.md`). Discovery takes only the exact names, so such a file
    is silently no item at all."""
    from agentrc.model import ENTRYPOINTS

    dirs_with_items = {p.rpartition("/")[0] for p in paths if p.rpartition("/")[2] in ENTRYPOINTS}
    found = []
    for p in sorted(paths):
        d, _, name = p.rpartition("/")
        if name in ENTRYPOINTS or name in CLIENT_FILES or _inside(d, dirs_with_items):
            continue
        meant = FOREIGN_ENTRYPOINTS.get(name.lower()) or next(
            (e for suffix, e in FOREIGN_SUFFIXES if name.lower().endswith(suffix)), None)
        if meant is None and name.lower().endswith(".md"):
            meant = closest(name, list(ENTRYPOINTS), SKILL_NEAR_MISS)
        if meant:
            found.append((p, meant))
    return found


def _inside(d: str, dirs: Collection[str]) -> bool:
    while True:
        if d in dirs:
            return True
        if not d:
            return False
        d = d.rpartition("/")[0]


# --- bodies ----------------------------------------------------------------------------

def check_body(path: str, body: str, line0: int, families: FrozenSet[str], diags: Diagnostics,
               readers: Optional[FrozenSet[str]] = None, arguments: bool = False,
               kind: Optional[Kind] = None, scanned: Optional[Scanned] = None) -> Tuple[directives.Block, ...]:
    """Validate a canonical body; `readers` are the families its audience lets read it, `kind`
    the item's (which client constructs count depends on it; `arguments` marks a command's).
    `scanned`: the body's `Scanned`, when the caller has it (one split of the body serves
    the directives, the body rules and the caller's link checks)."""
    if scanned is None:
        scanned = Scanned(body)
    seen = len(diags.items)
    blocks = directives.parse(body, families, diags, path, line0, scanned)
    broken = any(d.is_error for d in diags.items[seen:])  # a directive error: what it leaves is not judged
    body_rules.check(body, path, line0, diags, blocks, readers or families, arguments=arguments,
                     kind=kind.value if kind is not None else None, scanned=scanned)
    if blocks and not broken:
        _empty_bodies(body, path, line0, blocks, readers or families, diags)
    return blocks


def _empty_bodies(body: str, path: str, line0: int, blocks: Tuple[directives.Block, ...],
                  families: FrozenSet[str], diags: Diagnostics) -> None:
    """AR246 when directives leave a family nothing but headings (an import that wrapped a
    whole list client-only gave the others a skill whose body was `## Deploy`)."""
    if not _prose(body):
        return
    # Families that keep the same blocks get the same body: each distinct one is processed once
    # (a body with one `@client:claude` block has two, however many clients are built).
    prose: Dict[Tuple[bool, ...], bool] = {}
    empty = []
    for f in sorted(families):
        kept = tuple(b.matches(f) for b in blocks)
        if kept not in prose:
            prose[kept] = _prose(directives.process(body, f, blocks))
        if not prose[kept]:
            empty.append(f)
    if empty:
        diags.warning(path, (line0, 1), "AR246", f"directives leave {', '.join(empty)} nothing of the body but "
                      "headings")


def _prose(text: str) -> bool:
    """Whether `text` holds a line that is not blank, a heading or an HTML comment."""
    return any(line.strip() and not line.lstrip().startswith(("#", "<!--")) for line in text.splitlines())


def override_body(f: SourceFile, client: str, families: FrozenSet[str],
                  diags: Diagnostics) -> Optional[Tuple[str, str, int]]:
    """An override file's (body, path, first body line), checked as `client`-only content."""
    text = decode(f, diags)
    if text is None:
        return None
    parts = split(text)
    if parts.yaml_text is not None:
        diags.error(f.path, (1, 1), "AR040", "override files hold body content only")
        return None
    body = text.strip("\n")
    line0 = 1 + (len(text) - len(text.lstrip("\n")))
    scanned = Scanned(body)
    for i in scanned.prose_lines(literal_lines(body, ("<!--",))):
        if directives.OPEN_RE.match(scanned.lines[i]) or directives.END_RE.match(scanned.lines[i]):
            diags.error(f.path, (line0 + i, 1), "AR034",
                        f"directive in an override file: the whole file is already {client}-only")
    body_rules.check(body, f.path, line0, diags, (), families, reader=client, scanned=scanned)
    return (body, f.path, line0)


def _deepest(err: Any) -> Any:
    """The error to report for `err`: for an anyOf/oneOf failure, the error of the form the
    instance is closest to, followed down through nested alternatives.

    The closest form is the branch naming most of the instance's keys (its `required` and
    `properties`), then the one with the fewest errors, then the one whose errors go
    deepest: an entry holding `source` and `plugin` is reported against the form that
    requires them (missing `marketplace`), not against an arbitrary other form. Within the
    branch, the deepest error, first in schema order."""
    while err.context:
        branches: Dict[Any, List[Any]] = {}
        for sub in err.context:
            branches.setdefault(sub.relative_schema_path[0] if sub.relative_schema_path else 0, []).append(sub)
        alternatives = err.validator_value if isinstance(err.validator_value, list) else []

        def fit(item: Tuple[Any, List[Any]]) -> Tuple[int, int, int]:
            index, subs = item
            branch = alternatives[index] if isinstance(index, int) and index < len(alternatives) else {}
            return (_overlap(branch, err.instance), -len(subs), max(len(e.absolute_path) for e in subs))

        _, subs = max(sorted(branches.items(), key=lambda kv: str(kv[0])), key=fit)
        depth = max(len(e.absolute_path) for e in subs)
        err = next(e for e in subs if len(e.absolute_path) == depth)
    return err


def _overlap(branch: Any, instance: Any) -> int:
    """How many keys of `instance` the schema `branch` names (required or properties)."""
    if not isinstance(branch, dict) or not isinstance(instance, dict):
        return 0
    named = set(branch.get("required", ())) | set(branch.get("properties", {}))
    return len(named & set(instance))
