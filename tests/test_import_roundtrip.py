"""Round trip (issue 5): canonical document -> one client's files -> agentrc import ->
canonical document, equal on what the client supports fully (property-based).

Each client gets a generator restricted to the canonical fields it carries without loss:
valid names, simple markdown bodies without an H1, descriptions, and per client globs,
skill fields, hook events and tools, and MCP transports. Documents are compared after
normalization (whitespace of descriptions, the markdown form `agentrc fmt` writes,
`prompt`/`content`, string/object/array hooks, default transports). The import must
report nothing for them, and the portable items written from the result must lint clean.
"""

from __future__ import annotations

import base64
import os
import string
from typing import Any, Dict, List

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentrc.canonical import document as canonical
from agentrc.clients import registry as client_registry
from agentrc.frozen import freeze
from agentrc.importers import document as importer
from agentrc.importers.shapes import glob_list, tool_list
from agentrc.model import SourceFile, SourceTree
from agentrc.output import plan as build
from agentrc.pipeline import stages as pipeline
from agentrc.text.markdown import format_body

CLIENTS = ("claude", "copilot", "cursor", "opencode", "codex")
# More examples for a deeper search: AGENTRC_ROUNDTRIP_EXAMPLES=1000.
EXAMPLES = int(os.environ.get("AGENTRC_ROUNDTRIP_EXAMPLES", "30"))

# --- what each client carries fully -------------------------------------------------------

ALL_EVENTS = ("SessionStart", "SessionEnd", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SubagentStop",
              "PreCompact", "Notification")
SUPPORT: Dict[str, Dict[str, Any]] = {
    "claude": dict(rules=True, globs=True, braces=True, skill_fields=("allowedTools", "userInvocable"),
                   events=ALL_EVENTS, hook_tools=("Bash", "Edit", "Write", "Read", "Grep", "Glob", "WebFetch",
                                                  "WebSearch"),
                   hook_async=True, transports=("stdio", "http", "sse"), env_refs=True),
    "copilot": dict(rules=True, globs=True, braces=False, skill_fields=("allowedTools", "userInvocable", "disableModelInvocation"),
                    events=ALL_EVENTS, hook_tools=("Bash", "Edit", "Write", "Read", "Grep", "Glob", "WebFetch",
                                                   "WebSearch"),
                    hook_async=False, transports=("stdio", "http", "sse"), env_refs=True),
    "cursor": dict(rules=True, globs=True, skill_fields=("disableModelInvocation",),
                   events=tuple(e for e in ALL_EVENTS if e != "Notification"),
                   hook_tools=("Bash", "Write", "Read", "Grep", "WebFetch", "WebSearch"),
                   hook_async=False, transports=("stdio", "http"), env_refs=True),
    "opencode": dict(rules=True, globs=False, skill_fields=(), events=(), hook_tools=(), hook_async=False,
                     transports=("stdio", "http"), env_refs=True),
    "codex": dict(rules=False, globs=False, skill_fields=("allowedTools",),
                  events=tuple(e for e in ALL_EVENTS if e != "Notification"), hook_tools=("Bash", "Edit"),
                  hook_async=False, transports=("stdio", "http"), env_refs=False,
                  timeouts={"SessionEnd": 3}),  # Codex clamps SessionEnd hooks to 3 seconds
}

# --- strategies -------------------------------------------------------------------------------

WORD = st.one_of(st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=8),
                 st.sampled_from(["naïve", "日本語", "über", "**bold**", "_it_", "[link](https://example.com/a)",
                                  "`code`", "a|b", "50%", "x: y", "#1", "<b>", "&amp;", "emoji🙂"]))
NAME = st.from_regex(r"[a-z][a-z0-9]{1,7}(-[a-z0-9]{1,5}){0,2}", fullmatch=True)
DESCRIPTION = st.lists(st.one_of(WORD, st.sampled_from(["Use", "when:", "#tag", "it's", '"quoted"', "a-b", "x,y",
                                                         "50%", "[draft]", "- item", "yes"])),
                       min_size=1, max_size=10).map(" ".join)
