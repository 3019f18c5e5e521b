"""pi (badlogic/pi-mono, npm `@mariozechner/pi-coding-agent`, command `pi`; also the OAS
kernel's second runtime): the shared AGENTS.md, Agent Skills in the shared `.agents/skills`
(written as OpenClaw and Hermes write them: rules and agents become skills too), and
commands as prompt templates in `.pi/prompts/<name>.md`. pi has no MCP, no subagents and no
shell hooks by design (extensions are TypeScript modules), so those are reported dropped.

Verified with pi 0.73.1 run offline (tests/conformance/test_pi_discovery.py: its first model
request, sent to a local OpenAI-compatible endpoint from ~/.pi/agent/models.json), and in the
package's own docs (README.md, docs/skills.md, docs/prompt-templates.md, docs/packages.md):
- Context: `AGENTS.md` (else `CLAUDE.md`: one per directory, AGENTS.md first) from the
  current directory and every parent, concatenated under "# Project Context".
- Skills: `.pi/skills` and `.agents/skills` in the working directory and its parents up to
  the git root, plus `~/.pi/agent/skills` and `~/.agents/skills`; `.claude/skills` only when
  settings list it. pi reads `name`, `description` (a skill without one is not loaded) and
  `disable-model-invocation` (hidden from the system prompt, `/skill:<name>` still runs it);
  other keys are ignored. Every skill is also the command `/skill:<name>`.
- Prompt templates: `.pi/prompts/*.md` (not recursive); the file name is the command,
  frontmatter `description` and `argument-hint`; `$ARGUMENTS`, `$@`, `$1`... are substituted.
- Packages (`pi install <dir> -l`): a package.json whose `pi` key lists `skills`,
  `prompts`, `extensions` and `themes` directories (`--layout plugin`, PiPackage).
"""

from __future__ import annotations

from agentrc.clients.base import SHARED_SKILL_DIR, json_file, place_resources, resource_files
from agentrc.clients.hookkit import refuse_hook
from agentrc.clients.openclaw import AgentSkillsClient
from agentrc.fidelity import Tracker
from agentrc.files import OutputFile
from agentrc.model import Item, Kind, McpServer

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, Sequence

# Agents become skills, which cannot restrict tools or pick a model: no capability maps to
# anything a file can say (pi's --tools flag is per run).
TOOL_NAMES: Dict[str, str] = {}
MODELS: Dict[str, str] = {}
PROMPTS_DIR = ".pi/prompts"
CHECKED = "checked with pi 0.73.1"  # the version tests/conformance/test_pi_discovery.py runs
# Skill keys pi reads outside the Agent Skills standard (core/skills.js).
PI_SKILL_KEYS = frozenset({"disable-model-invocation"})
NO_HOOKS = ("pi has no shell hooks: its lifecycle events (tool_call, session_start, ...) are handled by extensions, "
            "TypeScript modules, which agentrc does not write")
NO_MCP = "pi has no MCP support by design (an extension can add it); agentrc writes no extension"


