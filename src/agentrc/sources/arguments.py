"""Arguments are data: one validator per kind of value that can reach a client's command line.

agentrc runs the clients' own CLIs (`claude mcp add-json`, `claude plugin install`,
`copilot mcp add`, ...) with values that came from someone else: a fetched bundle's MCP
server names and plugin descriptors, the records of a committed `agentrc.lock.json`. A
value starting with `-` is read by the CLI as an option (`--scope=user` moved a server to
the user's configuration; `-h` printed help and exited 0, so nothing was installed yet the
lock said it was), and whitespace or control characters split or forge what is shown.
Each function here takes a value and returns None when it may be passed as an argument of
its kind, or a problem string (`starts with '-' ...`) for a diagnostic (AR241 where a
command would run, AR203 in the lock's whole-lock validation). They are pure, so the
lock's validation and the code that runs the CLIs share them; the runners also put `--`
before the values wherever the CLI takes it, so a validator is not the only guard.

Grammars: item and bundle names are item names (`agentrc.names`: lowercase letters,
digits and single hyphens, at most 64 characters); MCP server names are letters, digits,
`.`, `_` and `-` starting with a letter or digit (the bundle schema's); a plugin identifier is
`plugin@marketplace`, each part letters, digits, `.`, `_` and `-`, beginning and ending
with a letter or digit; a marketplace source is GitHub's `owner/repo`, an https or ssh git
URL (no credentials in it) or a local path; a ref follows git's check-ref-format rules
(`agentrc.sources.dsl.check_ref`). None may start with `-` or hold whitespace or control
characters.
"""

from __future__ import annotations

import re

from agentrc.names import MAX_NAME_LENGTH, NAME_RE
from agentrc.patterns import pattern
from agentrc.sources.dsl import SourceError, check_ref

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Optional

MAX_ARGUMENT = 2048
MAX_PLUGIN_PART = 128
SHOWN_LENGTH = 200

# Whitespace, C0 and C1 controls, DEL, and the invisible and bidirectional format
# characters (a name holding them reads as another one).
_BAD = pattern("[\\s\x00-\x1f\x7f-\x9f\xad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff"
               "\U000e0000-\U000e007f]")
