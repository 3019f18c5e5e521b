"""What client adapters produce and the output stage consumes.

`OutputFile` is a whole file of the generated tree; `Fragment` is one part of a file that
several items and clients contribute to (an MCP server key, a hook entry, a section of the
global context). Kept at the top so `output/`, `pipeline/`, `importers/`, `docgen/` and the
Pants backend need not depend on the adapter base.
"""

from __future__ import annotations

import hashlib
import json

from agentrc.classcode import dataclass
from agentrc.frozen import thaw

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Sequence, Tuple

STATE_DIR = ".agentrc"  # an output directory's own state: the manifest, the journal, the lock


def safe_path(path: Any) -> bool:
    """Whether `path` may name a file agentrc writes, merges or deletes: a non-empty posix
    path, relative, normalised (no `.`, `..` or empty component), outside `.agentrc/`. The
    writer checks every planned and recorded path with it, and a lock's recorded files are
    checked with it before anything acts on them (`agentrc.sources.lockcheck`)."""
    if not isinstance(path, str) or not path or "\x00" in path or "\\" in path or path.startswith("/"):
        return False
    # Checked once per planned and recorded path: substring tests, not a split per path.
    wrapped = f"/{path}/"
    return ("//" not in wrapped and "/./" not in wrapped and "/../" not in wrapped
            and not wrapped.startswith(f"/{STATE_DIR}/"))


@dataclass(frozen=True)
class OutputFile:
    """A file a build writes: its path under the output root, its bytes and who owns it."""
    path: str  # posix, relative to the output root
    content: bytes
    executable: bool = False
    owner: str = ""  # "<client>:<kind>:<name>" for conflict messages, or "<client>" for project files
    # Config files users also own ("json" or "toml"): agentrc owns only `keys` in them, as
    # (key path, value as canonical JSON, appended array element?) triples, and the writer
    # merges those into whatever the file holds (agentrc.output.merge). `content` is the file
    # with agentrc's keys alone, which is what a fresh tree (dist/, Pants) holds.
    merge: str = ""
    keys: Tuple[Tuple[Tuple[str, ...], str, bool], ...] = ()

    def sha256(self) -> str:
        """The sha256 of `content` (hex), computed once: the output manifest records it."""
        known = self.__dict__.get("_sha256")
        if known is None:
            known = hashlib.sha256(self.content).hexdigest()
            object.__setattr__(self, "_sha256", known)  # not a field: equality and hash stay the fields'
        return known

    def same_bytes(self, other: OutputFile) -> bool:
        """Whether `other` has the same content, without producing the bytes of a file that
        is known by its digest alone."""
        if isinstance(self, OnDemand) or isinstance(other, OnDemand):
            return self.sha256() == other.sha256()
        return self.content == other.content


class OnDemand(OutputFile):
    """An output file known by its digest, its bytes produced when first read.

    The CLI's build memo keeps each rendering's files as digests, not bytes: an unchanged
    item's files are compared with the output manifest by digest, and only a file that must
    be written (or compared with what is on disk) has its item rendered again, by `produce`.
    """

    def __init__(self, path: str, sha256: str, produce: Callable[[], bytes], executable: bool = False,
                 owner: str = "", merge: str = "", keys: Tuple[Tuple[Tuple[str, ...], str, bool], ...] = ()):
        # One update of the instance's dict (a frozen dataclass): a one-edit build makes one
        # of these per unchanged output, 22,000 at 5,000 items.
        self.__dict__.update(path=path, executable=executable, owner=owner, merge=merge, keys=keys,
                             _sha256=sha256, _produce=produce)

    @property  # type: ignore[misc]  # a field of OutputFile, read-only here
    def content(self) -> bytes:  # type: ignore[override]
        data = self.__dict__.get("_content")
        if data is None:
            data = self.__dict__["_produce"]()
            # The memo's key covers everything a rendering depends on, so these are the bytes
            # the digest was taken of; should they ever differ, the digest follows the bytes.
            object.__setattr__(self, "_sha256", hashlib.sha256(data).hexdigest())
            object.__setattr__(self, "_content", data)
        return data


@dataclass(frozen=True)
class Fragment:
    """A part of a file that several items and clients contribute to: a key of a JSON or
    TOML config (an MCP server, a hook entry appended to an event's list), or a section of
    the global context document. build.plan assembles fragments into files."""

    path: str
    format: str  # "json", "toml" or "sections"
    key: Tuple[str, ...]  # key path; for "sections", (sort key, name)
    value: str  # canonical JSON of the value; for "sections", the section's markdown
    append: bool = False  # an element appended to the array at `key`, not the key's whole value
    owner: str = ""


def fragment(path: str, fmt: str, key: Sequence[str], value: Any, owner: str, append: bool = False) -> Fragment:
    return Fragment(path, fmt, tuple(key), json.dumps(thaw(value), sort_keys=False, ensure_ascii=False), append, owner)
