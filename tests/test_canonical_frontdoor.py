"""The canonical front door (spec 000) as people use it: from the project root (`agentrc
build . --out .`), every key of every item accounted for, explicit degradation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentrc import names
from agentrc.canonical import document as canonical
from agentrc.cli.main import main
from agentrc.fidelity import DEGRADED, DROPPED, EMITTED, MAPPED
from agentrc.frozen import thaw
from agentrc.inputs.read import read_inputs

# A small project with every layer kind: .ai/ (context, a rule, a command, an agent, a hook),
# a root AGENTS.md and ai.config.json.
PROJECT = {
    "ai.config.json": json.dumps({"context": {"global": "## From the config\n\nShip small changes.\n"},
                                  "mcp": {"servers": {"notes": {"command": "notes-mcp"}}}}),
    "AGENTS.md": "# Ledger service\n\nKeep the ledger balanced.\n",
    ".ai/AGENTS.md": "## Layer notes\n\nPrefer pure functions.\n",
    ".ai/rules/money/prompt.md": "---\ndescription: Money handling\nglobs: src/money/**\n---\n\nUse decimals.\n",
    ".ai/commands/tally/prompt.md": "---\ndescription: Tally the books\n---\n\nTally $ARGUMENTS.\n",
    ".ai/agents/auditor/prompt.md": "---\ndescription: Audits entries\n---\n\nCheck every entry.\n",
    ".ai/hooks/Stop/prompt.md": "echo balanced\n",
}


def write(root: Path, files) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


def tree(root: Path):
    """Every file below `root` but the manifest (which records modification times)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".agentrc" not in p.parts}


# --- issue 10.2: `.` is the project --------------------------------------------------------

def test_build_dot_out_dot_equals_the_absolute_path_build(tmp_path, monkeypatch, capsys):
    here = write(tmp_path / "here", PROJECT)
    there = write(tmp_path / "there", PROJECT)
    monkeypatch.chdir(here)
    assert main(["build", ".", "--out", ".", "--client", "claude", "--no-cache"]) == 0
    monkeypatch.chdir(tmp_path)
    assert main(["build", str(there), "--out", str(there), "--client", "claude", "--no-cache"]) == 0
    capsys.readouterr()
    built = tree(here)
    assert built == tree(there)
    # The .ai/ layer is in: its command, hook, agent and context.
    assert ".claude/skills/tally/SKILL.md" in built and ".claude/agents/auditor.md" in built
    assert b"echo balanced" in built[".claude/settings.json"]
    assert b"Prefer pure functions." in built["AGENTS.md"]


def test_inspect_dot_equals_the_absolute_path_inspect(tmp_path, monkeypatch, capsys):
    root = write(tmp_path / "p", PROJECT)
    monkeypatch.chdir(root)
    assert main(["inspect", ".", "--json"]) == 0
    here = json.loads(capsys.readouterr().out)
    monkeypatch.chdir(tmp_path)
    assert main(["inspect", str(root), "--json"]) == 0
    there = json.loads(capsys.readouterr().out.replace(str(root) + "/", ""))
    here["project"] = there["project"]
    assert here == there
    assert set(here["commands"]) == {"tally"} and set(here["hooks"]) == {"Stop"}
    assert [p["layer"] for p in here["provenance"]["context.global"]] == [".ai", "AGENTS.md", "ai.config.json"]
    assert here["provenance"]["commands.tally"]["file"] == ".ai/commands/tally/prompt.md"


@pytest.mark.parametrize("target", [".", "./"])
def test_lint_dot_reads_the_ai_directory(tmp_path, monkeypatch, capsys, target):
    root = write(tmp_path / "p", dict(PROJECT, **{".ai/commands/empty/prompt.md": "---\ndescription: E\n---\n"}))
    monkeypatch.chdir(root)
    assert main(["lint", target]) == 1
    err = capsys.readouterr().err
    assert ".ai/commands/empty/prompt.md" in err and "[AR116]" in err


# --- issue 10.1: every key of every canonical entry is accounted for --------------------------

SCHEMA = json.loads((Path(canonical.__file__).parent.parent / "schemas" / "canonical.schema.json").read_text())
KNOWN = {kind: sorted(SCHEMA["$defs"][kind]["properties"]) for kind in ("rule", "command", "skill", "agent", "server")}
KNOWN["hook"] = sorted(SCHEMA["$defs"]["hookEntry"]["properties"])

