"""YAML loading that keeps 1-based positions of every key and value.

Diagnostics must point at `path:line:col`. PyYAML's composer gives nodes with marks; we
build plain Python data from the node tree ourselves so we can (a) record where each path
(tuple of keys/indices) starts, (b) report duplicate keys, which PyYAML silently merges,
and (c) keep everything JSON-compatible (dates and other tags stay strings).

Loading is bounded, because sources come from anyone (docs/security.md, "What agentrc
reads"). YAML aliases share nodes, and building plain data copies them: nine aliases to
nine aliases, six levels deep, is a 257-byte "billion laughs" that took 10 s and 600 MB.
So the data built may hold at most `len(text) + ALIAS_SLACK` more nodes than the document
wrote (each alias of a scalar costs one node and at least two characters, so ordinary
documents never come near), and collections may nest at most `MAX_DEPTH` levels (libyaml's
parser slows down quadratically and its composer overflows the C stack on deep nesting, so
the depth is checked on the event stream before any node is composed). Both limits are
AR009, raised as a `YamlError` carrying that code.

The common frontmatter (block mappings and sequences of one-line scalars, in printable
ASCII) is read without the composer, line by line, to the same data and positions
(`_load_simple`, see there); it holds no alias and nests at most a few levels, so the
bounds cannot apply to it. Every other document goes through the composer (`load_careful`).
"""

from __future__ import annotations

import re
from dataclasses import field
from functools import lru_cache

from agentrc.classcode import dataclass
from agentrc.patterns import pattern
from agentrc.text.lazy import lazy_module

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Tuple

    import yaml
else:  # imported on first use: a build with nothing to do parses no YAML (docs/architecture.md)
    yaml = lazy_module("yaml")


@lru_cache(maxsize=None)
def _loader() -> Any:
    """libyaml's composer where PyYAML has it (several times faster; positions are identical),
    with the tag resolver's common answer given at once.

    The composer asks the resolver for every node's tag (20,000 times for 1,000 items), and
    `Resolver.resolve` builds and walks lists of patterns each time. A quoted scalar, or a
    plain one whose first character starts none of YAML 1.1's bool/int/float/null/merge/
    timestamp forms (most names, descriptions, paths), is a string without looking: with
    no path resolvers (the safe loader has none) that is what `resolve` returns for it."""
    base = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader
    assert not base.yaml_path_resolvers
    implicit_resolvers = base.yaml_implicit_resolvers
    assert None not in implicit_resolvers  # no resolver for every first character
    string_tag = base.DEFAULT_SCALAR_TAG
    scalar_node = yaml.ScalarNode
    slow = base.resolve

    def resolve(self: Any, kind: Any, value: Any, implicit: Any) -> str:
        if kind is scalar_node and (not implicit[0] or (value and value[0] not in implicit_resolvers)):
            return string_tag
        return slow(self, kind, value, implicit)

    return type("PositionsLoader", (base,), {"resolve": resolve})

# The bounds (see the module docstring); docs/security.md quotes them.
ALIAS_SLACK = 10_000
MAX_DEPTH = 100
_NESTING = pattern(r"[\[{\-?:]")  # every collection starts at one of these characters

if TYPE_CHECKING:
    Path = Tuple[Any, ...]
if TYPE_CHECKING:
    Pos = Tuple[int, int]


@dataclass
class Located:
    """Loaded data plus the position of every key (for mappings) and value."""

    data: Any
    key_pos: Dict[Path, Pos] = field(default_factory=dict)
    value_pos: Dict[Path, Pos] = field(default_factory=dict)
    duplicates: List[Tuple[Path, Pos]] = field(default_factory=list)

    def pos(self, path: Path) -> Pos:
        """The best position for a path: its key, else its value, else its nearest parent."""
        path = tuple(path)
        while True:
            if path in self.key_pos:
                return self.key_pos[path]
            if path in self.value_pos:
                return self.value_pos[path]
            if not path:
                return (1, 1)
            path = path[:-1]


class YamlError(Exception):
    """A document that cannot be loaded. `code` is the diagnostic code when the reason is not
    the syntax (AR009 for a bound); callers use their own code (AR001, AR110) otherwise."""

    def __init__(self, message: str, pos: Pos, code: str = ""):
        super().__init__(message)
        self.message = message
        self.pos = pos
        self.code = code


def _mark(node: yaml.Node, line_offset: int) -> Pos:
    return (node.start_mark.line + 1 + line_offset, node.start_mark.column + 1)


_BOOL_TAG = "tag:yaml.org,2002:bool"
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_NULL_TAG = "tag:yaml.org,2002:null"

@lru_cache(maxsize=None)
def _scalar_constructor() -> Any:
    return yaml.SafeLoader("")


