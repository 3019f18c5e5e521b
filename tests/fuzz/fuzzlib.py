"""The fuzz harness: mutated inputs through every front door of the real CLI, in-process.

Why: a user's file, however broken, must end in a diagnostic (exit 1) or a usage error
(exit 2), never in a traceback. Each case takes a seed scenario (a tree of input files, an
output directory and an argv), applies one to three mutations (structure-aware for JSON,
YAML frontmatter and TOML; bytes otherwise; whole files; command-line flags), writes the tree
into a fresh directory and runs `agentrc.cli.main.main(argv)` there. Any exception other than
SystemExit(0|1|2) is a failure, unless the ALLOWED table names its class (exception type and
the agentrc module it escaped from): code other branches own and are fixing. The sources of a
build or lint case also go, item directory by item directory, through what the Pants plugin's
node for a directory and the build's workers run before the registry is checked as a whole
(`warm.entries`): the same rule, with no CLI in front of it.

Deterministic: case N of seed S always draws the same mutations (`random.Random(f"{S}:{N}")`),
so `python tests/fuzz/run.py --seed S --case N --keep DIR` replays one case.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import random
import re
import shutil
import sys
import tempfile
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from agentrc.cli.main import main  # noqa: E402
from agentrc.clients.registry import CLIENTS  # noqa: E402
from agentrc.model import SourceFile, SourceTree  # noqa: E402
from agentrc.pipeline import warm  # noqa: E402

# Known crash classes in code this branch does not own (issue 9: the output writer and the
# input readers are being fixed on their own branches). Keyed by (exception type, the agentrc
# module the exception escaped from); remove a row when its branch lands.
ALLOWED: Dict[Tuple[str, str], str] = {}

Files = Dict[str, bytes]
# Case directories live in memory when the machine has a tmpfs: writing ~100 files per case
# to disk costs more than the build itself.
TMP = os.environ.get("AGENTRC_FUZZ_TMP") or ("/dev/shm" if os.path.isdir("/dev/shm") else None)


@dataclass
class Scenario:
    """A seed: the files of the case directory (`in/...`, `out/...`) and the command line."""

    name: str
    files: Files
    argv: List[str]


@dataclass
class Outcome:
    case: int
    scenario: str
    mutations: List[str]
    exit: object = None
    error: Optional[str] = None  # "Type @ module:line" of an uncaught exception
    allowed: bool = False
    trace: str = ""


@dataclass
class Stats:
    cases: int = 0
    exits: Dict[str, int] = field(default_factory=dict)
    failures: List[Outcome] = field(default_factory=list)
    allowed: Dict[str, int] = field(default_factory=dict)

    def add(self, o: Outcome) -> None:
        self.cases += 1
        key = str(o.exit) if o.error is None else ("allowed" if o.allowed else "crash")
        self.exits[key] = self.exits.get(key, 0) + 1
        if o.error is not None and o.allowed:
            self.allowed[o.error] = self.allowed.get(o.error, 0) + 1
        elif o.error is not None:
            self.failures.append(o)

    def crash_classes(self) -> Dict[str, Outcome]:
        first: Dict[str, Outcome] = {}
        for o in self.failures:
            first.setdefault(o.error or "", o)
        return first


# --- seeds ------------------------------------------------------------------------------

def _read_tree(root: Path, prefix: str) -> Files:
    return {f"{prefix}/{p.relative_to(root).as_posix()}": p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != "BUILD"}


def _project_seed() -> Files:
    """examples/project with its ai.config.js as ai.config.json (no Node per case), plus a
    `.ai/` layer with the shapes the example lacks: hooks with timeouts, a binary skill file,
    a tools.<client> configuration and a remote server with headers."""
    files = _read_tree(ROOT / "examples" / "project", "in")
    del files["in/ai.config.js"]
    config = {
        "presets": ["./presets/team"],
        "context": {"global": "## Release rules\n\nReleases are cut from `main` on Tuesdays."},
        "rules": {"api-style": {"globs": ["src/api/**/*.kt", "src/routes/**/*.kt"]}},
        "mcp": {"servers": {"tickets": {"command": "node", "args": ["tools/tickets-mcp.js"],
                                        "env": {"TICKETS_URL": "${TICKETS_URL}"}},
                            "search": {"type": "http", "url": "https://search.example/mcp",
                                       "headers": {"Authorization": "Bearer ${SEARCH_TOKEN}"}, "scope": "user"}}},
        "hooks": {"PreToolUse": [{"script": "./check.sh", "tools": ["Bash"], "timeout": 30}],
                  "Stop": "echo done"},
        "tools": {"claude": {"permissions": {"allow": ["Bash(npm test)"]}}},
        # Capability references (ai-jue's ai.capabilities) to local directories: no git.
        "capabilities": {"house-style": {"source": "file:./caps", "path": "house-style", "type": "rule"},
                         "notes": {"source": "file:./caps/notes", "type": "mcp"}},
    }
    files["in/ai.config.json"] = json.dumps(config, indent=2).encode()
    files["in/caps/house-style/prompt.md"] = b"---\ndescription: House style\n---\n\nWrap at 100.\n"
    files["in/caps/notes/package.json"] = json.dumps({"name": "notes-mcp", "bin": {"notes": "index.js"},
                                                      "mcp": {"servers": {"notes": {"command": "notes"}}}}).encode()
    files["in/.ai/hooks/PostToolUse/index.json"] = b'{"matcher": "Edit|Write", "timeout": 5.5, "async": true}\n'
    files["in/.ai/hooks/PostToolUse/prompt.md"] = b"npm run lint\n"
    files["in/.ai/skills/logo/SKILL.md"] = b"---\ndescription: Draws the logo\n---\n\nUse assets/logo.png.\n"
    files["in/.ai/skills/logo/assets/logo.png"] = b"\x89PNG\r\n\x1a\n\x00\xff\xfe"
    files["in/.ai/skills/logo/index.json"] = json.dumps({"files": {"notes/a.txt": "a", "b64": {
        "content": base64.b64encode(b"\x00\x01").decode(), "encoding": "base64"}}}).encode()
    files["in/.ai/commands/ship/prompt.md"] = b"---\ndescription: Ship it\ntriggers: [ship]\n---\n\nShip $ARGUMENTS.\n"
    files["in/.ai/agents/planner/index.json"] = b'{"description": "Plans", "skills": ["logo", "missing"]}\n'
    files["in/.ai/agents/planner/prompt.md"] = b"Plan the work.\n"
    files["in/.ai/tools/opencode/config.json"] = b'{"theme": "dark"}\n'
    return files


def _cap_seed() -> Files:
    """A capability package (spec 003) with two capabilities: skills, an injection, a
    command, required and advisory hooks, requirements, an agent and a config template."""
    files: Files = {"in/pkg/oas-package.json": json.dumps({
        "package": "demo.pkg", "version": "1.0.0", "description": "Demo.", "compatibility": {"oas": ">=0.19.0"},
        "capabilities": ["capabilities/chat", "capabilities/review"],
        "configTemplates": {"default": {"path": "config-templates/default/oas-config.yaml", "default": True}},
        "dependencies": []}, indent=2).encode(),
        "in/pkg/config-templates/default/oas-config.yaml": b"capabilities:\n  additive:\n    demo.review: {}\n"}
    files["in/pkg/capabilities/chat/oas.json"] = json.dumps({
        "capability": "demo.chat", "command": "chat", "version": "0.1.0", "description": "Chat.",
        "layer": "messaging", "compatibility": {"oas": ">=0.6.2"}, "skills": ["skills"], "inject": "injects/i.md",
        "requires": [{"command": "chat", "why": "send"}, {"runtime": "claude", "package": "p@m", "why": "push"}],
        "commands": {"auth": "bin/c.mjs auth"},
        "hooks": {"spawn": {"command": "bin/c.mjs spawn", "required": True}, "retire": "bin/c.mjs retire"}},
        indent=2).encode()
    files["in/pkg/capabilities/chat/skills/send/SKILL.md"] = b"---\nname: send\ndescription: Sends.\n---\nSend.\n"
    files["in/pkg/capabilities/chat/injects/i.md"] = b"Use chat.\n"
    files["in/pkg/capabilities/chat/bin/c.mjs"] = b"console.log('{}')\n"
    files["in/pkg/capabilities/review/oas.json"] = json.dumps({
        "capability": "demo.review", "version": "1.0.0", "description": "Review.", "agents": ["agents/reviewer"],
        "skills": ["skills/review"]}, indent=2).encode()
    files["in/pkg/capabilities/review/skills/review/SKILL.md"] = b"---\nname: review\ndescription: R.\n---\nR.\n"
    files["in/pkg/capabilities/review/agents/reviewer/soul.yaml"] = b"name: reviewer\n"
    files["in/pkg/capabilities/review/agents/reviewer/AGENTS.md"] = b"Review.\n"
    return files


def _built(files: Files, argv: Sequence[str]) -> Files:
    """The files of `files` plus what `argv` (a build into out/) writes: the output seed."""
    with tempfile.TemporaryDirectory() as tmp:
        _write(Path(tmp), files)
        _run(Path(tmp), list(argv))
        return {p.lstrip("/"): b for p, b in _read_tree(Path(tmp), "").items()}


def _with_user_files(files: Files) -> Files:
    """User-owned keys in the config files agentrc merges into: the merge has something to keep."""
    out = dict(files)
    for path, extra in ((".claude/settings.json", {"permissions": {"allow": ["Bash(ls)"]}}),
                        ("opencode.json", {"theme": "system"}), (".mcp.json", {"mcpServers": {"mine": {
                            "command": "mine"}}}), (".cursor/mcp.json", {"mcpServers": {}}),
                        (".gemini/settings.json", {"ui": {"theme": "x"}})):
        key = f"out/{path}"
        try:
            data = json.loads(out[key]) if key in out else {}
        except ValueError:
            continue
        for k, v in extra.items():
            data.setdefault(k, v)
        out[key] = (json.dumps(data, indent=2) + "\n").encode()
    toml = out.get("out/.codex/config.toml", b"")
    out["out/.codex/config.toml"] = b'model = "o3"\n\n' + toml
    return out


def scenarios() -> List[Scenario]:
    """Every front door: build (registry and canonical project, into an output tree agentrc
    already wrote, manifest and user files included), lint, fmt, inspect, the `cap` verbs,
    the consumer workflow (add, install, update, remove, list, remove-mcp, doctor) and
    import from each client's project files."""
    everyone = ",".join(CLIENTS)
    registry = _read_tree(ROOT / "examples" / "registry", "in")
    project = _project_seed()
    build = ["build", "in", "--out", "out", "--client", everyone, "--report", "report.json"]
    reg_built = _with_user_files(_built(registry, build))
    proj_built = _with_user_files(_built(project, build))
    out = [
        Scenario("build-registry", reg_built, list(build)),
        Scenario("build-registry-plugin", registry, ["build", "in", "--out", "out", "--layout", "plugin",
                                                     "--bundle", "core"]),
        Scenario("build-project", proj_built, list(build)),
        Scenario("lint-registry", registry, ["lint", "in", "--format", "json"]),
        Scenario("fmt-registry", registry, ["fmt", "in"]),
        Scenario("lint-project", project, ["lint", "in"]),
        Scenario("inspect-project", project, ["inspect", "in", "--json"]),
    ]
    cap = _cap_seed()
    installed = _built(cap, ["cap", "install", "./in/pkg", "--dir", "."])
    restorable = {p: b for p, b in installed.items() if not p.startswith(".agents/")}
    out += [
        Scenario("cap-install", cap, ["cap", "install", "./in/pkg", "--dir", ".", "--json"]),
        Scenario("cap-install-again", installed, ["cap", "install", "./in/pkg", "--dir", "."]),
        Scenario("cap-restore", restorable, ["cap", "install", "--dir", ".", "--json"]),
        Scenario("cap-list", installed, ["cap", "list", "--dir", "."]),
        Scenario("cap-doctor", dict(installed, **{
            "oas-config.yaml": b"agent-types:\n  developers: {description: Devs}\ncapabilities:\n  layers:\n"
                               b"    messaging:\n      capability: demo.chat\n      from: installed\n"
                               b"      settings: {depth: 1}\n    tasks: none\n  additive:\n    demo.review:\n"
                               b"      agent-types: [developers]\n      souls:\n        dev: {enabled: false}\n",
            "agents/dev/soul/soul.yaml": b"name: dev\ntype: developers\n"}),
                 ["cap", "doctor", ".", "--soul", "dev", "--json"]),
        Scenario("cap-use", dict(installed, **{
            "oas-config.yaml": b"name: x\n# families\nagent-types:\n  developers:\ncapabilities:\n  layers:\n"
                               b"    tasks: none\n  additive:\n    demo.review:\n      souls: {dev: true}\n"}),
                 ["cap", "use", "demo.chat", "--soul", "dev", "--settings", "a=b", "--dir", "."]),
        Scenario("cap-remove", dict(installed, **{"oas-config.yaml": b"capabilities:\n  additive:\n    x.y: {}\n"}),
                 ["cap", "remove", "demo.pkg", "--dir", ".", "--json"]),
    ]
    # spawn and retire: a soul whose runtime is pi (its runtime-package check needs no CLI).
    soul = dict(installed, **{"agents/dev/soul/soul.yaml": b"name: dev\nrepo: .\nwork: checkout\nruntime: pi\n",
                              "agents/dev/soul/AGENTS.md": b"# Dev\n"})
    spawned = _built(soul, ["cap", "spawn", "dev", "--dir", "."])
    out += [
        Scenario("cap-spawn", soul, ["cap", "spawn", "dev", "--dir", ".", "--json"]),
        Scenario("cap-retire", spawned, ["cap", "retire", "dev-1", "--dir", ".", "--json"]),
        Scenario("cap-migrate", installed, ["cap", "migrate", "--dir", ".", "--dry-run", "--json"]),
        Scenario("cap-trust", installed, ["cap", "trust", "demo.chat", "--dir", ".", "--json"]),
    ]
    # The consumer workflow on a project that installed the example registry as a local source.
    added = _built(registry, ["add", "./in", "--dir", ".", "--client", "claude,opencode,copilot"])
    out += [
        Scenario("consume-add", registry, ["add", "./in", "--dir", ".", "--client", "claude,opencode", "--json"]),
        Scenario("consume-install", {p: b for p, b in added.items() if not p.startswith(".claude/")},
                 ["install", "--dir", ".", "--json"]),
        Scenario("consume-frozen", added, ["install", "--frozen", "--dir", "."]),
        Scenario("consume-check", added, ["install", "--check", "--dir", "."]),
        Scenario("consume-update", added, ["update", "--dir", ".", "--dry-run", "--json"]),
        Scenario("consume-remove", added, ["remove", "api", "--dir", ".", "--json"]),
        Scenario("consume-list", added, ["list", "--dir", ".", "--json"]),
        Scenario("consume-remove-mcp", added, ["remove-mcp", "api-docs", "--dir", "."]),
        Scenario("consume-doctor", added, ["doctor", "--dir", ".", "--json"]),
    ]
    for client_dir in sorted((ROOT / "tests" / "cases" / "import").iterdir()):
        files = _read_tree(client_dir / "project", "in")
        out.append(Scenario(f"import-{client_dir.name}", files,
                            ["import", "in", "--from", client_dir.name, "--out", "out", "--canonical", "doc.json"]))
    return out


