"""Files assembled from fragments, and merged into files users own.

Some outputs are shared: the global context document (one section per context item, the
same bytes for every client that reads it) and config files such as `.mcp.json`,
`.claude/settings.json` or `.codex/config.toml`, which several items and clients add keys
to and which users edit too. `assemble()` builds such a file from its fragments (pure; it
is what a fresh tree such as `dist/` holds). `merge()` applies agentrc's keys to the file a
user already has, changing only those keys and removing only what agentrc added before,
through the byte-preserving editors in `jsonedit` and `tomledit`. `recover()` reads
agentrc's keys back from a file `assemble()` wrote: the fidelity report names the keys
only (their values may be secrets), so a workspace sync takes the values from the package.
"""

from __future__ import annotations

import importlib
import json
from collections import OrderedDict
from functools import lru_cache

from agentrc.diagnostics import Diagnostics
from agentrc.files import Fragment, OutputFile
from agentrc.patterns import pattern
from agentrc.text.lazy import lazy_module
from agentrc.text.markdown import demote_headings
from agentrc.text.markedblock import BEGIN, CONTEXT_TITLE, END, block_render

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple

    from agentrc.text import jsonedit, tomledit
else:  # imported when a config file is first merged: a replayed edit of a rule merges none
    jsonedit = lazy_module("agentrc.text.jsonedit")
    tomledit = lazy_module("agentrc.text.tomledit")