def _scalar(node: yaml.ScalarNode) -> Any:
    # Booleans, ints, floats and nulls keep their YAML 1.1 meaning (what clients read);
    # every other tag (timestamps, binary) stays the literal string so data is JSON-safe.
    if node.tag in (_BOOL_TAG, _INT_TAG, _FLOAT_TAG, _NULL_TAG):
        constructor = _scalar_constructor()
        try:
            return constructor.construct_object(node, deep=True)
        finally:  # the constructor memoises by node: it would keep every node for good
            constructor.constructed_objects.pop(node, None)
    return node.value


def load(text: str, line_offset: int = 0) -> Located:
    """Parse one YAML document. `line_offset` shifts positions (frontmatter after '---')."""
    located = _load_simple(text, line_offset)
    if located is not None:
        return located
    return load_careful(text, line_offset)


def load_careful(text: str, line_offset: int = 0) -> Located:
    """`load` through PyYAML's composer, for every document (`load` tries `_load_simple` first)."""
    try:
        _check_depth(text, line_offset)
        node = yaml.compose(text, Loader=_loader())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        pos = (mark.line + 1 + line_offset, mark.column + 1) if mark else (1 + line_offset, 1)
        problem = exc.problem or str(exc)
        raise YamlError(problem + (f" ({exc.context})" if exc.context else ""), pos) from None
    except yaml.YAMLError as exc:  # reader errors (control characters)
        raise YamlError(str(exc).splitlines()[0], (1 + line_offset, 1)) from None
    located = Located(data=None)
    if node is None:
        return located
    located.data = _build(node, (), located, line_offset, set(), _Budget(len(text) + ALIAS_SLACK))
    return located


def _check_depth(text: str, line_offset: int) -> None:
    """AR009 when collections nest deeper than MAX_DEPTH, read from the parser's events (lazy:
    parsing stops at the first level too deep). A document with fewer indicator characters
    than that cannot nest so deep, and skips the pass."""
    if len(_NESTING.findall(text)) <= MAX_DEPTH:
        return
    depth = 0
    for event in yaml.parse(text, Loader=_loader()):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise YamlError(f"collections nest more than {MAX_DEPTH} levels deep",
                                (event.start_mark.line + 1 + line_offset, event.start_mark.column + 1), "AR009")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


class _Budget:
    """The nodes alias resolution may still add: a node built a second time is a copy."""

    def __init__(self, extra: int):
        self.extra = extra
        self.limit = extra
        self.seen: set = set()

    def spend(self, node: yaml.Node, off: int) -> None:
        if id(node) not in self.seen:
            self.seen.add(id(node))
            return
        self.extra -= 1
        if self.extra < 0:
            raise YamlError(f"aliases copy more than {self.limit} values (the document's length plus {ALIAS_SLACK}): "
                            "a 'billion laughs'?", _mark(node, off), "AR009")


def _build(node: yaml.Node, path: Path, loc: Located, off: int, active: set, budget: _Budget) -> Any:
    """Plain data for `node` at `path`, recording positions. `active` holds the collections
    being built around it (a node among them is a recursive alias); it is added to and
    taken from in place rather than copied per collection."""
    budget.spend(node, off)
    value_pos = loc.value_pos
    if path not in value_pos:
        value_pos[path] = _mark(node, off)
    nid = id(node)
    if nid in active:
        raise YamlError("recursive alias", _mark(node, off))
    if isinstance(node, yaml.ScalarNode):
        return _scalar(node)
    active.add(nid)
    try:
        if isinstance(node, yaml.SequenceNode):
            return [_build(child, path + (i,), loc, off, active, budget) for i, child in enumerate(node.value)]
        if isinstance(node, yaml.MappingNode):
            out: Dict[Any, Any] = {}
            key_pos = loc.key_pos
            for key_node, value_node in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    raise YamlError("merge keys ('<<') are not supported", _mark(key_node, off))
                if not isinstance(key_node, yaml.ScalarNode):
                    raise YamlError("mapping keys must be plain scalars", _mark(key_node, off))
                key = _scalar(key_node)
                if not isinstance(key, str):
                    key = str(key_node.value)
                child = path + (key,)
                pos = _mark(key_node, off)
                if key in out:
                    loc.duplicates.append((child, pos))
                key_pos[child] = pos
                out[key] = _build(value_node, child, loc, off, active, budget)
            return out
    finally:
        active.discard(nid)
    raise YamlError(f"unsupported YAML node {type(node).__name__}", _mark(node, off))  # pragma: no cover


