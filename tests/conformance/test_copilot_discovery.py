"""GitHub Copilot CLI (the real CLI, offline, isolated home) discovers what agentrc generates for it.

examples/registry and examples/project are built for `--client copilot` (and, for the
cross-discovery checks, for `--client claude,copilot` into one tree) and copied into a git
project. Every run: HOME, TMPDIR and the XDG dirs in the test's temp dir (the package cache,
where the CLI unpacks its 235 MB runtime on first start, is shared by the module), no
credentials, stdin closed, auto-update off, stdio MCP server commands shadowed by shims, and a
local sink as the HTTP(S) proxy, whose log every test checks.

What the CLI answers offline (1.0.102):

* `copilot skill list --json`: every skill with name, description, source (`project`,
  `builtin`, ...), directory and enabled; the skills it rejects (unparseable frontmatter)
  are named on stderr under "The following skills failed to load". No network, no trust
  needed. The frontmatter `name` is the skill's name even when it differs from its
  directory's, and a skill without a description takes one from its body.
* `copilot instruction list --json`: every instruction source: repository files (`AGENTS.md`,
  `CLAUDE.md`, `GEMINI.md`, `.github/copilot-instructions.md`) and instruction files
  (`.github/instructions/**/*.instructions.md` and `.claude/rules/**/*.md`), the latter with
  `applyTo` (a list: the frontmatter's comma-separated globs, or Claude's `paths:`) and
  `description` when the file is path-scoped. A file whose `applyTo` is absent, `*`, `**` or
  `**/*` is always on, and is listed without either key.
* `copilot mcp list --json`: the MCP servers with their full configuration. Workspace servers
  (`.mcp.json`) are listed only for a trusted folder (`trustedFolders` in
  `$HOME/.copilot/config.json`, as `copilot` writes when a person trusts the folder).
* Agents, hooks and what reaches the model have no listing command. With
  `COPILOT_OFFLINE=true` and a model provider (`COPILOT_PROVIDER_BASE_URL`) at the local sink,
  `copilot -p` sends its first model request there (about 2 s, no GitHub login): the system
  prompt lists the model-visible skills (`<available_skills>`), inlines the always-on
  instruction files verbatim (frontmatter included) and the repository files as
  `<custom_instruction>` blocks, and lists the path-scoped ones in a Pattern / File Path /
  Description table; the `task` tool's description lists the "User-provided custom agents"
  with their descriptions. The debug log (`--log-level all --log-dir`) says
  `loaded repo hooks (hookCount=N)` (handlers, not events; unknown events are skipped with
  "Ignoring unknown hook event(s)"). Repository hooks load only for a trusted folder.
* Hooks that run: the sink can also play the model. Answering the streamed chat-completions
  requests of `copilot -p --allow-all-tools` with tool calls (`bash`, `create`, `edit`,
  `view`; a Claude model id, so that the CLI offers `create` and `edit` rather than
  `apply_patch`), the generated PreToolUse and PostToolUse handlers run for real; a recorder
  in front of each hook script keeps its payload and exit code. The payload names the tool as
  Claude Code does (`tool_name`: Bash, Write, Edit), so Claude's matchers select the CLI's
  tools, and a PreToolUse exit 2 denies the call ("Denied by preToolUse hook: hook exited
  with code 2" is the tool result the model gets). A `task` call to a generated agent starts
  its sub-agent, whose own model request shows the agent's prompt, tools and model.

Discovery facts checked by test_copilot_discovery_paths_and_precedence (on a tree written
by hand, not by agentrc) and test_copilot_in_a_claude_and_copilot_tree_loads_what_ar095_warns_about
(for the cross-client discovery and `audience` work, issue 10 point 16):

* Skills: `.github/skills`, then `.agents/skills`, then `.claude/skills`; one skill per name,
  the first of that order wins (no warning). Claude Code's legacy `.claude/commands/*.md` are
  skills too. Not read: `.opencode/skills`, `.copilot/skills`, `.cursor/skills`, prompt files
  (`.github/prompts`), `.opencode/commands`.
  A skill with `disable-model-invocation: true` is listed but not shown to the model.
* Instructions: the root `AGENTS.md`, `CLAUDE.md`, `GEMINI.md` and
  `.github/copilot-instructions.md`, plus every `.github/instructions/**/*.instructions.md`
  and every `.claude/rules/**/*.md` (recursive). No de-duplication: a rule written both as
  `.github/instructions/x.instructions.md` and `.claude/rules/x.md` reaches the model twice.
  Not read: `CLAUDE.local.md`, `.claude/CLAUDE.md`, `AGENTS.md` below the root, `.md` files in
  `.github/instructions` without `.instructions.md`, `.cursor/rules`, `.windsurf/rules`.
* Agents: `.github/agents/*.agent.md` and `.github/agents/*.md`, and `.claude/agents/*.md`;
  one agent per name, the `.github/agents` copy wins. Not read: `.agents/agents`,
  `.opencode/agents`, `.gemini/agents`, `.cursor/agents`, `.codex/agents`.
* MCP: the first of `.mcp.json` and `.github/mcp.json` (the whole file: a server only in
  `.github/mcp.json` is not loaded while `.mcp.json` exists). Not read: `.vscode/mcp.json`.
* Context: `@path` imports in `CLAUDE.md` are followed (the file's text is appended as an
  `<imported_custom_instruction>`), so in a tree built for claude and copilot AGENTS.md
  reaches the model twice: once itself, once through CLAUDE.md's `@AGENTS.md`.
* Hooks: `.github/hooks/*.json`, and `.claude/settings.json`'s `hooks`. Trust gates hooks and workspace MCP servers only; skills, agents and instructions
  load in an untrusted folder too.
* Switches: none turns off one directory. `disabledSkills` in the repository's
  `.github/copilot/settings.json` marks a skill (by name) `enabled: false` in `skill list`,
  yet a `copilot -p` session still offers it to the model (even with COPILOT_ALLOW_ALL=true);
  in the user's `~/.copilot/settings.json` it removes the skill from the session too (seen
  by hand, not tested). `--no-custom-instructions` drops every instruction
  source from the model request at once (`instruction list` ignores the flag). From the help
  text, not tested: `copilot skill disable <name>` turns a skill off by name (in the user's
  config), whichever directory holds it; the `disableAllHooks` setting turns off all hooks.
"""

from __future__ import annotations

import html
import json
import re
import shlex
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

import pytest

from .conformance_helpers import (
    NPM_MODULES,
    check_npm_package,
    describe,
    make_temp_dir,
    read_frontmatter,
    run,
    split_frontmatter,
    tool_missing,
)
from .offline_clients import (
    ClientBuild,
    LocalSink,
    cli_argv,
    client_build,
    copy_project,
    empty_project,
    flatten_hooks,
    isolated_dirs,
    offline_env,
    read_lines,
    stdio_commands,
    write_shims,
)

PACKAGE = "@github/copilot"
SOURCES = ("registry", "project")
# Any model id of the CLI's catalogue: the request goes to the local sink, which refuses it.
MODEL = "gpt-5.4"
TOOL_MODEL = "claude-sonnet-4.6"
LOG_LINE_HOOKS = re.compile(r"loaded repo hooks \(hookCount=(\d+)\)")
ALWAYS_ON = (None, "", "*", "**", "**/*")


