"""Byte-level edits of JSON-with-comments files that the user also owns.

Several client configs agentrc writes are shared with their user (`.claude/settings.json`,
`opencode.json`, `.vscode/mcp.json`, `.gemini/settings.json`, `.cursor/mcp.json`).
Loading such a file, changing the dict and dumping it again would reformat it and drop the
user's comments. Instead the text is parsed into spans (where each member and array item
starts and ends, where its comma is), and every edit splices only the bytes of the member
it sets, inserts or removes. Formatting, comments and key order elsewhere stay
byte-identical, and removing a member takes back exactly the bytes inserting it added.

The dialect is JSONC as VS Code and opencode read it: `//` and `/* */` comments and
trailing commas. An edit works on a fresh parse of the text, so spans are never stale; a
run of item edits on one array (agentrc taking out its n `instructions` and putting in
n + 1) is applied from one parse, with exactly the bytes the edits one by one would give,
so the work grows with the array, not with its square. Pure and stdlib-only.
"""

from __future__ import annotations

import json
import json.decoder
import re

from agentrc.classcode import dataclass
from agentrc.patterns import pattern
from agentrc.text.position import TextError, line_col

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple, Union, overload

    Path = Tuple[str, ...]


class JsonEditError(TextError):
    """Malformed JSON(C), or an edit that cannot apply."""


@dataclass(frozen=True)
class SetKey:
    """Set the member at `path` to `value`, creating missing parent objects."""

    path: Path
    value: Any


@dataclass(frozen=True)
class DeleteKey:
    """Remove the member at `path` (every duplicate of it); no-op when absent, or when a
    non-object is in the way."""

    path: Path


@dataclass(frozen=True)
class AppendItem:
    """Append `value` to the array at `path`, creating the array and its parents if missing."""

    path: Path
    value: Any


@dataclass(frozen=True)
class RemoveItem:
    """Remove the first item of the array at `path` equal to `value`; no-op when there is
    no such item or no array there.

    Equal means equal as JSON (object key order aside): 1, 1.0 and true are different.
    """

    path: Path
    value: Any


if TYPE_CHECKING:
    Edit = Union[SetKey, DeleteKey, AppendItem, RemoveItem]


def loads(text: str) -> Any:
    """Parse JSONC; objects are dicts in text order, and of duplicate keys the last wins."""
    return _parse(text).value


def dumps(value: Any, indent: int = 2) -> str:
    """The canonical form agentrc writes a new file in."""
    return json.dumps(value, indent=indent, ensure_ascii=False) + "\n"


def edit(text: str, edits: Sequence[Edit], prune: bool = True) -> str:
    """Apply `edits` in order, changing only the bytes of the members they touch.

    New members go at the end of their object, written like `json.dumps` with the file's
    indent unit (inline in an object written on one line); setting a member to a value it
    already has (as JSON) leaves its bytes alone. SetKey and AppendItem through a
    non-object raise JsonEditError. With `prune`, an object or array that a DeleteKey or
    RemoveItem leaves empty is removed too, up to (not including) the root.

    Empty (or whitespace-only) text stands for `{}`, and the result is then `dumps` of the
    edited value.
    """
    if not text.strip():
        return dumps(loads(edit("{}\n", edits, prune)))
    doc = _Doc(text)  # malformed input is an error even when there is nothing to do
    i = 0
    while i < len(edits):
        e = edits[i]
        j = i + 1
        if isinstance(e, (RemoveItem, AppendItem)):  # a run of item edits on one array: one parse
            while j < len(edits) and type(edits[j]) is type(e) and tuple(edits[j].path) == tuple(e.path):
                j += 1
        elif e.path:  # a run of member edits in one object (MCP servers, say): one parse
            while (j < len(edits) and type(edits[j]) is type(e) and edits[j].path
                   and tuple(edits[j].path[:-1]) == tuple(e.path[:-1])):
                j += 1
        if j - i > 1:
            run = edits[i:j]
            values = [getattr(x, "value", None) for x in run]  # all but DeleteKeys have one
            if isinstance(e, RemoveItem):
                text = _remove_items(doc, tuple(e.path), values, prune)
            elif isinstance(e, AppendItem):
                text = _append_items(doc, tuple(e.path), values, prune)
            elif isinstance(e, DeleteKey):
                text = _delete_keys(doc, [tuple(x.path) for x in run], prune)
            else:
                text = _set_keys(doc, [tuple(x.path) for x in run], values, prune)
        else:
            text = _APPLY[type(e)](doc, e, prune)
        if text is not doc.text:
            doc = _Doc(text)
        i = j
    return text


