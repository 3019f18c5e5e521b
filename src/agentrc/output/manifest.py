"""The ownership manifest and the write journal: parsing them and their bytes.

Both decide what agentrc may overwrite, rename and delete, so parsing is strict (every path
safe, every digest well formed: a manifest naming another path is unreadable, AR093) and
their bytes are written in chunks, sorted and stable, so a large build neither joins one huge
string nor writes a different file for the same content.
"""

from __future__ import annotations

import io
import json
import os
import stat
from dataclasses import field
from json.encoder import encode_basestring_ascii as _encode_str
from operator import attrgetter

from agentrc.classcode import dataclass
from agentrc.fdio import read_regular, write_all
from agentrc.files import safe_path
from agentrc.output.tree import _NOFOLLOW, _SHA, _STAGED, _STAGED_TREE, MANIFEST, MAX_MANIFEST, sha

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple, Union

    from agentrc.fdio import StrPath
    from agentrc.output import merge as managed

_path_of = attrgetter("path")


@dataclass
class _Manifest:
    """The ownership manifest as read: the files agentrc wrote, their statuses, merges and directories."""
    owned: Dict[str, str] = field(default_factory=dict)  # path -> sha256 of files written whole
    stats: Dict[str, list] = field(default_factory=dict)  # path -> [size, mtime_ns, mode] after writing
    merged: Dict[str, dict] = field(default_factory=dict)  # path -> keys agentrc merged into it
    dirs: Tuple[str, ...] = ()  # directories agentrc created (and may remove when empty)


def _parse_manifest(data: Any) -> _Manifest:
    """The manifest's content, checked whole: any entry agentrc would act on that is not a
    safe path, or of the wrong shape, makes it unreadable (ValueError), so a crafted manifest
    can never direct a write or a deletion outside the output directory."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    if data.get("version", 1) != 1:
        raise ValueError(f"unknown version {data.get('version')!r}")
    files = data.get("files")
    if not isinstance(files, dict):
        raise ValueError("'files' is not an object")
    for path, digest in files.items():
        if not safe_path(path):
            raise ValueError(f"unsafe path {path!r} (relative paths inside the output directory only)")
        if not isinstance(digest, str) or not _SHA.fullmatch(digest):
            raise ValueError(f"{path}: not a sha256 digest")
    merged = data.get("merged", {})
    if not isinstance(merged, dict):
        raise ValueError("'merged' is not an object")
    for path, record in merged.items():
        if not safe_path(path):
            raise ValueError(f"unsafe path {path!r} (relative paths inside the output directory only)")
        _check_record(path, record)
    dirs = data.get("dirs", [])
    if not isinstance(dirs, list) or not all(safe_path(d) for d in dirs):
        raise ValueError("'dirs' is not a list of relative paths inside the output directory")
    raw_stats = data.get("stat", {})
    stats = {}
    if isinstance(raw_stats, dict):  # a cache only: entries of another shape are not used
        stats = {k: v for k, v in raw_stats.items() if isinstance(v, list) and len(v) == 3
                 and all(type(x) is int for x in v)}
    return _Manifest(dict(files), stats, dict(merged), tuple(dirs))


def _check_record(path: str, record: Any) -> None:
    if not isinstance(record, dict):
        raise ValueError(f"merged {path}: not an object")
    if record.get("format", "json") not in ("json", "toml", "block"):
        raise ValueError(f"merged {path}: unknown format {record.get('format')!r}")
    if not isinstance(record.get("created", False), bool) or not isinstance(record.get("blank", ""), str):
        raise ValueError(f"merged {path}: 'created' or 'blank' of the wrong type")
    keys = record.get("keys", [])
    ok = isinstance(keys, list) and all(
        isinstance(k, list) and len(k) == 3 and isinstance(k[0], list) and all(isinstance(p, str) for p in k[0])
        and isinstance(k[1], str) and isinstance(k[2], bool) for k in keys)
    if not ok:
        raise ValueError(f"merged {path}: 'keys' is not a list of [key path, JSON value, appended]")
    for k in keys if record.get("format", "json") != "block" else ():  # a block's value is its markdown
        try:
            json.loads(k[1])
        except ValueError:
            raise ValueError(f"merged {path}: a key's value is not JSON") from None


def _load_json(raw: bytes, what: str) -> Any:
    if len(raw) > MAX_MANIFEST:
        raise ValueError(f"{what} is larger than {MAX_MANIFEST >> 20} MiB")
    try:
        return json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _keys(record: dict) -> Tuple[managed.Key, ...]:
    return tuple((tuple(k), v, bool(a)) for k, v, a in record.get("keys", ()))


def _stat(st) -> list:
    return [st.st_size, st.st_mtime_ns, stat.S_IMODE(st.st_mode)]


_ENCODE = json.JSONEncoder(sort_keys=True).encode  # no indent: the C encoder


def _value(v: Any) -> str:
    """A manifest entry's value as JSON: a digest, a stat record, or (merged keys) anything."""
    if isinstance(v, str):
        return _encode_str(v)
    if isinstance(v, list) and all(type(x) is int for x in v):
        return "[" + ", ".join(map(str, v)) + "]"
    return _ENCODE(v)