@lru_cache(maxsize=None)
def _tomllib() -> Any:
    """tomllib (Python >= 3.11) or tomli (Pants' own venv has it), imported when a TOML file
    is first read, not at start-up (docs/architecture.md); None without either."""
    for name in ("tomllib", "tomli"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None

# Files their client parses as strict JSON (comments make it ignore the whole file), while
# others (.vscode/*.json, opencode.json, .gemini/settings.json) accept JSON with comments.
STRICT_JSON = {".claude/settings.json": "Claude Code", ".mcp.json": "Claude Code"}
if TYPE_CHECKING:
    Key = Tuple[Tuple[str, ...], str, bool]  # (key path, value JSON, appended element?)


def assemble(path: str, fragments: Sequence[Fragment], diags: Diagnostics) -> Optional[OutputFile]:
    """One file from the fragments that name `path`; AR090 when two need different values
    at one key (or different bytes for one context section)."""
    formats = {f.format for f in fragments}
    owners = ", ".join(sorted({f.owner for f in fragments}))
    if len(formats) != 1:
        diags.error(path, (0, 0), "AR090",
                    f"{path}: written in several formats ({', '.join(sorted(formats))}) by {owners}")
        return None
    fmt = formats.pop()
    chosen: "OrderedDict[Tuple[Tuple[str, ...], str, bool], Fragment]" = OrderedDict()
    by_key: Dict[Tuple[str, ...], Fragment] = {}
    for f in fragments:
        if f.append:
            chosen.setdefault((f.key, f.value, True), f)  # identical hook entries from several items: once
            continue
        other = by_key.setdefault(f.key, f)
        if other.value != f.value:
            where = ".".join(f.key[1:] if fmt == "sections" else f.key)
            diags.error(path, (0, 0), "AR090", f"{path}: {f.owner} and {other.owner} need different content for "
                        f"{'section' if fmt == 'sections' else 'key'} {where!r}")
            continue
        chosen.setdefault((f.key, f.value, False), f)
    if fmt == "sections":
        sections = [f.value for _, f in sorted(chosen.items(), key=lambda kv: kv[0][0])]
        text = f"# {CONTEXT_TITLE}\n\n" + "\n\n".join(s.strip("\n") for s in sections) + "\n"
        # The block form: a user's own AGENTS.md keeps its text around agentrc's block.
        return OutputFile(path, block_render("", text).encode("utf-8"), False, owners, "block",
                          (((), text, False),))
    keys = tuple(chosen)
    return OutputFile(path, fresh(fmt, keys).encode("utf-8"), False, owners, fmt, keys)


def fresh(fmt: str, keys: Sequence[Key]) -> str:
    """The file holding agentrc's keys alone (what `render` gives for an absent file)."""
    doc: Dict[str, Any] = OrderedDict()
    for key, value, append in keys:
        node = doc
        for part in key[:-1]:
            node = node.setdefault(part, OrderedDict())
        parsed = json.loads(value, object_pairs_hook=OrderedDict)
        if append:
            node.setdefault(key[-1], []).append(parsed)
        else:
            node[key[-1]] = parsed
    if fmt == "json":
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    return tomledit.dumps(doc)


def recover(fmt: str, text: str, paths: Sequence[Tuple[Tuple[str, ...], bool]]) -> Tuple[Key, ...]:
    """agentrc's keys, values included, read back from `text`, a file that holds them alone
    (what `assemble` gives, and so what a package holds). `paths` are the keys' paths and
    append flags, as the fidelity report lists them: it names keys only, since their values
    (an MCP server's `env` or `headers`) may be secrets, and the file has them anyway. The
    elements appended at one path are that array's items, in the order `paths` lists them.
    ValueError when the file does not hold exactly those keys."""
    if fmt == "block":
        start = text.find(BEGIN)
        end = text.find(END, start)
        if list(paths) != [((), False)] or start < 0 or end < 0:
            raise ValueError("no agentrc block")
        keys: Tuple[Key, ...] = (((), text[start + len(BEGIN):end].strip("\n") + "\n", False),)
        if block_render("", keys[0][1]) != text:
            raise ValueError("holds more than agentrc's block")
        return keys
    doc = _data(fmt, text, OrderedDict)
    taken: Dict[Tuple[str, ...], int] = {}
    out: List[Key] = []
    for path, append in paths:
        found = _lookup(doc, path)
        if append:  # the next of agentrc's elements in that array
            index = taken[path] = taken.get(path, -1) + 1
            found = found[index] if isinstance(found, list) and index < len(found) else _MISSING
        if found is _MISSING:
            raise ValueError(f"no {'entry' if append else 'key'} {'.'.join(path)!r} in it")
        try:
            out.append((tuple(path), json.dumps(found, ensure_ascii=False), append))
        except TypeError as exc:  # a TOML date, which agentrc never writes
            raise ValueError(f"{'.'.join(path)!r} is not JSON data: {exc}") from None
    if _data(fmt, fresh(fmt, out), dict) != _data(fmt, text, dict):
        raise ValueError("holds more than agentrc's keys")
    return tuple(out)


def _data(fmt: str, text: str, mapping: Any) -> Any:
    """The document in a JSON or TOML file (objects as `mapping`, for JSON)."""
    if fmt == "json":
        return json.loads(text, object_pairs_hook=mapping) if text.strip() else mapping()
    if fmt == "toml":
        toml = _tomllib()
        if toml is None:
            raise ValueError("reading TOML needs Python 3.11 or the tomli package")
        return toml.loads(text)
    raise ValueError(f"unknown managed format {fmt!r}")


def render(fmt: str, current: str, old: Sequence[Key], new: Sequence[Key]) -> str:
    """`current` with the keys agentrc owned before (`old`) taken out and `new` put in."""
    if fmt == "block":
        return block_render(current, new[0][1] if new else None)
    if fmt == "json":
        return _render_json(current, old, new)
    if fmt == "toml":
        return _render_toml(current, old, new)
    raise ValueError(f"unknown managed format {fmt!r}")


def conflicts(fmt: str, current: str, old: Sequence[Key], new: Sequence[Key]) -> List[str]:
    """Keys of `new` the user defined themselves (present in `current`, not added by agentrc)."""
    if fmt == "block":
        return []
    owned = {k for k, _, append in old if not append}
    clashes = []
    data = _load(fmt, current)
    for key, value, append in new:
        if append or key in owned:
            continue
        found = _lookup(data, key)
        # The value agentrc would write is adopted, not a clash: after the manifest is lost
        # (the documented recovery), a rebuild takes back what it wrote before. A TOML key
        # that is defined but cannot be looked up (it runs through an array) is a clash.
        defined = found is not _MISSING or (fmt == "toml" and tomledit.has_key(current, key))
        if defined and not same(fmt, found, json.loads(value)):
            clashes.append(".".join(key))
    return clashes


def same(fmt: str, found: Any, value: Any) -> bool:
    """Whether `found` in a file of format `fmt` is what agentrc writes for `value` (JSON
    data): equal, and of the same types (`true` is not `1`). TOML has no null: agentrc leaves
    None out, so it is left out of `value` before comparing."""
    if fmt == "toml" and isinstance(value, dict):
        value = {k: v for k, v in value.items() if v is not None}
    elif fmt == "toml" and isinstance(value, list):
        value = [v for v in value if v is not None]
    if isinstance(value, dict):
        return (isinstance(found, dict) and found.keys() == value.keys()
                and all(same(fmt, found[k], v) for k, v in value.items()))
    if isinstance(value, list):
        return (isinstance(found, list) and len(found) == len(value)
                and all(same(fmt, f, v) for f, v in zip(found, value)))
    if type(found) is not type(value):
        return False
    if isinstance(value, float) and value != value:  # NaN (`math.isnan`, without importing math)
        return found != found
    return bool(found == value)


def edited(fmt: str, current: str, old: Sequence[Key]) -> Tuple[List[str], List[str]]:
    """What the user changed of agentrc's own keys since the last build: keys whose value
    differs (errors: rebuilding would lose the edit) and appended entries no longer there
    (warnings: they are added again)."""
    changed: List[str] = []
    missing: List[str] = []
    if fmt == "block":
        start = current.find(BEGIN)
        if start >= 0 and old:
            end = current.find(END, start)
            inside = current[start + len(BEGIN):end if end >= 0 else len(current)].strip("\n")
            recorded = old[0][1].rstrip("\n")
            if inside not in (recorded, demote_headings(recorded)):
                changed.append("the agentrc block")
        return changed, missing
    data = _load(fmt, current)
    elements = _Elements(data)
    for key, value, append in old:
        found = _lookup(data, key)
        if append:
            if not elements.count(key, value):
                # An entry that still names agentrc's own files (a hook's script path)
                # was edited, not removed: appending ours again would run it twice.
                marks = [t for t in _strings(json.loads(value)) if "/agentrc/" in t]
                edited_entry = isinstance(found, list) and any(
                    m in t for e in found for t in _strings(e) for m in marks)
                (changed if edited_entry else missing).append(".".join(key))
        elif found is not _MISSING and not same(fmt, found, json.loads(value)):
            changed.append(".".join(key))
    return changed, missing


def _load(fmt: str, text: str) -> Any:
    """The data of a merged JSON or TOML file, to compare agentrc's keys with."""
    if not text.strip():
        return {}
    return jsonedit.loads(text) if fmt == "json" else tomledit.loads(text)


def _strings(value: Any) -> List[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def has_comments(text: str) -> bool:
    """Whether JSON text holds // or /* */ comments (outside strings)."""
    if not text.strip():
        return False
    try:
        json.loads(text)
        return False
    except ValueError:
        try:
            jsonedit.loads(text)
            return True
        except ValueError:
            return False


def repeated(text: str) -> List[str]:
    """The paragraphs of agentrc's marked block in `text` (a file the user also writes) that
    the file's own text also holds, compared without their whitespace; headings and short
    lines are not counted (a title may well be repeated)."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        return []
    inside = text[start + len(BEGIN):end]
    outside = text[:start] + "\n\n" + text[end + len(END):]

    def paragraphs(part: str) -> List[str]:
        return [" ".join(p.split()) for p in part.split("\n\n")
                if len(" ".join(p.split())) >= 40 and not p.lstrip().startswith("#")]

    own = set(paragraphs(outside))
    return [p for p in paragraphs(inside) if p in own]


def is_empty(fmt: str, text: str) -> bool:
    """Whether a merged file holds nothing but what an empty document holds."""
    if fmt == "block":
        return not text.strip()
    if fmt == "json":
        return not text.strip() or jsonedit.loads(text) == {}
    stripped = [ln for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    return not stripped


_EMPTY_JSON = pattern(r"\s*(?:\{\s*\})?\s*")


def holds_only(fmt: str, current: str, keys: Sequence[Key]) -> bool:
    """Whether `current` is exactly what agentrc writes with `keys` and holds nothing else:
    merging them changes nothing, and taking them out leaves only whitespace (and the braces
    of an empty JSON object). Such a file, found without a manifest record, is adopted as one
    agentrc created, so removing its keys later removes the file, as after a clean build;
    any byte of the user's (a key, a comment, text around a block) makes it the user's."""
    if not keys or not current.strip():
        return False
    try:
        if render(fmt, current, (), keys) != current:
            return False
        rest = render(fmt, current, keys, ())
    except ValueError:
        return False
    return bool(_EMPTY_JSON.fullmatch(rest)) if fmt == "json" else not rest.strip()


_MISSING = object()


def has_key(fmt: str, text: str, key: Sequence[str]) -> bool:
    """Whether the JSON (with comments) or TOML document `text` has a value at `key`;
    ValueError when it cannot be parsed (what `agentrc doctor` asks of a config file)."""
    data = jsonedit.loads(text) if fmt == "json" else _data(fmt, text, dict)
    return _lookup(data, key) is not _MISSING


def adopt(fmt: str, text: str, paths: Sequence[Tuple[str, ...]]) -> Tuple[Tuple[Key, ...], bool]:
    """The keys at `paths` that `text` holds, with the values it holds (a record, such as a
    lockfile's, names agentrc's keys of a shared file without their values), and whether the
    file holds nothing else. A file that cannot be parsed gives none."""
    try:
        doc = _data(fmt, text, OrderedDict)
        keys = tuple((tuple(p), json.dumps(found, ensure_ascii=False), False) for p in paths
                     for found in (_lookup(doc, p),) if found is not _MISSING)
        return keys, bool(keys) and _data(fmt, fresh(fmt, keys), dict) == _data(fmt, text, dict)
    except (ValueError, TypeError):
        return (), False


def _lookup(data: Any, key: Sequence[str]) -> Any:
    for part in key:
        if not isinstance(data, dict) or part not in data:
            return _MISSING
        data = data[part]
    return data


def _canon(value: Any) -> str:
    """JSON data as one string, equal exactly when `same` holds for JSON (object key order
    aside; `true`, `1` and `1.0` differ): what jsonedit's RemoveItem compares too."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


class _Elements:
    """How many times each element (by `_canon`) is in the array at a key path of `data`,
    counted once per path: looking n entries up in an n-entry list one by one was
    quadratic in the number of rules (opencode.json's `instructions`)."""

    def __init__(self, data: Any):
        self.data = data
        self.counts: Dict[Tuple[str, ...], Optional[Dict[str, int]]] = {}

    def count(self, key: Sequence[str], value: str) -> int:
        """How many elements equal to `value` (JSON text) the array at `key` holds."""
        path = tuple(key)
        if path not in self.counts:
            found = _lookup(self.data, path)
            counts: Optional[Dict[str, int]] = None
            if isinstance(found, list):
                counts = {}
                for x in found:
                    c = _canon(x)
                    counts[c] = counts.get(c, 0) + 1
            self.counts[path] = counts
        counts = self.counts[path]
        return 0 if counts is None else counts.get(_canon(json.loads(value)), 0)


def _holds(data: Any, keys: Sequence[Key]) -> bool:
    """Whether `data` holds every key as recorded: each set key with its value, each appended
    element as many times as it was appended."""
    wanted: Dict[Tuple[Tuple[str, ...], str], int] = {}
    for key, value, append in keys:
        if append:
            wanted[(tuple(key), value)] = wanted.get((tuple(key), value), 0) + 1
        else:
            found = _lookup(data, key)
            if found is _MISSING or not same("json", found, json.loads(value)):
                return False
    elements = _Elements(data)
    return all(elements.count(key, value) >= n for (key, value), n in wanted.items())


def _render_json(current: str, old: Sequence[Key], new: Sequence[Key]) -> str:
    """Take out `old`, put in `new`. An appended entry agentrc did not record but the file
    already holds, equal as JSON, is adopted rather than appended again: a rebuild without
    the manifest must not make a hook run twice. When agentrc's keys are the same as last
    time and the file still holds them, the file is left as it is: one parse, not two edits
    (each a parse of the whole file) per key, which made a large `instructions` list
    quadratic. Into nothing (an absent or empty file, nothing owned before), `fresh` makes
    the same file at once: opencode.json's 2,000 `instructions` at 5,000 items were 2,000
    edits of a growing document (55 ms, `fresh` 7 ms)."""
    if not current and not old and new:
        return fresh("json", new)
    data = _load("json", current)
    if new and [(tuple(k), v, bool(a)) for k, v, a in old] == [(tuple(k), v, bool(a)) for k, v, a in new] \
            and _holds(data, new):
        return current
    edits: List[Any] = []
    for key, value, append in _by_path(old):
        edits.append(jsonedit.RemoveItem(key, json.loads(value)) if append else jsonedit.DeleteKey(key))
    recorded = {(k, v) for k, v, a in old if a}
    elements = _Elements(data)
    for key, value, append in _by_path(new):
        parsed = json.loads(value, object_pairs_hook=OrderedDict)
        if append:
            if (key, value) not in recorded and elements.count(key, value):
                continue
            edits.append(jsonedit.AppendItem(key, parsed))
        else:
            edits.append(jsonedit.SetKey(key, parsed))
    return jsonedit.edit(current, edits)


def _by_path(keys: Sequence[Key]) -> List[Key]:
    """`keys` with the entries appended to one array together (paths in the order they first
    come, entries in their order): jsonedit applies a run of edits to one array from one
    parse, so hook entries of several events, interleaved item by item, cost a parse per
    event rather than per entry."""
    groups: Dict[Any, List[Key]] = {}  # dicts keep insertion order (Python >= 3.7)
    for n, (path, value, append) in enumerate(keys):
        groups.setdefault(tuple(path) if append else n, []).append((path, value, append))
    return [k for group in groups.values() for k in group]


def _render_toml(current: str, old: Sequence[Key], new: Sequence[Key]) -> str:
    """Take out `old`'s tables, put in `new`'s. A table agentrc wrote last time with the
    value it has now, and that the file still holds as written, stays where it is: the work
    (each table taken out is a scan of the file) is what changed, and re-merging the same
    tables leaves the file as it is after one scan."""
    if any(append for _, _, append in new):
        raise ValueError("TOML fragments cannot append")
    if not current and not old and new:
        return fresh("toml", new)  # into nothing: the tables at once, as for JSON
    data = tomledit.loads(current) if current.strip() and old else {}
    wanted = {tuple(k): v for k, v, _ in new}
    kept = {tuple(k) for k, v, _ in old
            if wanted.get(tuple(k)) == v and same("toml", _lookup(data, k), json.loads(v))}
    text = current
    for key, _, _ in old:
        if tuple(key) not in kept:
            text = tomledit.delete_table(text, key)
    return tomledit.set_tables(text, [(key, json.loads(value, object_pairs_hook=OrderedDict))
                                      for key, value, _ in new if tuple(key) not in kept])
