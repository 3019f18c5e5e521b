"""Deterministic TOML for files agentrc writes, and table-level edits of one it shares.

Whole files (`.codex/agents/<name>.toml`, Gemini command files) are written by `dumps`:
the same input gives the same bytes, which goldens and `--check` rely on. Codex's
`.codex/config.toml` is also its user's, and agentrc owns only some tables in it
(`[mcp_servers.<name>]` and their sub-tables). `set_table` and `delete_table` splice
exactly those tables' bytes; every other byte, comments and the user's tables included,
stays as it was. `has_key` tells whether the user already defined a table in any of the
common forms, so the caller can refuse to overwrite it, and `loads` reads the values back,
so the caller can tell a table agentrc would write itself (adopted after the manifest is
lost: TOML has no reader in Python 3.9's standard library, and tomli is optional) from the
user's own.

The scanner finding headers is not a validator: it knows just enough TOML (the four
string kinds, arrays, inline tables, comments, the bare values) never to take a `[` inside
a value for a header, and to read every value agentrc writes. Pure and stdlib-only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from agentrc.classcode import dataclass
from agentrc.patterns import pattern
from agentrc.text.position import Lines, TextError, line_col

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

if TYPE_CHECKING:
    Path = Tuple[str, ...]


class TomlEditError(TextError):
    """Text the scanner cannot follow, or an edit that would break the file."""


# --- dumps -----------------------------------------------------------------------------

_BARE_KEY = pattern(r"[A-Za-z0-9_-]+")
_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}
_TO_ESCAPE = pattern(r'[\x00-\x1f\x7f"\\]')
_NOT_IN_LITERAL = pattern(r"[\x00-\x08\x0a-\x1f\x7f]")  # what a '''literal''' cannot hold, newline aside


def dumps(doc: Mapping[str, Any]) -> str:
    """`doc` as TOML: its plain keys first, then its tables, each in the given order.

    A list whose items are all mappings becomes an array of tables (`[[x]]`); a table
    holding only sub-tables gets no header of its own (`[a.b]` alone); None is skipped.
    """
    return "\n".join(_sections((), doc, False))


def _sections(path: Path, table: Mapping[str, Any], array: bool) -> List[str]:
    """The header-and-body blocks for `table` and, after it, its sub-tables."""
    plain: List[Tuple[str, Any]] = []
    nested: List[Tuple[str, Any]] = []
    for key, value in table.items():
        if value is not None:
            (nested if _is_table(value) or _is_table_array(value) else plain).append((key, value))
    body = "".join(f"{_key(k)} = {_value(v)}\n" for k, v in plain)
    out = []
    if path and (array or body or not nested):
        out.append(("[[{}]]\n" if array else "[{}]\n").format(_dotted(path)) + body)
    elif body:
        out.append(body)
    for key, value in nested:
        if _is_table(value):
            out.extend(_sections(path + (key,), value, False))
        else:
            for item in value:
                if item is not None:
                    out.extend(_sections(path + (key,), item, True))
    return out


def _is_table(value: Any) -> bool:
    return isinstance(value, Mapping)


def _is_table_array(value: Any) -> bool:
    items = [v for v in value if v is not None] if isinstance(value, (list, tuple)) else []
    return bool(items) and all(isinstance(v, Mapping) for v in items)


def _key(key: str) -> str:
    if not isinstance(key, str):
        raise TypeError(f"TOML keys are strings, not {type(key).__name__}")
    return key if _BARE_KEY.fullmatch(key) else f'"{_escape(key)}"'


def _dotted(path: Path) -> str:
    return ".".join(_key(k) for k in path)


def _value(value: Any) -> str:
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, Mapping):
        pairs = [f"{_key(k)} = {_value(v)}" for k, v in value.items() if v is not None]
        return "{ " + ", ".join(pairs) + " }" if pairs else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value if v is not None) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def _float(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def _string(s: str) -> str:
    """A basic string; with newlines a '''literal''' block when it holds `s` as is (no
    ''', no trailing ', no control character but tab), else a \"\"\"basic\"\"\" block."""
    if "\n" not in s:
        return f'"{_escape(s)}"'
    if "'''" not in s and not s.endswith("'") and not _NOT_IN_LITERAL.search(s.replace("\n", "")):
        return "'''\n" + s + "'''"
    return '"""\n' + _escape(s, keep="\n") + '"""'


def _escape(s: str, keep: str = "") -> str:
    def one(m: re.Match) -> str:
        c = m.group()
        return c if c in keep else _ESCAPES.get(c, f"\\u{ord(c):04X}")

    return _TO_ESCAPE.sub(one, s)


# --- scanning headers and keys ---------------------------------------------------------


@dataclass(frozen=True)
class _Header:
    """A table header of a TOML file being edited: its key path and where its line starts."""
    path: Path
    start: int  # the start of its line
    array: bool


@dataclass(frozen=True)
class _KeyValue:
    """A key and value of a TOML file being edited, with the table it sits under."""
    table: Path  # the header it sits under
    key: Path
    pos: int
    value: Any


@dataclass(frozen=True)
class Other:
    """A value `loads` keeps as its text (a date or a time): agentrc never writes one, so it
    equals nothing agentrc compares it with."""

    text: str


_HWS = pattern(r"[ \t]*")
_BARE_VALUE = pattern(r"[A-Za-z0-9_+.:-]+(?: [0-9]{2}:[0-9]{2}[A-Za-z0-9_+.:-]*)?")  # numbers, dates, true
# An escape, or (in a multi-line basic string) a backslash ending a line, which drops the
# newline and the whitespace after it.
_KEY_ESCAPE = pattern(r'\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|x([0-9A-Fa-f]{2})|([ \t]*\r?\n[ \t\r\n]*)|(.))',
                      re.DOTALL)
_INTEGER = pattern(r"[+-]?(?:0|[1-9](?:_?[0-9])*)|0x[0-9A-Fa-f](?:_?[0-9A-Fa-f])*|0o[0-7](?:_?[0-7])*"
                   r"|0b[01](?:_?[01])*")
_FLOAT = pattern(r"[+-]?(?:0|[1-9](?:_?[0-9])*)(?:\.[0-9](?:_?[0-9])*)?(?:[eE][+-]?[0-9](?:_?[0-9])*)?"
                 r"|[+-]?(?:inf|nan)")
MAX_DEPTH = 100  # arrays and inline tables nested deeper are refused, as for every other configuration
_NAMED = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\", "e": "\x1b"}


def _error(text: str, pos: int, message: str) -> TomlEditError:
    return TomlEditError(*line_col(text, pos), message)


class _Scanner:
    """One pass over the text, line by line, recording headers, keys (with their values),
    comment lines, and the document they make."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        self.depth = 0
        self.headers: List[_Header] = []
        self.keys: List[_KeyValue] = []
        self.comment_lines: Set[int] = set()  # starts of lines holding only a comment
        self.doc: Dict[str, Any] = {}
        self._scan()

    def fail(self, message: str, pos: Optional[int] = None) -> TomlEditError:
        return _error(self.text, self.pos if pos is None else pos, message)

    def peek(self, n: int = 1) -> str:
        return self.text[self.pos:self.pos + n]

    def _scan(self) -> None:
        table: Path = ()
        current = self.doc  # the table keys are defined in
        while self.pos < len(self.text):
            line = self.pos
            self.skip_hws()
            c = self.peek()
            if c == "#":
                self.comment_lines.add(line)
            elif c == "[":
                header = self.header(line)
                self.headers.append(header)
                table = header.path
                current = _open_table(self.doc, header.path, header.array)
            elif c not in ("\n", "\r", ""):
                kv = self.key_value(table)
                self.keys.append(kv)
                _define(current, kv.key, kv.value)
            self.end_of_line()

    def skip_hws(self) -> None:
        m = _HWS.match(self.text, self.pos)
        assert m is not None  # _HWS matches the empty string
        self.pos = m.end()

    def skip_blank(self) -> None:
        """Whitespace, newlines and comments, as allowed inside arrays."""
        while True:
            self.skip_hws()
            c = self.peek()
            if c == "#":
                j = self.text.find("\n", self.pos)
                self.pos = len(self.text) if j < 0 else j
            elif c in ("\n", "\r"):
                self.pos += 1
            else:
                return

    def end_of_line(self) -> None:
        self.skip_hws()
        if self.peek() == "#":
            j = self.text.find("\n", self.pos)
            self.pos = len(self.text) if j < 0 else j
        if self.peek(2) == "\r\n":
            self.pos += 2
        elif self.peek() == "\n":
            self.pos += 1
        elif self.pos < len(self.text):
            raise self.fail(f"expected the end of the line, found {self.peek()!r}")

    def header(self, line: int) -> _Header:
        array = self.peek(2) == "[["
        self.pos += 2 if array else 1
        path = self.key()
        close = "]]" if array else "]"
        if self.peek(len(close)) != close:
            raise self.fail(f"expected '{close}'")
        self.pos += len(close)
        return _Header(path, line, array)

    def key(self) -> Path:
        """A dotted key, with the spaces around it."""
        parts = []
        while True:
            self.skip_hws()
            parts.append(self.key_part())
            self.skip_hws()
            if self.peek() != ".":
                return tuple(parts)
            self.pos += 1

    def key_part(self) -> str:
        start, c = self.pos, self.peek()
        if c == '"':
            self.basic_string()
            return _unescape(self.text[start + 1:self.pos - 1])
        if c == "'":
            self.literal_string()
            return self.text[start + 1:self.pos - 1]
        m = _BARE_KEY.match(self.text, start)
        if not m:
            raise self.fail("expected a key")
        self.pos = m.end()
        return m.group()

    def key_value(self, table: Path) -> _KeyValue:
        pos = self.pos
        key = self.key()
        if self.peek() != "=":
            raise self.fail("expected '='")
        self.pos += 1
        self.skip_hws()
        return _KeyValue(table, key, pos, self.value())

    def value(self) -> Any:
        """Read one value: strings, numbers and booleans as Python's, arrays as lists, inline
        tables as dicts, dates and times as `Other`."""
        c = self.peek()
        if self.peek(3) in ('"""', "'''"):
            return self.multi_line_string(self.peek(3))
        if c == '"':
            return self.basic_string()
        if c == "'":
            return self.literal_string()
        if c in "[{":
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise self.fail(f"arrays and tables nested more than {MAX_DEPTH} levels deep")
            value = self.array() if c == "[" else self.inline_table()
            self.depth -= 1
            return value
        m = _BARE_VALUE.match(self.text, self.pos)
        if not m:
            raise self.fail("expected a value")
        self.pos = m.end()
        return _bare(m.group())

    def basic_string(self) -> str:
        start, i, t = self.pos, self.pos + 1, self.text
        while i < len(t) and t[i] not in '"\n':
            i += 2 if t[i] == "\\" else 1
        if i >= len(t) or t[i] != '"':
            raise self.fail("unterminated string", start)
        self.pos = i + 1
        return _unescape(t[start + 1:i])

    def literal_string(self) -> str:
        start, t = self.pos, self.text
        end, newline = t.find("'", start + 1), t.find("\n", start + 1)
        if end < 0 or 0 <= newline < end:
            raise self.fail("unterminated string", start)
        self.pos = end + 1
        return t[start + 1:end]

    def multi_line_string(self, delimiter: str) -> str:
        start, i, t = self.pos, self.pos + 3, self.text
        while not t.startswith(delimiter, i):
            if i >= len(t):
                raise self.fail("unterminated multi-line string", start)
            i += 2 if t[i] == "\\" and delimiter == '"""' else 1
        i += 3
        for _ in range(2):  # up to two quotes may end the content right before the delimiter
            if t.startswith(delimiter[0], i):
                i += 1
        self.pos = i
        content = t[start + 3:i - 3]
        for newline in ("\r\n", "\n"):  # a newline right after the delimiter is not content
            if content.startswith(newline):
                content = content[len(newline):]
                break
        return _unescape(content) if delimiter == '"""' else content

    def array(self) -> List[Any]:
        self.pos += 1
        items = []
        while True:
            self.skip_blank()
            if self.peek() == "]":
                break
            items.append(self.value())
            self.skip_blank()
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != "]":
                raise self.fail("expected ',' or ']'")
        self.pos += 1
        return items

    def inline_table(self) -> Dict[str, Any]:
        self.pos += 1
        keys: Dict[str, Any] = {}
        while True:
            self.skip_blank()
            if self.peek() == "}":
                break
            key = self.key()
            if self.peek() != "=":
                raise self.fail("expected '='")
            self.pos += 1
            self.skip_hws()
            _define(keys, key, self.value())
            self.skip_blank()
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != "}":
                raise self.fail("expected ',' or '}'")
        self.pos += 1
        return keys


def _unescape(s: str) -> str:
    def one(m: re.Match) -> str:
        code = m.group(1) or m.group(2) or m.group(3)
        if code:
            return chr(int(code, 16))
        if m.group(4) is not None:
            return ""  # a line-ending backslash
        return _NAMED.get(m.group(5), m.group(5))

    return _KEY_ESCAPE.sub(one, s)


def _bare(text: str) -> Any:
    if text in ("true", "false"):
        return text == "true"
    if _INTEGER.fullmatch(text):
        return int(text.replace("_", ""), 0 if text[:2] in ("0x", "0o", "0b") else 10)
    if _FLOAT.fullmatch(text):
        return float(text.replace("_", ""))
    return Other(text)


def _child(node: Dict[str, Any], part: str) -> Dict[str, Any]:
    """The table `part` of `node` (the last entry of an array of tables), made when absent."""
    value = node.get(part)
    if isinstance(value, list) and value and isinstance(value[-1], dict):
        return value[-1]
    if not isinstance(value, dict):
        node[part] = value = {}
    return value


def _open_table(doc: Dict[str, Any], path: Path, array: bool) -> Dict[str, Any]:
    """The table a `[path]` (or `[[path]]`) header opens in `doc`."""
    node = doc
    for part in path[:-1]:
        node = _child(node, part)
    if not array:
        return _child(node, path[-1])
    entries = node.get(path[-1])
    if not isinstance(entries, list):
        node[path[-1]] = entries = []
    entries.append({})
    return entries[-1]


def _define(keys: Dict[str, Any], key: Path, value: Any) -> None:
    for part in key[:-1]:
        keys = _child(keys, part)
    keys[key[-1]] = value


# --- table spans and edits -------------------------------------------------------------


def table_headers(text: str) -> List[Tuple[Path, int, int]]:
    """Each `[table]` and `[[array]]` header: (its key path, the start of its line, the end
    of its body).

    A body ends where the next header starts, or the comment lines directly above it (no
    blank line between): those comments introduce the next table, so edits of this one
    keep them. Blank lines at the end of a body are part of it.
    """
    return _spans(text, _Scanner(text))


def set_table(text: str, path: Path, table: Mapping[str, Any]) -> str:
    """Replace `[path]` and its sub-tables `[path.*]` with `table` (written by `dumps`
    under `[path]`), where the first of them was; append it if absent.

    Refuses (TomlEditError) when a key elsewhere defines `path`, something inside it, or a
    table containing it (`mcp_servers = {...}`): a header would then break the file. Also
    when `path` runs through an array of tables, where `[path]` would join its last entry.
    """
    path = _need_path(path)
    scan = _Scanner(text)
    _refuse_conflicts(scan, path)
    nl = _newline(text)
    new = dumps(_nest(path, table)).replace("\n", nl)
    spans = [(start, end) for p, start, end in _spans(text, scan) if p[:len(path)] == path]
    if not spans:
        return _append(text, new, nl)
    first_start, first_end = spans[0]
    keep_from = _content_end(text, first_start, first_end)  # its trailing blank lines stay
    for start, end in reversed(spans[1:]):
        text = _cut(text, start, end)
    return text[:first_start] + new + text[keep_from:]


def set_tables(text: str, tables: Sequence[Tuple[Path, Mapping[str, Any]]]) -> str:
    """`set_table` of each (path, table) in turn, from one scan of `text` when every path is
    new to it (no header at or under it) and none is inside another: each is then appended,
    which is what `set_table` does with a table that is absent (so a cold build's n tables
    cost one scan, not n)."""
    if not tables:
        return text
    paths = [_need_path(p) for p, _ in tables]
    scan = _Scanner(text)
    under = {h.path[:k] for h in scan.headers for k in range(1, len(h.path) + 1)}
    wanted = set(paths)
    if len(wanted) < len(paths) or any(p in under or any(p[:k] in wanted for k in range(1, len(p))) for p in paths):
        for path, table in tables:
            text = set_table(text, path, table)
        return text
    for path in paths:
        _refuse_conflicts(scan, path)
    nl = _newline(text)
    for path, table in zip(paths, (t for _, t in tables)):
        text = _append(text, dumps(_nest(path, table)).replace("\n", nl), nl)
    return text


def delete_table(text: str, path: Path) -> str:
    """Remove `[path]` and its sub-tables `[path.*]`, bodies included; no-op if absent.

    Where a table was, at most one blank line remains (none at the end of the file).
    Definitions by keys (`x.y = ...`) are not tables agentrc wrote, and stay.
    """
    path = _need_path(path)
    for p, start, end in reversed(_spans(text, _Scanner(text))):
        if p[:len(path)] == path:
            text = _cut(text, start, end)
    return text


def has_key(text: str, path: Path) -> bool:
    """Whether `path` is defined: a `[path]` or `[path.*]` header, or a key defining it or
    something inside it (`mcp_servers.x.command = ...`, or under `[mcp_servers]`
    `x = {...}`), or an inline table containing it (`mcp_servers = { x = {...} }`)."""
    path = tuple(path)
    scan = _Scanner(text)
    if any(h.path[:len(path)] == path for h in scan.headers):
        return True
    for kv in scan.keys:
        full = kv.table + kv.key
        if full[:len(path)] == path or (path[:len(full)] == full and _inline_has(kv.value, path[len(full):])):
            return True
    return False


def key_positions(text: str) -> Dict[str, Tuple[int, int]]:
    """`a.b.c` -> the 1-based (line, column) where the key is first defined: a `[table]` or
    `[[array]]` header defines its path and each prefix, a `key = value` line its full
    path (under its header) and each new prefix. Keys inside inline tables and arrays take
    no position of their own (a diagnostic about one points at the key holding them)."""
    scan = _Scanner(text)
    spots: List[Tuple[Path, int]] = []
    for h in scan.headers:
        indent = _HWS.match(text, h.start)
        spots.append((h.path, h.start + (indent.end() - h.start if indent else 0)))
    spots.extend((kv.table + kv.key, kv.pos) for kv in scan.keys)
    lines = Lines(text)
    out: Dict[str, Tuple[int, int]] = {}
    for path, pos in sorted(spots, key=lambda s: s[1]):
        for n in range(1, len(path) + 1):
            out.setdefault(".".join(path[:n]), lines.line_col(pos))
    return out


def loads(text: str) -> Dict[str, Any]:
    """The document's values: tables as dicts, arrays of tables as lists of dicts, the rest as
    `value` reads them. Not a validator: a key defined twice keeps its last value."""
    return _Scanner(text).doc


def _need_path(path: Path) -> Path:
    path = tuple(path)
    if not path:
        raise TomlEditError(1, 1, "a table path cannot be empty")
    return path


def _spans(text: str, scan: _Scanner) -> List[Tuple[Path, int, int]]:
    starts = [h.start for h in scan.headers]
    ends = [_lead_start(text, s, scan.comment_lines) for s in starts[1:]] + [len(text)]
    return [(h.path, h.start, end) for h, end in zip(scan.headers, ends)]


def _lead_start(text: str, start: int, comment_lines: Set[int]) -> int:
    """Where the comment lines directly above the line at `start` begin."""
    while start > 0:
        above = text.rfind("\n", 0, start - 1) + 1
        if above not in comment_lines:
            break
        start = above
    return start


def _inline_has(keys: Any, rest: Path) -> bool:
    node: Any = keys
    for part in rest:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _refuse_conflicts(scan: _Scanner, path: Path) -> None:
    for h in scan.headers:
        if h.array and len(h.path) < len(path) and path[:len(h.path)] == h.path:
            raise _error(scan.text, h.start, f"[{_dotted(path)}] would land in the last [[{_dotted(h.path)}]] "
                                             "entry: refusing to write it")
    for kv in scan.keys:
        if kv.table[:len(path)] == path:
            continue  # in a table being replaced
        full = kv.table + kv.key
        n = min(len(full), len(path))
        if full[:n] == path[:n]:
            raise _error(scan.text, kv.pos, f"[{_dotted(path)}] would clash with the key {_dotted(full)} "
                                            "defined here: refusing to overwrite it")


def _nest(path: Path, table: Mapping[str, Any]) -> Dict[str, Any]:
    nested: Dict[str, Any] = dict(table)
    for key in reversed(path):
        nested = {key: nested}
    return nested


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _content_end(text: str, start: int, end: int) -> int:
    """The end of text[start:end] without its trailing blank lines (after the newline of
    its last non-blank line)."""
    body = text[start:end]
    content = len(body.rstrip(" \t\r\n"))
    newline = body.find("\n", content)
    return start + (newline + 1 if newline >= 0 else len(body))


def _append(text: str, new: str, nl: str) -> str:
    if not text.strip():
        return new
    base = text[:_content_end(text, 0, len(text))]
    return base + ("" if base.endswith("\n") else nl) + nl + new


_TRAILING_BLANK = pattern(r"(?:(?<=\n)|\A)(?:[ \t]*\r?\n)+\Z")
_LEADING_BLANK = pattern(r"\A(?:[ \t]*\r?\n)+")


def _cut(text: str, start: int, end: int) -> str:
    """Remove text[start:end], leaving at most one blank line at the seam: none at the start
    or the end of the file."""
    head, tail = text[:start], text[end:]
    if not tail.strip():
        tail = ""
    m = _TRAILING_BLANK.search(head)
    head_blank = m.group() if m else ""
    before = head[:len(head) - len(head_blank)]
    m = _LEADING_BLANK.match(tail)
    tail_blank = m.group() if m else ""
    rest = tail[len(tail_blank):]
    blank = head_blank + tail_blank
    one = blank[:blank.find("\n") + 1] if blank and before.strip() and rest else ""
    return before + one + rest