# --- mutations --------------------------------------------------------------------------

STRINGS = ["", ".", "..", "x/", "/abs", "../up", "a/b", "a\x00b", "${VAR}", "${", "$ARGUMENTS", "\ud800", "x" * 3000,
           "!!not base64!!", "base64", "null", "0", "-", "*", "Bash", "mcp__x", "claude", "stdio", "http", "sse",
           "project", "user", "local", "PreToolUse", "a\nb", "---", "<!-- @client:claude -->", "C:\\x", "\u00e9\u4e2d"]
KEYS = ["", ".", "..", "x/", "a", "a/b", "A", "with space", "\x00", "__proto__", "content", "encoding", "files",
        "timeout", "headers", "env", "servers", "scope", "url", "command", "type", "tools", "globs", "name"]


def _values(rng: random.Random) -> object:
    pool: List[Callable[[], object]] = [
        lambda: None, lambda: True, lambda: False, lambda: 0, lambda: -1, lambda: 2 ** 70, lambda: 1e400,
        lambda: -1e400, lambda: float("nan"), lambda: 0.5, lambda: rng.choice(STRINGS), lambda: [], lambda: {},
        lambda: [None], lambda: [rng.choice(STRINGS)], lambda: {rng.choice(KEYS): rng.choice(STRINGS)},
        lambda: {"content": rng.choice(STRINGS), "encoding": "base64"}, lambda: [{"script": "x", "timeout": 1e400}],
    ]
    return rng.choice(pool)()