# --- parsing into spans ----------------------------------------------------------------


@dataclass(eq=False)
class _Node:
    """A value and its span text[start:end]; objects and arrays keep their entries."""

    start: int
    end: int
    value: Any
    entries: Optional[List[_Entry]] = None  # None for scalars
    is_object: bool = False


@dataclass(eq=False)
class _Entry:
    """An object member (with its key) or an array item (key None)."""

    key: Optional[str]
    start: int  # where the key, or the item, starts
    node: _Node
    comma: Optional[int] = None  # the offset of the comma after it, if any


_NUMBER = pattern(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}
_HWS = pattern(r"[ \t]*")


def _error(text: str, pos: int, message: str) -> JsonEditError:
    return JsonEditError(*line_col(text, pos), message)


class _Parser:
    """Recursive descent over the text, recording spans as it goes."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 1 if text.startswith("\ufeff") else 0

    def document(self) -> _Node:
        try:
            node = self.value()
        except RecursionError:
            raise _error(self.text, self.pos, "nested too deeply") from None
        self.skip()
        if self.pos < len(self.text):
            raise self.expected("the end of the document")
        return node

    def peek(self) -> str:
        return self.text[self.pos:self.pos + 1]

    def expected(self, what: str) -> JsonEditError:
        c = self.peek()
        found = repr(c) if c else "the end of the input"
        return _error(self.text, self.pos, f"expected {what}, found {found}")

    def skip(self) -> None:
        """Skip whitespace and comments."""
        t, i, n = self.text, self.pos, len(self.text)
        while i < n:
            if t[i] in " \t\r\n":
                i += 1
            elif t.startswith("//", i):
                j = t.find("\n", i)
                i = n if j < 0 else j
            elif t.startswith("/*", i):
                j = t.find("*/", i + 2)
                if j < 0:
                    raise _error(t, i, "unterminated /* comment")
                i = j + 2
            else:
                break
        self.pos = i

    def value(self) -> _Node:
        self.skip()
        c, start = self.peek(), self.pos
        if c == "{":
            return self.container("}", True)
        if c == "[":
            return self.container("]", False)
        if c == '"':
            text = self.string()
            return _Node(start, self.pos, text)
        m = _NUMBER.match(self.text, start)
        if m:
            self.pos = m.end()
            number = float(m.group()) if m.group(1) or m.group(2) else int(m.group())
            return _Node(start, self.pos, number)
        for word, literal in _LITERALS.items():
            if self.text.startswith(word, start):
                self.pos = start + len(word)
                return _Node(start, self.pos, literal)
        raise self.expected("a value")

    def string(self) -> str:
        try:
            # scanstring exists at runtime (the C or pure-Python scanner); typeshed does not declare it
            s, self.pos = json.decoder.scanstring(  # type: ignore[attr-defined]
                self.text, self.pos + 1, True)
        except json.JSONDecodeError as e:
            message = re.sub(r" (starting )?at$", "", e.msg)
            raise _error(self.text, e.pos, message[:1].lower() + message[1:]) from None
        return s

    def container(self, close: str, is_object: bool) -> _Node:
        entries: List[_Entry] = []
        node = _Node(self.pos, -1, {} if is_object else [], entries, is_object)
        self.pos += 1
        self.skip()
        while self.peek() != close:
            entry = self.member(close) if is_object else self.item()
            entries.append(entry)
            if is_object:
                node.value[entry.key] = entry.node.value
            else:
                node.value.append(entry.node.value)
            self.skip()
            if self.peek() == ",":
                entry.comma = self.pos
                self.pos += 1
                self.skip()
            elif self.peek() != close:
                raise self.expected(f"',' or '{close}'")
        self.pos += 1
        node.end = self.pos
        return node

    def member(self, close: str) -> _Entry:
        start = self.pos
        if self.peek() != '"':
            raise self.expected(f"a string key or '{close}'")
        key = self.string()
        self.skip()
        if self.peek() != ":":
            raise self.expected("':'")
        self.pos += 1
        return _Entry(key, start, self.value())

    def item(self) -> _Entry:
        node = self.value()
        return _Entry(None, node.start, node)


def _parse(text: str) -> _Node:
    return _Parser(text).document()


# --- text helpers ----------------------------------------------------------------------


def _line_start(t: str, pos: int) -> int:
    return t.rfind("\n", 0, pos) + 1


def _line_indent(t: str, pos: int) -> str:
    """The leading spaces and tabs of the line `pos` is on."""
    m = _HWS.match(t, _line_start(t, pos))
    assert m is not None  # _HWS matches the empty string
    return m.group()


def _at_newline(t: str, i: int) -> bool:
    return t.startswith("\n", i) or t.startswith("\r\n", i)


def _past_newline(t: str, i: int) -> int:
    return i + (2 if t.startswith("\r\n", i) else 1)


def _line_rest(t: str, i: int) -> int:
    """From `i`, skip spaces and comments on the same line; stop at its newline or at code.

    A block comment that starts on the line is skipped whole, even when it spans lines.
    """
    n = len(t)
    while i < n and not _at_newline(t, i):
        if t[i] in " \t":
            i += 1
        elif t.startswith("//", i):
            j = t.find("\n", i)
            return n if j < 0 else (j - 1 if t[j - 1] == "\r" else j)
        elif t.startswith("/*", i):
            i = t.index("*/", i + 2) + 2
        else:
            break
    return i


def _splice(t: str, start: int, end: int, new: str) -> str:
    return t[:start] + new + t[end:]


def _one_line(t: str, node: _Node) -> bool:
    return "\n" not in t[node.start:node.end]


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _show(path: Sequence[str]) -> str:
    parts = [k if re.fullmatch(r"[A-Za-z0-9_$-]+", k) else json.dumps(k, ensure_ascii=False) for k in path]
    return ".".join(parts) or "the root"


def _indent_unit(t: str, root: _Node) -> str:
    """The file's indent step: from the first member on its own, deeper-indented line."""
    stack = [root]
    while stack:
        node = stack.pop()
        if not node.entries:
            continue
        first = node.entries[0]
        ls = _line_start(t, first.start)
        prefix, outer = t[ls:first.start], _line_indent(t, node.start)
        if ls > node.start and prefix.startswith(outer) and len(prefix) > len(outer) and not prefix.strip(" \t"):
            return prefix[len(outer):]
        stack.extend(reversed([e.node for e in node.entries]))
    return "  "