# One value per key every kind may hold (spec 000's keys, the portable fields people write in
# prompt.md and keys no one maps), so a key added to the schema without a mapping fails here.
VALUES = {
    "content": "Body text.\n", "prompt": "Body text.\n", "description": "Described",
    "globs": ["src/**"], "alwaysApply": False, "triggers": ["ship"], "disableModelInvocation": True,
    "userInvocable": False, "name": "renamed", "allowedTools": ["Read"], "allowed-tools": ["Read"],
    "references": {"r.md": "ref\n"}, "scripts": {"s.sh": "echo\n"}, "assets": {"a.txt": "a\n"},
    "files": {"notes/n.md": "n\n"}, "skills": ["helper"], "script": "./check.sh", "matcher": "Bash",
    "tools": ["Read", "Grep"], "type": "prompt", "async": True, "timeout": 2.5, "command": "srv",
    "args": ["--x"], "env": {"A": "1"}, "url": "https://example.invalid/mcp", "headers": {"H": "v"},
    "disabled": False, "autoApprove": ["t"], "scope": "project",
}
EXTRA = {"model": "opus", "color": "blue", "license": "MIT", "metadata": {"team": "ledger"},
         "argument-hint": "[what]", "compatibility": "needs git", "invented-key": 1, "claude": {"x": 1},
         "tools": ["Read", "Grep"]}


def _entry(kind: str):
    entry = {k: VALUES[k] for k in KNOWN[kind] if k in VALUES}
    missing = set(KNOWN[kind]) - set(VALUES)
    assert not missing, f"give the meta-test a value for {kind} keys {sorted(missing)}"
    if kind == "server":
        entry.pop("url"), entry.pop("headers")  # a local server; remote below
        entry["type"] = "stdio"
    return dict(entry, **({"invented-key": 1} if kind in ("hook", "server") else EXTRA))


def test_every_key_of_every_canonical_entry_is_mapped_or_reported(tmp_path, monkeypatch):
    remote = {k: VALUES[k] for k in ("url", "headers", "scope")}
    remote.update({"type": "http", "args": ["stray"], "invented-key": 2})
    doc = {"rules": {"r": _entry("rule")}, "commands": {"c": _entry("command")}, "skills": {"s": _entry("skill")},
           "agents": {"a": dict(_entry("agent"), skills=["s"], disallowedTools=["Grep"])},
           "hooks": {"PreToolUse": _entry("hook"), "PostToolUse": [_entry("hook"), {"script": "echo second"}],
                     "pre-commit": {"script": "npm test", "matcher": "x"}},
           "mcp": {"servers": {"local": _entry("server"), "remote": remote}}}
    write(tmp_path / "p", {"ai.config.json": json.dumps(doc)})
    monkeypatch.chdir(tmp_path)
    inputs = read_inputs(["p"])
    loaded = inputs.canonical
    assert loaded is not None and loaded.ok, [d.format() for d in loaded.diagnostics if d.is_error]
    document = inputs.documents[0][1]
    caps = thaw(document.capabilities)
    reports = {(r.kind, r.name): r for r in loaded.reports}
    warnings = [d.message for d in loaded.diagnostics if d.code == "AR119"]
    items = {(i.kind.value, i.name): i for i in loaded.registry.items}
    servers = {s.name: s for b in loaded.registry.bundles for s in b.servers}
    checked = 0
    for section, kind in (("rules", "rule"), ("commands", "command"), ("skills", "skill"), ("agents", "agent"),
                          ("hooks", "hook"), ("mcp", "mcp")):
        entries = caps["mcp"]["servers"] if section == "mcp" else caps[section]
        for name, value in entries.items():
            hooks = value if isinstance(value, list) else [value]
            for i, entry in enumerate(hooks, 1):
                entry = {"script": entry} if isinstance(entry, str) else entry
                label = name if kind != "hook" else names.slug(name) + (f"-{i}" if len(hooks) > 1 else "")
                outcomes = {f.field: f for f in reports[(kind, label)].fields}
                assert set(outcomes) == set(entry), (kind, label, set(entry) ^ set(outcomes))
                built = servers.get(name) if kind == "mcp" else items.get((kind, label))
                for key, outcome in outcomes.items():
                    checked += 1
                    if outcome.status in (DROPPED, DEGRADED):
                        # reported: a warning names the key (or the whole dropped hook)
                        prefix = f"{'mcp.servers' if kind == 'mcp' else section}.{name}"
                        assert any(prefix in w and (key in w or "dropped" in w) for w in warnings), (kind, label, key)
                    elif outcome.status in (EMITTED, MAPPED) and key not in ("content", "prompt"):
                        assert built is not None, (kind, label)
                        fields = dict(built.fields)
                        assert fields or kind == "mcp", (kind, label)
                        if kind != "mcp" and key not in ("references", "scripts", "assets", "files"):
                            target = outcome.detail.split()[-1] if outcome.status == MAPPED else key
                            assert any(k in fields for k in (key, target, "scope", "preload-skills", "tools",
                                                             "matcher", "allowed-tools", "disable-model-invocation",
                                                             "user-invocable", "model")), (kind, label, key)
    assert checked > 80
    # The tool list never widens: Read and Grep stay read and grep, less what is disallowed.
    assert items[("agent", "a")].tools == ("read",) and items[("command", "c")].tools == ("read", "grep")
    assert dict(items[("agent", "a")].fields)["model"] == "opus"
    skill = dict(items[("skill", "s")].fields)
    assert skill["compatibility"] == "needs git" and skill["license"] == "MIT" and skill["argument-hint"] == "[what]"
    assert dict(items[("command", "c")].fields)["argument-hint"] == "[what]"
    assert ("hook", "pre-commit") not in items  # dropped, reported, and the rest builds
    assert {"pre-tool-use", "post-tool-use-1", "post-tool-use-2"} <= {n for k, n in items if k == "hook"}