def _nodes(data: object, path: Tuple = ()) -> List[Tuple]:
    out = [path]
    if isinstance(data, dict):
        for k, v in data.items():
            out += _nodes(v, path + (k,))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += _nodes(v, path + (i,))
    return out


def _mutate_data(data: object, rng: random.Random) -> Tuple[object, str]:
    """One change to a parsed document: a value replaced, a key renamed, an entry deleted or
    duplicated, a container emptied."""
    nodes = _nodes(data)
    path = rng.choice(nodes)
    if not path:
        return _values(rng), "root replaced"
    parent = data
    for p in path[:-1]:
        parent = parent[p]  # type: ignore[index]
    last = path[-1]
    op = rng.randrange(5)
    label = "/".join(map(str, path))[:60]
    if op == 0 or not isinstance(parent, dict):
        if isinstance(parent, list) and op in (2, 3):
            if op == 2:
                del parent[last]
            else:
                parent.insert(last, parent[last])
            return data, f"list {label} {'deleted' if op == 2 else 'duplicated'}"
        parent[last] = _values(rng)  # type: ignore[index]
        return data, f"value {label}"
    if op == 1:
        value = parent.pop(last)
        parent[rng.choice(KEYS)] = value
        return data, f"key {label} renamed"
    if op == 2:
        del parent[last]
        return data, f"key {label} deleted"
    if op == 3:
        parent[rng.choice(KEYS)] = parent[last]
        return data, f"key {label} copied"
    parent[last] = type(parent[last])() if isinstance(parent[last], (dict, list, str)) else None
    return data, f"value {label} emptied"


