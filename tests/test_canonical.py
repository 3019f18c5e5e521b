"""The canonical document (spec 000): layers, §4.2 mapping, merge order, override, append,
provenance, normalization, and rendering through the same adapters as portable items."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest

from agentrc.canonical import document as canonical
from agentrc.cli.main import main
from agentrc.clients import registry as client_registry
from agentrc.inputs import config as configload
from agentrc.inputs.read import read_inputs
from agentrc.model import Kind
from agentrc.pipeline import stages as pipeline
from helpers import ROOT, compare_golden

GOLDEN = Path(__file__).parent / "golden" / "canonical"
PROJECT = ROOT / "examples" / "project"


def _document(root: Path):
    project, diags = configload.load_project(str(root))
    assert not any(d.is_error for d in diags), [d.format() for d in diags]
    document, doc_diags = canonical.build_document(project.layers)
    assert not any(d.is_error for d in doc_diags), [d.format() for d in doc_diags]
    return project, document


def _write(root: Path, files):
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())


def test_example_project_document_golden(monkeypatch):
    """Two-level preset chain, .ai/, root AGENTS.md and ai.config.js: the merged document and
    the provenance of every part (`agentrc inspect --json`)."""
    monkeypatch.chdir(ROOT)
    _, document = _document(Path("examples/project"))
    compare_golden(GOLDEN / "project.json", json.dumps(document.to_json(), indent=1, ensure_ascii=False) + "\n")


def test_example_project_inspect_text_golden(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    assert main(["inspect", "examples/project"]) == 0
    compare_golden(GOLDEN / "project.inspect.txt", capsys.readouterr().out)


@pytest.mark.parametrize("client", ["claude", "copilot", "opencode"])
def test_example_project_renders_through_the_adapters(client, monkeypatch):
    monkeypatch.chdir(ROOT)
    inputs = read_inputs(["examples/project"])
    plan = pipeline.generate(inputs.tree, [client], canonical=inputs.canonical)
    assert plan.ok, [d.format() for d in plan.diagnostics]
    text = "".join(f"=== {f.path}{' (executable)' if f.executable else ''}\n{f.content.decode()}" for f in plan.files)
    compare_golden(GOLDEN / f"project.{client}.txt", text)


@pytest.mark.parametrize("client", sorted(client_registry.CLIENTS))
def test_example_project_builds_for_every_client(client, monkeypatch):
    """Every adapter accounts for the canonical server fields (scope, disabled, autoApprove):
    windsurf once failed on the shipped example with UnreportedField for `scope` (issue 9)."""
    monkeypatch.chdir(ROOT)
    inputs = read_inputs(["examples/project"])
    plan = pipeline.generate(inputs.tree, [client], canonical=inputs.canonical)
    assert plan.ok, [d.format() for d in plan.diagnostics]


def test_context_is_appended_in_spec_order(monkeypatch):
    monkeypatch.chdir(ROOT)
    _, document = _document(Path("examples/project"))
    layers = [layer for _, layer, _ in document.context]
    # §4.3: nested preset chain, current preset, .ai/AGENTS.md, root AGENTS.md, ai.config context.global.
    assert layers == ["preset ../base", "preset ./presets/team", ".ai", "AGENTS.md", "ai.config.js"]


def test_later_layers_override_per_key_and_provenance_names_both(monkeypatch):
    monkeypatch.chdir(ROOT)
    _, document = _document(Path("examples/project"))
    rules = dict(document.capabilities["rules"])
    # ai.config.js overrides only `globs` of the .ai rule; its content and description stay.
    assert list(rules["api-style"]["globs"]) == ["src/api/**/*.kt", "src/routes/**/*.kt"]
    assert rules["api-style"]["description"] == "HTTP API style for handlers"
    o = document.origin("rules.api-style.globs")
    assert o.layer == "ai.config.js" and o.replaced == ((".ai", "examples/project/.ai/rules/api-style/prompt.md"),)
    entry = document.origin("rules.conventional-commits")
    assert entry.layer == "preset ./presets/team" and entry.replaced[0][0] == "preset ../base"
    assert "service" in rules["conventional-commits"]["content"]


def test_every_section_4_2_mapping(tmp_path):
    """Root AGENTS.md, rules/commands/agents prompt.md, skills with sidecars (a binary one as
    base64), hooks index.json (+ prompt.md as the script), root mcp.json, tools config."""
    png = b"\x89PNG\r\n\x1a\n\x00\x01binary"
    _write(tmp_path / "p" / ".ai", {
        "AGENTS.md": "## Team\n\nBe kind.\n",
        "rules/style/prompt.md": "---\ndescription: Style\nglobs: src/**/*.ts\n---\n\nUse tabs.\n",
        "commands/ship/prompt.md": "---\ndescription: Ship it\n---\n\nShip $ARGUMENTS.\n",
        "skills/pdf/SKILL.md": "---\nname: pdf\ndescription: Read PDFs\n---\n\nUse the tools.\n",
        "skills/pdf/references/api.md": "# API\n",
        "skills/pdf/scripts/run.sh": "#!/bin/sh\n",
        "skills/pdf/assets/logo.png": png,
        "skills/pdf/notes/extra.md": "extra\n",
        "agents/helper/index.json": json.dumps({"description": "Helps", "skills": ["pdf"]}),
        "agents/helper/prompt.md": "Help out.\n",
        "hooks/PreToolUse/index.json": json.dumps({"tools": ["Bash"], "timeout": 5}),
        "hooks/PreToolUse/prompt.md": "scripts/guard.sh\n",
        "hooks/Stop/prompt.md": "echo done\n",
        "mcp.json": json.dumps({"servers": {"fs": {"command": "npx", "args": ["-y", "fs-mcp"]}}}),
        "tools/cursor/config.json": json.dumps({"x": 1}),
    })
    _, document = _document(tmp_path / "p")
    doc = document.to_json()
    assert doc["context"]["global"] == "## Team\n\nBe kind.\n"
    assert doc["rules"]["style"] == {"description": "Style", "globs": "src/**/*.ts", "content": "Use tabs.\n"}
    assert doc["commands"]["ship"]["prompt"] == doc["commands"]["ship"]["content"] == "Ship $ARGUMENTS.\n"
    skill = doc["skills"]["pdf"]
    assert skill["references"] == {"api.md": "# API\n"} and skill["scripts"] == {"run.sh": "#!/bin/sh\n"}
    assert skill["assets"]["logo.png"] == {"content": base64.b64encode(png).decode(), "encoding": "base64"}
    assert skill["files"] == {"notes/extra.md": "extra\n"}
    assert doc["agents"]["helper"]["skills"] == ["pdf"] and doc["agents"]["helper"]["prompt"] == "Help out.\n"
    assert doc["hooks"]["PreToolUse"] == {"tools": ["Bash"], "timeout": 5, "script": "scripts/guard.sh"}
    assert doc["hooks"]["Stop"] == "echo done"  # a string hook stays a string (structure preserved)
    assert doc["mcp"] == {"servers": {"fs": {"command": "npx", "args": ["-y", "fs-mcp"]}}}
    assert doc["tools"] == {"cursor": {"x": 1}}
    registry, diags = canonical.to_registry(document, client_registry.client_names())
    assert not any(d.is_error for d in diags), [d.format() for d in diags]
    by_kind = {}
    for item in registry.items:
        by_kind.setdefault(item.kind, []).append(item)
    assert [i.name for i in by_kind[Kind.HOOK]] == ["pre-tool-use", "stop"]
    assert by_kind[Kind.HOOK][0].hook.tools == ("bash",)
    pdf = by_kind[Kind.SKILL][0]
    assert {r.path for r in pdf.resources} == {"references/api.md", "scripts/run.sh", "assets/logo.png",
                                               "notes/extra.md"}
    assert next(r for r in pdf.resources if r.path == "assets/logo.png").content == png
    assert by_kind[Kind.RULE][0].scope_paths == ("src/**/*.ts",)
    assert by_kind[Kind.AGENT][0].preload_skills[0][0] == "pdf"
    assert [s.name for b in registry.bundles for s in b.servers] == ["fs"]


def test_npm_presets_resolve_like_ai_jue(tmp_path):
    """`preset: "base"` finds node_modules/jue-preset-base; its package.json#ai.presets chain
    loads depth first, and a preset two others share loads once."""
    root = tmp_path / "p"
    _write(root, {
        "ai.config.json": json.dumps({"preset": "team", "presets": ["shared"]}),
        "node_modules/jue-preset-team/package.json": json.dumps({"name": "jue-preset-team",
                                                                 "ai": {"presets": ["shared"]}}),
        "node_modules/jue-preset-team/AGENTS.md": "team\n",
        "node_modules/shared/package.json": json.dumps({"name": "shared"}),
        "node_modules/shared/AGENTS.md": "shared\n",
    })
    _, document = _document(root)
    assert [t.strip() for t, _, _ in document.context] == ["shared", "team"]


def test_the_managed_block_never_feeds_back(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    args = ["build", str(project), "--client", "claude,opencode", "--out", str(project), "--no-cache"]
    assert main(args) == 0
    first = (project / "AGENTS.md").read_text()
    assert first.startswith("# Billing API\n") and "<!-- agentrc:begin" in first
    assert main(args) == 0
    assert (project / "AGENTS.md").read_text() == first  # the block is not read back as input
    _, document = _document(project)
    assert sum("Release rules" in t for t, _, _ in document.context) == 1


def test_canonical_and_portable_items_share_one_registry(monkeypatch):
    monkeypatch.chdir(ROOT)
    inputs = read_inputs(["examples/project", "examples/registry"])
    loaded = pipeline.load(inputs.tree, inputs.explicit, canonical=inputs.canonical)
    assert loaded.ok, [d.format() for d in loaded.diagnostics if d.is_error]
    entrypoints = {i.entrypoint.split("/")[1] for i in loaded.registry.items}
    assert entrypoints == {"project", "registry"}


def test_tools_go_only_to_their_target(monkeypatch):
    """tools.<target> is split off before normalization and handed to that adapter alone."""
    monkeypatch.chdir(ROOT)
    inputs = read_inputs(["examples/project"])
    plan = pipeline.generate(inputs.tree, ["claude", "cursor"], canonical=inputs.canonical)
    assert plan.ok, [d.format() for d in plan.diagnostics]
    files = {f.path: f.content.decode() for f in plan.files}
    assert json.loads(files[".cursor/settings.json"]) == {"rulesDirectory": ".cursor/rules"}
    assert "rulesDirectory" not in files[".claude/settings.json"]
    report = next(r for r in plan.reports if r.kind == "tools")
    assert (report.client, report.outputs) == ("cursor", (".cursor/settings.json",))


def test_brace_globs_and_project_relative_hook_scripts(tmp_path):
    """`globs: "src/{a,b}/**, lib/*.ts"` is two globs; a canonical hook's `./script` is a path
    from the project root (canonical hooks carry no files), not a missing supporting file."""
    _write(tmp_path / "p", {"ai.config.json": json.dumps({
        "rules": {"r": {"description": "R", "content": "Text.", "globs": "src/{a,b}/**, lib/*.ts"}},
        "hooks": {"PreToolUse": {"script": "./scripts/guard.sh", "tools": ["Bash"]}},
    })})
    _, document = _document(tmp_path / "p")
    registry, diags = canonical.to_registry(document, client_registry.client_names())
    assert not any(d.is_error for d in diags), [d.format() for d in diags]
    rule = next(i for i in registry.items if i.kind is Kind.RULE)
    hook = next(i for i in registry.items if i.kind is Kind.HOOK)
    assert rule.scope_paths == ("src/{a,b}/**", "lib/*.ts")
    assert hook.hook.script == "./scripts/guard.sh" and hook.hook.script_file is None
