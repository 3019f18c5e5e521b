"""GitHub Copilot: `.github/copilot-instructions.md` and AGENTS.md, `.github/instructions`,
`.github/prompts` (commands), `.github/skills`, `.github/agents` (and legacy chat modes),
hooks in `.github/hooks/*.json`, MCP servers in `.vscode/mcp.json` and `.mcp.json`."""

from __future__ import annotations

import itertools
import json

from agentrc.importers.base import Reader, by_directory, by_stem, may_run, stem
from agentrc.importers.claude import ClaudeImporter
from agentrc.importers.cleanup import split_skills_section
from agentrc.importers.shapes import (
    CLAUDE_HOOK_TOOLS,
    Fields,
    argument_hint,
    capabilities,
    description,
    env_syntax,
    glob_list,
    hook_entry,
    hook_matcher,
    server,
    skill,
    skill_files,
    tool_list,
)
from agentrc.model import HOOK_EVENTS
from agentrc.patterns import pattern
from agentrc.vocabulary import copilot_tool

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict

# The aliases the adapter writes for an agent without a tool list (every capability).
DEFAULT_TOOLS = {"read", "edit", "execute", "search", "web"}
# Copilot CLI hook events (camelCase) -> the portable ones; the PascalCase names are read too.
EVENTS = {"sessionStart": "SessionStart", "sessionEnd": "SessionEnd", "userPromptSubmitted": "UserPromptSubmit",
          "preToolUse": "PreToolUse", "postToolUse": "PostToolUse", "agentStop": "Stop",
          "subagentStop": "SubagentStop", **{e: e for e in HOOK_EVENTS}}