def _bytes(data: bytes, rng: random.Random) -> Tuple[bytes, str]:
    if not data:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8))), "bytes into an empty file"
    i = rng.randrange(len(data))
    op = rng.randrange(7)
    if op == 0:
        return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1:], "bit flip"
    if op == 1:
        return data[:i], "truncated"
    if op == 2:
        j = min(len(data), i + rng.randrange(1, 64))
        return data[:i] + data[j:], "range deleted"
    if op == 3:
        j = min(len(data), i + rng.randrange(1, 64))
        return data[:j] + data[i:j] + data[j:], "range duplicated"
    if op == 4:
        return data[:i] + rng.choice([b"\x00", b"\xff", b"\xc3", b"\r", b"\r\n", "\ufeff".encode(), b"'",
                                      b'"', b"\\", b"{", b"[", b"]", b"}", b":", b"#", b"&a", b"*a", b"!!python/x ",
                                      b"\n---\n", b"\t"]) + data[i:], "byte inserted"
    if op == 5:
        return b"\xef\xbb\xbf" + data, "BOM"
    return data.replace(b"\n", b"\r\n"), "CRLF"


def _mutate_json(data: bytes, rng: random.Random) -> Tuple[bytes, str]:
    try:
        doc = json.loads(data)
    except ValueError:
        return _bytes(data, rng)
    doc, what = _mutate_data(doc, rng)
    try:
        return json.dumps(doc, indent=2).encode("utf-8", "surrogatepass"), f"json {what}"
    except (ValueError, TypeError):
        return data, "json unchanged"


