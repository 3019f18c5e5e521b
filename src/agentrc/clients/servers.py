"""What the adapters share for MCP servers: `${VAR}` references in a client's syntax, defaults
(`${VAR:-x}`) a client lacks, the fidelity outcomes of a server's fields, redaction for
reports, and the stdio and Claude-style entries most clients' configs use."""

from __future__ import annotations

import re
from dataclasses import replace

from agentrc.fidelity import Tracker
from agentrc.frozen import FrozenMap, thaw
from agentrc.model import McpServer
from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping

ENV_REF_RE = pattern(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def env_refs(value: Any, template: str) -> Any:
    """Rewrite the portable `${VAR}` references in strings of `value` to a client's syntax
    (`template` holds `{}` where the name goes, e.g. "${{env:{}}}" for VS Code)."""
    value = thaw(value)
    if isinstance(value, str):
        return ENV_REF_RE.sub(lambda m: template.format(m.group(1)), value)
    if isinstance(value, list):
        return [env_refs(v, template) for v in value]
    if isinstance(value, dict):
        return {k: env_refs(v, template) for k, v in value.items()}
    return value


# `${VAR:-default}`: Claude Code expands it in .mcp.json (command, args, env, url, headers);
# VS Code (`${env:VAR}`), Cursor (`${env:VAR}`), opencode (`{env:VAR}`) and Gemini CLI
# (`${VAR}`, `$VAR`) document no default, and Codex expands nothing (issue 31): written as is,
# those clients would pass the text `${VAR:-default}` to the server.
DEFAULT_REF_RE = pattern(r"\$\{([A-Za-z_][A-Za-z0-9_]*):-([^}$]*)\}")


def has_defaults(server: McpServer) -> bool:
    """Whether a value of `server` uses `${VAR:-default}`."""
    return any(DEFAULT_REF_RE.search(v) for v in server_strings(server))


def server_strings(server: McpServer) -> List[str]:
    """Every string of `server` a client expands variables in: command, args, env, url, headers."""
    return ([server.command or "", server.url or ""] + list(server.args)
            + [str(v) for v in thaw(server.env).values()] + [str(v) for v in thaw(server.headers).values()])


def without_defaults(value: Any, written: Dict[str, str]) -> Any:
    """`value` for a client that expands no `${VAR:-default}`: `${VAR:-}` becomes `${VAR}` (an
    unset variable reads as empty where the client does so), `${VAR:-text}` becomes `text`, so
    the server gets what it gets where VAR is unset, the usual case for a variable with a
    default (setting VAR no longer changes it: `written` collects VAR -> "default" or "")."""
    value = thaw(value)
    if isinstance(value, str):
        def one(m: "re.Match[str]") -> str:
            written[m.group(1)] = "default" if m.group(2) else ""
            return m.group(2) if m.group(2) else "${%s}" % m.group(1)
        return DEFAULT_REF_RE.sub(one, value)
    if isinstance(value, list):
        return [without_defaults(v, written) for v in value]
    if isinstance(value, dict):
        return {k: without_defaults(v, written) for k, v in value.items()}
    return value


def server_without_defaults(server: McpServer, written: Dict[str, str]) -> McpServer:
    """`server` with `without_defaults` applied to each value a client expands variables in
    (its `fields`, the raw entry, stay as written for the report)."""
    if not has_defaults(server):
        return server
    return replace(server, command=without_defaults(server.command, written),
                   args=tuple(without_defaults(list(server.args), written)),
                   env=FrozenMap(without_defaults(server.env, written)), url=without_defaults(server.url, written),
                   headers=FrozenMap(without_defaults(server.headers, written)))


def default_outcome(tracker: Tracker, client: str, written: Mapping[str, str], unset_empty: bool) -> None:
    """The `env-defaults` outcome of a server whose `${VAR:-default}` were rewritten for
    `client` (see `without_defaults`); `unset_empty` says the client reads an unset `${VAR}`
    as empty, as `${VAR:-}` means."""
    if not written:
        return
    defaults = sorted(k for k, v in written.items() if v)
    empty = sorted(k for k, v in written.items() if not v)
    notes = []
    if defaults:
        notes.append(f"{client} expands no ${{VAR:-default}}: the default of {', '.join(defaults)} is written in "
                     "its place (setting the variable does not change it there; edit the entry by hand)")
    if empty:
        notes.append(f"${{VAR:-}} of {', '.join(empty)} as {client}'s ${{VAR}} form"
                     + ("" if unset_empty else f" (an unset variable is not documented to read as empty in {client})"))
    if defaults or not unset_empty:
        tracker.degraded("env-defaults", "; ".join(notes))
    else:
        tracker.mapped("env-defaults", notes[0])


def server_outcomes(server: McpServer, tracker: Tracker, where: str, env_note: str = "") -> None:
    """The usual outcomes of an MCP server entry written to `where`."""
    if server.transport == "stdio":
        tracker.mapped("local", f"{where}: stdio server (command, args, env)")
    else:
        tracker.mapped("remote", f"{where}: {server.transport} server (url, headers{env_note})")
    if "requires-env" in server.fields:
        tracker.omitted("requires-env", "documents the environment the server needs (spec 001 §3.6); no client field")
    canonical_server_outcomes(server, tracker)


def canonical_server_outcomes(server: McpServer, tracker: Tracker) -> None:
    """The canonical document's server fields (spec 000 §3.7: scope, disabled, autoApprove),
    unless the adapter mapped them itself; every adapter writing a server entry calls it, or
    a canonical project's server fails the build on an unreported field."""
    if "env-defaults" not in tracker.outcomes and has_defaults(server):
        tracker.degraded("env-defaults", "${VAR:-default} written as is: this client documents no default form, "
                         "so the server may get the text itself")
    scope = server.fields.get("scope")
    if scope is not None and "scope" not in tracker.outcomes:
        if scope == "project":
            tracker.emitted("scope", "the project's configuration")
        else:
            tracker.degraded("scope", f"{scope} scope is per-person configuration agentrc does not write; "
                             "written to the project's")
    if "disabled" in server.fields and "disabled" not in tracker.outcomes:
        tracker.dropped("disabled", "the client's project MCP configuration has no disabled flag; the server is listed")
    if "autoApprove" in server.fields and "autoApprove" not in tracker.outcomes:
        tracker.dropped("autoApprove", "tool approval lives in each client's permission settings, which agentrc "
                        "does not write")


REDACTED = "<redacted>"
# What may stand around `${VAR}` references in a value a message shows: an auth scheme.
_SHOWN_AROUND_REFS = {"", "bearer", "basic", "token"}


def redacted(entry: Dict[str, Any]) -> Dict[str, Any]:
    """A server entry fit for a message or a report: each `env`/`environment`/`headers` value
    is replaced by "<redacted>" unless it is only `${VAR}` references (with an auth scheme such
    as "Bearer "). Literal values are secrets as often as not, and messages end up in CI logs;
    the key names stay, so the user knows what to fill in."""
    out = dict(entry)
    for key in ("env", "environment", "headers"):
        values = out.get(key)
        if isinstance(values, dict):
            out[key] = {k: v if isinstance(v, str) and ENV_REF_RE.search(v)
                        and ENV_REF_RE.sub("", v).strip().lower() in _SHOWN_AROUND_REFS else REDACTED
                        for k, v in values.items()}
    return out


def stdio_entry(server: McpServer) -> Dict[str, Any]:
    """`command`, `args` and `env` of a local server, the keys most clients' configs share."""
    entry: Dict[str, Any] = {"command": server.command}
    if server.args:
        entry["args"] = list(server.args)
    if server.env:
        entry["env"] = thaw(server.env)
    return entry


def claude_style_server(server: McpServer) -> Dict[str, Any]:
    """`mcpServers` entry in the shape Claude Code's `.mcp.json` defines, which Copilot CLI,
    Cursor and others share: `${VAR}` references are kept (those clients expand them)."""
    if server.transport == "stdio":
        return {"type": "stdio", **stdio_entry(server)}
    entry: Dict[str, Any] = {"type": server.transport, "url": server.url}
    if server.headers:
        entry["headers"] = thaw(server.headers)
    return entry