class _Doc:
    """One parse of the text, with the newline and indent conventions new bytes follow."""

    def __init__(self, text: str):
        self.text = text
        self.root = _parse(text)
        self.nl = "\r\n" if "\r\n" in text else "\n"
        self.unit = _indent_unit(text, self.root)

    def render(self, key: Optional[str], value: Any, indent: Optional[str]) -> str:
        """A member (or item, key None) as text: compact when `indent` is None, else
        multi-line with nested lines indented from `indent`."""
        if indent is None:
            body = json.dumps(value, ensure_ascii=False, allow_nan=False)
        else:
            body = json.dumps(value, indent=self.unit, ensure_ascii=False, allow_nan=False)
            body = body.replace("\n", self.nl + indent)
        return body if key is None else json.dumps(key, ensure_ascii=False) + ": " + body

    def entry_indent(self, node: _Node, entry: _Entry) -> str:
        """The indent of `entry`'s line when it starts the line, else one step in from `node`."""
        t = self.text
        ls = _line_start(t, entry.start)
        prefix = t[ls:entry.start]
        if ls > node.start and not prefix.strip(" \t"):
            return prefix
        return _line_indent(t, node.start) + self.unit


# --- the four edits --------------------------------------------------------------------


if TYPE_CHECKING:
    @overload
    def _find(doc: _Doc, path: Path, strict: Path) -> Tuple[_Node, int]: ...

    @overload
    def _find(doc: _Doc, path: Path, strict: None) -> Tuple[Optional[_Node], int]: ...