def _mutate_frontmatter(data: bytes, rng: random.Random) -> Tuple[bytes, str]:
    m = re.match(rb"(?:\xef\xbb\xbf)?---\r?\n(.*?\r?\n)---\r?\n?(.*)\Z", data, re.S)
    if not m:
        return _bytes(data, rng)
    try:
        doc = yaml.safe_load(m.group(1))
    except yaml.YAMLError:
        return _bytes(data, rng)
    doc, what = _mutate_data(doc, rng)
    try:
        text = yaml.safe_dump(doc, allow_unicode=True, sort_keys=False).encode("utf-8", "surrogatepass")
    except (yaml.YAMLError, ValueError, TypeError):
        return data, "yaml unchanged"
    return b"---\n" + text + b"---\n" + m.group(2), f"frontmatter {what}"


def _mutate_yaml(data: bytes, rng: random.Random) -> Tuple[bytes, str]:
    try:
        doc = yaml.safe_load(data)
    except yaml.YAMLError:
        return _bytes(data, rng)
    doc, what = _mutate_data(doc, rng)
    try:
        return yaml.safe_dump(doc, allow_unicode=True).encode("utf-8", "surrogatepass"), f"yaml {what}"
    except (yaml.YAMLError, ValueError, TypeError):
        return data, "yaml unchanged"