class CopilotCli:
    def __init__(self, argv: List[str], cache: Path):
        self.argv = argv
        self.cache = cache


@pytest.fixture(scope="module")
def copilot() -> CopilotCli:
    check_npm_package(PACKAGE)
    path = NPM_MODULES / ".bin" / "copilot"
    if not path.exists():
        tool_missing(f"{path} is missing")
    cli = CopilotCli(cli_argv(path), make_temp_dir("agentrc-copilot-cache-"))
    # The npm package is a loader; the binary is the platform package (@github/copilot-<os>-<arch>).
    cp = CopilotProject(cli, None, "version")
    proc = cp.run("--version")
    want = f"GitHub Copilot CLI {json.loads((NPM_MODULES / PACKAGE / 'package.json').read_text())['version']}."
    if proc.returncode != 0 or want not in proc.stdout:
        tool_missing(f"copilot --version did not print {want!r}:\n{describe(proc)}")
    cp.assert_offline()
    cp.close()
    return cli


class FakeModel:
    """A streamed chat-completions endpoint (the sink's `answer`): each model request that
    offers the next call's tool gets that call, every other request (a sub-agent's, or the
    one after the last call) a final "done"."""

    def __init__(self, calls: List[Tuple[str, Dict[str, Any]]]):
        self.calls = calls
        self.turn = 0

    def __call__(self, record: Dict[str, Any]) -> Optional[Tuple[int, str, bytes]]:
        if record["method"] != "POST" or not record["path"].endswith("/chat/completions"):
            return None
        body = record["body"] if isinstance(record["body"], dict) else {}
        # A sub-agent's request (it lacks the tool the next call needs) just gets "done".
        if self.turn < len(self.calls) and self.calls[self.turn][0] in _tool_names(body):
            i, self.turn = self.turn, self.turn + 1
            name, args = self.calls[i]
            delta: Dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [
                {"index": 0, "id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}
            finish = "tool_calls"
        else:
            delta, finish = {"role": "assistant", "content": "done"}, "stop"
        head = {"id": "agentrc", "object": "chat.completion.chunk", "created": 0, "model": TOOL_MODEL}
        chunks = [dict(head, choices=[{"index": 0, "delta": delta, "finish_reason": None}]),
                  dict(head, choices=[{"index": 0, "delta": {}, "finish_reason": finish}]),
                  dict(head, choices=[], usage={"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2})]
        data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        return 200, "text/event-stream", data.encode("utf-8")


class CopilotProject:
    """A git-initialised copy of `tree` (a build, or a tree a test wrote; None: an empty
    project) with its own home, shims and proxy sink; `trusted` puts it in the home's
    `trustedFolders`, as the CLI does when a person trusts the folder."""

    def __init__(self, cli: CopilotCli, tree: Optional[Path], name: str, trusted: bool = True):
        self.cli = cli
        self.base, self.home, self.tmp = isolated_dirs(f"agentrc-copilot-{name}-")
        if tree is None:
            self.project = empty_project(self.base / "project")
        else:
            self.project = copy_project(tree, self.base / "project")
        self.servers: Dict[str, Dict[str, Any]] = {}
        for f in (".mcp.json", ".github/mcp.json", ".vscode/mcp.json"):
            p = self.project / f
            if p.exists():
                data = json.loads(p.read_text(encoding="utf-8"))
                self.servers.update(data.get("mcpServers") or data.get("servers") or {})
        self.shim_log = self.base / "shims.log"
        self.shims = write_shims(self.base / "shims", stdio_commands(self.servers), self.shim_log)
        self.proxy = LocalSink()
        self.model_requests = 0
        self.runs = 0
        user = self.home / ".copilot"
        user.mkdir()
        if trusted:
            (user / "config.json").write_text(json.dumps({"trustedFolders": [str(self.project)]}), encoding="utf-8")

    def env(self, **extra: str) -> Dict[str, str]:
        env = offline_env(self.home, self.tmp, shims=self.shims, proxy=self.proxy, extra={
            "XDG_CACHE_HOME": str(self.cli.cache),
            "COPILOT_AUTO_UPDATE": "false",
        })
        env.update(extra)
        return env

    def run(self, *args: str, **extra: str):
        return run([*self.cli.argv, *args], self.project, self.env(**extra), timeout=60)

    def json(self, *args: str) -> Any:
        proc = self.run(*args, "--json")
        assert proc.returncode == 0, describe(proc)
        # With --json the CLI names the files it rejects on stderr ("✖ The following skills
        # failed to load: • <path>: failed to parse YAML frontmatter: ...").
        assert "failed to load" not in proc.stderr, describe(proc)
        try:
            return json.loads(proc.stdout)
        except ValueError:
            pytest.fail(f"copilot {' '.join(args)} --json printed no JSON:\n{describe(proc)}", pytrace=False)

    def model_request(self, *args: str) -> Tuple[Dict[str, Any], str]:
        """(the first model request's JSON body, the debug log) of `copilot -p` with the model
        provider at the sink. Every generated MCP server is disabled for the run."""
        self.runs += 1
        logs = self.base / f"logs-{self.runs}"
        disable = [a for name in sorted(self.servers) for a in ("--disable-mcp-server", name)]
        before = len(self.proxy.requests)
        proc = self.run("-p", "agentrc conformance probe", "--no-auto-update", "--disable-client-telemetry",
                        "--log-level", "all", "--log-dir", str(logs), *disable, *args,
                        COPILOT_OFFLINE="true", COPILOT_PROVIDER_BASE_URL=f"{self.proxy.url}/v1",
                        COPILOT_PROVIDER_API_KEY="agentrc-dummy", COPILOT_MODEL=MODEL)
        posts = [r for r in self.proxy.requests[before:] if r["method"] == "POST" and r["path"] == "/v1/chat/completions"]
        assert posts and isinstance(posts[0]["body"], dict), "no model request reached the sink:\n" + describe(proc)
        self.model_requests += len(posts)
        log = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in sorted(logs.glob("*.log")))
        return posts[0]["body"], log

    def drive(self, calls: List[Tuple[str, Dict[str, Any]]]) -> Tuple[Any, List[Dict[str, Any]]]:
        """Run `copilot -p` against a fake model that asks for `calls` (tool name, arguments),
        one per turn, then ends. Returns (the process, every model request's body). A Claude
        model id, so that the CLI offers its `create` and `edit` tools (GPT models get
        `apply_patch`); every tool is allowed."""
        fake = FakeModel(calls)
        self.proxy.answer = fake
        before = len(self.proxy.requests)
        disable = [a for name in sorted(self.servers) for a in ("--disable-mcp-server", name)]
        try:
            proc = self.run("-p", "agentrc conformance probe", "--no-auto-update", "--disable-client-telemetry",
                            "--allow-all-tools", *disable, COPILOT_OFFLINE="true",
                            COPILOT_PROVIDER_BASE_URL=f"{self.proxy.url}/v1", COPILOT_PROVIDER_API_KEY="agentrc-dummy",
                            COPILOT_MODEL=TOOL_MODEL)
        finally:
            self.proxy.answer = None
        posts = [r["body"] for r in self.proxy.requests[before:] if r["method"] == "POST"]
        self.model_requests += len(posts)
        assert proc.returncode == 0 and fake.turn == len(calls), describe(proc)
        return proc, posts

    def assert_offline(self) -> None:
        other = [r for r in self.proxy.requests if not (r["method"] == "POST" and r["path"] == "/v1/chat/completions")]
        assert other == [], f"the Copilot CLI tried to reach the network: {other}"
        assert len(self.proxy.requests) == self.model_requests, self.proxy.requests
        assert read_lines(self.shim_log) == [], f"the Copilot CLI started MCP server commands: {read_lines(self.shim_log)}"

    def close(self) -> None:
        self.proxy.close()


@pytest.fixture
def projects():
    made: List[CopilotProject] = []
    yield made
    for p in made:
        p.close()


def _project(projects: List[CopilotProject], *args: Any, **kwargs: Any) -> CopilotProject:
    cp = CopilotProject(*args, **kwargs)
    projects.append(cp)
    return cp


# ---------------------------------------------------------------------------------------------
# Reading the model request
# ---------------------------------------------------------------------------------------------

_SKILL = re.compile(r"<skill>\s*<name>(.*?)</name>\s*<description>(.*?)</description>\s*<location>(.*?)</location>\s*</skill>", re.S)
_TABLE_ROW = re.compile(r"^\| (.+?) \| '(.+?)' \| (.*?) \|$", re.M)
_CUSTOM = re.compile(r"<custom_instruction>\n(.*?)\n</custom_instruction>", re.S)


def _tool_names(body: Dict[str, Any]) -> List[str]:
    return [str((t.get("function") or t.get("custom") or {}).get("name")) for t in body.get("tools") or []]


def _system(body: Dict[str, Any]) -> str:
    parts = []
    for m in body.get("messages") or []:
        if m.get("role") == "system":
            c = m.get("content")
            parts.append(c if isinstance(c, str) else json.dumps(c))
    return "\n".join(parts)


def _model_skills(system: str) -> Dict[str, Tuple[str, str]]:
    """{name: (description, location)} of the `<available_skills>` the model is shown."""
    return {html.unescape(n): (html.unescape(d), loc) for n, d, loc in _SKILL.findall(system)}


def _model_agents(body: Dict[str, Any]) -> Dict[str, str]:
    """{name: description} of the task tool's "User-provided custom agents"."""
    for tool in body.get("tools") or []:
        fn = tool.get("function") or {}
        if fn.get("name") == "task":
            text = fn.get("description") or ""
            _, _, custom = text.partition("User-provided custom agents:")
            return dict(re.findall(r"^- \*\*(.+?)\*\*: (.*)$", custom, re.M))
    pytest.fail(f"the model request has no task tool: {[(t.get('function') or {}).get('name') for t in body.get('tools') or []]}",
                pytrace=False)
    raise AssertionError("unreachable")


def _scoped_table(system: str) -> Dict[str, Tuple[str, str]]:
    """{file path: (pattern, description)} of the path-scoped instruction files' table."""
    _, _, after = system.partition("| Pattern | File Path | Description |")
    return {path: (pattern, desc) for pattern, path, desc in _TABLE_ROW.findall(after)}


def _hook_count(log: str) -> int:
    counts = LOG_LINE_HOOKS.findall(log)
    assert counts, "no `loaded repo hooks (hookCount=N)` line in the debug log"
    return int(counts[-1])


def _handlers(hooks_file: Path) -> int:
    """Handlers of a Copilot hooks file ({hooks: {Event: [handler, ...]}})."""
    data = json.loads(hooks_file.read_text(encoding="utf-8"))
    return sum(len(v) for v in (data.get("hooks") or {}).values())


# ---------------------------------------------------------------------------------------------
# What agentrc generated (the fidelity report, checked against the files written)
# ---------------------------------------------------------------------------------------------


def _skills(build: ClientBuild, project: Path) -> Dict[str, Dict[str, Any]]:
    """{name: frontmatter} of the generated .github/skills, keyed by the frontmatter name."""
    dirs = build.generated_skills(".github/skills", "copilot")
    written = sorted(p.parent.name for p in (project / ".github" / "skills").glob("*/SKILL.md"))
    assert sorted(Path(d).name for d in dirs.values()) == written, (dirs, written)
    found = {}
    for d in dirs.values():
        fm = read_frontmatter(project / d / "SKILL.md")
        assert fm.get("name") == Path(d).name, (d, fm)
        found[str(fm["name"])] = fm
    return found


def _rules(build: ClientBuild, project: Path) -> Dict[str, Dict[str, Any]]:
    """{path: frontmatter} of the generated .github/instructions files."""
    paths = sorted(o for outs in build.generated("rule", "copilot").values() for o in outs
                   if o.startswith(".github/instructions/") and o.endswith(".instructions.md"))
    written = sorted(p.relative_to(project).as_posix() for p in (project / ".github" / "instructions").rglob("*.instructions.md"))
    assert paths == written, (paths, written)
    return {p: read_frontmatter(project / p) for p in paths}


def _agents(build: ClientBuild, project: Path, client: str = "copilot") -> Dict[str, str]:
    """{name: description} of the generated agent files of `client`."""
    prefix = ".github/agents/" if client == "copilot" else ".claude/agents/"
    found = {}
    for name, outputs in build.generated("agent", client).items():
        files = [o for o in outputs if o.startswith(prefix) and o.endswith(".md")]
        assert len(files) == 1, (name, outputs)
        fm = read_frontmatter(project / files[0])
        assert fm.get("name") == name, (files[0], fm)
        found[name] = str(fm.get("description"))
    return found


def _instruction_entry(path: str, fm: Dict[str, Any], patterns: Optional[List[str]]) -> Dict[str, Any]:
    """What `instruction list --json` reports for an instruction file."""
    entry: Dict[str, Any] = {"id": f"vscode-instructions/{path}", "label": Path(path).name, "location": "working-directory",
                             "type": "vscode", "sourcePath": path, "defaultDisabled": False}
    if patterns:
        entry["applyTo"] = patterns
        if "description" in fm:
            entry["description"] = fm["description"]
    return entry


def _apply_to(fm: Dict[str, Any]) -> Optional[List[str]]:
    """The path patterns of a .github/instructions file, or None when it is always on."""
    value = fm.get("applyTo")
    if value in ALWAYS_ON:
        return None
    return [p.strip() for p in str(value).split(",") if p.strip()]


_REPO_FILES = {"AGENTS.md": "model-agents-md", "CLAUDE.md": "model-claude-md", "GEMINI.md": "model-gemini-md"}


def _repo_entry(path: str) -> Dict[str, Any]:
    return {"id": _REPO_FILES[path], "label": path, "location": "repository", "type": "model", "sourcePath": path,
            "defaultDisabled": False}


# ---------------------------------------------------------------------------------------------
# One client's build: examples/registry and examples/project for --client copilot
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("source", SOURCES)
def test_copilot_skill_list_lists_exactly_the_generated_skills(copilot: CopilotCli, projects, source: str):
    build = client_build(source, "copilot")
    cp = _project(projects, copilot, build.out, f"skills-{source}")
    skills = _skills(build, cp.project)
    assert skills, f"examples/{source} should exercise skills"

    listed = cp.json("skill", "list")
    cp.assert_offline()

    project = {s["name"]: s for s in listed if s.get("source") == "project"}
    assert len(project) == len([s for s in listed if s.get("source") == "project"]), listed
    assert sorted(project) == sorted(skills), listed
    for name, fm in skills.items():
        assert project[name] == {"name": name, "description": fm["description"], "source": "project",
                                 "path": str(cp.project / ".github" / "skills" / name), "enabled": True}, project[name]


def test_copilot_skill_list_names_a_skill_it_cannot_load(copilot: CopilotCli, projects):
    """The control for the stderr check of `json()`: a SKILL.md with broken frontmatter is left
    out of the listing and named on stderr."""
    build = client_build("registry", "copilot")
    cp = _project(projects, copilot, build.out, "skills-control")
    name = sorted(_skills(build, cp.project))[0]
    skill = cp.project / ".github" / "skills" / name / "SKILL.md"
    skill.write_text(skill.read_text(encoding="utf-8").replace("description: ", "description: [", 1), encoding="utf-8")

    proc = cp.run("skill", "list", "--json")
    cp.assert_offline()

    assert proc.returncode == 0, describe(proc)
    assert name not in {s["name"] for s in json.loads(proc.stdout)}, describe(proc)
    assert "The following skills failed to load" in proc.stderr and f".github/skills/{name}/SKILL.md" in proc.stderr, describe(proc)


@pytest.mark.parametrize("source", SOURCES)
def test_copilot_instruction_list_lists_every_generated_instruction(copilot: CopilotCli, projects, source: str):
    build = client_build(source, "copilot")
    cp = _project(projects, copilot, build.out, f"instructions-{source}")
    rules = _rules(build, cp.project)
    assert rules and (cp.project / "AGENTS.md").exists(), f"examples/{source} should exercise rules and context"
    assert any(_apply_to(fm) for fm in rules.values()) and any(not _apply_to(fm) for fm in rules.values()), \
        f"examples/{source} should have path-scoped and always-on rules"
    expected = {"AGENTS.md": _repo_entry("AGENTS.md")}
    for path, fm in rules.items():
        expected[path] = _instruction_entry(path, fm, _apply_to(fm))

    listed = cp.json("instruction", "list")
    cp.assert_offline()

    assert {e["sourcePath"]: e for e in listed} == expected


@pytest.mark.parametrize("source", SOURCES)
def test_copilot_mcp_list_lists_every_generated_server(copilot: CopilotCli, projects, source: str):
    build = client_build(source, "copilot")
    cp = _project(projects, copilot, build.out, f"mcp-{source}")
    generated = json.loads((cp.project / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    assert generated and sorted(generated) == sorted(build.generated("mcp")), (generated, build.generated("mcp"))
    untrusted = _project(projects, copilot, build.out, f"mcp-untrusted-{source}", trusted=False)

    listed = cp.json("mcp", "list")["mcpServers"]
    listed_untrusted = untrusted.json("mcp", "list")["mcpServers"]
    cp.assert_offline()
    untrusted.assert_offline()

    # Workspace servers are listed only once the folder is trusted.
    assert listed_untrusted == {}
    assert sorted(listed) == sorted(generated)
    for name, server in generated.items():
        got = dict(listed[name])
        assert (got.pop("source"), got.pop("sourcePath"), got.pop("enabled"), got.pop("tools")) == \
            ("workspace", str(cp.project / ".mcp.json"), True, ["*"]), listed[name]
        if "args" not in server and got.get("args") == []:
            got.pop("args")  # the CLI lists a stdio server without args with `args: []`
        assert got == server, name


@pytest.mark.parametrize("source", SOURCES)
def test_copilot_model_request_has_every_generated_skill_agent_instruction_and_hook(copilot: CopilotCli, projects, source: str):
    build = client_build(source, "copilot")
    cp = _project(projects, copilot, build.out, f"model-{source}")
    skills, rules, agents = _skills(build, cp.project), _rules(build, cp.project), _agents(build, cp.project)
    hooks_file = cp.project / ".github" / "hooks" / "agentrc.json"
    assert agents and hooks_file.exists() and build.generated("hook"), f"examples/{source} should exercise agents and hooks"

    body, log = cp.model_request()
    cp.assert_offline()
    system = _system(body)

    # Skills: every generated one the model may invoke, with its description.
    visible = {n: (str(fm["description"]), "project") for n, fm in skills.items() if fm.get("disable-model-invocation") is not True}
    assert {n: v for n, v in _model_skills(system).items() if v[1] == "project"} == visible
    # Agents: exactly the generated .github/agents, with their descriptions.
    assert _model_agents(body) == agents
    # Instructions: AGENTS.md as a custom instruction; always-on files inlined verbatim; the
    # path-scoped ones in the table, with their patterns and descriptions.
    agents_md = (cp.project / "AGENTS.md").read_text(encoding="utf-8")
    assert [b.strip() for b in _CUSTOM.findall(system)] == [agents_md.strip()]
    for path, fm in rules.items():
        if _apply_to(fm) is None:
            assert (cp.project / path).read_text(encoding="utf-8").strip() in system, f"{path} is not in the system prompt"
    assert _scoped_table(system) == {p: (", ".join(_apply_to(fm) or []), str(fm.get("description", "")))
                                     for p, fm in rules.items() if _apply_to(fm)}
    # Hooks: every handler of .github/hooks/agentrc.json registered, no event skipped.
    assert _hook_count(log) == _handlers(hooks_file), log[-3000:]
    assert "Ignoring unknown hook event" not in log


def test_copilot_hook_loading_reports_an_unknown_event(copilot: CopilotCli, projects):
    """The control for the hook count above: an unknown event is skipped, and the log says so."""
    build = client_build("registry", "copilot")
    cp = _project(projects, copilot, build.out, "hooks-control")
    hooks_file = cp.project / ".github" / "hooks" / "agentrc.json"
    data = json.loads(hooks_file.read_text(encoding="utf-8"))
    data["hooks"]["NotAHookEvent"] = next(iter(data["hooks"].values()))
    hooks_file.write_text(json.dumps(data), encoding="utf-8")

    _, log = cp.model_request()
    cp.assert_offline()

    assert _hook_count(log) == _handlers(hooks_file) - len(data["hooks"]["NotAHookEvent"])
    assert re.search(r"Ignoring unknown hook event\(s\) in .*agentrc\.json: NotAHookEvent", log)


# ---------------------------------------------------------------------------------------------
# Hooks that run: a fake model asks for tool calls, and each generated hook must fire on
# exactly the calls its event and matcher select
# ---------------------------------------------------------------------------------------------

# The Copilot CLI's tool, and the Claude Code tool name it gives hooks (`tool_name`).
PROBE_FILE = "agentrc-probe.txt"


def _probe_calls(project: Path) -> List[Tuple[str, str, Dict[str, Any]]]:
    target = str(project / PROBE_FILE)
    return [
        ("bash", "Bash", {"command": "printenv AGENTRC_PROBE", "description": "agentrc probe"}),
        ("bash", "Bash", {"command": "echo agentrc-probe", "description": "agentrc probe"}),
        ("create", "Write", {"path": target, "file_text": "one\n"}),
        ("edit", "Edit", {"path": target, "old_str": "one", "new_str": "two"}),
        ("view", "Read", {"path": target}),
    ]


def _script_path(project: Path, command: str) -> Path:
    """The script a hook command starts (its first word; Claude's `${CLAUDE_PROJECT_DIR:-.}`
    prefix is the project root, where the CLI runs hooks)."""
    first = shlex.split(command.replace("${CLAUDE_PROJECT_DIR:-.}", "."))[0]
    path = (project / first).resolve()
    assert project in path.parents, command
    return path


def _wrap_hook_scripts(project: Path, handlers: List[Dict[str, Any]], log: Path) -> None:
    """Put a recorder in front of each handler's script: it saves the payload (stdin) and the
    exit code of the real script, which it runs with the same input and arguments. A script
    the project is meant to provide itself (examples/project's `scripts/guard.sh`) is a stub
    that exits 0."""
    log.mkdir()
    scripts = [_script_path(project, h["command"]) for h in handlers]
    assert len(set(scripts)) == len(scripts), scripts
    for i, script in enumerate(scripts):
        real = script.with_name(script.name + ".agentrc-real")
        if script.exists():
            script.rename(real)
            run_real = f'"{real}" "$@"'
        else:
            script.parent.mkdir(parents=True, exist_ok=True)
            run_real = "cat >/dev/null"
        script.write_text(f"""#!/bin/sh
out=$(mktemp "{log}/{i}.XXXXXX")
cat > "$out"
{run_real} < "$out"
rc=$?
echo "$rc" > "$out.rc"
exit "$rc"
""", encoding="utf-8")
        script.chmod(0o755)


def _copilot_handlers(project: Path) -> List[Dict[str, Any]]:
    """Every handler of .github/hooks/*.json, or, when there is none, of .claude/settings.json
    (which the CLI also runs), with its event and matcher."""
    handlers: List[Dict[str, Any]] = []
    for f in sorted((project / ".github" / "hooks").glob("*.json")):
        for event, entries in (json.loads(f.read_text(encoding="utf-8")).get("hooks") or {}).items():
            handlers.extend(dict(e, event=event) for e in entries)
    if not handlers and (project / ".claude" / "settings.json").exists():
        handlers = flatten_hooks(json.loads((project / ".claude" / "settings.json").read_text(encoding="utf-8")).get("hooks") or {})
    return handlers


@pytest.mark.parametrize("source, clients", [("registry", "copilot"), ("project", "copilot"), ("registry", "claude,copilot")])
def test_copilot_runs_every_generated_hook_on_its_tools(copilot: CopilotCli, projects, source: str, clients: str):
    """PreToolUse and PostToolUse handlers, with Claude Code's matchers, fire on the CLI's own
    tools, which it names as Claude Code does in the payload (bash: Bash, create: Write,
    edit: Edit); a PreToolUse handler that exits 2 denies the call, and the model is told so.
    Built with claude, the handlers are .claude/settings.json's, which the CLI runs instead."""
    build = client_build(source, clients)
    cp = _project(projects, copilot, build.out, f"hooks-run-{source}-{clients.replace(',', '-')}")
    handlers = _copilot_handlers(cp.project)
    assert handlers and {h["event"] for h in handlers} <= {"PreToolUse", "PostToolUse"}, handlers
    log = cp.base / "hook-log"
    _wrap_hook_scripts(cp.project, handlers, log)
    calls = _probe_calls(cp.project)

    proc, requests = cp.drive([(tool, args) for tool, _, args in calls])
    cp.assert_offline()
    assert len(requests) == len(calls) + 1, describe(proc)

    fired: Dict[Tuple[int, int], Tuple[Dict[str, Any], int]] = {}
    for payload_file in sorted(p for p in log.iterdir() if not p.name.endswith(".rc")):
        payload = json.loads(payload_file.read_text(encoding="utf-8"))
        handler = int(payload_file.name.split(".")[0])
        which = [i for i, (_, _, args) in enumerate(calls) if payload.get("tool_input") == args]
        assert len(which) == 1, payload
        key = (handler, which[0])
        assert key not in fired, f"handler {handlers[handler]} ran twice for call {calls[which[0]]}"
        fired[key] = (payload, int((log / (payload_file.name + ".rc")).read_text().strip()))
    denied = {c for (h, c), (_, rc) in fired.items() if handlers[h]["event"] == "PreToolUse" and rc == 2}

    def selects(handler: Dict[str, Any], claude_name: str) -> bool:
        matcher = handler.get("matcher")
        return not matcher or matcher == "*" or re.fullmatch(matcher, claude_name) is not None

    expected = {(h, c) for h, handler in enumerate(handlers) for c, (_, claude_name, _) in enumerate(calls)
                if selects(handler, claude_name) and (handler["event"] == "PreToolUse" or c not in denied)}
    assert set(fired) == expected, (sorted(fired), sorted(expected), describe(proc))
    for (h, c), (payload, _) in fired.items():
        assert (payload.get("hook_event_name"), payload.get("tool_name")) == (handlers[h]["event"], calls[c][1]), payload
    # The model hears of each denial as the call's result; the other calls ran.
    results = {m["tool_call_id"]: str(m.get("content")) for m in requests[-1]["messages"] if m.get("role") == "tool"}
    assert sorted(results) == [f"call_{i}" for i in range(len(calls))], results
    for i in range(len(calls)):
        assert results[f"call_{i}"].startswith("Denied by preToolUse hook") == (i in denied), results
    if source == "registry":  # block-secrets denies `printenv`
        assert denied == {0}, fired
    assert (cp.project / PROBE_FILE).read_text(encoding="utf-8") == "two\n"


@pytest.mark.parametrize("source", SOURCES)
def test_copilot_model_loads_every_generated_skill_with_its_files(copilot: CopilotCli, projects, source: str):
    """The fake model invokes each generated skill with the `skill` tool. A skill the model may
    invoke loads: the next request holds a `<skill-context>` message with the skill's
    directory, its supporting files ("Related files"), and its body; one with
    `disable-model-invocation: true` is "not found" for the model."""
    build = client_build(source, "copilot")
    cp = _project(projects, copilot, build.out, f"skills-run-{source}")
    skills = _skills(build, cp.project)
    calls = [("skill", {"skill": n}) for n in sorted(skills)]

    proc, requests = cp.drive(calls)
    cp.assert_offline()

    messages = requests[-1]["messages"]
    results = {m["tool_call_id"]: str(m.get("content")) for m in messages if m.get("role") == "tool"}
    contexts = {}
    for m in messages:
        text = str(m.get("content")) if m.get("role") == "user" else ""
        found = re.match(r'<skill-context name="([^"]+)">\n(.*)</skill-context>$', text, re.S)
        if found:
            contexts[found.group(1)] = found.group(2)
    for i, name in enumerate(sorted(skills)):
        result = results[f"call_{i}"]
        if skills[name].get("disable-model-invocation") is True:
            assert result.startswith(f'Skill "{name}" not found'), result
            assert name not in contexts
            continue
        assert result == f'Skill "{name}" loaded successfully. Follow the instructions in the skill context.', result
        folder = cp.project / ".github" / "skills" / name
        context = contexts[name]
        assert context.startswith(f"Base directory for this skill: {folder}\n"), context[:300]
        related = set(re.findall(r"^  - (/.+)$", context.partition("\n\n# ")[0], re.M))
        assert related == {str(p) for p in folder.rglob("*") if p.is_file() and p.name != "SKILL.md"}, (name, related)
        body = split_frontmatter((folder / "SKILL.md").read_text(encoding="utf-8"))[1]
        assert context.rstrip().endswith(body.strip()), (name, context[-300:])
    assert sorted(contexts) == sorted(n for n, fm in skills.items() if fm.get("disable-model-invocation") is not True), describe(proc)


# ---------------------------------------------------------------------------------------------
# Agents that run: the fake model hands a task to each generated agent, whose sub-agent
# request shows its prompt, tools and model
# ---------------------------------------------------------------------------------------------

# The CLI tools behind each Copilot tool alias (docs: custom-agents-configuration), as 1.0.102
# offers them to a Claude model offline (`web` is web_fetch, off with COPILOT_OFFLINE).
ALIAS_TOOLS = {
    "read": {"view"}, "edit": {"create", "edit"}, "search": {"grep", "glob"},
    "execute": {"bash", "read_bash", "stop_bash", "list_bash"}, "web": {"web_fetch", "web_search"},
}


@pytest.mark.parametrize("source", SOURCES)
def test_copilot_runs_every_generated_agent_with_its_prompt_tools_and_model(copilot: CopilotCli, projects, source: str):
    """The sub-agent's system prompt starts with the agent file's body, its tools are exactly
    those its `tools:` aliases name, and its model request names the agent's `model:` (the CLI
    sends the value as it is; the session's model when there is none). Whether GitHub's
    service accepts a display name such as "Claude Opus 5.5" is not observable offline."""
    build = client_build(source, "copilot")
    cp = _project(projects, copilot, build.out, f"agents-run-{source}")
    files = {}
    for name, outputs in build.generated("agent", "copilot").items():
        files[name] = next(o for o in outputs if o.startswith(".github/agents/") and o.endswith(".agent.md"))
    assert files, f"examples/{source} should exercise agents"
    calls = [("task", {"name": f"probe-{n}", "prompt": f"agentrc probe {n}", "agent_type": n, "description": "agentrc probe"})
             for n in sorted(files)]

    proc, requests = cp.drive(calls)
    cp.assert_offline()

    main_tools = set(_tool_names(requests[0]))
    subs: Dict[str, Dict[str, Any]] = {}
    for body in requests:
        if "task" in _tool_names(body):
            continue
        users = " ".join(str(m.get("content")) for m in body.get("messages") or [] if m.get("role") == "user")
        names = [n for n in files if users.rstrip().endswith(f"agentrc probe {n}")]
        assert len(names) == 1 and names[0] not in subs, (names, users[-200:])
        subs[names[0]] = body
    assert sorted(subs) == sorted(files), describe(proc)
    for name, path in files.items():
        fm, body = split_frontmatter((cp.project / path).read_text(encoding="utf-8"))
        sub = subs[name]
        assert _system(sub).startswith(body.strip()), f"{path}: the sub-agent's prompt does not start with the body"
        if fm.get("tools") is not None:
            aliases = [str(a) for a in fm["tools"]]  # type: ignore[union-attr]
            assert set(aliases) <= set(ALIAS_TOOLS), aliases
            want = set().union(*(ALIAS_TOOLS[a] for a in aliases)) & main_tools
            assert set(_tool_names(sub)) == want, (path, aliases, _tool_names(sub))
        assert sub.get("model") == fm.get("model", TOOL_MODEL), (path, sub.get("model"))


# ---------------------------------------------------------------------------------------------
# Claude Code's and Copilot's files in one tree (--client claude,copilot): the AR095 cases
# ---------------------------------------------------------------------------------------------

# "copilot also loads 2 skills written for claude from .claude/skills, different from its own
# copies (a, b); its own copy wins", or, for several kinds or reasons in one directory, "copilot
# also loads 4 copies from .claude/skills: 2 commands written for claude, ... (a, b); 2 skills ..."
# (output/plan.py's wording: one line per reader and directory, shared with the report).
_LINE = re.compile(r"warning\[AR095\] copilot also loads (.*)$", re.M)
_PART = re.compile(r"^\d+ (\w+) written for ([\w ]+?)(?: from [^,]+)?, "
                   r"((?:outside its audience|as its only|as a second|as second|different from).*)$")
_NAMED = re.compile(r"\(([^)]*)\)")
KIND_OF = {k + s: k for k in ("skill", "command", "rule", "agent") for s in ("", "s")}


def _ar095_parts(log: str):
    """(noun, writers, rest) of each part of each AR095 line about Copilot."""
    for line in _LINE.findall(log):
        head = re.match(r"\d+ copies from [^:]+: (.*)$", line)
        for part in (head.group(1).split("; ") if head else [line]):
            m = _PART.match(part)
            if m:
                yield m.groups()


def _ar095_names(log: str, writer: str = "claude") -> Dict[str, Set[str]]:
    """{item kind: names} that AR095 says Copilot also loads from `writer`'s files."""
    found: Dict[str, Set[str]] = {}
    for noun, writers, rest in _ar095_parts(log):
        if writer not in writers.split(" and "):
            continue
        for names in _NAMED.findall(rest)[:1]:
            assert " more" not in names, f"AR095 shortened its list; the test needs every name: {rest}"
            found.setdefault(KIND_OF[noun], set()).update(n.strip() for n in names.split(","))
    return found


def _shared(build: ClientBuild, prefix: str) -> Set[str]:
    """Names whose Copilot output is another client's copy under `prefix` (shared-copies:
    the same bytes, loaded once, so no AR095 names them)."""
    return {n for kind in ("skill", "command") for n, outs in build.generated(kind, "copilot").items()
            if any(o.startswith(prefix) for o in outs)}


def _claude_items(build: ClientBuild, kind: str, prefix: str) -> Dict[str, str]:
    """{item name: output path} of Claude's items of `kind` written under `prefix`."""
    found = {}
    for name, outputs in build.generated(kind, "claude").items():
        for o in outputs:
            if o.startswith(prefix) and (o.endswith("/SKILL.md") or o.count("/") == prefix.count("/")):
                found[name] = o
    return found


@pytest.mark.parametrize("source", SOURCES)
def test_copilot_in_a_claude_and_copilot_tree_loads_what_ar095_warns_about(copilot: CopilotCli, projects, source: str):
    """Built for claude and copilot into one tree, the Copilot CLI also loads Claude Code's
    files. Skills and agents: one per name, Copilot's own copy wins (so for an item both
    clients got, "which copy it loads" is Copilot's); Claude's items that Copilot did not get
    (audience, or commands, which Claude receives as skills) load from .claude/. Rules: both
    copies load, each reaches the model twice. CLAUDE.md loads as a repository instruction,
    with its `@AGENTS.md` import expanded: AGENTS.md reaches the model twice.
    Hooks: agentrc writes no .github/hooks copy and Copilot registers Claude's from
    .claude/settings.json. Every item it loads from Claude's files, other than identical
    copies it shadows, must be named by an AR095 warning."""
    build = client_build(source, "claude,copilot")
    cp = _project(projects, copilot, build.out, f"both-{source}")
    warned = _ar095_names(build.log)
    copilot_skills = _skills(build, cp.project)
    claude_skills = _claude_items(build, "skill", ".claude/skills/")
    claude_skills.update(_claude_items(build, "command", ".claude/skills/"))
    claude_kind = {n: "skill" for n in build.generated("skill", "claude")}
    claude_kind.update({n: "command" for n in build.generated("command", "claude")})

    listed = cp.json("skill", "list")
    instructions = cp.json("instruction", "list")
    body, log = cp.model_request()
    cp.assert_offline()

    # Skills: one per name, from .github/skills when Copilot has its own copy.
    project_skills = [s for s in listed if s.get("source") == "project"]
    by_name = {s["name"]: Path(s["path"]).relative_to(cp.project).as_posix() for s in project_skills}
    assert len(by_name) == len(project_skills), project_skills
    expected = {n: f".claude/skills/{Path(p).parent.name}" for n, p in claude_skills.items()}
    expected.update({n: f".github/skills/{n}" for n in copilot_skills})
    assert by_name == expected
    from_claude = {n for n, p in by_name.items() if p.startswith(".claude/")} - _shared(build, ".claude/skills/")
    for name in from_claude:
        kind = claude_kind[name]
        assert name in warned.get(kind, set()), f"Copilot loads {kind} {name} from .claude/skills, and no AR095 says so: {warned}"
    # Where both clients got a skill, AR095 names exactly those whose copies differ.
    differ = {n for n in copilot_skills if n in claude_skills
              and (cp.project / ".github/skills" / n / "SKILL.md").read_bytes() != (cp.project / claude_skills[n]).read_bytes()}
    assert differ <= warned.get("skill", set()), (differ, warned)

    # Rules: both copies are instruction sources; CLAUDE.md is one too.
    rules = _rules(build, cp.project)
    claude_rules = _claude_items(build, "rule", ".claude/rules/")
    expected_instr = {"AGENTS.md": _repo_entry("AGENTS.md"), "CLAUDE.md": _repo_entry("CLAUDE.md")}
    for path, fm in rules.items():
        expected_instr[path] = _instruction_entry(path, fm, _apply_to(fm))
    for path in claude_rules.values():
        fm = read_frontmatter(cp.project / path)
        paths = fm.get("paths")
        expected_instr[path] = _instruction_entry(path, fm, [str(p) for p in paths] if paths else None)
    assert {e["sourcePath"]: e for e in instructions} == expected_instr
    assert set(claude_rules) <= warned.get("rule", set()), (sorted(claude_rules), warned)

    # Agents: one per name; Claude's agents that Copilot did not get load from .claude/agents.
    copilot_agents, claude_agents = _agents(build, cp.project), _agents(build, cp.project, "claude")
    model_agents = _model_agents(body)
    assert model_agents == dict(claude_agents, **copilot_agents)
    foreign = set(claude_agents) - set(copilot_agents)
    assert foreign <= warned.get("agent", set()), (foreign, warned)

    # Hooks: Copilot runs Claude's, and agentrc wrote no second copy.
    assert not (cp.project / ".github" / "hooks" / "agentrc.json").exists()
    claude_hooks = flatten_hooks(json.loads((cp.project / ".claude" / "settings.json").read_text(encoding="utf-8"))["hooks"])
    assert claude_hooks and _hook_count(log) == len(claude_hooks), log[-3000:]

    # The model sees CLAUDE.md as a repository instruction beside AGENTS.md, and the CLI
    # follows CLAUDE.md's `@AGENTS.md` import: AGENTS.md reaches the model twice.
    agents_md = (cp.project / "AGENTS.md").read_text(encoding="utf-8").strip()
    claude_md = (cp.project / "CLAUDE.md").read_text(encoding="utf-8")
    assert "@AGENTS.md\n" in claude_md, claude_md
    imported = f'<imported_custom_instruction source="{cp.project / "AGENTS.md"}">\n{agents_md}\n</imported_custom_instruction>'
    blocks = [b.strip() for b in _CUSTOM.findall(_system(body))]
    assert blocks == [agents_md, claude_md.replace("@AGENTS.md\n", f"@AGENTS.md\n\n{imported}\n", 1).strip()]


@pytest.mark.parametrize("source", SOURCES)
def test_copilot_in_a_codex_and_copilot_tree_loads_what_ar095_warns_about(copilot: CopilotCli, projects, source: str):
    """Built for codex and copilot into one tree, the CLI also loads .agents/skills, where
    Codex gets skills, and rules and commands as skills: each name once, Copilot's own
    .github/skills copy first; every item it loads from .agents/skills is named by an AR095
    warning for its kind (a rule then reaches the model as an instruction and as a skill)."""
    build = client_build(source, "codex,copilot")
    cp = _project(projects, copilot, build.out, f"codex-{source}")
    warned = _ar095_names(build.log, "codex")
    codex_kind: Dict[str, str] = {}
    for kind in ("skill", "command", "rule"):
        for name, outputs in build.generated(kind, "codex").items():
            if any(o.startswith(".agents/skills/") and o.endswith("/SKILL.md") for o in outputs):
                codex_kind[name] = kind
    copilot_skills = _skills(build, cp.project)
    assert codex_kind, f"examples/{source} built for codex writes no .agents/skills"

    listed = [s for s in cp.json("skill", "list") if s.get("source") == "project"]
    cp.assert_offline()

    by_name = {s["name"]: Path(s["path"]).relative_to(cp.project).as_posix() for s in listed}
    assert len(by_name) == len(listed), listed
    expected = {n: f".agents/skills/{n}" for n in codex_kind}
    expected.update({n: f".github/skills/{n}" for n in copilot_skills})
    assert by_name == expected
    shared = _shared(build, ".agents/skills/")  # Copilot's copy is Codex's, byte for byte: loaded once
    for name, path in by_name.items():
        if path.startswith(".agents/") and name not in shared:
            kind = codex_kind[name]
            assert name in warned.get(kind, set()), f"Copilot loads {kind} {name} from .agents/skills, and no AR095 says so: {warned}"


# ---------------------------------------------------------------------------------------------
# Where the Copilot CLI looks, and which copy wins: a tree written by hand
# ---------------------------------------------------------------------------------------------


def _write(root: Path, path: str, text: str) -> None:
    p = root / path
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")


def _skill(root: Path, where: str, name: str, description: str, extra: str = "") -> None:
    _write(root, f"{where}/{name}/SKILL.md", f"---\nname: {name}\ndescription: {description}\n{extra}---\n\nBody.\n")


def _agent(root: Path, path: str, name: str, description: str) -> None:
    _write(root, path, f"---\nname: {name}\ndescription: {description}\n---\n\nYou are {name}.\n")


@lru_cache(maxsize=None)
def _precedence_tree() -> Path:
    root = make_temp_dir("agentrc-copilot-tree-") / "tree"
    for where in (".github/skills", ".agents/skills", ".claude/skills", ".opencode/skills", ".copilot/skills"):
        tag = where.split("/")[0].lstrip(".")
        _skill(root, where, f"only-{tag}", f"{tag} only")
    for where in (".github/skills", ".agents/skills", ".claude/skills"):
        _skill(root, where, "in-all-three", f"{where} copy")
    for where in (".agents/skills", ".claude/skills"):
        _skill(root, where, "agents-and-claude", f"{where} copy")
    _skill(root, ".github/skills", "user-only", "not for the model", "disable-model-invocation: true\n")
    for f in ("AGENTS.md", "CLAUDE.md", "GEMINI.md", ".github/copilot-instructions.md", "CLAUDE.local.md",
              ".claude/CLAUDE.md", "sub/AGENTS.md", ".github/instructions/plain.md"):
        _write(root, f, f"Instructions from {f}.\n")
    _write(root, ".github/instructions/py.instructions.md", '---\ndescription: Python\napplyTo: "**/*.py"\n---\n\nPython.\n')
    _write(root, ".github/instructions/all.instructions.md", '---\ndescription: Everything\napplyTo: "**"\n---\n\nAll.\n')
    _write(root, ".claude/rules/always.md", "Always.\n")
    _write(root, ".claude/rules/nested/deep.md", "Deep.\n")
    _write(root, ".claude/rules/scoped.md", '---\npaths:\n  - "src/**/*.ts"\n---\n\nTypeScript.\n')
    _agent(root, ".github/agents/gh.agent.md", "gh", "github agent")
    _agent(root, ".github/agents/plain.md", "plain", "github plain md agent")
    _agent(root, ".claude/agents/cl.md", "cl", "claude agent")
    _agent(root, ".agents/agents/ag.md", "ag", "agents agent")
    _agent(root, ".github/agents/both.agent.md", "both", "github copy")
    _agent(root, ".claude/agents/both.md", "both", "claude copy")
    _write(root, ".mcp.json", json.dumps({"mcpServers": {"from-mcp-json": {"command": "agentrc-a"},
                                                         "in-both": {"command": "agentrc-mcp-json"}}}))
    _write(root, ".github/mcp.json", json.dumps({"mcpServers": {"from-github-mcp-json": {"command": "agentrc-b"},
                                                                "in-both": {"command": "agentrc-github"}}}))
    _write(root, ".vscode/mcp.json", json.dumps({"servers": {"from-vscode": {"command": "agentrc-c"}}}))
    # Other clients' trees the CLI does not read (none of these may show up).
    _write(root, ".cursor/rules/cursor.mdc", "---\nalwaysApply: true\n---\n\nInstructions from .cursor/rules.\n")
    _write(root, ".windsurf/rules/windsurf.md", "Instructions from .windsurf/rules.\n")
    _skill(root, ".cursor/skills", "only-cursor", "cursor only")
    for where in (".opencode/agents", ".gemini/agents", ".cursor/agents"):
        _agent(root, f"{where}/other.md", "other-" + where.split("/")[0].lstrip("."), f"{where} agent")
    _write(root, ".codex/agents/codex.toml", 'name = "codex-agent"\ndescription = "codex agent"\ndeveloper_instructions = "x"\n')
    _write(root, ".github/prompts/prompt.prompt.md", "---\ndescription: a prompt file\n---\n\nInstructions from .github/prompts.\n")
    _write(root, ".opencode/commands/oc.md", "---\ndescription: an opencode command\n---\n\nInstructions from .opencode/commands.\n")
    # ... but Claude Code's legacy commands are skills to it.
    _write(root, ".claude/commands/legacy.md", "---\ndescription: a legacy Claude command\n---\n\nLegacy.\n")
    _write(root, ".github/copilot/settings.json", json.dumps({"disabledSkills": ["only-claude"]}))
    hook = {"type": "command", "command": "true", "matcher": "Bash"}
    _write(root, ".github/hooks/probe.json", json.dumps({"version": 1, "hooks": {"PreToolUse": [hook]}}))
    _write(root, ".claude/settings.json", json.dumps({"hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [
        {"type": "command", "command": "true"}, {"type": "command", "command": "true"}]}]}}))
    return root


def test_copilot_discovery_paths_and_precedence(copilot: CopilotCli, projects):
    """The facts in this module's docstring, on a tree written by hand (see there)."""
    cp = _project(projects, copilot, _precedence_tree(), "tree")
    untrusted = _project(projects, copilot, _precedence_tree(), "tree-untrusted", trusted=False)

    listed = [s for s in cp.json("skill", "list") if s.get("source") == "project"]
    skills = {s["name"]: (Path(s["path"]).relative_to(cp.project).as_posix(), s["description"]) for s in listed}
    disabled = sorted(s["name"] for s in listed if not s["enabled"])
    instructions = sorted(e["sourcePath"] for e in cp.json("instruction", "list"))
    servers = {n: (s["command"], Path(s["sourcePath"]).relative_to(cp.project).as_posix())
               for n, s in cp.json("mcp", "list")["mcpServers"].items()}
    untrusted_servers = untrusted.json("mcp", "list")["mcpServers"]
    body, log = cp.model_request()
    bare, _ = cp.model_request("--no-custom-instructions")
    untrusted_body, untrusted_log = untrusted.model_request()
    cp.assert_offline()
    untrusted.assert_offline()

    assert skills == {
        "only-github": (".github/skills/only-github", "github only"),
        "only-agents": (".agents/skills/only-agents", "agents only"),
        "only-claude": (".claude/skills/only-claude", "claude only"),
        "in-all-three": (".github/skills/in-all-three", ".github/skills copy"),
        "agents-and-claude": (".agents/skills/agents-and-claude", ".agents/skills copy"),
        "user-only": (".github/skills/user-only", "not for the model"),
        "legacy": (".claude/commands", "a legacy Claude command"),
    }
    system = _system(body)
    model_skills = sorted(n for n, (_, loc) in _model_skills(system).items() if loc == "project")
    assert model_skills == sorted(set(skills) - {"user-only"})
    # The repository's `disabledSkills` (.github/copilot/settings.json) shows in `skill list`,
    # but a `copilot -p` session still offers the skill to the model.
    assert disabled == ["only-claude"] and "only-claude" in model_skills

    assert instructions == sorted([
        "AGENTS.md", "CLAUDE.md", "GEMINI.md", ".github/copilot-instructions.md",
        ".github/instructions/py.instructions.md", ".github/instructions/all.instructions.md",
        ".claude/rules/always.md", ".claude/rules/nested/deep.md", ".claude/rules/scoped.md",
    ])
    assert _scoped_table(system) == {".github/instructions/py.instructions.md": ("**/*.py", "Python"),
                                     ".claude/rules/scoped.md": ("src/**/*.ts", "")}
    for text in ("Always.", "Deep.", 'description: Everything\napplyTo: "**"\n---\n\nAll.'):
        assert text in system, text
    assert not re.findall(r"Instructions from (?:CLAUDE\.local\.md|sub/|\.cursor|\.windsurf|\.github/prompts|\.opencode)", system)
    bare_system = _system(bare)
    assert not _CUSTOM.findall(bare_system) and "Always." not in bare_system and not _scoped_table(bare_system)

    assert _model_agents(body) == {"gh": "github agent", "plain": "github plain md agent", "cl": "claude agent",
                                   "both": "github copy"}

    assert servers == {"from-mcp-json": ("agentrc-a", ".mcp.json"), "in-both": ("agentrc-mcp-json", ".mcp.json")}
    assert untrusted_servers == {}

    # Untrusted: skills, agents and instructions still load; workspace MCP and hooks do not.
    assert _model_agents(untrusted_body) == _model_agents(body)
    assert _model_skills(_system(untrusted_body)) == _model_skills(system)
    # Hooks: .github/hooks/*.json (1 handler) and .claude/settings.json (2), trusted folders only.
    assert _hook_count(log) == 3
    assert not LOG_LINE_HOOKS.search(untrusted_log)
