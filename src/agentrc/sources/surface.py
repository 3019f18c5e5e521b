"""The executable surface of what a source brings, and its digest (the consent gate).

Installing someone else's rules and skills writes text; installing their hooks, MCP
servers, executable scripts and plugins lets their code run on the consumer's machine
the next time a client starts. `agentrc add` and `update` list that surface and install
it only with the consumer's consent (`--trust`, or `y` at a terminal prompt); the lock
records the consent as the digest of the surface it was given for (an entry's `trusted`),
so an update that changes a hook's command, a server's command or URL, or a script's
bytes asks again, and `install` of a consented lock asks nothing.

Pure: the surface is read from the loaded model (`Item.hook`, `Item.resources`,
`Bundle.servers`, `Bundle.plugins`).
"""

from __future__ import annotations

import hashlib
import json

from agentrc.classcode import dataclass
from agentrc.model import Bundle, Item

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, List, Optional, Tuple


@dataclass(frozen=True)
class Exposure:
    """One thing that can run: `kind` is "hook", "mcp", "script" or "plugin"; `what` is
    how it is shown (a command, a URL, a file); `path` and `pos` point at its declaration;
    `key` is what the digest covers (a script's bytes, not only its name)."""

    kind: str
    name: str
    what: str
    path: str
    pos: Tuple[int, int]
    key: str

    def shown(self) -> str:
        return f"{self.kind} {self.name}: {self.what}"


def of_item(item: Item) -> Tuple[Exposure, ...]:
    """The hook's command and every executable supporting file of `item`."""
    out: List[Exposure] = []
    hook = item.hook
    if hook is not None:
        gate = f" on {hook.matcher}" if hook.matcher else (f" on {', '.join(hook.tools)}" if hook.tools else "")
        what = f"runs `{hook.script}` at {hook.event}{gate}" + (" (async)" if hook.run_async else "")
        script = next((r for r in item.resources if hook.script_file and r.path == hook.script_file), None)
        key = what + ("\0" + _sha(script.content) if script is not None else "")
        out.append(Exposure("hook", item.name, what, item.entrypoint, (1, 1), key))
    for r in item.resources:
        if r.executable:
            out.append(Exposure("script", f"{item.name}/{r.path}", "an executable file", f"{item.directory}/{r.path}",
                                (0, 0), f"{r.path}\0{_sha(r.content)}"))
    return tuple(out)


def of_bundle(bundle: Bundle) -> Tuple[Exposure, ...]:
    """The MCP servers (command and arguments, or URL; the names of environment values,
    never their values) and the plugins of `bundle`."""
    out: List[Exposure] = []
    for s in bundle.servers:
        if s.url:
            what = f"connects to {s.url}"
        else:
            what = "runs `" + " ".join([s.command or ""] + list(s.args)) + "`"
        env = sorted(dict(s.env)) + sorted(f"header {h}" for h in dict(s.headers))
        shown = what + (f" with {', '.join(env)}" if env else "")
        key = json.dumps([s.transport, s.command, list(s.args), s.url, sorted(dict(s.env).items()),
                          sorted(dict(s.headers).items())], sort_keys=True, default=str)
        out.append(Exposure("mcp", s.name, shown, s.path, s.pos, key))
    for client, descriptor in sorted(dict(bundle.plugins).items()):
        data = _plain(descriptor)
        label = next((str(data[k]) for k in ("plugin", "source", "plugin_uri", "install_url") if
                      isinstance(data, dict) and data.get(k)), "a plugin")
        out.append(Exposure("plugin", f"{bundle.name}/{client}", f"installs {label} with {client}", bundle.path,
                            (0, 0), json.dumps(data, sort_keys=True, default=str)))
    return tuple(out)


def digest(exposures: Tuple[Exposure, ...]) -> Optional[str]:
    """The digest consent is recorded by; None for an entry that brings nothing to run."""
    if not exposures:
        return None
    lines = sorted(f"{e.kind}\t{e.name}\t{e.key}" for e in exposures)
    return hashlib.sha256("\n".join(lines).encode("utf-8", "surrogateescape")).hexdigest()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _plain(value: Any) -> Any:
    """A frozen descriptor as plain JSON-able data."""
    if hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