TOML_VALUES = ["nan", "inf", "-inf", "1e400", '""', "[]", "{}", "true", "-1", "0", '"${X}"', '"\\u0000"',
               "1979-05-27T07:32:00Z", '"x/"', '"."', "[1, 2]", '{ a = 1 }', "'''\nx'''"]


def _mutate_toml(data: bytes, rng: random.Random) -> Tuple[bytes, str]:
    lines = data.split(b"\n")
    assigns = [i for i, line in enumerate(lines) if b"=" in line and not line.lstrip().startswith(b"#")]
    if not assigns or rng.random() < 0.2:
        return _bytes(data, rng)
    i = rng.choice(assigns)
    key, _, _ = lines[i].partition(b"=")
    op = rng.randrange(4)
    if op == 0:
        lines[i] = key + b"= " + rng.choice(TOML_VALUES).encode()
    elif op == 1:
        lines.insert(i, lines[i])
    elif op == 2:
        lines[i] = rng.choice([b"[x]", b"[[x]]", b"[mcp_servers]", b"[mcp_servers.a.b]", b"[agents.x]"])
    else:
        del lines[i]
    return b"\n".join(lines), f"toml line {i} op {op}"


def _mutate_file(name: str, data: bytes, rng: random.Random) -> Tuple[bytes, str]:
    if rng.random() < 0.15:
        return _bytes(data, rng)
    if name.endswith(".json"):
        return _mutate_json(data, rng)
    if name.endswith(".toml"):
        return _mutate_toml(data, rng)
    if name.endswith((".yaml", ".yml")):
        return _mutate_yaml(data, rng)
    if name.endswith(".md") and data.lstrip(b"\xef\xbb\xbf").startswith(b"---"):
        return _mutate_frontmatter(data, rng)
    return _bytes(data, rng)


NEW_NAMES = ["a", "a/b", "x/SKILL.md", "x/RULE.md", "x/index.json", "x.bundle.yaml", "SKILL.md", "mcp.json",
             "index.json", "ai.config.json", "AGENTS.md", "rules/x/prompt.md", "skills/a/SKILL.md",
             "skills/a/index.json", "hooks/x/index.json", ".ai/mcp.json", "package.json", ".claude/settings.json",
             "opencode.json", ".codex/config.toml", ".agentrc/manifest.json", ".mcp.json", "x.claude.md"]


def _mutate_tree(files: Files, rng: random.Random) -> str:
    paths = sorted(files)
    op = rng.randrange(4)
    path = rng.choice(paths)
    top = path.split("/", 1)[0]
    if op == 0:
        del files[path]
        return f"deleted {path}"
    new = f"{top}/{rng.choice(NEW_NAMES)}"
    if rng.random() < 0.5:
        new = f"{path.rsplit('/', 1)[0]}/{rng.choice(NEW_NAMES)}"
    if any(p.startswith(new + "/") for p in files) or any(new.startswith(p + "/") for p in files):
        return "no new name"
    if op == 1:
        files[new] = files.pop(path)
        return f"moved {path} to {new}"
    if op == 2:
        files[new] = files[path]
        return f"copied {path} to {new}"
    files[new] = rng.choice([b"", b"null", b"{}", b"[]", b"---\n---\n", b"\x00", b'{"servers": null}'])
    return f"created {new}"