# --- the common frontmatter without the composer -----------------------------------------
#
# Most frontmatter is a block mapping of `key: scalar` lines, with nested block mappings
# and block sequences of scalars (`tools:` then `  - read`), one-line flow sequences
# (`args: ["-y", "x"]`) and mappings in sequences (`- name: x`). `_load_simple` reads exactly
# that shape line by line and gives what `load_careful` gives for it (data, positions, no
# duplicates), a quarter of the cost: no node per value, no tag resolution per node through
# the loader. Anything else (a character outside printable ASCII, a tab, a comment, a blank
# line, an empty value, flow mappings and nested or multi-line flow sequences, block
# scalars, anchors, aliases, tags, a sequence in a sequence, a duplicate key, a line that
# could continue a multi-line scalar, an indentation the shape does not expect) returns
# None and the document goes to the composer, which reports its errors as always.
# tests/test_yamlpos_simple.py compares both on every form.

_CONTROL_RE = pattern(r"[\x00-\x09\x0b-\x1f\x7f]")  # in ASCII, what is not printable but a newline
_DECIMAL_RE = pattern(r"[1-9][0-9]*")
# Every row, found at once: (indentation, spaces after '-', its scalar, key, spaces after
# ':', its scalar), the unused half empty. A row no alternative takes is not found at all.
_ROWS_RE = pattern(r"^( *)(?:-( +)(.+)|([A-Za-z_][A-Za-z0-9_-]{0,127}):(?:( +)(.+))?)$", re.MULTILINE)
_DOUBLE_RE = pattern(r'"[^"\\]*"')
# A '-' row's text that starts a block mapping: a key as `_ROWS_RE` takes one, then its value.
_INLINE_KEY_RE = pattern(r"([A-Za-z_][A-Za-z0-9_-]{0,127}):(?:( +)(.+))?")
# A flow sequence on one line: '[', items separated by ',' (spaces around either), ']'. An
# item is a quoted scalar without escapes or a plain word of characters no flow context
# gives a meaning to (no ':', '#', quotes, brackets, braces or spaces); `_simple_scalar`
# then refuses one that starts with an indicator, as in block context.
_FLOW_ITEM = r"""(?:"[^"\\]*"|'[^']*'|[A-Za-z0-9_.~+=$/@-]+)"""
_FLOW_RE = pattern(rf"\[ *(?:{_FLOW_ITEM} *(?:, *{_FLOW_ITEM} *)*)?\]")
_FLOW_ITEM_RE = pattern(rf"[\[,] *({_FLOW_ITEM})")
_SINGLE_RE = pattern(r"'[^']*'")
# A plain scalar starting with one of these is an indicator (or starts one) in YAML.
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_SIMPLE_DEPTH = 8
_SPECIAL_TAGS = frozenset((_BOOL_TAG, _INT_TAG, _FLOAT_TAG, _NULL_TAG))


class _NotSimple(Exception):
    """The document is not of the shape `_load_simple` reads."""


@lru_cache(maxsize=None)
def _resolvers() -> Dict[str, Any]:
    """First character -> the (tag, pattern) list the loader's resolver tries for a plain scalar."""
    return dict(_loader().yaml_implicit_resolvers)


# The first characters of YAML 1.1's implicit types (bool, float, int, merge, null,
# timestamp, value): a plain scalar starting with anything else is a string without asking
# the resolver, so frontmatter of such scalars (and of quoted ones and plain decimals) is
# read without importing PyYAML (10 ms of a one-edit build at 1,000 items). The loader's
# own table is the reference: tests/test_yamlpos_simple.py holds the two equal.
_RESOLVER_FIRST = frozenset("yYnNtTfFoO-+0123456789.<~=")
# Of those, a plain scalar starting with a letter is a bool or a null only when it is one of
# these words (PyYAML's bool and null patterns; their values as its constructor makes them),
# and a string otherwise. Also held equal to the loader by tests/test_yamlpos_simple.py.
IMPLICIT_WORDS: Dict[str, Any] = {
    **{w: True for w in ("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")},
    **{w: False for w in ("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")},
    **{w: None for w in ("null", "Null", "NULL")},
}


def _load_simple(text: str, off: int) -> Any:
    """`load_careful(text, off)` for the common shape (see above), else None."""
    if not text or not text.isascii() or _CONTROL_RE.search(text) or " \n" in text or text[-1] == " ":
        return None
    rows = _ROWS_RE.findall(text)
    if len(rows) != text.count("\n") + (text[-1] != "\n") or rows[0][0] or not rows[0][3]:
        return None  # a row of another form; a top-level sequence or an indented mapping
    loc = Located(data=None)
    try:
        data, end = _simple_mapping(rows, 0, 0, (), loc, off)
    except _NotSimple:
        return None
    if end != len(rows):
        return None  # pragma: no cover - a row indented less than 0
    loc.data = data
    return loc


