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

from typing import Any, Collection, Dict, FrozenSet, List, Optional, Sequence, Tuple

from agentrc import SUPPORTED_SCHEMA, schemas
from agentrc.diagnostics import Diagnostics
from agentrc.model import TOOL_EVENTS, Kind, SourceFile
from agentrc.names import MAX_NAME_LENGTH, valid_name
from agentrc.portable import body as body_rules
from agentrc.portable import directives
from agentrc.text.frontmatter import split
from agentrc.text.markdown import Scanned, literal_lines
from agentrc.text.yamlpos import Located, YamlError
from agentrc.text.yamlpos import load as load_yaml
from agentrc.vocabulary import TOOLS, check_model

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
            diags.error(path, located.pos(where), "AR006", f"{field}: required field is missing")
            continue
        field = ".".join(map(str, where)) or "(top level)"
        diags.error(path, located.pos(where), "AR006", f"{field}: {err.message}")
    return ok


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
    if len(text) > DESCRIPTION_MAX:
        diags.error(path, pos, "AR014", f"description has {len(text)} characters (at most {DESCRIPTION_MAX})")
    elif kind is Kind.SKILL and len(text) > SKILL_DESCRIPTION_SOFT:
        diags.warning(path, pos, "AR015",
                      f"skill description has {len(text)} characters (aim for ~{SKILL_DESCRIPTION_SOFT})")


def check_fields(path: str, data: Dict[str, Any], located: Located, kind: Kind, families: FrozenSet[str],
                 passthrough: Collection[str], diags: Diagnostics) -> None:
    """Audience, passthrough blocks, unknown fields, tools and model: what the schema cannot say."""
    for i, fam in enumerate(data.get("audience", ())):
        if fam not in families:
            diags.error(path, located.pos(("audience", i)), "AR006",
                        f"audience: unknown client {fam!r} (known: {', '.join(sorted(families))})")
    for block in sorted(passthrough):
        if block in data and not isinstance(data[block], dict):
            diags.error(path, located.pos((block,)), "AR006", f"{block}: passthrough block must be a mapping")
    if kind is Kind.SKILL:
        return  # unknown skill fields pass through to clients (spec §3.3)
    known = set(COMMON_FIELDS) | set(KIND_FIELDS[kind]) | set(passthrough)
    for key in data:
        if key not in known:
            diags.warning(path, located.pos((key,)), "AR007", f"unknown {kind.value} field {key!r} is ignored")
    if kind is Kind.HOOK and data.get("event") not in TOOL_EVENTS:
        for key in ("tools", "matcher"):
            if key in data:
                diags.warning(path, located.pos((key,)), "AR082",
                              f"{key}: only {' and '.join(TOOL_EVENTS)} hooks match tools; "
                              f"it is ignored for {data.get('event')}")
    if kind in (Kind.AGENT, Kind.COMMAND, Kind.HOOK):
        for i, tool in enumerate(data.get("tools", ())):
            if tool not in TOOLS:
                diags.error(path, located.pos(("tools", i)), "AR080",
                            f"unknown tool {tool!r} (vocabulary: {', '.join(TOOLS)})")
        if "model" in data and not check_model(data["model"]):
            diags.warning(path, located.pos(("model",)), "AR081",
                          f"model {data['model']!r} is neither a portable alias nor a provider/model id; "
                          "each client's fidelity report says what it made of it")


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
    blocks = directives.parse(body, families, diags, path, line0, scanned)
    body_rules.check(body, path, line0, diags, blocks, readers or families, arguments=arguments,
                     kind=kind.value if kind is not None else None, scanned=scanned)
    return blocks


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