def _find(doc: _Doc, path: Path, strict: Optional[Path]) -> Tuple[Optional[_Node], int]:
    """Follow `path` from the root while it exists: (the node reached, keys followed).

    A non-object in the way gives (None, 0), or is an error naming the edited path when
    `strict` is that path.
    """
    node = doc.root
    for i, key in enumerate(path):
        if not node.is_object:
            if strict is not None:
                raise _not_object(doc, node, path[:i], strict)
            return None, 0
        entry = _lookup(node, key)
        if entry is None:
            return node, i
        node = entry.node
    return node, len(path)


def _lookup(node: _Node, key: str) -> Optional[_Entry]:
    """The member `key` of an object; of duplicates the last, the one that counts."""
    assert node.entries is not None  # an object node always has its entry list
    found = [e for e in node.entries if e.key == key]
    return found[-1] if found else None


def _not_object(doc: _Doc, node: _Node, path: Path, edited: Path) -> JsonEditError:
    return _error(doc.text, node.start, f"cannot edit {_show(edited)}: {_show(path)} is not an object")


def _nest(path: Path, value: Any) -> Any:
    for key in reversed(path):
        value = {key: value}
    return value


def _set_key(doc: _Doc, e: SetKey, prune: bool) -> str:
    text, path = doc.text, tuple(e.path)
    if not path:
        raise JsonEditError(1, 1, "SetKey needs a non-empty path")
    parent, i = _find(doc, path[:-1], strict=path)
    if i < len(path) - 1:
        return _insert(doc, parent, path[i], _nest(path[i + 1:], e.value))
    if not parent.is_object:
        raise _not_object(doc, parent, path[:-1], path)
    entry = _lookup(parent, path[-1])
    if entry is None:
        return _insert(doc, parent, path[-1], e.value)
    if _canon(entry.node.value) == _canon(e.value):
        return text  # unchanged: keep the bytes as they are, however they are formatted
    indent = None if _one_line(text, parent) else doc.entry_indent(parent, entry)
    return _splice(text, entry.node.start, entry.node.end, doc.render(None, e.value, indent))


def _append_item(doc: _Doc, e: AppendItem, prune: bool) -> str:
    text, path = doc.text, tuple(e.path)
    node, i = _find(doc, path, strict=path)
    if i < len(path):
        return _insert(doc, node, path[i], _nest(path[i + 1:], [e.value]))
    if node.entries is None or node.is_object:
        raise _error(text, node.start, f"cannot append to {_show(path)}: it is not an array")
    return _insert(doc, node, None, e.value)


def _delete_key(doc: _Doc, e: DeleteKey, prune: bool) -> str:
    return _delete(doc.text, tuple(e.path), prune, doc)


def _delete(text: str, path: Path, prune: bool, doc: Optional[_Doc] = None) -> str:
    if not path:
        raise JsonEditError(1, 1, "DeleteKey needs a non-empty path")
    removed = False
    while True:  # every duplicate, so no earlier one resurfaces
        doc = doc if doc is not None and doc.text is text else _Doc(text)
        parent, i = _find(doc, path[:-1], strict=None)
        if parent is None or i < len(path) - 1 or not parent.is_object:
            break
        entry = _lookup(parent, path[-1])
        if entry is None:
            break
        text, removed = _remove(doc, parent, entry), True
    return _prune(text, path[:-1]) if removed and prune else text


def _remove_item(doc: _Doc, e: RemoveItem, prune: bool) -> str:
    text, path = doc.text, tuple(e.path)
    node, i = _find(doc, path, strict=None)
    if node is None or i < len(path) or node.entries is None or node.is_object:
        return text
    wanted = _canon(e.value)
    for entry in node.entries:
        if _canon(entry.node.value) == wanted:
            text = _remove(doc, node, entry)
            return _prune(text, path) if prune else text
    return text


def _prune(text: str, path: Path) -> str:
    """Remove the object or array at `path` if it is empty, then its parents likewise."""
    if not path:
        return text
    node, i = _find(_Doc(text), path, strict=None)
    if node is None or i < len(path) or node.entries is None or node.entries:
        return text
    return _delete(text, path, prune=True)


_APPLY: Dict[type, Callable[[_Doc, Any, bool], str]] = {
    SetKey: _set_key,
    DeleteKey: _delete_key,
    AppendItem: _append_item,
    RemoveItem: _remove_item,
}