_PLUGIN_PART = pattern(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
_SHORTHAND = pattern(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}")
_SCP = pattern(r"[A-Za-z0-9._-]+@[A-Za-z0-9][A-Za-z0-9.-]*:[^:]+")
_URL = pattern(r"(https|ssh)://([^/?#]*)(/.*)?", re.IGNORECASE | re.DOTALL)
_HOST = pattern(r"[A-Za-z0-9][A-Za-z0-9.-]*(?::[0-9]{1,5})?")
_USERINFO = pattern(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@")
_ENV_NAME = pattern(r"[A-Za-z_][A-Za-z0-9_]{0,254}")
_HEADER_NAME = pattern(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}")
_LOCAL = ("/", "./", "../", "~/")
SCOPES = ("project", "user", "local")


def argument(value: Any, limit: int = MAX_ARGUMENT) -> Optional[str]:
    """The rules every value passed to a command obeys: a non-empty string of at most
    `limit` characters, not starting with `-`, without whitespace or control characters."""
    if not isinstance(value, str):
        return "is not a string"
    if not value:
        return "is empty"
    if value.startswith("-"):
        return "starts with '-' (the command would read it as an option)"
    if _BAD.search(value):
        return "holds whitespace, control or invisible characters"
    if len(value) > limit:
        return f"is longer than {limit} characters"
    return None


def name(value: Any) -> Optional[str]:
    """An item or bundle name, or an MCP server's: the item-name grammar of spec 001 §3.1."""
    problem = argument(value, MAX_NAME_LENGTH)
    if problem is None and not NAME_RE.match(value):
        problem = "is not a name: lowercase letters, digits and hyphens, no leading or trailing hyphen"
    return problem


_SERVER_NAME = pattern(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def server_name(value: Any) -> Optional[str]:
    """An MCP server's name, as a bundle's `mcps:` may write it (the bundle schema's
    propertyNames): letters, digits, '.', '_' and '-', starting with a letter or digit."""
    problem = argument(value, 128)
    if problem is None and not _SERVER_NAME.fullmatch(value):
        problem = "is not a server name: letters, digits, '.', '_' and '-', starting with a letter or digit"
    return problem


def plugin_part(value: Any) -> Optional[str]:
    """A plugin's or a marketplace's name, one side of `plugin@marketplace`."""
    problem = argument(value, MAX_PLUGIN_PART)
    if problem is None and (not _PLUGIN_PART.fullmatch(value) or ".." in value):
        problem = ("is not a plugin or marketplace name: letters, digits, '.', '_' and '-', beginning and ending "
                   "with a letter or digit")
    return problem


def plugin_identifier(value: Any) -> Optional[str]:
    """`plugin@marketplace`, as `claude plugin install` and `copilot plugin install` take it."""
    problem = argument(value, 2 * MAX_PLUGIN_PART + 1)
    if problem is not None:
        return problem
    plugin, at, market = value.partition("@")
    if not at or "@" in market:
        return "is not a plugin identifier: plugin@marketplace, with one '@'"
    for part, what in ((plugin, "its plugin"), (market, "its marketplace")):
        bad = plugin_part(part)
        if bad is not None:
            return f"is not a plugin identifier: {what} {shown(part)} {bad}"
    return None


def marketplace_source(value: Any) -> Optional[str]:
    """A plugin marketplace's source, as `plugin marketplace add` takes it: `owner/repo`
    (GitHub), an https or ssh git URL without credentials, `user@host:path`, or a local
    path (`/`, `./`, `../`, `~/`). No other transport (`ext::` and `fd::` run commands;
    plain `http://` and `git://` are not authenticated)."""
    problem = argument(value)
    if problem is not None:
        return problem
    if value.startswith(_LOCAL) or value in (".", ".."):
        return None
    if _SHORTHAND.fullmatch(value):
        return None
    m = _URL.fullmatch(value)
    if m is not None:
        authority = m.group(2)
        if "@" in authority and (m.group(1).lower() == "https" or ":" in authority.rsplit("@", 1)[0]):
            return "holds credentials (user information in the URL); git's credential helper supplies them"
        if not _HOST.fullmatch(authority.rsplit("@", 1)[-1]) or not m.group(3):
            return "is not a URL of a repository (https://host/path, ssh://host/path)"
        return None
    if _SCP.fullmatch(value) and "::" not in value:
        return None
    return ("is not a marketplace source: owner/repo, an https:// or ssh:// URL, user@host:path, or a local path "
            "(./dir, /dir)")


def ref(value: Any) -> Optional[str]:
    """A branch, tag or commit name by git's check-ref-format rules (`dsl.check_ref`)."""
    problem = argument(value)
    if problem is not None:
        return problem
    try:
        check_ref(value)
    except SourceError:
        return "is not a branch, tag or commit name (git check-ref-format rules)"
    return None


def env_name(value: Any) -> Optional[str]:
    """An environment variable's name (`--env NAME=...`)."""
    problem = argument(value, 255)
    if problem is None and not _ENV_NAME.fullmatch(value):
        problem = "is not an environment variable name: letters, digits and '_', not beginning with a digit"
    return problem


def header_name(value: Any) -> Optional[str]:
    """An HTTP header's name (RFC 9110 token), as in `--header 'NAME: ...'`."""
    problem = argument(value, 256)
    if problem is None and not _HEADER_NAME.fullmatch(value):
        problem = "is not an HTTP header name"
    return problem


def scope(value: Any) -> Optional[str]:
    """A client CLI's `--scope`: agentrc's own value, checked all the same."""
    return None if value in SCOPES else f"is not a scope ({', '.join(SCOPES)})"


def shown(value: Any) -> str:
    """`value` for a message: quoted, escaped as Python does (controls, invisible and
    bidirectional characters visible), the user information of a URL replaced by `***`
    (it may be a token), cut at 200 characters."""
    text = value if isinstance(value, str) else str(value)
    text = _USERINFO.sub(lambda m: m.group(1) + "***@", text)
    return repr(text[:SHOWN_LENGTH] + ("..." if len(text) > SHOWN_LENGTH else ""))
