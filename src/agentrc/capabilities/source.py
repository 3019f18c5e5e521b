"""Package sources (spec 003, "Distribution packages"): what `cap install SOURCE` accepts,
and the normalised `source` string the lock records for it.

- a local directory (`./pkg`, `/abs/pkg`, `~/pkg`, `path:DIR`): exactly that directory is
  the package root; locked as `path:<absolute dir>`, commit "local", path ".";
- a git URL (`file://`, `https://`, `ssh://`, `git@host:...`) or the shorthand
  `git:host/org/repo` (https), each with an optional `@ref` and one `#path` selecting the
  package root inside the repository (default `oas-package`, `#.` the root); locked as
  `git:<url>@<ref or resolved commit>`. Stricter than the OAS kernel (issue 30): plain
  `http://` and `git://` are refused (not authenticated), so is a URL holding a password or
  token (AR225, and the secret is never shown: `redact`), and any host, user, path component
  or ref that starts with `-` (an option to git or ssh) or holds spaces or control characters;
  ssh user names (`git@host:org/repo`, `ssh://git@host/x`) are fine;
- an official catalog id (`oas.okf`, `oas.okf@v1.4.0`): resolved through the catalog
  (`capabilities/catalog`); locked as `catalog:<id>[@<selector>]`.
"""

from __future__ import annotations

import os
import posixpath
import re

from agentrc.capabilities.model import DEFAULT_PACKAGE_PATH
from agentrc.classcode import dataclass
from agentrc.diagnostics import hide_credentials
from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Optional

_GIT_URL = pattern(r"(https?://|file://|git@|ssh://|git://)", re.IGNORECASE)
_CATALOG = pattern(r"([a-z0-9][a-z0-9._-]*)(?:@(.+))?")
_SHORTHAND = pattern(r"[^/\s]+/[^/\s]+/[^/\s]+")


class SourceError(ValueError):
    """A spec that names no source; `escape` when the reason is a '..' path; `code` the
    diagnostic (AR156 an escape, AR225 credentials, else AR160)."""

    def __init__(self, message: str, escape: bool = False, code: str = ""):
        super().__init__(hide_credentials(message))  # whatever a caller quotes, no secret is shown
        self.escape = escape
        self.code = code or ("AR156" if escape else "AR160")


