"""OpenAI Codex CLI: AGENTS.md (AGENTS.override.md first, as Codex reads it), skills in
`.agents/skills` (a skill the model may not invoke by itself, per its agents/openai.yaml,
and without files is what the adapter writes for a command), subagents in
`.codex/agents/*.toml`, hooks in `.codex/hooks.json`, MCP servers in `.codex/config.toml`."""

from __future__ import annotations

import posixpath

from agentrc.importers.base import Reader, by_directory, may_run
from agentrc.importers.cleanup import split_skills_section
from agentrc.importers.shapes import (
    READ_ONLY,
    Fields,
    allowed_tools,
    description,
    hooks_claude_shape,
    mapping,
    sidecars,
    skill,
    skill_files,
)
from agentrc.patterns import pattern
from agentrc.text.yamlpos import YamlError
from agentrc.text.yamlpos import load as load_yaml

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict

SIDECAR = "agents/openai.yaml"
# Codex hook events are the Claude ones (no Notification).
EVENTS = {e: e for e in ("SessionStart", "SessionEnd", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop",
                         "SubagentStop", "PreCompact")}
# Codex tool names in hook matchers -> canonical (Claude Code) names: every file change is
# apply_patch, which Edit and Write are aliases of.
HOOK_TOOLS = {"Bash": "Bash", "apply_patch": "Edit", "Edit": "Edit", "Write": "Write"}
SPAWN_RE = pattern(r"^Spawn the `([\w-]+)` subagent and give it this task\.\n+")
AGENT_KEYS = ("name", "description", "developer_instructions")
# Portable frontmatter keys with a shape of their own (spec 001 §3.1).
PORTABLE_KEYS = ("schema", "audience", "requires", "ignore", "license", "metadata", "compatibility")


