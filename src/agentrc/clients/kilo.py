"""Kilo Code (npm `@kilocode/cli`, the `kilo` CLI; docs: kilo.ai/docs), a fork of opencode
that keeps opencode's file formats under `.kilo/` and `kilo.json`: rules in `.kilo/rules`,
skills in `.kilo/skills`, agents in `.kilo/agents`, commands in `.kilo/commands`, MCP servers
in kilo.json `mcp`, the shared AGENTS.md; hooks are JavaScript plugins, as in opencode.

Verified by running kilo 7.7.7 offline (tests/conformance/test_kilo_discovery.py: `kilo debug
skill`, `kilo debug config`) and in the code its binary carries:
- `.kilo/rules/*.md` (and the older `.kilocode/rules`) are instructions by themselves: no
  `instructions` entry is needed.
- Skills: `.kilo/skills`, `.claude/skills`, `.agents/skills` (and `.kilocode/skills`); not
  `.opencode/skills`. Agents: `.kilo/agents` (and `.kilocode/agents`) only; commands:
  `.kilo/commands` (and `.kilocode/commands`, `.kilocode/workflows`) only.
- Kilo also reads a project `opencode.json` (its `mcp` and `instructions`): the rules the
  opencode adapter registers there load in Kilo too.
- A project config may not reference the environment: a kilo.json server whose headers hold
  `{env:VAR}` is skipped ("variable references are not allowed in project MCP headers"), and
  any other `{env:VAR}` makes Kilo skip the whole file. So agentrc writes none: a header or
  environment value that references a variable is left out, for the user's own
  `~/.config/kilo/kilo.json` (where `{env:VAR}` is allowed and which Kilo merges into the
  project's entry of the same name); a stdio server's `X: ${X}` needs nothing, since Kilo
  starts local servers with its own environment plus `environment`.
"""

from __future__ import annotations

from agentrc.clients import ignorefile
from agentrc.clients.base import (
    SHARED_SKILL_DIR,
    canonical_server_outcomes,
    default_outcome,
    server_without_defaults,
)
from agentrc.clients.opencode import Opencode
from agentrc.clients.servers import ENV_REF_RE
from agentrc.fidelity import Tracker
from agentrc.files import fragment
from agentrc.frozen import thaw
from agentrc.model import Kind, McpServer

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Sequence

CONFIG = "kilo.json"
RULES_DIR = ".kilo/rules"
AGENTS_DIR = ".kilo/agents"
COMMANDS_DIR = ".kilo/commands"
USER_CONFIG = "~/.config/kilo/kilo.json"


class Kilo(Opencode):
    name = "kilo"
    family = "kilo"
    title = "Kilo Code"
    ignore_file = ignorefile.degraded(
        '.kilocodeignore', 'Kilo Code turns each line into a permission rule denying reads and edits of the path '
        '(a glob, not a gitignore pattern: a bare name such as secret.txt is not matched in subdirectories)')
    passthrough_block = "kilo"
    rejects_long_description = False  # not checked for Kilo
    # kilo 7.7.7 loads .claude/skills and .agents/skills besides .kilo/skills, and the rules
    # opencode registers in opencode.json `instructions` (checked by running it).
    also_reads = {Kind.SKILL: ("claude", SHARED_SKILL_DIR), Kind.RULE: ("opencode", SHARED_SKILL_DIR),
                  Kind.COMMAND: ("claude", SHARED_SKILL_DIR), Kind.AGENT: (SHARED_SKILL_DIR,)}
    skill_switch = f"permission.skill.<name>: deny in {CONFIG}"
    # As in opencode, an environment variable turns each scan off (checked with kilo debug skill).
    discovery_off = {".claude/skills": "set shared-copies: false in agentrc.yaml and run kilo with "
                                       "KILO_DISABLE_CLAUDE_CODE_SKILLS=1",
                     SHARED_SKILL_DIR: "set shared-copies: false in agentrc.yaml and run kilo with "
                                       "KILO_DISABLE_EXTERNAL_SKILLS=1 (which hides .claude/skills too)"}
    brand = "Kilo"  # opencode's hide_skills, command, agent, hook and models, with Kilo's name and directories
    commands_dir = COMMANDS_DIR
    agents_dir = AGENTS_DIR
    plugins_dir = ".kilo/plugins"
    resource_root = ".kilo/agentrc"
    skill_dir = ".kilo/skills"
    tools_file = CONFIG

    def rule(self, item, ctx, tracker, fm, body):
        self.identify(item, fm, tracker, name_in_file=False,
                      description_detail="loaded with the rule text (every .kilo/rules file is an instruction)")
        if "name" in item.fields:
            tracker.mapped("name", "file name")
        if item.scope_paths:
            tracker.degraded("scope", "Kilo has no path-scoped rules; the rule is always on")
        body, extra = self.place(item, RULES_DIR, body, tracker)
        return f"{RULES_DIR}/{item.name}.md", body, extra

    def server(self, server: McpServer, tracker: Tracker) -> Sequence[Any]:
        written: Dict[str, str] = {}
        server = server_without_defaults(server, written)
        fixed = [s for s in [server.command or "", server.url or ""] + list(server.args) if ENV_REF_RE.search(s)]
        if fixed:
            for f in tracker.expected:
                if f not in tracker.outcomes:
                    tracker.dropped(f, f"its command, arguments or URL reference a variable, which Kilo refuses in "
                                       f"a project config (the whole {CONFIG} is skipped); add the server to "
                                       f"{USER_CONFIG} with {{env:VAR}}")
            return []
        left: List[str] = []
        if server.transport == "stdio":
            entry: Dict[str, Any] = {"type": "local", "command": [server.command] + list(server.args)}
            env, inherited = _literal(thaw(server.env), left, inherit=True)
            if env:
                entry["environment"] = env
            what = "stdio server (command, args, environment" + (
                f"; {', '.join(inherited)} inherited from Kilo's environment" if inherited else "") + ")"
            field = "local"
        else:
            entry = {"type": "remote", "url": server.url}
            headers, _ = _literal(thaw(server.headers), left, inherit=False)
            if headers:
                entry["headers"] = headers
            what, field = f"{server.transport} server (url, headers)", "remote"
        entry["enabled"] = True
        if left:
            tracker.degraded(field, f"{CONFIG} mcp: {what}; {', '.join(left)} left out: Kilo refuses variable "
                                    f"references in a project config, so add them to this server in {USER_CONFIG} "
                                    f"as {{env:VAR}} (Kilo merges it into this entry)")
        else:
            tracker.mapped(field, f"{CONFIG} mcp: {what}")
        if "requires-env" in server.fields:
            tracker.omitted("requires-env",
                            "documents the environment the server needs (spec 001 §3.6); no client field")
        canonical_server_outcomes(server, tracker)
        default_outcome(tracker, "Kilo", written, True)
        return [fragment(CONFIG, "json", ("mcp", server.name), entry, self.name)]



def _literal(values: Dict[str, str], left: List[str], inherit: bool):
    """The values Kilo can take from a project config (no variable reference), the names of
    those it inherits anyway (`X: ${X}` for a stdio server, whose process gets Kilo's
    environment), and, in `left`, the names of the others."""
    kept: Dict[str, str] = {}
    inherited: List[str] = []
    for key, value in values.items():
        text = str(value)
        if not ENV_REF_RE.search(text):
            kept[key] = value
        elif inherit and text == "${%s}" % key:
            inherited.append(key)
        else:
            left.append(key)
    return kept, inherited
