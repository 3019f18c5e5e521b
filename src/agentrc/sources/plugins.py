"""A bundle's `plugins` map (spec 001 §3.7) as the actions installing it takes.

Each entry maps clients to a descriptor, whose form is decided by the fields it holds, in
the spec's order: `source` + `marketplace` + `plugin` is the auto-install form (the
client's own CLI registers the marketplace and installs `plugin@marketplace`); else
`plugin_uri` is opencode's config-write form (an entry appended to the `plugin` list of
the project's `opencode.json`, written with the build); else `instructions_url` / `summary` is
instructions only; `extension` (VS Code) and `module` (opencode) are shown as
instructions too. Only Claude Code and GitHub Copilot have an auto-install CLI.
Pure: `agentrc.consumer.plugins` runs the commands, after `problems` found nothing wrong
with the values they would be given (a source, a plugin or a marketplace that is not valid
for its kind is AR241 there, not an instruction).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from agentrc.classcode import dataclass
from agentrc.files import Fragment
from agentrc.model import Bundle
from agentrc.sources import arguments

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, List, Sequence, Tuple

INSTALL = "install"
INSTRUCTIONS = "instructions"
CONFIG = "config"
CLI_CLIENTS = ("claude", "copilot")


@dataclass(frozen=True)
class PluginAction:
    """What a bundle's plugin asks of one client: an install, instructions to show or config to write."""
    name: str  # the bundle's key for the plugin
    client: str
    bundle: str
    form: str  # INSTALL, INSTRUCTIONS or CONFIG
    source: str = ""
    marketplace: str = ""
    plugin: str = ""
    install_url: str = ""
    text: str = ""  # what to tell the user (instructions form)
    uri: str = ""  # the config-write form's plugin_uri

    @property
    def identifier(self) -> str:
        return f"{self.plugin}@{self.marketplace}" if self.form == INSTALL else self.name

    @property
    def scope(self) -> str:
        # Copilot CLI installs plugins for the user; Claude Code's --scope project.
        return "user" if self.client == "copilot" else "project"


def actions(bundles: Sequence[Bundle], clients: Sequence[str]) -> Tuple[PluginAction, ...]:
    """The actions for the project's `clients` (a `vscode` descriptor goes with copilot,
    whose files VS Code reads); the other clients' descriptors are skipped silently."""
    targets = set(clients) | ({"vscode"} if "copilot" in clients else set())
    out: List[PluginAction] = []
    for b in sorted(bundles, key=lambda b: b.name):
        for name in sorted(b.plugins):
            per_client = b.plugins[name]
            if not isinstance(per_client, Mapping):
                continue
            for client in sorted(per_client):
                d = per_client[client]
                if isinstance(d, Mapping) and str(client) in targets:
                    out.append(_action(name, str(client), b.name, d))
    return tuple(out)


def _action(name: str, client: str, bundle: str, d: Mapping[str, Any]) -> PluginAction:
    get = lambda key: str(d.get(key) or "")  # noqa: E731
    url = get("install_url")
    if all(get(k) for k in ("source", "marketplace", "plugin")) and client in CLI_CLIENTS:
        return PluginAction(name, client, bundle, INSTALL, get("source"), get("marketplace"), get("plugin"), url)
    if get("plugin_uri") and client == "opencode":
        return PluginAction(name, client, bundle, CONFIG, install_url=url, uri=get("plugin_uri"))
    parts = [p for p in (get("summary").strip(), _where("see", get("instructions_url"))) if p]
    if get("extension"):
        parts.insert(0, f"install the VS Code extension {get('extension')}")
    if get("plugin_uri"):
        parts.insert(0, f"register the plugin {get('plugin_uri')} with {client}")
    if get("module"):
        parts.insert(0, f"install the opencode plugin module {get('module')}")
    if get("source") and client not in CLI_CLIENTS:
        parts.insert(0, f"{client} has no plugin CLI agentrc can run: install {get('plugin') or name} from "
                        f"{get('source')} yourself")
    return PluginAction(name, client, bundle, INSTRUCTIONS, install_url=url,
                        text="; ".join(parts) or _where("see", url) or "no instructions given")


def problems(action: PluginAction, uninstall: bool = False) -> List[Tuple[str, str, str]]:
    """What is wrong with the values an auto-install `action` gives a client's CLI, as
    (field, value, problem): its marketplace `source` (not for `uninstall`, which takes only
    the identifier) and its `plugin@marketplace` identifier. Empty when all may be passed."""
    if action.form != INSTALL:
        return []
    checks = [("identifier", action.identifier, arguments.plugin_identifier(action.identifier))]
    if not uninstall:
        checks.insert(0, ("source", action.source, arguments.marketplace_source(action.source)))
    return [(field, value, problem) for field, value, problem in checks if problem is not None]


def _where(verb: str, url: str) -> str:
    return f"{verb} {url}" if url else ""


def config_fragments(actions: Sequence[PluginAction]) -> Tuple[Fragment, ...]:
    """The `opencode.json` entries of the config-write actions: each `plugin_uri` appended
    to the `plugin` list, merged into the user's file like every agentrc key."""
    return tuple(Fragment("opencode.json", "json", ("plugin",), json.dumps(a.uri), True, f"plugin {a.name}")
                 for a in actions if a.form == CONFIG)
