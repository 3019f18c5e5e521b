"""The plugin layout of an adapter (`layout = "plugin"`): where a plugin's manifest and its
one-plugin marketplace go, for clients whose plugin has the Claude Code shape (Claude Code,
Cursor), and the JSON file both are written as."""

from __future__ import annotations

import json

from agentrc.files import OutputFile

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Optional


def json_file(path: str, data: Any, owner: str) -> OutputFile:
    """A JSON file agentrc owns whole, indented as people write it."""
    return OutputFile(path, (json.dumps(data, indent=2) + "\n").encode(), False, owner)


class PluginLayout:
    """What `ClientAdapter` adds for a plugin layout; `name` and `title` are the adapter's."""

    name = ""
    title = ""

    # Where the plugin's manifest and its one-plugin marketplace go, for clients whose
    # files have the Claude Code plugin shape (Claude Code, Cursor).
    manifest_file: str = ""
    marketplace_file: str = ""

    def manifest(self, name: str, description: str, version: str = "") -> OutputFile:
        """The plugin's manifest (name, description, version; the items add their keys)."""
        if not self.manifest_file:
            raise NotImplementedError(f"{self.title} has no plugin layout")
        data = {"name": name, "description": description}
        if version:
            data["version"] = version
        return json_file(self.manifest_file, data, self.name)

    def marketplace(self, name: str, plugin: str, description: str) -> Optional[OutputFile]:
        """A marketplace listing this one plugin at its root (so the client's `marketplace add
        DIR` then `install PLUGIN@NAME` installs it from the build output), or None for a
        client that installs from the directory itself (Gemini CLI)."""
        if not self.marketplace_file:
            raise NotImplementedError(f"{self.title} has no plugin layout")
        data = {"name": name, "owner": {"name": name}, "plugins": [
            {"name": plugin, "source": "./", "description": description}]}
        return json_file(self.marketplace_file, data, self.name)