_CHUNK = 1024  # entries encoded at a time (`_manifest_bytes`, `_journal_bytes`)


def _entry_lines(value: dict, keys: List[Any]) -> List[str]:
    """The lines of `value`'s entries `keys`, as `_value` encodes them. The manifest's two
    large sections hold only digests (`files`) or only [size, mtime_ns, mode] (`stat`): a
    chunk of those is encoded by one comprehension without `_value`'s tests and calls per
    entry (each checked first, so the bytes are the same), which were most of the
    manifest's cost at 5,000 items."""
    enc = _encode_str
    values = [value[k] for k in keys]
    if all([type(k) is str for k in keys]):
        if all([type(v) is str for v in values]):
            return [f"  {enc(k)}: {enc(v)}" for k, v in zip(keys, values)]
        if all([type(v) is list and len(v) == 3 and type(v[0]) is int and type(v[1]) is int and type(v[2]) is int
                for v in values]):
            return [f"  {enc(k)}: [{v[0]}, {v[1]}, {v[2]}]" for k, v in zip(keys, values)]
    return [f"  {enc(k) if isinstance(k, str) else _ENCODE(k)}: {_value(v)}" for k, v in zip(keys, values)]


def _manifest_bytes(manifest: dict, encoded: Optional[Dict[str, bytes]] = None) -> bytes:
    """Sorted keys, one file's entry a line (readable, and diffable). Each line is encoded by
    the C encoder: `json.dumps(indent=...)` runs the pure-Python one, which was a third of
    the writer's work in a one-edit build at 5,000 items. Written into one buffer a chunk
    of entries at a time, which becomes the bytes returned: the lines, their joined text and
    its encoded copy were all held at once before, 3.4 times the manifest's size.
    `encoded`: sections already encoded by `_section` (of the same values), used as they are."""
    buf = io.BytesIO()
    buf.write(b"{\n")
    for n, key in enumerate(sorted(manifest)):
        if n:
            buf.write(b",\n")
        ready = encoded.get(key) if encoded else None
        buf.write(ready if ready is not None else _section(key, manifest[key]))
    buf.write(b"\n}\n")
    return buf.getvalue()  # the buffer itself, not a copy (CPython shares it)


def _section(key: str, value: Any) -> bytes:
    """One top-level entry of the manifest as `_manifest_bytes` writes it."""
    if isinstance(value, dict) and value:
        buf = io.BytesIO()
        buf.write(f" {_ENCODE(key)}: {{\n".encode())
        keys = sorted(value)
        for start in range(0, len(keys), _CHUNK):
            if start:
                buf.write(b",\n")
            buf.write(",\n".join(_entry_lines(value, keys[start:start + _CHUNK])).encode())
        buf.write(b"\n }")
        return buf.getvalue()
    return f" {_ENCODE(key)}: {_ENCODE(value)}".encode()


_PUTS_CHUNK = 256  # a long list's entries encoded at a time (`_journal_chunks`): the encoder's pieces are ~10 a dict


def _journal_bytes(journal: dict, manifest: Optional[bytes]) -> bytes:
    """The journal's bytes whole (`_journal_chunks` joined), for the replay's small journal."""
    return b"".join(_journal_chunks(journal, manifest))