PATTERNS = ["src/**/*.ts", "lib/*.py", "docs/**", "*.md", "app/src/**/*.kt", "test/**/*_test.go", "**/*.rs"]
# {a,b} alternatives: the Cursor and Copilot adapters expand them (globs:/applyTo: split on commas).
BRACES = ["web/**/*.{ts,tsx}", "{src,lib}/**/*.py"]


@st.composite
def bodies(draw, min_blocks: int = 1) -> str:
    blocks: List[str] = []
    for _ in range(draw(st.integers(min_blocks, 4))):
        kind = draw(st.sampled_from(["para", "para", "heading", "list", "fence", "code", "numbered", "quote",
                                     "table", "nested"]))
        if kind == "para":
            lines = draw(st.lists(st.lists(WORD, min_size=1, max_size=8).map(" ".join), min_size=1, max_size=3))
            blocks.append("\n".join(ln.capitalize() for ln in lines))
        elif kind == "heading":
            blocks.append("## " + " ".join(draw(st.lists(WORD, min_size=1, max_size=4))).capitalize())
        elif kind == "list":
            blocks.append("\n".join("- " + w for w in draw(st.lists(WORD, min_size=1, max_size=4))))
        elif kind == "fence":
            code = draw(st.lists(WORD, min_size=1, max_size=3))
            blocks.append("```sh\n" + "\n".join(code) + "\n```")
        elif kind == "code":
            blocks.append(f"Run `{draw(WORD)} --{draw(WORD)}` first.")
        elif kind == "numbered":
            blocks.append("\n".join(f"{i}. {w}" for i, w in enumerate(draw(st.lists(WORD, min_size=1, max_size=3)), 1)))
        elif kind == "quote":
            blocks.append("> " + " ".join(draw(st.lists(WORD, min_size=1, max_size=5))))
        elif kind == "table":
            blocks.append("| a | b |\n| --- | --- |\n| " + draw(WORD) + " | " + draw(WORD) + " |")
        else:
            blocks.append("- " + draw(WORD) + "\n  - " + draw(WORD) + "\n- " + draw(WORD))
    return "\n\n".join(blocks) + "\n"