def _simple_mapping(rows: List[Any], i: int, indent: int, path: Path, loc: Located, off: int) -> Tuple[Any, int]:
    """The block mapping whose keys start at column `indent` from row `i`, and the row after it."""
    if len(path) > _SIMPLE_DEPTH:
        raise _NotSimple
    key_pos, value_pos = loc.key_pos, loc.value_pos
    value_pos[path] = (i + 1 + off, indent + 1)
    out: Dict[str, Any] = {}
    n = len(rows)
    while i < n:
        lead, _, _, key, gap, raw = rows[i]
        at = len(lead)
        if at < indent:
            break
        if at > indent or not key or key in out:
            raise _NotSimple
        child = path + (key,)
        line = i + 1 + off
        key_pos[child] = (line, indent + 1)
        if raw:
            column = at + len(key) + len(gap) + 2
            value_pos[child] = (line, column)
            out[key] = _simple_flow(raw, child, line, column, value_pos) if raw[0] == "[" else _simple_scalar(raw)
            i += 1
            continue
        if i + 1 == n:
            raise _NotSimple  # an empty value
        nxt = rows[i + 1]
        at = len(nxt[0])
        if nxt[2] and at >= indent:
            out[key], i = _simple_sequence(rows, i + 1, at, at == indent, child, loc, off)
        elif nxt[3] and at > indent:
            out[key], i = _simple_mapping(rows, i + 1, at, child, loc, off)
        else:
            raise _NotSimple
    return out, i


def _simple_sequence(rows: List[Any], i: int, indent: int, indentless: bool, path: Path, loc: Located,
                     off: int) -> Tuple[Any, int]:
    """The block sequence whose '-' stand at column `indent` from row `i` (`indentless`: at
    its key's column, where a key ends it), and the row after it. Its items are scalars,
    one-line flow sequences, or block mappings whose first key follows the '-' (`requires:`
    then `  - name: base` and `    version: ^1`)."""
    value_pos = loc.value_pos
    value_pos[path] = (i + 1 + off, indent + 1)
    out: List[Any] = []
    n = len(rows)
    while i < n:
        lead, gap, raw, _, _, _ = rows[i]
        at = len(lead)
        if at < indent or (indentless and at == indent and not raw):
            break
        if at > indent or not raw:
            raise _NotSimple
        item = path + (len(out),)
        inline = _INLINE_KEY_RE.fullmatch(raw) if (": " in raw or raw[-1] == ":") else None
        if inline is not None:
            # The mapping's keys stand where its first one does: read on as a mapping there,
            # the '-' row taken as that key's row (`rows` is this document's own list).
            inner = at + len(gap) + 1
            rows[i] = (" " * inner, "", "", inline.group(1), inline.group(2) or "", inline.group(3) or "")
            value, i = _simple_mapping(rows, i, inner, item, loc, off)
            out.append(value)
            continue
        column = at + len(gap) + 2
        value_pos[item] = (i + 1 + off, column)
        out.append(_simple_flow(raw, item, i + 1 + off, column, value_pos) if raw[0] == "[" else _simple_scalar(raw))
        i += 1
    return out, i


def _simple_flow(raw: str, path: Path, line: int, column: int, value_pos: Dict[Path, Pos]) -> List[Any]:
    """The one-line flow sequence `raw` (at 1-based `column`) of quoted scalars and plain
    words: `args: ["-y", "@scope/server"]`, `tools: [read, edit]`, as MCP servers and tool
    lists are commonly written. Its items' positions are recorded under `path`."""
    if _FLOW_RE.fullmatch(raw) is None:
        raise _NotSimple
    out: List[Any] = []
    for m in _FLOW_ITEM_RE.finditer(raw):
        value_pos[path + (len(out),)] = (line, column + m.start(1))
        out.append(_simple_scalar(m.group(1)))
    return out


def _simple_scalar(raw: str) -> Any:
    """The value of a one-line scalar, as the composer and `_scalar` make it."""
    first = raw[0]
    if first == '"':
        if _DOUBLE_RE.fullmatch(raw) is None:
            raise _NotSimple
        return raw[1:-1]
    if first == "'":
        if _SINGLE_RE.fullmatch(raw) is None:
            raise _NotSimple
        return raw[1:-1]
    if first in _INDICATORS or ": " in raw or " #" in raw or raw[-1] == ":":
        raise _NotSimple
    if first in _RESOLVER_FIRST:
        if first.isalpha():  # a bool or a null word, else a string
            return IMPLICIT_WORDS[raw] if raw in IMPLICIT_WORDS else raw
        if _DECIMAL_RE.fullmatch(raw):
            return int(raw)  # YAML 1.1's int: no other implicit type takes a plain decimal
        if "/" in raw:
            return raw  # no implicit type takes a '/': a path (`./schemas`) is a string
        for tag, rx in _resolvers().get(first, ()):
            if rx.match(raw):
                if tag in _SPECIAL_TAGS:
                    if tag == _INT_TAG and _DECIMAL_RE.fullmatch(raw):
                        return int(raw)  # what the constructor makes of it (`schema: 1`)
                    return _scalar(yaml.ScalarNode(tag, raw))
                break
    return raw