FLAGS = ["--client", "--out", "--bundle", "--layout", "--plugin-name", "--check", "--report", "--strict", "--jobs",
         "--no-cache", "--format", "--from", "--canonical", "--json", "--version", "-h", "--dir",
         "--accept-requirement", "--no-requirements"]
FLAG_VALUES = ["", ",", " ", "claude", "claude,claude", "nope", "windsurf", "hermes", "codex,", "plugin", "project",
               "json", "text", "-1", "0", "1", "3", "abc", "99999999999999999999", "in", "out", "out/x", ".",
               "report.json", "out/.agentrc/manifest.json", "in/rules", "x\x00y", "core", "../up", "doc.json",
               "out/ai.config.json", "in/x", "-", "./in/pkg", "path:in/pkg", "in/pkg#x", "demo.pkg", "oas.okf",
               "file:///nonexistent.git", "./in/pkg/capabilities/chat", "install", "list", "remove", "update", "trust",
               "doctor", "--soul", "dev", "use", "none", "--layer", "tasks", "--type", "--disable",
               "spawn", "retire", "--force", "--work", "worktree", "attached", "--parent", "dev-1", "--relation",
               "--purpose", "--frozen", "--dry-run", "--item", "skill:review", "--global", "capability:x", "./in#rules"]


def _mutate_argv(argv: List[str], rng: random.Random) -> str:
    op = rng.randrange(5)
    if op == 0 and len(argv) > 1:
        i = rng.randrange(1, len(argv))
        del argv[i]
        return f"argv {i} deleted"
    if op == 1:
        i = rng.randrange(1, len(argv) + 1)
        argv[i:i] = [rng.choice(FLAGS), rng.choice(FLAG_VALUES)]
        return f"argv flag inserted at {i}"
    if op == 2 and len(argv) > 1:
        i = rng.randrange(1, len(argv))
        argv[i] = rng.choice(FLAG_VALUES)
        return f"argv {i} replaced"
    if op == 3:
        argv.append(rng.choice(FLAG_VALUES))
        return "argv path appended"
    argv[0] = rng.choice(["build", "lint", "fmt", "inspect", "import", "cap"])
    return "argv command replaced"


STRUCTURED = (".json", ".toml", ".yaml", ".yml", "SKILL.md", "RULE.md", "AGENT.md", "COMMAND.md", "HOOK.md",
              "CONTEXT.md", "prompt.md", ".agent.md", ".prompt.md", ".instructions.md", ".mdc")


def mutate(scenario: Scenario, rng: random.Random) -> Tuple[Files, List[str], List[str]]:
    files = dict(scenario.files)
    argv = list(scenario.argv)
    done = []
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
        r = rng.random()
        if r < 0.12:
            done.append(_mutate_argv(argv, rng))
        elif r < 0.22:
            done.append(_mutate_tree(files, rng))
        elif files:
            # Mostly the structured files (configs, index.json, manifests, frontmatter): the
            # markdown bodies and copied resources rarely reach new code.
            structured = [p for p in sorted(files) if p.endswith(STRUCTURED)]
            path = rng.choice(structured if structured and rng.random() < 0.7 else sorted(files))
            files[path], what = _mutate_file(path, files[path], rng)
            done.append(f"{path}: {what}")
    return files, argv, done


# --- running ----------------------------------------------------------------------------

def _write(root: Path, files: Files) -> None:
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


def _run(where: Path, argv: List[str]) -> Tuple[object, Optional[BaseException], str]:
    """Run the CLI in `where`: (exit code, the uncaught exception or None, its traceback)."""
    old = os.getcwd()
    os.chdir(where)
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            return main(argv), None, ""
    except SystemExit as exc:
        return exc.code, None, ""
    except BaseException as exc:  # noqa: B902 - the harness reports every escape
        if isinstance(exc, KeyboardInterrupt):
            raise
        return None, exc, traceback.format_exc()
    finally:
        os.chdir(old)


