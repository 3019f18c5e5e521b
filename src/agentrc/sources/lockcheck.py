"""A lock's values checked as a whole, before anything acts on them.

`agentrc.lock.json` is committed, so it may be hostile: a hand-edited lock could name a
client no adapter knows (a traceback later), a source holding credentials, a file outside
the project (deleted by `install`), or a server or plugin name that reaches a client's CLI
as an option (`--scope=user`, `-h`). The JSON Schema checks shapes; this checks meanings,
every problem at once, each an AR203 (AR225 for credentials) that never echoes a secret.
Nothing runs, nothing is fetched and nothing is written when any is found.
"""

from __future__ import annotations

from agentrc.diagnostics import Diagnostics
from agentrc.files import safe_path
from agentrc.patterns import pattern
from agentrc.sources import arguments
from agentrc.sources.arguments import shown
from agentrc.sources.dsl import SourceError, check_ref, parse

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Optional, Sequence

_COMMIT = pattern(r"[0-9a-f]{40}|[0-9a-f]{64}")
MCP_TARGETS = ("vscode",)  # record clients that are targets rather than adapters


def check(lock: Any, path: str, diags: Diagnostics, clients: Optional[Sequence[str]] = None) -> None:
    """Every problem of `lock` (an `agentrc.sources.lock.Lock`) into `diags`. `clients`:
    the client names this agentrc knows (None: not checked)."""
    known = set(clients) if clients is not None else None
    for name in lock.clients:
        if known is not None and name not in known:
            diags.error(path, (0, 0), "AR203", f"clients: unknown client {shown(name)} (known: "
                        f"{', '.join(sorted(known))})")
    for e in lock.entries:
        _entry(e, path, diags)
    for f in lock.files:
        if not safe_relative(f.path):
            diags.error(path, (0, 0), "AR203", f"files: {shown(f.path)} is not a relative path inside the project")
    for rec in (dict(m) for m in lock.mcps):
        _record(rec, "mcps", "name", path, diags, known)
        config = rec.get("config")
        if config is not None and not (isinstance(config, str) and (safe_relative(config) or
                                                                    rec.get("scope") == "user")):
            diags.error(path, (0, 0), "AR203", f"mcps: config {shown(config)} is not a path inside the project")
    for rec in (dict(p) for p in lock.plugins):
        _record(rec, "plugins", "identifier", path, diags, known)
    for name in lock.mcps_removed:
        problem = arguments.server_name(name)
        if problem:
            diags.error(path, (0, 0), "AR203", f"mcps_removed: {shown(name)} {problem}")
    for p in lock.user_skipped:
        if not safe_relative(p):
            diags.error(path, (0, 0), "AR203", f"user_skipped: {shown(p)} is not a relative path")


def _entry(e: Any, path: str, diags: Diagnostics) -> None:
    where = f"{'bundles' if e.kind == 'bundle' else 'items'}: {e.kind} {e.name}"
    try:
        parse(e.source)
    except SourceError as exc:
        code = "AR225" if exc.code == "AR225" else "AR203"
        diags.error(path, (0, 0), code, f"{where}: {exc}")  # the message shows the locator redacted
    if e.ref is not None:
        try:
            check_ref(e.ref)
        except SourceError as exc:
            diags.error(path, (0, 0), "AR203", f"{where}: {exc}")
    if e.commit is not None and not _COMMIT.fullmatch(e.commit):
        diags.error(path, (0, 0), "AR203", f"{where}: commit {shown(e.commit)} is not a full commit id")


def _record(rec: dict, section: str, field: str, path: str, diags: Diagnostics, known: Optional[set]) -> None:
    value = rec.get(field)
    client = rec.get("client")
    if section == "mcps":
        problem = arguments.server_name(value)
    elif isinstance(value, str) and "@" in value and client in ("claude", "copilot"):
        problem = arguments.plugin_identifier(value)  # what `plugin install` / `uninstall` are given
    else:
        problem = arguments.argument(value)
    if problem:
        diags.error(path, (0, 0), "AR203", f"{section}: {field} {shown(value)} {problem}")
    if known is not None and client not in known and client not in MCP_TARGETS:
        diags.error(path, (0, 0), "AR203", f"{section}: unknown client {shown(client)} for {shown(value)}")


def safe_relative(path: Any) -> bool:
    """Whether `path` may name a file of the project the lock installed: a path the output
    writer would write (`files.safe_path`: relative, normalised, outside `.agentrc/`), and not
    in git's own state either."""
    return safe_path(path) and path != ".git" and not path.startswith(".git/")