# --- runs of item edits on one array, from one parse ------------------------------------


def _remove_items(doc: _Doc, path: Path, values: Sequence[Any], prune: bool) -> str:
    """RemoveItem(path, v) for each of `values` in turn, from one parse.

    Where every entry to remove has its line(s) to itself in a multi-line array (how agentrc
    writes its entries, and how formatters lay arrays out), the cuts of all but the last
    removal do not interact: each takes the entry's own lines, and only the comma of the
    array's new last entry goes when its old last entry (with no trailing comma) went, which
    is what removing them one by one gives; likewise in a one-line array with nothing but
    spaces and commas between its entries. The last removal is applied as a single edit
    (it may empty the array, which prune then removes). Other layouts are edited one
    removal at a time."""
    text = doc.text
    node, i = _find(doc, path, strict=None)
    if node is None or i < len(path) or node.entries is None or node.is_object:
        return text  # no array there: every removal is a no-op
    entries = node.entries
    where: Dict[str, List[int]] = {}
    for k, entry in enumerate(entries):
        where.setdefault(_canon(entry.node.value), []).append(k)
    taken: Dict[str, int] = {}
    removed: List[int] = []
    last_value: Any = None
    for value in values:  # each removal takes the first equal entry still there
        canon = _canon(value)
        found, n = where.get(canon, []), taken.get(canon, 0)
        if n < len(found):
            removed.append(found[n])
            taken[canon], last_value = n + 1, value
    if not removed:
        return text
    gone = set(removed[:-1])
    if not gone:
        return _remove_item(doc, RemoveItem(path, last_value), prune)
    cut = _cut(doc, node, gone)
    if cut is None:
        return _one_by_one(doc, [RemoveItem(path, v) for v in values], prune)
    return _remove_item(_Doc(cut), RemoveItem(path, last_value), prune)


def _cut(doc: _Doc, node: _Node, gone: Set[int]) -> Optional[str]:
    """The text with the entries `gone` of `node` (an array or object, some entry of which
    stays) cut as cutting them one by one gives, or None for a layout where the cuts
    interact (then the caller cuts one at a time)."""
    text, entries = doc.text, node.entries
    assert entries is not None  # `gone` indexes them
    keep = max(k for k in range(len(entries)) if k not in gone)  # the last entry left
    last = entries[-1]
    if _one_line(text, node):
        if not _plain_one_line(text, node):
            return None
        # Before `keep`, an entry goes with its comma and the spaces after it; the entries
        # after it go from its end to the end of the last one (its comma too, unless the
        # list keeps a trailing comma).
        spans = [_entry_span(text, entries[k]) for k in sorted(gone) if k < keep]
        if keep < len(entries) - 1:
            kept = entries[keep]
            assert kept.comma is not None  # an entry followed by another one has its comma
            spans.append((kept.node.end if last.comma is None else kept.comma, last.node.end))
    else:
        if not all(_whole_lines(text, entries[k]) for k in gone):
            return None
        spans = [_entry_span(text, entries[k]) for k in sorted(gone)]
        if len(entries) - 1 in gone and last.comma is None:
            comma = entries[keep].comma
            assert comma is not None  # an entry followed by another one has its comma
            spans.append((comma, comma + 1))
    parts, at = [], 0
    for start, end in sorted(spans):
        parts.append(text[at:start])
        at = end
    parts.append(text[at:])
    return "".join(parts)


def _delete_keys(doc: _Doc, paths: Sequence[Path], prune: bool) -> str:
    """DeleteKey(p) for each of `paths` (all in one object) in turn, from one parse: the
    members of all but the last key that is there are cut at once (as `_remove_items`
    does), then that key is deleted as a single edit (it may empty the object)."""
    text, parent_path = doc.text, paths[0][:-1]
    parent, i = _find(doc, parent_path, strict=None)
    if parent is None or i < len(parent_path) or not parent.is_object or not parent.entries:
        return _one_by_one(doc, [DeleteKey(p) for p in paths], prune)  # no-ops, or an error to raise
    present = {e.key for e in parent.entries}
    found: List[str] = []
    for p in paths:  # a key deleted twice is there the first time only
        if p[-1] in present and p[-1] not in found:
            found.append(p[-1])
    if not found:
        return text
    earlier = set(found[:-1])
    gone = {k for k, e in enumerate(parent.entries) if e.key in earlier}
    if not gone:
        return _delete(text, parent_path + (found[-1],), prune, doc)
    cut = _cut(doc, parent, gone)
    if cut is None:
        return _one_by_one(doc, [DeleteKey(p) for p in paths], prune)
    return _delete(cut, parent_path + (found[-1],), prune)