def _journal_chunks(journal: dict, manifest: Optional[bytes]) -> Iterator[Union[bytes, memoryview]]:
    """`json.dumps(journal, sort_keys=True)` and a newline, in pieces, with the new manifest
    spliced in as `_manifest_bytes` already serialised it (`manifest`, None when the journal
    has none): the same JSON value, without encoding the largest part of it a second time.
    The manifest comes as a view of its bytes and long lists (`put`) a chunk of entries at a
    time, so that `_write_chunks` writes the journal to its file without ever holding it
    whole: at 10,000 items the journal's bytes were the writer's peak, beside the manifest
    and the entries they were encoded from."""
    assert manifest is not None or journal["manifest"] is None
    yield b"{"
    for n, key in enumerate(sorted(journal)):
        value = journal[key]
        yield f"{', ' if n else ''}{_ENCODE(key)}: ".encode()
        if key == "manifest" and manifest is not None:
            end = len(manifest)
            while end and manifest[end - 1] == 0x0A:  # the manifest's own final newline
                end -= 1
            yield memoryview(manifest)[:end]
        elif isinstance(value, list) and len(value) > _PUTS_CHUNK:
            yield b"["
            for start in range(0, len(value), _PUTS_CHUNK):
                yield ((", " if start else "") + _ENCODE(value[start:start + _PUTS_CHUNK])[1:-1]).encode()
            yield b"]"
        else:
            yield _ENCODE(value).encode()
    yield b"}\n"


def _write_chunks(dfd: int, name: str, chunks: Iterable[Union[bytes, memoryview]], mode: int) -> None:
    """`_Tree.write_new` (exact `mode`) of the bytes `chunks` joined, without joining them:
    each piece is written as it comes (a few hundred writes for a journal of 10,000 items)."""
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0), mode,
                 dir_fd=dfd)
    try:
        for chunk in chunks:
            write_all(fd, chunk)
        os.fchmod(fd, mode)
        os.fsync(fd)
    finally:
        os.close(fd)


def _parse_journal(data: Any) -> dict:
    """A journal, checked like the manifest: it directs renames and deletions, so every path
    in it must be safe."""
    if not isinstance(data, dict) or data.get("version") not in (1, 2):
        raise ValueError("not a version 1 or 2 journal")
    trees = data.get("trees", [])  # version 2: staged trees, each renamed into place whole
    if not isinstance(trees, list) or (trees and data["version"] < 2):
        raise ValueError("'trees' is not a list")
    for t in trees:
        if not (isinstance(t, dict) and safe_path(t.get("path")) and isinstance(t.get("tmp"), str)
                and _STAGED_TREE.fullmatch(t["tmp"])):
            raise ValueError(f"a bad 'trees' entry: {t!r:.200}")
    puts, deletes, prune = data.get("put"), data.get("delete"), data.get("prune")
    if not (isinstance(puts, list) and isinstance(deletes, list) and isinstance(prune, list)):
        raise ValueError("'put', 'delete' or 'prune' is not a list")
    for p in puts:
        if not (isinstance(p, dict) and safe_path(p.get("path")) and isinstance(p.get("tmp"), str)
                and _STAGED.fullmatch(p["tmp"]) and isinstance(p.get("create"), bool)):
            raise ValueError(f"a bad 'put' entry: {p!r:.200}")
    for d in deletes:
        if not (isinstance(d, dict) and safe_path(d.get("path")) and isinstance(d.get("sha"), str)
                and _SHA.fullmatch(d["sha"])):
            raise ValueError(f"a bad 'delete' entry: {d!r:.200}")
    if not all(safe_path(d) for d in prune):
        raise ValueError("a bad 'prune' entry")
    if data.get("manifest") is not None:
        _parse_manifest(data["manifest"])
        if not isinstance(data["manifest"].get("stat"), dict):
            raise ValueError("the manifest has no 'stat'")
    return data


def manifest_digest(root: StrPath) -> str:
    """The sha256 of the manifest as it is on disk ("" when it cannot be read as the writer
    reads it: not through a link, not a FIFO, not past MAX_MANIFEST)."""
    try:
        raw = read_regular(os.path.join(str(root), MANIFEST), MAX_MANIFEST)[0]
    except OSError:
        return ""
    return sha(raw) if len(raw) <= MAX_MANIFEST else ""