@st.composite
def documents(draw, client: str) -> Dict[str, Any]:
    sup = SUPPORT[client]
    names = iter(draw(st.lists(NAME, min_size=12, max_size=12, unique=True)))
    doc: Dict[str, Any] = {}
    if draw(st.booleans()):
        doc["context"] = {"global": draw(bodies())}
    if sup["rules"]:
        rules = {}
        for _ in range(draw(st.integers(0, 2))):
            rule: Dict[str, Any] = {"description": draw(DESCRIPTION), "content": draw(bodies())}
            if sup["globs"] and draw(st.booleans()):
                patterns = PATTERNS + (BRACES if sup.get("braces") else [])
                rule["globs"] = draw(st.lists(st.sampled_from(patterns), min_size=1, max_size=3, unique=True))
            rules[next(names)] = rule
        if rules:
            doc["rules"] = rules
    commands = {}
    for _ in range(draw(st.integers(0, 2))):
        body = draw(bodies())
        if draw(st.booleans()):
            body = body.rstrip("\n") + "\n\nThe argument is $ARGUMENTS.\n"
        commands[next(names)] = {"description": draw(DESCRIPTION), "prompt": body}
    if commands:
        doc["commands"] = commands
    skills = {}
    for _ in range(draw(st.integers(0, 2))):
        skill: Dict[str, Any] = {"description": draw(DESCRIPTION), "content": draw(bodies())}
        if draw(st.booleans()):
            skill["content"] += "\nSee [the guide](references/guide.md).\n"
            skill["references"] = {"guide.md": "# Guide\n\nRead me.\n"}
        if "allowedTools" in sup["skill_fields"] and draw(st.booleans()):
            skill["allowedTools"] = draw(st.lists(st.sampled_from(["Bash", "Read", "Edit", "Grep"]), min_size=1,
                                                  max_size=3, unique=True))
        for field in ("userInvocable", "disableModelInvocation"):
            if field in sup["skill_fields"] and draw(st.booleans()):
                skill[field] = draw(st.booleans())
        if draw(st.booleans()):
            skill["scripts"] = {"run.sh": "#!/bin/sh\necho run\n"}
        if draw(st.booleans()):
            skill["files"] = {"notes.txt": "notes\n", "data/table.csv": "a,b\n1,2\n"}
        if draw(st.booleans()):
            skill["assets"] = {"logo.png": {"content": base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\xff").decode(),
                                            "encoding": "base64"}}
        skills[next(names)] = skill
    if skills:
        doc["skills"] = skills
    agents = {}
    for _ in range(draw(st.integers(0, 2))):
        agent: Dict[str, Any] = {"description": draw(DESCRIPTION), "content": draw(bodies())}
        if skills and draw(st.booleans()):
            agent["skills"] = sorted(draw(st.sets(st.sampled_from(sorted(skills)), min_size=1)))
        agents[next(names)] = agent
    if agents:
        doc["agents"] = agents
    if sup["events"]:
        hooks: Dict[str, Any] = {}
        for event in draw(st.lists(st.sampled_from(sup["events"]), max_size=3, unique=True)):
            entries = []
            # Distinct commands: the build writes identical entries of one event once.
            for script in draw(st.lists(st.sampled_from(["npm run lint", "scripts/guard.sh", "make check --quiet",
                                                         "echo done"]), min_size=1, max_size=2, unique=True)):
                entry: Dict[str, Any] = {"script": script}
                if event in ("PreToolUse", "PostToolUse") and draw(st.integers(0, 4)) == 0:
                    entry["matcher"] = draw(st.sampled_from(["mcp__github__.*", "Notebook.*"]))
                if event in ("PreToolUse", "PostToolUse") and draw(st.booleans()):
                    entry["tools"] = draw(st.lists(st.sampled_from(sup["hook_tools"]), min_size=1, max_size=2,
                                                   unique=True))
                if draw(st.booleans()):
                    entry["timeout"] = draw(st.integers(1, sup.get("timeouts", {}).get(event, 600)))
                if sup["hook_async"] and draw(st.booleans()):
                    entry["async"] = True
                entries.append(entry)
            hooks[event] = entries[0] if len(entries) == 1 else entries
        if hooks:
            doc["hooks"] = hooks
    servers = {}
    for _ in range(draw(st.integers(0, 2))):
        transport = draw(st.sampled_from(sup["transports"]))
        if transport == "stdio":
            server: Dict[str, Any] = {"command": draw(st.sampled_from(["npx", "uvx", "node"]))}
            if draw(st.booleans()):
                server["args"] = draw(st.lists(st.sampled_from(["-y", "@acme/mcp", "serve", "--port=3000",
                                                                "--root=${HOME}/data", "two words"]),
                                               min_size=1, max_size=3))
            if draw(st.booleans()):
                env = {"LOG_LEVEL": "info"}
                if sup["env_refs"]:
                    env["API_TOKEN"] = "${API_TOKEN}"
                server["env"] = env
        else:
            server = {"type": transport, "url": f"https://{draw(WORD)}.example.com/mcp"}
            if draw(st.booleans()):
                server["headers"] = {"X-Team": "platform"}
                if draw(st.booleans()):
                    server["headers"]["Authorization"] = "Bearer ${API_TOKEN}"
        servers[next(names)] = server
    if servers:
        doc["mcp"] = {"servers": servers}
    return doc


# --- the trip ---------------------------------------------------------------------------------