def _set_keys(doc: _Doc, paths: Sequence[Path], values: Sequence[Any], prune: bool) -> str:
    """SetKey(p, v) for each pair in turn, from one parse when the keys are new members of
    one non-empty object (a first one that creates the object or fills it from empty goes
    on its own); otherwise one at a time."""
    parent_path = paths[0][:-1]
    keys = [p[-1] for p in paths]

    def fits(d: _Doc, rest: Sequence[str]) -> Optional[_Node]:
        node, i = _find(d, parent_path, strict=None)
        if node is None or i < len(parent_path) or not node.is_object or not node.entries:
            return None
        present = {e.key for e in node.entries}
        return node if len(set(rest)) == len(rest) and not present & set(rest) else None

    node = fits(doc, keys)
    if node is None and len(keys) > 1:
        text = _set_key(doc, SetKey(paths[0], values[0]), prune)
        doc, paths, values, keys = _Doc(text), paths[1:], values[1:], keys[1:]
        node = fits(doc, keys)
    if node is None:
        return _one_by_one(doc, [SetKey(p, v) for p, v in zip(paths, values)], prune)
    return _insert_many(doc, node, list(zip(keys, values)))


def _insert_many(doc: _Doc, node: _Node, members: Sequence[Tuple[Optional[str], Any]]) -> str:
    """`_insert` of each (key, value) in turn at the end of the non-empty `node`, from one
    parse: each new entry goes after the previous one, on its own line (or after `, ` in a
    one-line container) with the indent and comma style of the entry before it."""
    t = doc.text
    assert node.entries  # the caller checked
    last = node.entries[-1]
    if _one_line(t, node):
        new = "".join(", " + doc.render(k, v, None) for k, v in members)
        return _splice(t, last.node.end, last.node.end, new)
    indent = doc.entry_indent(node, last)
    at = _line_rest(t, last.node.end if last.comma is None else last.comma + 1)
    rendered = [doc.nl + indent + doc.render(k, v, indent) for k, v in members]
    if last.comma is not None:  # trailing commas: every new entry gets one
        return _splice(t, at, at, "".join(r + "," for r in rendered))
    t = _splice(t, at, at, ",".join(rendered))
    return _splice(t, last.node.end, last.node.end, ",")


def _plain_one_line(t: str, node: _Node) -> bool:
    """Whether only spaces and commas are between the entries of a one-line array."""
    entries = node.entries
    assert entries  # a non-empty array
    gaps = [t[node.start + 1:entries[0].start]]
    for e, nxt in zip(entries, entries[1:] + [None]):
        end = nxt.start if nxt is not None else node.end - 1
        gaps.append(t[e.node.end:end].replace(",", "", 1 if e.comma is not None else 0))
    return not "".join(gaps).strip(" \t")


def _whole_lines(t: str, entry: _Entry) -> bool:
    """Whether `entry` (with its comma and the comments after it) has its line(s) to itself."""
    end = entry.node.end if entry.comma is None else entry.comma + 1
    ls = _line_start(t, entry.start)
    return not t[ls:entry.start].strip(" \t") and _at_newline(t, _line_rest(t, end))


def _append_items(doc: _Doc, path: Path, values: Sequence[Any], prune: bool) -> str:
    """AppendItem(path, v) for each of `values` in turn, from one parse (two when the first
    creates the array or fills it from empty: that one goes on its own)."""
    node, i = _find(doc, path, strict=path)
    if i < len(path) or node.entries is None or node.is_object or not node.entries:
        text = _append_item(doc, AppendItem(path, values[0]), prune)
        rest = values[1:]
        if not rest:
            return text
        doc = _Doc(text)
        node, i = _find(doc, path, strict=path)
        if i < len(path) or node.entries is None or node.is_object or not node.entries:
            return _one_by_one(doc, [AppendItem(path, v) for v in rest], prune)
        values = rest
    return _insert_many(doc, node, [(None, v) for v in values])


