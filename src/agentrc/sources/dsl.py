"""The source locator of spec 001 §3.7 (`upskill add`'s DSL): `SOURCE[@REF][#SUBPATH]`.

Forms of SOURCE:

- `owner/repo`: a repository on GitHub (`https://github.com/owner/repo.git`);
- a git URL: `https://host/path`, `ssh://[user@]host[:port]/path`, `user@host:path`
  (scp-like) or `file:///absolute/path`;
- a local directory: a path starting with `/`, `./`, `../` or `~/` (or `.`, `..`), read as
  it is, with no ref.

`@REF` names a branch, a tag or a commit (default: the remote's HEAD); it is the first `@`
in the path part of the location, so `git@host:` and `user@host` in an ssh URL are not
refs. `#SUBPATH` selects a registry inside the repository (a relative directory).

Everything here is checked before a process ever sees it: a locator or ref starting with
`-` could be read by git as an option, and transports other than https, ssh and file
(`ext::`, `fd::`, plain `http://` and `git://`) are refused. A problem is a `SourceError`
with its code (AR200), never a traceback.
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace

from agentrc.classcode import dataclass
from agentrc.diagnostics import hide_credentials
from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Optional, Tuple

MAX_LOCATOR = 2048

GIT = "git"
PATH = "path"

_SHORTHAND = pattern(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")
_SCP = pattern(r"([A-Za-z0-9._-]+)@([A-Za-z0-9][A-Za-z0-9.-]*):(.*)", re.DOTALL)
_HOST = pattern(r"(?:[A-Za-z0-9._~-]+@)?[A-Za-z0-9][A-Za-z0-9.-]*(?::[0-9]{1,5})?")
_SCHEMES = ("https://", "ssh://", "file://")
_REFUSED = ("http://", "git://", "ext::", "fd::")
_COMMIT = pattern(r"[0-9a-f]{40}|[0-9a-f]{64}")


class SourceError(ValueError):
    """A locator that is not a source agentrc can use; `code` is its diagnostic code."""

    def __init__(self, message: str, code: str = "AR200"):
        super().__init__(hide_credentials(message))  # whatever a caller quotes, no secret is shown
        self.code = code


@dataclass(frozen=True)
class Source:
    """A parsed locator. `location` is what git fetches (the URL, shorthand expanded) or the
    local path as written; `written` is the location as the user wrote it (what the lock
    and messages show)."""

    kind: str  # GIT or PATH
    location: str
    written: str
    ref: Optional[str] = None
    subpath: str = ""  # posix, relative; "" for the repository's root

    @property
    def key(self) -> Tuple[str, str, str]:
        """The identity of the registry, whatever the ref and however its URL is written:
        two refs of one registry, or `owner/repo`, `https://github.com/owner/repo.git` and
        `git@github.com:owner/repo`, are one source in conflicts and cycles (spec 001 §3.7,
        canonical-source-label)."""
        return (self.kind, canonical(self.location) if self.kind == GIT else self.location, self.subpath)

    @property
    def name(self) -> str:
        """The locator without its ref: what the lock records as `source`."""
        return self.written + (f"#{self.subpath}" if self.subpath else "")

    @property
    def label(self) -> str:
        """The locator as it is written back: `written[@ref][#subpath]`."""
        return self.written + (f"@{self.ref}" if self.ref else "") + (f"#{self.subpath}" if self.subpath else "")

    def at(self, ref: Optional[str]) -> "Source":
        if ref is not None:
            check_ref(ref)
        return replace(self, ref=ref)

    @property
    def pinned(self) -> bool:
        """Whether the ref is a full commit id (nothing to resolve)."""
        return bool(self.ref and _COMMIT.fullmatch(self.ref))


def parse(text: str) -> Source:
    """The `Source` `text` names, or a SourceError saying why it names none."""
    if not isinstance(text, str) or not text:
        raise SourceError("an empty source")
    return _parse(text)


@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> Source:
    """`parse` of a non-empty string, kept: a lock names a source once per entry (1,000 of
    the same at 1,000 items), and a command parses each several times."""
    if len(text) > MAX_LOCATOR:
        raise SourceError(f"a source of {len(text)} characters (at most {MAX_LOCATOR})")
    secret = credentials(text)  # first: every later message quotes the locator
    if secret is not None:
        raise SourceError(f"{secret}: a source URL holds no password or token (it would reach the lock, the "
                          "output and the terminal); git's credential helper supplies them", "AR225")
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in text):
        raise SourceError(f"{text!r}: a source holds no spaces or control characters")
    if text.startswith("-"):
        raise SourceError(f"{text!r}: a source cannot start with '-'")
    body, sep, sub = text.partition("#")
    subpath = check_subpath(sub, text) if sep else ""
    lower = body.lower()
    if lower.startswith(_REFUSED) or "::" in body.split("/", 1)[0]:
        raise SourceError(f"{text!r}: only https://, ssh://, file:// and user@host:path git URLs are fetched "
                          "(plain http and git:// are not authenticated; other transports run commands)")
    if body in (".", "..") or body.startswith(("/", "./", "../", "~/")):
        if "@" in body:
            raise SourceError(f"{text!r}: a local directory has no @ref; to pin a ref of a local git repository, "
                              "write file:///absolute/path@REF")
        return Source(PATH, body, body, None, subpath)
    if lower.startswith(_SCHEMES):
        scheme_end = body.index("://") + 3
        slash = body.find("/", scheme_end)
        if slash < 0:
            raise SourceError(f"{text!r}: a URL needs a path after the host")
        authority, rest = body[scheme_end:slash], body[slash:]
        scheme = lower[:scheme_end]
        if scheme == "file://" and authority not in ("", "localhost"):
            raise SourceError(f"{text!r}: a file:// URL names an absolute local path (file:///path)")
        if scheme != "file://" and not _HOST.fullmatch(authority) or authority.startswith("-"):
            raise SourceError(f"{text!r}: {authority!r} is not a host")
        path, ref = _split_ref(rest, text)
        _check_path(path, text)
        url = body[:scheme_end] + authority + path
        return Source(GIT, url, url, ref, subpath)
    m = _SCP.fullmatch(body)
    if m and not m.group(3).startswith("//"):
        path, ref = _split_ref(m.group(3), text)
        _check_path(path, text)
        loc = f"{m.group(1)}@{m.group(2)}:{path}"
        return Source(GIT, loc, loc, ref, subpath)
    head, at, ref_text = body.partition("@")
    repo = head[:-4] if head.endswith(".git") else head
    # The repository's name without `.git` must still be one (`a/.git` names none: its
    # label `a/` would not parse again).
    if _SHORTHAND.fullmatch(head) and not repo.endswith((".", "/")) and ".." not in head:
        ref = check_ref(ref_text) if at else None
        return Source(GIT, f"https://github.com/{repo}.git", repo, ref, subpath)
    raise SourceError(f"{text!r} is not a source: write owner/repo[@ref], a git URL (https://, ssh://, file://, "
                      "user@host:path) with an optional @ref, or a local directory (./path, /path)")


def credentials(text: str) -> Optional[str]:
    """None when `text` carries no credentials; else `text` with them replaced by `***`
    (what a refusal may show). Credentials are any user information of a URL but an ssh
    user name alone (a token is often the user name: `https://ghp_x@host/...`), wherever
    it is in `text`, and any `user:secret@` (`diagnostics.hide_credentials`)."""
    hidden = hide_credentials(text)
    return hidden if hidden != text else None


def redact(text: str) -> str:
    """`text` as it may be shown: credentials replaced by `***` (see `credentials`)."""
    return credentials(text) or text


def canonical(location: str) -> str:
    """A git location without what does not change the repository it names: the scheme
    and user of a network URL (https, ssh, scp-like), the host's case, a trailing `.git`
    or `/`. `file://` URLs keep their path as it is."""
    if location.lower().startswith("file://"):
        return location
    m = _SCP.fullmatch(location)
    if m and "://" not in location:
        host, path = m.group(2), m.group(3)
    else:
        rest = location.split("://", 1)[1]
        authority, _, path = rest.partition("/")
        host = authority.rsplit("@", 1)[-1]
        if host.endswith((":22", ":443")):
            host = host.rsplit(":", 1)[0]
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    return f"{host.lower()}/{path}"


def _split_ref(path: str, text: str) -> Tuple[str, Optional[str]]:
    head, at, ref = path.partition("@")
    return head, (check_ref(ref) if at else None)


def _check_path(path: str, text: str) -> None:
    parts = [p for p in path.split("/") if p]
    if not parts:
        raise SourceError(f"{text!r}: the URL names no repository")
    if any(p == ".." or p.startswith("-") for p in parts):
        raise SourceError(f"{text!r}: a repository path holds no '..' and no component starting with '-'")


def check_ref(ref: str) -> str:
    """`ref` if it is a branch, tag or commit name git could accept and never an option."""
    bad = (not ref or ref.startswith(("-", "/", ".")) or ref.endswith(("/", ".", ".lock")) or ".." in ref
           or "//" in ref or "@{" in ref or ref == "@" or "/." in ref
           or any(c in ref for c in " ~^:?*[\\") or any(ord(c) < 32 or ord(c) == 127 for c in ref))
    if bad:
        raise SourceError(f"@{ref}: not a branch, tag or commit name (git check-ref-format rules; no leading '-')")
    return ref


def check_subpath(sub: str, text: str = "") -> str:
    """`sub` as a normalised relative posix directory inside the repository."""
    where = f"{text!r}: " if text else ""
    stripped = sub.strip("/") if not sub.startswith("/") else sub
    parts = stripped.split("/") if stripped else []
    if (not parts or sub.startswith("/") or "\\" in sub
            or any(p in ("", ".", "..") or p.startswith("-") for p in parts)):
        raise SourceError(f"{where}#{sub}: a subpath is a relative directory inside the repository (no '..', "
                          "no leading '/' or '-')")
    return "/".join(parts)