_REF_BAD = pattern(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//")


def redact(spec: str) -> str:
    """`spec` as it may be shown: credentials in it written `***` (`diagnostics.hide_credentials`)."""
    return hide_credentials(spec)


def check_git_url(url: str) -> None:
    """Refuse a git URL agentrc will not hand to git: another transport than https, ssh and
    file; credentials (AR225, never echoed); a part that git or ssh would take for an option.
    Raises SourceError."""
    if any(c.isspace() or not c.isprintable() for c in url):
        raise SourceError(f"the git URL {redact(url)!r} holds spaces or control characters")
    lower = url.lower()
    if lower.startswith(("http://", "git://")):
        raise SourceError(f"{redact(url)!r}: plain http:// and git:// are not authenticated; use https:// or "
                          "ssh:// (agentrc is stricter here than the OAS kernel)")
    if lower.startswith("git@"):
        host, _, path = url[4:].partition(":")
        user, parts = "git", [host] + path.split("/")
    else:
        scheme, _, rest = url.partition("://")
        netloc, _, path = rest.partition("/")
        info, at, host = netloc.rpartition("@")
        no_credentials(url)
        user, parts = info, [host] + path.split("/")
    if user.startswith("-") or any(p.startswith("-") for p in parts):
        raise SourceError(f"{redact(url)!r}: a user, host or path component starts with '-', which git or ssh "
                          "would take for an option", code="AR241")


def no_credentials(text: str) -> None:
    """AR225 (a SourceError) for user information that may hold a secret anywhere in `text`
    (a spec with its `@ref`, a locked source), without showing it."""
    if hide_credentials(text) != text:
        raise SourceError(f"{redact(text)!r} holds credentials; they would reach the lock and the terminal: "
                          "let git's credential helper (or an ssh key) supply them", code="AR225")


def check_ref(ref: str) -> None:
    """A ref as git's rules allow it, and never an option. Raises SourceError."""
    if ref.startswith("-") or ref.endswith((".", "/", ".lock")) or _REF_BAD.search(ref):
        raise SourceError(f"the git ref {ref!r} is not a valid ref name (nor may it start with '-')", code="AR241")


@dataclass(frozen=True)
class Source:
    """Where a capability package comes from: a path, a git repository or a catalog's entry."""
    kind: str  # "path", "git" or "catalog"
    path: str = ""  # path: the absolute directory
    url: str = ""  # git
    ref: str = ""  # git: the ref asked for ("" = the default branch)
    package_path: Optional[str] = None  # git: the #path asked for, canonical (None = not given)
    catalog_id: str = ""
    selector: str = ""
    relative: bool = False  # path: written relative (or with ~)

    def locked(self, commit: str) -> str:
        """The `source` the lock records once fetched at `commit`."""
        if self.kind == "path":
            return f"path:{self.path}"
        if self.kind == "git":
            return f"git:{self.url}@{self.ref or commit}"
        return f"catalog:{self.catalog_id}" + (f"@{self.selector}" if self.selector else "")

    @property
    def root(self) -> str:
        """The package root inside the source: the #path, the default, or '.' for a directory."""
        if self.kind == "path":
            return "."
        return self.package_path if self.package_path is not None else DEFAULT_PACKAGE_PATH


def normalize_path(raw: str, where: str = "package path") -> str:
    """A package path in canonical form: relative, '/'-separated, no '.' or empty parts, and
    '.' for the root. Absolute, '~', drive-letter, backslash and NUL spellings are refused,
    and '..' anywhere is an escape."""
    s = raw.strip()
    if "\x00" in s:
        raise SourceError(f"{where} holds a NUL byte")
    if s.startswith("~"):
        raise SourceError(f"{where} {s!r} starts with '~'; package paths are relative to the source")
    if "\\" in s:
        raise SourceError(f"{where} {s!r} uses backslashes; package paths use '/'")
    if re.match(r"[A-Za-z]:[/\\]", s) or s.startswith("/"):
        raise SourceError(f"{where} {s!r} is absolute; package paths are relative to the source")
    parts = [p for p in s.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise SourceError(f"{where} {s!r} climbs out of the source with '..'", escape=True)
    return "/".join(parts) if parts else "."


def is_canonical(path: str) -> bool:
    try:
        return normalize_path(path) == path
    except SourceError:
        return False


def _split_ref(body: str):
    at = body.rfind("@")
    if at > 0 and at > body.rfind("/"):
        return body[:at], body[at + 1:]
    return body, ""


def parse(spec: str, base: Optional[str] = None) -> Source:
    """The source `spec` names; relative directories resolve against `base` (else the
    working directory). Raises SourceError."""
    raw = spec.strip()
    if not raw:
        raise SourceError("the package source is empty")
    body, hash_, fragment = raw.partition("#")
    if hash_ and "#" in fragment:
        raise SourceError(f"{raw!r} has more than one '#path'")
    if hash_ and not body:
        raise SourceError(f"{raw!r} selects a path but names no source")
    package_path = normalize_path(fragment, f"the package path of {raw!r}") if hash_ else None

    def no_fragment(kind: str) -> None:
        if hash_:
            raise SourceError(f"{kind} sources take no '#path' (a directory is the package root itself): {raw!r}")

    if body.startswith("path:") or body.startswith((".", "/", "~")):
        no_fragment("local directory")
        p = body[5:] if body.startswith("path:") else body
        tilde = p == "~" or p.startswith("~/")
        expanded = os.path.expanduser(p) if tilde else p
        relative = tilde or not os.path.isabs(expanded)
        if tilde or not relative or base is None:
            full = os.path.abspath(expanded)
        else:
            full = os.path.abspath(os.path.join(base, expanded))
        return Source("path", path=_node_resolve(full), relative=relative)
    if body.startswith("git:") and not body.startswith("git://"):
        rest, ref = _split_ref(body[4:])
        if not _SHORTHAND.fullmatch(rest):
            raise SourceError(f"git shorthand is git:host/org/repo[@ref][#path], not {raw!r}")
        url = f"https://{rest}" + ("" if rest.endswith(".git") else ".git")
        return git_source(url, ref, package_path)
    if _GIT_URL.match(body):
        no_credentials(body)
        url, ref = _split_ref(body)
        return git_source(url, ref, package_path)
    m = _CATALOG.fullmatch(body)
    if m:
        no_fragment("catalog")
        return Source("catalog", catalog_id=m.group(1), selector=m.group(2) or "")
    raise SourceError(f"{raw!r} is not a local directory, a git URL or a catalog id")


def git_source(url: str, ref: str, package_path: Optional[str]) -> Source:
    """A git source, its URL and ref checked (`check_git_url`, `check_ref`)."""
    check_git_url(url)
    if ref:
        check_ref(ref)
    return Source("git", url=url, ref=ref, package_path=package_path)


def _node_resolve(path: str) -> str:
    """An absolute path spelled the way the OAS kernel records it (no '//' prefix)."""
    if path.startswith("//"):
        path = "/" + path.lstrip("/")
    return posixpath.normpath(path)


def parse_locked(source: str) -> Source:
    """A lock's `source`, strictly in the writer's grammar (no '#', absolute path:,
    valid catalog id, git URL with a scheme). Raises SourceError."""
    if "#" in source:
        raise SourceError("a locked source has no '#path'; the package root is the row's own path")
    if source.startswith("path:"):
        p = source[5:]
        if not p.startswith("/"):
            raise SourceError("a locked path: source is an absolute directory")
        return Source("path", path=p)
    if source.startswith("catalog:"):
        body = source[8:]
        cid, at, selector = body.partition("@")
        if not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", cid) or (at and not selector):
            raise SourceError(f"{cid!r} is not a catalog id")
        return Source("catalog", catalog_id=cid, selector=selector)
    if source.startswith("git:"):
        no_credentials(source)
        url, ref = _split_ref(source[4:])
        if not _GIT_URL.match(url):
            raise SourceError(f"{url!r} is not a git URL with a scheme")
        if source[4:].endswith("@"):
            raise SourceError("the git ref is empty")
        return git_source(url, ref, None)
    raise SourceError(f"unknown source {source!r}")