def _one_by_one(doc: _Doc, edits: Sequence[Edit], prune: bool) -> str:
    text = doc.text
    for e in edits:
        doc = doc if doc.text is text else _Doc(text)
        text = _APPLY[type(e)](doc, e, prune)
    return text


# --- splicing members in and out -------------------------------------------------------


def _insert(doc: _Doc, node: _Node, key: Optional[str], value: Any) -> str:
    """Add a member (or an item, key None) at the end of the object or array `node`."""
    t = doc.text
    if not node.entries:
        return _insert_first(doc, node, key, value)
    last = node.entries[-1]
    if _one_line(t, node):
        return _splice(t, last.node.end, last.node.end, ", " + doc.render(key, value, None))
    indent = doc.entry_indent(node, last)
    at = _line_rest(t, last.node.end if last.comma is None else last.comma + 1)
    new = doc.nl + indent + doc.render(key, value, indent) + ("" if last.comma is None else ",")
    t = _splice(t, at, at, new)
    return t if last.comma is not None else _splice(t, last.node.end, last.node.end, ",")


def _insert_first(doc: _Doc, node: _Node, key: Optional[str], value: Any) -> str:
    """Fill an empty `{}` or `[]`, expanded to one member per line."""
    t, open_, close = doc.text, node.start, node.end - 1
    outer = _line_indent(t, open_)
    indent = outer + doc.unit
    member = indent + doc.render(key, value, indent)
    inside = t[open_ + 1:close]
    if not inside.strip():
        return _splice(t, open_ + 1, close, doc.nl + member + doc.nl + outer)
    ls = _line_start(t, close)
    if ls > open_ and not t[ls:close].strip(" \t"):  # comments inside, the closer on its own line
        return _splice(t, ls, ls, member + doc.nl)
    return _splice(t, close, close, doc.nl + member + doc.nl + outer)


def _remove(doc: _Doc, node: _Node, entry: _Entry) -> str:
    """Cut `entry` out of `node`, leaving no dangling comma and no blank line."""
    t, entries = doc.text, node.entries
    assert entries is not None  # `entry` is one of them
    k = next(i for i, e in enumerate(entries) if e is entry)
    if k == len(entries) - 1 and entry.comma is not None and k > 0 and _one_line(t, node):
        # The last item of a one-line list with a trailing comma (`["a", "b",]`): `_insert`
        # put `, "b"` before that comma, so exactly those bytes go (`["a",]` again).
        comma = entries[k - 1].comma
        assert comma is not None  # an entry followed by another one has its comma
        return t[:comma] + t[entry.node.end:]
    cuts = [_entry_span(t, entry)]
    if k == len(entries) - 1 and entry.comma is None and k > 0:
        comma = entries[k - 1].comma
        assert comma is not None  # an entry followed by another one has its comma
        cuts.append((comma, comma + 1))
    for start, end in sorted(cuts, reverse=True):
        t = t[:start] + t[end:]
    if len(entries) == 1:  # now empty: `{ }` or `{\n}` becomes `{}`
        close = node.end - 1 - sum(end - start for start, end in cuts)
        if not t[node.start + 1:close].strip():
            t = _splice(t, node.start + 1, close, "")
    return t


def _entry_span(t: str, entry: _Entry) -> Tuple[int, int]:
    """The bytes to cut for `entry`: its whole line(s) when it has them to itself (with
    comments on them), else the entry, its comma and the spaces on one side."""
    end = entry.node.end if entry.comma is None else entry.comma + 1
    ls = _line_start(t, entry.start)
    eol = _line_rest(t, end)
    if not t[ls:entry.start].strip(" \t") and _at_newline(t, eol):
        return ls, _past_newline(t, eol)
    m = _HWS.match(t, end)
    assert m is not None  # _HWS matches the empty string
    after = m.end()
    if entry.comma is not None and not _at_newline(t, after):
        return entry.start, after
    before = entry.start
    while before > 0 and t[before - 1] in " \t":
        before -= 1
    return before, end