def client_files(doc: Dict[str, Any], client: str) -> SourceTree:
    layer = canonical.Layer("ai.config.json", "ai.config.json", freeze(doc))
    document, diags = canonical.build_document([layer])
    assert not any(d.is_error for d in diags), [d.format() for d in diags]
    registry, diags = canonical.to_registry(document, client_registry.client_names())
    assert not any(d.is_error for d in diags), [d.format() for d in diags]
    servers = registry.bundles[0].servers if registry.bundles else ()
    plan = build.plan(registry, client_registry.get([client]), servers=servers)
    assert plan.ok, [d.format() for d in plan.diagnostics]
    # The script a generated hook runs exists in the project, as it would (a hook naming a
    # file the source lacks is reported by the import: tests/test_import_hooks.py).
    script = (SourceFile("scripts/guard.sh", b"#!/bin/sh\nexit 0\n", True),) if "scripts/guard.sh" in str(doc) else ()
    return SourceTree(tuple(SourceFile(f.path, f.content, f.executable) for f in plan.files) + script)


def ws(text: Any) -> str:
    return " ".join(str(text or "").split())


def norm(doc: Dict[str, Any]) -> Dict[str, Any]:
    """The parts of a canonical document a round trip keeps, in one form."""
    out: Dict[str, Any] = {}
    ctx = (doc.get("context") or {}).get("global")
    if ctx and ctx.strip():
        out["context"] = format_body(ctx)
    rules = {}
    for name, r in (doc.get("rules") or {}).items():
        globs = tuple(glob_list(r.get("globs"))) if r.get("alwaysApply") is not True else ()
        rules[name] = (ws(r.get("description")), globs, format_body(r.get("content") or r.get("prompt") or ""))
    commands = {name: (ws(c.get("description")), format_body(c.get("prompt") or c.get("content") or ""))
                for name, c in (doc.get("commands") or {}).items()}
    skills = {}
    for name, s in (doc.get("skills") or {}).items():
        tools = s.get("allowedTools", s.get("allowed-tools"))
        skills[name] = (ws(s.get("description")), format_body(s.get("content") or s.get("prompt") or ""),
                        tuple(tool_list(tools) or ()), s.get("disableModelInvocation"), s.get("userInvocable"),
                        {g: dict(s[g]) for g in ("references", "scripts", "assets", "files") if s.get(g)})
    agents = {name: (ws(a.get("description")), format_body(a.get("content") or a.get("prompt") or ""),
                     tuple(a.get("skills") or ()))
              for name, a in (doc.get("agents") or {}).items()}
    hooks = {}
    for event, value in (doc.get("hooks") or {}).items():
        entries = []
        for h in value if isinstance(value, list) else [value]:
            h = {"script": h} if isinstance(h, str) else h
            tools = tuple(h.get("tools") or ())
            if not tools and h.get("matcher"):
                tools = tuple(h["matcher"].split("|"))
            entries.append((h["script"], tools, h.get("timeout"), bool(h.get("async"))))
        hooks[event] = sorted(entries)
    servers = {}
    for name, s in ((doc.get("mcp") or {}).get("servers") or {}).items():
        if "url" in s:
            servers[name] = (s.get("type", "http"), s["url"], dict(s.get("headers") or {}))
        else:
            servers[name] = (s["command"], tuple(s.get("args") or ()), dict(s.get("env") or {}))
    for key, value in (("rules", rules), ("commands", commands), ("skills", skills), ("agents", agents),
                       ("hooks", hooks), ("mcp", servers)):
        if value:
            out[key] = value
    return out


@pytest.mark.parametrize("client", CLIENTS)
def test_round_trip(client):
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                     HealthCheck.data_too_large])
    @given(documents(client))
    def trip(doc):
        files = client_files(doc, client)
        imported, diags = importer.import_tree(client, files)
        assert not diags, [d.format() for d in diags]
        assert norm(imported) == norm(doc)
        # The portable items written from the import lint clean and are in fmt's form.
        portable = importer.portable_from_document(imported)
        tree = importer.relative(portable, "registry")
        _, lint = pipeline.lint(tree)
        assert not lint, [d.format() for d in lint]

    trip()