# --- issue 10.5: ai-jue's generated block is output, not input -------------------------------

def test_an_ai_jue_project_migrates_in_one_build(tmp_path, monkeypatch, capsys):
    """ai-jue wrote its presets' context between AI-JUE markers into the root AGENTS.md; read
    as content, every preset would appear twice, and the block would stay beside agentrc's."""
    root = write(tmp_path / "p", {
        "ai.config.json": json.dumps({"presets": ["./presets/house"]}),
        "presets/house/AGENTS.md": "## House style\n\nShort sentences.\n",
        "AGENTS.md": "# Ledger\n\nOwn notes.\n\n<!-- AI-JUE:START -->\n## House style\n\nShort sentences.\n"
                     "<!-- AI-JUE:END -->\n\nMore own notes.\n",
    })
    monkeypatch.chdir(root)
    assert main(["build", ".", "--out", ".", "--client", "claude", "--no-cache"]) == 0
    capsys.readouterr()
    text = (root / "AGENTS.md").read_text()
    # agentrc's block took the place of ai-jue's: the preset's text once, the user's around it.
    assert "AI-JUE" not in text and text.count("Short sentences.") == 1
    assert text.index("Own notes.") < text.index("<!-- agentrc:begin") < text.index("More own notes.")
    assert main(["build", ".", "--out", ".", "--client", "claude", "--no-cache"]) == 0
    assert (root / "AGENTS.md").read_text() == text
    _, document = _project(root)
    assert [t.count("Short sentences.") for t, _, _ in document.context] == [1, 0]
    assert canonical.strip_managed_block("a\n<!-- AI-JUE:START -->\nx\n<!-- AI-JUE:END -->\nb\n") == "a\n\nb\n"
    assert canonical.strip_managed_block("<!-- AI-JUE:START -->\nx\n") == ""  # unclosed: to the end


def _project(root: Path):
    from agentrc.inputs import config as configload

    project, _ = configload.load_project(str(root))
    document, _ = canonical.build_document(project.layers)
    return project, document


def test_js_positions_follow_the_path_and_skip_computed_keys():
    from agentrc.inputs.config import js_positions
    text = ('const name = "built";\n'
            'module.exports = {\n'
            '  "rules": { a: { content: "x" }, [name]: { content: "y" } },\n'
            '  commands: { a: { prompt: "p" } },\n'
            '};\n')
    data = {"rules": {"a": {"content": "x"}, "built": {"content": "y"}}, "commands": {"a": {"prompt": "p"}}}
    pos = js_positions(text, data)
    assert pos["rules"] == (3, 3) and pos["rules.a"] == (3, 14) and pos["rules.a.content"] == (3, 19)
    assert pos["commands.a"] == (4, 15) and pos["commands.a.prompt"] == (4, 20)
    assert "rules.built" not in pos  # computed at run time: the diagnostic points at the file