class Pi(AgentSkillsClient):
    name = "pi"
    family = "pi"
    title = "pi"
    passthrough_block = "pi"
    passthrough_example = {"disable-model-invocation": True}
    shared_block = True  # pi reads disable-model-invocation in the shared SKILL.md
    rejects_long_description = False  # warns about a description over 1,024 characters, loads it
    tool_names = TOOL_NAMES
    resource_root = ".pi/agentrc"
    # pi loads every SKILL.md under .agents/skills: skills, and the rules, commands and agents
    # other clients write there as skills (pi 0.73.1, tests/conformance/test_pi_discovery.py).
    also_reads = {Kind.SKILL: (SHARED_SKILL_DIR,), Kind.RULE: (SHARED_SKILL_DIR,),
                  Kind.COMMAND: (SHARED_SKILL_DIR,), Kind.AGENT: (SHARED_SKILL_DIR,)}
    discovery = (f"in the system prompt's available skills ({CHECKED}); pi loads .agents/skills from the working "
                 "directory up to the git root, and runs each skill as /skill:<name>")
    spawn = "has no subagents"

    def foreign_skill_key(self, key: str) -> str:
        if key in PI_SKILL_KEYS:
            return (f"pi reads it, but {SHARED_SKILL_DIR} is shared with other clients and holds Agent Skills "
                    "standard keys only: set it in the pi: block")
        return super().foreign_skill_key(key)

    def agent_hint(self, item: Item) -> str:
        return "pi has no subagents (an extension can add them)"

    def agent_model(self, item: Item) -> str:
        return "pi has no per-agent or per-skill model (the model is chosen per session)"

    def agent_tools(self, item: Item) -> str:
        return "a skill cannot restrict tools (pi limits tools per run, with --tools)"

    def command(self, item, ctx, tracker, fm, body):
        """A prompt template: the file name is the command, `$ARGUMENTS` is substituted."""
        self.identify(item, fm, tracker, name_in_file=False,
                      description_detail="shown in the / menu beside the command")
        if "argument-hint" in item.fields:
            fm["argument-hint"] = item.fields["argument-hint"]
            tracker.emitted("argument-hint", "shown before the description in the / menu")
        if "agent" in item.fields:
            tracker.dropped("agent", "pi has no subagents: the prompt runs in the main session")
        if item.model is not None:
            tracker.dropped("model", "pi prompt templates cannot pick a model")
        if item.tools is not None:
            tracker.dropped("tools", "pi prompt templates cannot restrict tools")
        self.merge_block(item, fm, tracker, "merged into the prompt template's frontmatter")
        where = self.prompts_dir
        body, extra = place_resources(item, where, f"{self.resource_root}/commands/{item.name}", body,
                                      self.owner(item), tracker)
        return f"{where}/{item.name}.md", body, extra

    prompts_dir = PROMPTS_DIR

    def hook(self, item, ctx, tracker):
        return refuse_hook(tracker, NO_HOOKS)

    def server(self, server: McpServer, tracker: Tracker) -> Sequence[Any]:
        for key in tracker.expected:
            if key == "requires-env":
                tracker.omitted(key, "checked by agentrc at install time (spec 001 §3.6), not a client field")
            else:
                tracker.dropped(key, NO_MCP)
        return []


class PiPackage(Pi):
    """The same content as a pi package (`--layout plugin`): package.json with a `pi` key
    naming `skills/` (skills, and rules and agents as skills) and `prompts/` (commands),
    installed with `pi install <dir> -l` (docs/packages.md). A package has no context file,
    so context items are dropped."""

    title = "pi package"
    layout = "plugin"
    kinds = (Kind.RULE, Kind.SKILL, Kind.AGENT, Kind.COMMAND, Kind.HOOK)
    skill_dir = "skills"
    resource_root = "agentrc"
    prompts_dir = "prompts"
    shared_block = False
    also_reads: Dict[Kind, Any] = {}
    discovery = (f"in the system prompt's available skills once the package is installed (pi install <dir> -l; "
                 f"{CHECKED})")

    def skill(self, item, ctx, tracker, fm, body):
        return self._moved(item, tracker, fm, *super().skill(item, ctx, tracker, fm, body))

    def rule(self, item, ctx, tracker, fm, body):
        return self._moved(item, tracker, fm, *super().rule(item, ctx, tracker, fm, body))

    def agent(self, item, ctx, tracker, fm, body):
        return self._moved(item, tracker, fm, *super().agent(item, ctx, tracker, fm, body))

    def _moved(self, item: Item, tracker: Tracker, fm: Dict[str, Any], entry: str, body: str,
               extra: Sequence[OutputFile]):
        """The skill under the package's skills/ instead of the shared directory, with the
        pi: block in its frontmatter (the package's SKILL.md is pi's alone)."""
        base = entry[len(SHARED_SKILL_DIR) + 1:-len("/SKILL.md")]
        files = resource_files(item, f"{self.skill_dir}/{base}", self.owner(item))
        self.merge_block(item, fm, tracker, "merged into the package's SKILL.md frontmatter")
        return f"{self.skill_dir}/{base}/SKILL.md", body, files

    def foreign_skill_key(self, key: str) -> str:
        if key in PI_SKILL_KEYS:
            return "set it in the pi: block, which is merged into the package's SKILL.md"
        return super().foreign_skill_key(key)

    def manifest(self, name: str, description: str, version: str = "") -> OutputFile:
        """package.json: the package's name, version (0.0.0 when the bundle has none),
        description, the `pi-package` keyword and the `pi` key naming its directories."""
        data = {"name": name, "version": version or "0.0.0", "description": description,
                "keywords": ["pi-package"], "pi": {"skills": ["./skills"], "prompts": ["./prompts"]}}
        return json_file("package.json", data, self.name)

    def marketplace(self, name: str, plugin: str, description: str) -> None:
        """None: pi installs a package from its directory (pi install <dir>)."""
        return None