class CodexImporter:
    name = "codex"
    family = "codex"
    own = ("AGENTS.md", ".codex/")  # where its own layout starts (what `agentrc init` detects it by)

    def wants(self, rel: str) -> bool:
        return may_run(rel) or rel.startswith((".agents/", ".codex/")) or rel.endswith(".md")

    def read(self, r: Reader) -> None:
        context = next((p for p in ("AGENTS.override.md", "AGENTS.md") if r.has(p)), None)
        if context is not None:
            r.add_context_file(context)
        for rel in r.under("", "/AGENTS.md"):
            r.lossy(rel, "AGENTS.md of a subdirectory (applies to work there): the canonical document has one "
                         "global context; not imported")
        for d in (".agents/skills", ".codex/skills"):
            for rel, name, fm, body in r.entries(skill_files(r, d), "skill", by_directory):
                self.skill(r, rel, name, fm, body)
        for rel in r.under(".codex/agents/", ".toml"):
            self.agent(r, rel)
        if r.has(".codex/hooks.json"):
            data = r.json_object(".codex/hooks.json")
            if data is not None:
                for key in data:
                    if key != "hooks":
                        r.lossy(".codex/hooks.json", f"key {key!r} has no canonical field; not imported")
                hooks_claude_shape(r, ".codex/hooks.json", data.get("hooks") or {}, EVENTS, HOOK_TOOLS,
                                   ("type", "command", "timeout"))
        if r.has(".codex/config.toml"):
            self.config(r, ".codex/config.toml")

    def skill(self, r: Reader, rel: str, name: str, fm: Dict[str, Any], body: str) -> None:
        d = posixpath.dirname(rel)
        settings = self.settings(r, f"{d}/{SIDECAR}")
        explicit_only = mapping(settings.get("policy")).get("allow_implicit_invocation") is False
        files = sidecars(r, rel, skip=lambda p: p == f"{d}/{SIDECAR}")
        # The rest of agents/openai.yaml (interface, dependencies, other policy keys) is the
        # item's codex: block, which the Codex adapter writes back to the same file.
        policy = dict(mapping(settings.get("policy")))
        policy.pop("allow_implicit_invocation", None)
        sidecar = {k: v for k, v in settings.items() if k != "policy"}
        if policy:
            sidecar["policy"] = policy
        if explicit_only and not files:
            # What the adapter writes for a command: a skill run only as $name.
            text = body
            lines = text.lstrip("\n").split("\n")
            if lines and lines[0].strip() == f"# {name}":
                text = "\n".join(lines[1:]).lstrip("\n")
            m = SPAWN_RE.match(text)
            if m:
                r.lossy(rel, f"command {name}: runs in the {m.group(1)} subagent; canonical commands name no "
                             "agent, so the sentence asking to spawn it is not imported")
                text = text[m.end():]
            entry: Dict[str, Any] = description(fm)
            entry["prompt"] = r.body(text, rel, name, arguments=True)
            f = Fields(r, rel, f"command {name}", fm, ("name", "description"))
            f.common()
            if entry["prompt"].strip():
                r.add("commands", name, entry, rel, _with_sidecar(f.done("codex"), sidecar))
            return
        entry = skill(r, rel, fm, body, name, skip=lambda p: p == f"{d}/{SIDECAR}")
        if "allowed-tools" in fm:
            allowed_tools(entry, fm["allowed-tools"])
        if explicit_only:
            entry["disableModelInvocation"] = True
        f = Fields(r, rel, f"skill {name}", fm, ("name", "description", "allowed-tools"))
        f.skill()
        for key in fm:
            # The codex: block of a skill is its agents/openai.yaml: SKILL.md's other keys stay
            # top-level, where the shared .agents/skills writers pass them on.
            if key not in f.handled and key not in PORTABLE_KEYS:
                f.set(key, fm[key])
        r.extra_fields(rel, fm, tuple(f.handled), f"skill {name}")
        r.add("skills", name, entry, rel, _with_sidecar(f.done(""), sidecar))

    @staticmethod
    def settings(r: Reader, rel: str) -> Dict[str, Any]:
        if not r.has(rel):
            return {}
        text = r.text(rel)
        if text is None:
            return {}
        try:
            data = load_yaml(text).data if text.strip() else {}
        except YamlError as exc:
            r.unreadable(rel, f"invalid YAML: {exc.message}", exc.pos, exc.code)
            return {}
        if not isinstance(data, dict):
            r.unreadable(rel, "expected a mapping")
            return {}
        return data

    def agent(self, r: Reader, rel: str) -> None:
        data = r.toml(rel)
        if data is None:
            return
        raw = data["name"] if isinstance(data.get("name"), str) else rel.rsplit("/", 1)[-1][:-5]
        name = r.name(raw, rel, "agent")
        if name is None:
            return
        entry: Dict[str, Any] = description(data)
        text = str(data.get("developer_instructions") or "")
        if entry.get("description") and text.strip() == entry["description"]:
            text = ""  # the adapter repeats the description when the body is empty
        body, skills = split_skills_section(r.body(text, rel, kind="agent"))
        entry["content"] = body
        if skills:
            entry["skills"] = skills
        f = Fields(r, rel, f"agent {name}", data, AGENT_KEYS)
        f.model(provider="openai")
        if data.get("sandbox_mode") == "workspace-write":
            f.handled.add("sandbox_mode")
        elif data.get("sandbox_mode") == "read-only":
            f.tools(list(READ_ONLY), "sandbox_mode")  # what the adapter writes back as read-only
        r.add("agents", name, entry, rel, f.done("codex"))

    def config(self, r: Reader, rel: str) -> None:
        data = r.toml(rel)
        if data is None:
            return
        servers = data.get("mcp_servers") or {}
        for name, raw in servers.items() if isinstance(servers, dict) else ():
            self.server(r, rel, name, raw)
        others = [k for k in data if k != "mcp_servers"]
        if others:
            r.lossy(rel, f"Codex settings {', '.join(others)}: not part of the canonical document (Codex has no "
                         "tools.<target> settings file agentrc writes); not imported")

    @staticmethod
    def server(r: Reader, rel: str, name: str, raw: Any) -> None:
        where = f"mcp_servers.{name}"
        if not isinstance(raw, dict):
            r.unreadable(rel, f"{where}: expected a table")
            return
        out: Dict[str, Any] = {}
        handled = ["enabled"]
        if isinstance(raw.get("command"), str):
            out["command"] = raw["command"]
            if isinstance(raw.get("args"), list) and raw["args"]:
                out["args"] = [str(a) for a in raw["args"]]
            env = {k: str(v) for k, v in mapping(raw.get("env")).items()}
            env_vars = raw.get("env_vars")
            for var in env_vars if isinstance(env_vars, list) else []:
                env.setdefault(str(var), "${%s}" % var)
            if env:
                out["env"] = env
            handled += ["command", "args", "env", "env_vars"]
        elif isinstance(raw.get("url"), str):
            out["url"] = raw["url"]
            headers = {k: str(v) for k, v in mapping(raw.get("http_headers")).items()}
            for header, var in mapping(raw.get("env_http_headers")).items():
                headers[header] = "${%s}" % var
            if raw.get("bearer_token_env_var"):
                headers["Authorization"] = "Bearer ${%s}" % raw["bearer_token_env_var"]
            if headers:
                out["headers"] = headers
            handled += ["url", "http_headers", "env_http_headers", "bearer_token_env_var"]
        else:
            r.unreadable(rel, f"{where}: a server needs a command or a url")
            return
        if raw.get("enabled") is False:
            out["disabled"] = True
        for key in raw:
            if key not in handled:
                r.lossy(rel, f"{where}: {key} has no canonical field; not imported")
        server_name = r.name(name, rel, "mcp server")
        if server_name is not None:
            r.add_server(server_name, out, rel)


def _with_sidecar(fields: Dict[str, Any], sidecar: Dict[str, Any]) -> Dict[str, Any]:
    """The item's portable fields with agents/openai.yaml's settings in its codex: block."""
    if sidecar:
        fields["codex"] = dict(fields.get("codex") or {}, **sidecar)
    return fields