INPUT_RE = pattern(r"\$\{input:([\w-]+)(?::[^}]*)?\}")
FILE_RE = pattern(r"#file:([\w./-]+)")
# Copilot's model display names -> the portable aliases (the adapter's MODELS, reversed).
MODELS = {"Claude Sonnet 5.5": "sonnet", "Claude Opus 5.5": "opus", "Claude Haiku 4.5": "haiku"}
# The keys of a Copilot hook entry the import reads (`cwd`: where its command's paths start).
HANDLER_KEYS = ("type", "command", "timeout", "powershell", "cwd")
VSCODE_ENV = env_syntax(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")


class CopilotImporter:
    name = "copilot"
    family = "copilot"
    own = (".github/",)  # where its own layout starts (what `agentrc init` detects it by)

    def wants(self, rel: str) -> bool:
        return (may_run(rel) or rel.startswith(".github/") or rel in (".vscode/mcp.json", ".mcp.json", "AGENTS.md")
                or rel.endswith(".md"))

    def read(self, r: Reader) -> None:
        for rel in (".github/copilot-instructions.md", "AGENTS.md"):
            r.add_context_file(rel)
        self.instructions(r)
        self.prompts(r)
        for rel, name, fm, body in r.entries(skill_files(r, ".github/skills"), "skill", by_directory):
            entry = skill(r, rel, fm, self.file_refs(r, rel, body), name)
            fields = ClaudeImporter.skill_fields(r, rel, name, fm, entry, "copilot")
            r.add("skills", name, entry, rel, fields)
        self.agents(r)
        self.hooks(r)
        self.mcp(r)

    def instructions(self, r: Reader) -> None:
        rels = r.under(".github/instructions/", ".instructions.md")
        for rel, name, fm, body in r.entries(rels, "rule", by_stem(".instructions.md")):
            entry: Dict[str, Any] = description(fm)
            globs = [g for g in glob_list(fm.get("applyTo")) if g not in ("**", "**/*")]
            if globs:
                entry["globs"] = globs
            entry["content"] = r.body(self.file_refs(r, rel, body), rel, name, kind="rule")
            r.extra_fields(rel, fm, ("name", "description", "applyTo"), f"rule {name}")
            r.add("rules", name, entry, rel)

    def prompts(self, r: Reader) -> None:
        rels = r.under(".github/prompts/", ".prompt.md")
        for rel, name, fm, body in r.entries(rels, "command", by_stem(".prompt.md")):
            body = self.arguments(r, rel, name, body)
            entry: Dict[str, Any] = description(fm)
            entry["prompt"] = r.body(self.file_refs(r, rel, body), rel, name, arguments=True)
            if not entry["prompt"].strip():
                r.lossy(rel, f"command {name}: empty prompt; not imported")
                continue
            f = Fields(r, rel, f"command {name}", fm, ["name", "description"])
            f.common()
            hint = argument_hint(fm.get("argument-hint"))
            if hint:
                f.set("argument-hint", hint)
            for key in ("agent", "mode"):
                value = fm.get(key)
                if value in ("agent", None):
                    f.handled.add(key)
                elif isinstance(value, str) and value not in ("ask", "edit", "plan") and "agent" not in f.portable:
                    f.set("agent", value, key)  # a custom agent runs the prompt; ask/edit/plan stay Copilot's
            f.model(aliases=MODELS)
            copilot_only(f)
            f.tools(capabilities(f, tool_list(fm.get("tools")), copilot_tool, None))
            r.add("commands", name, entry, rel, f.done("copilot"))

    @staticmethod
    def arguments(r: Reader, rel: str, name: str, body: str) -> str:
        """`${input:arguments}` is what the adapter writes for the portable `$ARGUMENTS`; a
        prompt's one other input variable is its argument too (VS Code asks for it)."""
        body = body.replace("${input:arguments}", "$ARGUMENTS")
        inputs = sorted(set(INPUT_RE.findall(body)))
        if len(inputs) == 1:
            r.lossy(rel, f"command {name}: ${{input:{inputs[0]}...}} becomes $ARGUMENTS, the text typed after the "
                         "command's name (its placeholder text is not imported)")
            body = INPUT_RE.sub("$ARGUMENTS", body)
        return body

    @staticmethod
    def file_refs(r: Reader, rel: str, body: str) -> str:
        """`#file:path` (Copilot attaches the file) as the path in inline code, which every
        client reads."""
        if FILE_RE.search(body):
            r.lossy(rel, "#file: references become the path in inline code: other clients do not attach the file")
            body = FILE_RE.sub(lambda m: f"`{m.group(1)}`", body)
        return body

    def agents(self, r: Reader) -> None:
        agents = r.entries(r.under(".github/agents/", ".md"), "agent", agent_stem)
        chat_modes = r.entries(r.under(".github/chatmodes/", ".chatmode.md"), "agent", by_stem(".chatmode.md"))
        for rel, name, fm, body in itertools.chain(agents, chat_modes):
            body, skills = split_skills_section(r.body(self.file_refs(r, rel, body), rel, name, kind="agent"))
            entry: Dict[str, Any] = description(fm)
            entry["content"] = body
            if skills:
                entry["skills"] = skills
            f = Fields(r, rel, f"agent {name}", fm, ["name", "description"])
            f.common()
            f.model(aliases=MODELS)
            copilot_only(f)
            f.tools(capabilities(f, tool_list(fm.get("tools")), copilot_tool, DEFAULT_TOOLS))
            r.add("agents", name, entry, rel, f.done("copilot"))

    def hooks(self, r: Reader) -> None:
        for rel in r.under(".github/hooks/", ".json"):
            data = r.json_object(rel)
            if data is None:
                continue
            for key in data:
                if key not in ("version", "hooks"):
                    r.lossy(rel, f"key {key!r} has no canonical field; not imported")
            hooks = data.get("hooks") or {}
            if not isinstance(hooks, dict):
                r.unreadable(rel, "hooks: expected an object of events")
                continue
            for event, entries in hooks.items():
                canonical = EVENTS.get(event)
                if canonical is None:
                    r.lossy(rel, f"hooks.{event}: no portable hook event for it; not imported")
                    continue
                for raw in entries if isinstance(entries, list) else []:
                    if isinstance(raw, dict) and "powershell" in raw and "bash" not in raw and "command" not in raw:
                        r.lossy(rel, f"hooks.{event}: a PowerShell-only hook; not imported")
                        continue
                    entry = hook_entry(r, rel, f"hooks.{event}", raw, HANDLER_KEYS, ("command", "bash"),
                                       ("timeout", "timeoutSec"))
                    if entry is None:
                        continue
                    hook_matcher(r, entry, raw.get("matcher"), CLAUDE_HOOK_TOOLS, canonical, rel, f"hooks.{event}")
                    r.add_hook(canonical, entry, rel)

    def mcp(self, r: Reader) -> None:
        if r.has(".vscode/mcp.json"):
            data = r.json_object(".vscode/mcp.json")
            if data is not None:
                servers = data.get("servers") or {}
                for name, raw in servers.items() if isinstance(servers, dict) else ():
                    text = str(raw)
                    if "${input:" in text:
                        r.lossy(".vscode/mcp.json", f"servers.{name}: ${{input:...}} prompts the user in VS Code; "
                                                    "kept as written, which other clients do not expand")
                    server(r, ".vscode/mcp.json", name, raw, VSCODE_ENV, where="servers")
                for key in data:
                    if key not in ("servers",):
                        r.lossy(".vscode/mcp.json", f"key {key!r} has no canonical field; not imported")
        if r.has(".mcp.json"):
            data = r.json_object(".mcp.json")
            servers = (data or {}).get("mcpServers") or {}
            for name, raw in servers.items() if isinstance(servers, dict) else ():
                if name not in (r.doc.get("mcp", {}).get("servers") or {}):
                    server(r, ".mcp.json", name, raw)


def agent_stem(rel: str, fm: Dict[str, Any]) -> str:
    """An agent's raw name: `x` of `x.agent.md`, or of any other `x.md`."""
    return stem(rel, ".agent.md") if rel.endswith(".agent.md") else stem(rel, ".md")


def copilot_only(f: Fields) -> None:
    """A model with no portable name and an agent's own `mcp-servers`, kept for Copilot in
    its passthrough block (Copilot gets them back as written) with AR130 saying the other
    clients do not: they would otherwise lose them without a word (issue 31)."""
    value = f.fm.get("model")
    if value is not None and "model" not in f.portable:
        shown = json.dumps(value, ensure_ascii=False, default=str)
        f.keep("model")
        f.lossy(f"model {shown[:60]} has no portable name; kept for Copilot (its copilot: block), the other "
                "clients use their default model (set model: to an alias or provider/id for them)")
    servers = f.fm.get("mcp-servers")
    if servers is not None:
        names = ", ".join(sorted(str(k) for k in servers)) if isinstance(servers, dict) else "as written"
        f.keep("mcp-servers")
        f.lossy(f"mcp-servers ({names}) kept for Copilot (its copilot: block); the other clients do not get "
                "these servers: declare them in a bundle's mcps: to give them to every client")