def _directory_nodes(files: Files, argv: List[str]) -> Tuple[Optional[BaseException], str]:
    """Each item directory of a build or lint case's sources (`in/`) parsed and rendered on
    its own, as a Pants node does: (the uncaught exception or None, its traceback)."""
    if not argv or argv[0] not in ("build", "lint"):
        return None, ""
    tree = SourceTree(tuple(SourceFile(rel, data) for rel, data in sorted(files.items()) if rel.startswith("in/")))
    try:
        for _, group in sorted(warm.item_dir_groups(tree).items()):
            warm.entries(SourceTree(tuple(group)), sorted(CLIENTS))
    except Exception as exc:  # noqa: B902 - the harness reports every escape
        return exc, traceback.format_exc()
    return None, ""


def _import_output_fails_lint(where: Path, argv: List[str]) -> bool:
    """The oracle of `agentrc import`: a registry it wrote (exit 0) lints without errors."""
    if not argv or argv[0] != "import" or "--out" not in argv[:-1]:
        return False
    out = argv[argv.index("--out") + 1]
    if not (where / out).is_dir():
        return False
    code, exc, _ = _run(where, ["lint", out])
    return exc is None and code == 1


def _where(exc: BaseException) -> Tuple[str, str]:
    """"Type @ module:line" of the deepest agentrc frame the exception passed through."""
    tb = exc.__traceback__
    spot = "?"
    module = "?"
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if f"{os.sep}agentrc{os.sep}" in filename and f"{os.sep}tests{os.sep}" not in filename:
            module = tb.tb_frame.f_globals.get("__name__", "?")
            spot = f"{module}:{tb.tb_lineno}"
        tb = tb.tb_next
    return f"{type(exc).__name__} @ {spot}", module


def run_case(scenarios_: Sequence[Scenario], seed: int, case: int, keep: Optional[Path] = None) -> Outcome:
    rng = random.Random(f"{seed}:{case}")
    scenario = scenarios_[case % len(scenarios_)]
    files, argv, done = mutate(scenario, rng)
    tmp = Path(tempfile.mkdtemp(prefix="agentrc-fuzz-", dir=TMP))
    try:
        _write(tmp, files)
        code, exc, trace = _run(tmp, argv)
        if exc is None:
            exc, trace = _directory_nodes(files, argv)
        unclean = exc is None and code == 0 and _import_output_fails_lint(tmp, argv)
        if keep is not None:
            shutil.copytree(tmp, keep, dirs_exist_ok=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    outcome = Outcome(case, scenario.name, done + [f"argv {argv!r}"], code)
    if exc is None and code not in (0, 1, 2, None):
        outcome.error = f"SystemExit({code!r})"
    elif unclean:
        outcome.error = "import wrote a registry that fails lint"
    elif exc is not None:
        outcome.error, module = _where(exc)
        outcome.allowed = (type(exc).__name__, module) in ALLOWED
        outcome.trace = trace
    return outcome


def run(cases: int, seed: int = 0, progress: Optional[Callable[[Stats], None]] = None,
        start: int = 0) -> Stats:
    stats = Stats()
    seeds = scenarios()
    for case in range(start, start + cases):
        stats.add(run_case(seeds, seed, case))
        if progress is not None and stats.cases % 500 == 0:
            progress(stats)
    return stats


def report(stats: Stats) -> str:
    lines = [f"{stats.cases} cases: " + ", ".join(f"{k}: {v}" for k, v in sorted(stats.exits.items()))]
    for error, n in sorted(stats.allowed.items()):
        lines.append(f"  allowed {n}x {error}")
    for error, o in sorted(stats.crash_classes().items()):
        n = sum(1 for f in stats.failures if f.error == error)
        lines.append(f"  CRASH {n}x {error} (first: case {o.case}, {o.scenario}; {'; '.join(o.mutations)})")
    return "\n".join(lines)

