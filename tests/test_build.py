"""Generation: golden trees per client, the Appendix A examples, bundle selection, and the
build command's ownership, staleness and --check behaviour."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers import ROOT, compare_golden, tree_text as _tree_text

from agentrc.output import plan as build

from agentrc.pipeline import stages as pipeline
from agentrc.cli.main import main
from agentrc.clients.base import ClientAdapter
from agentrc.files import OutputFile
from agentrc.clients.registry import CLIENTS
from agentrc.inputs.tree import read_tree

GOLDEN = Path(__file__).parent / "golden"
EXAMPLES = ROOT / "examples" / "registry"
APPENDIX_A = Path(__file__).parent / "cases" / "appendix-a" / "registry"


def _plan(root: Path, clients, bundles=None, shared_copies: bool = True):
    tree = read_tree([str(root)]).tree
    plan = pipeline.generate(tree, clients, bundles, shared_copies=shared_copies)
    assert plan.ok, "\n".join(d.format() for d in plan.diagnostics)
    return plan


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_examples_golden_per_client(client, monkeypatch):
    monkeypatch.chdir(ROOT)
    plan = _plan(Path("examples/registry"), [client])
    compare_golden(GOLDEN / "examples" / f"{client}.txt", _tree_text(plan.files))
    report = [r.to_json() for r in plan.reports]
    compare_golden(GOLDEN / "examples" / f"{client}.report.json", json.dumps(report, indent=1) + "\n")


def test_merged_build_is_the_union_of_clients(monkeypatch):
    monkeypatch.chdir(ROOT)
    merged = {f.path: (f.content, f.executable) for f in _plan(Path("examples/registry"), sorted(CLIENTS)).files}
    union = {}
    for client in sorted(CLIENTS):
        for f in _plan(Path("examples/registry"), [client]).files:
            if f.path in union and f.path in merged and f.path.endswith((".json", ".toml")):
                continue  # a config file several clients add keys to: checked below
            union[f.path] = (f.content, f.executable)
    shared = [p for p in merged if merged[p] != union.get(p)]
    assert all(p.endswith((".json", ".toml")) for p in shared), shared
    # Built with claude, Copilot, Cursor and Devin run the hooks of .claude/settings.json
    # instead of their own copies; and a skill a client would find byte for byte in a
    # directory it reads is written once (shared-copies).
    only_alone = {p for p in union if p not in merged}
    assert only_alone and all(p.startswith((".github/hooks/", ".github/agentrc/hooks/", ".cursor/hooks.json",
                                            ".cursor/agentrc/hooks/", ".devin/hooks.v1.json", ".devin/agentrc/hooks/",
                                            ".windsurf/agentrc/hooks/", ".github/skills/", ".opencode/skills/",
                                            ".cursor/skills/", ".windsurf/skills/", ".cline/skills/", ".qwen/skills/",
                                            ".factory/skills/", ".augment/skills/", ".kilo/skills/",
                                            ".continue/skills/"))
                              for p in only_alone), sorted(only_alone)
    assert set(merged) <= set(union)


@pytest.mark.parametrize("bundle", [None, "android"])
def test_appendix_a_golden(bundle, monkeypatch):
    monkeypatch.chdir(ROOT)
    plan = _plan(APPENDIX_A.relative_to(ROOT), sorted(CLIENTS), [bundle] if bundle else None)
    compare_golden(GOLDEN / "appendix-a" / f"{bundle or 'all'}.txt", _tree_text(plan.files))


def test_bundle_closure_follows_requires_and_preloads(monkeypatch):
    monkeypatch.chdir(ROOT)
    plan = _plan(APPENDIX_A.relative_to(ROOT), ["claude"], ["android"])
    paths = {f.path for f in plan.files}
    # android requires platform-baseline, whose agent preloads security-baseline (soft requires).
    assert ".claude/rules/license-awareness.md" in paths
    assert ".claude/agents/security-reviewer.md" in paths
    assert ".claude/skills/security-baseline/SKILL.md" in paths
    assert ".claude/skills/create-api-endpoint/SKILL.md" in paths
    # create-api-endpoint requires api-conventions (hard requires).
    assert ".claude/rules/api-conventions.md" in paths


def test_overrides_replace_the_body_per_client(monkeypatch):
    monkeypatch.chdir(ROOT)
    files = {f.path: f.content.decode() for f in _plan(APPENDIX_A.relative_to(ROOT), sorted(CLIENTS)).files}
    assert "for Claude Code" in files[".claude/agents/security-reviewer.md"]
    assert "for GitHub Copilot" in files[".github/agents/security-reviewer.agent.md"]
    assert "You are a security-focused code reviewer. When invoked" in files[".opencode/agents/security-reviewer.md"]


def test_directives_per_client(monkeypatch):
    monkeypatch.chdir(ROOT)
    # each client's own rendering (one shared copy where they are the same bytes is tested apart)
    files = {f.path: f.content.decode() for f in _plan(Path("examples/registry"), sorted(CLIENTS),
                                                       shared_copies=False).files}
    claude_only = "use the Write tool for new files"
    assert claude_only in files[".claude/skills/create-api-endpoint/SKILL.md"]
    assert claude_only not in files[".github/skills/create-api-endpoint/SKILL.md"]
    assert claude_only not in files[".opencode/skills/create-api-endpoint/SKILL.md"]
    negated = "Offer to open the pull request"
    assert negated in files[".github/skills/pr-summary/SKILL.md"]
    assert negated not in files[".opencode/skills/pr-summary/SKILL.md"]
    for text in files.values():
        assert "@client" not in text and "@endclient" not in text
        assert "\n\n\n" not in text


def test_audience_filters_items(monkeypatch):
    monkeypatch.chdir(ROOT)
    plan = _plan(Path("examples/registry"), sorted(CLIENTS))
    paths = {f.path for f in plan.files}
    assert ".claude/agents/triage.md" in paths
    assert ".github/agents/triage.agent.md" not in paths
    assert ".opencode/agents/triage.md" not in paths
    skipped = [r for r in plan.reports if r.name == "triage" and not r.generated]
    triage = next(i for i in plan_items(Path("examples/registry")) if i.name == "triage")
    assert {r.client for r in skipped} == {a.name for a in CLIENTS.values() if not triage.targets(a.family)}
    assert {r.client for r in skipped} >= {"copilot", "opencode"}
    assert all(f.status == "omitted" for r in skipped for f in r.fields)


def plan_items(root: Path):
    tree = read_tree([str(root)]).tree
    return pipeline.load(tree).registry.items


def test_ignore_and_executable_resources(monkeypatch):
    monkeypatch.chdir(ROOT)
    files = {f.path: f for f in _plan(Path("examples/registry"), ["claude"]).files}
    assert files[".claude/skills/pr-summary/scripts/summarize.sh"].executable
    assert not any("drafts" in p for p in files)


def test_every_field_is_accounted_for(monkeypatch):
    monkeypatch.chdir(ROOT)
    tree = read_tree(["examples/registry"]).tree
    loaded = pipeline.load(tree)
    plan = build.plan(loaded.registry, [CLIENTS[c] for c in sorted(CLIENTS)])
    by_key = {(r.client, r.kind, r.name): r for r in plan.reports}
    for item in loaded.registry.items:
        for client in CLIENTS:
            fields = {f.field for f in by_key[(client, item.kind.value, item.name)].fields}
            assert set(item.fields) | {"body", "resources"} <= fields


class _Writes(ClientAdapter):
    def __init__(self, name: str, content: bytes):
        self.name = self.family = self.title = name
        self.content = content

    def render(self, item, ctx):  # pragma: no cover - project files only
        raise AssertionError

    def project_files(self, reports):
        return (OutputFile("AGENTS.md", self.content, False, self.name),)


def test_output_conflict_is_reported():
    from agentrc.model import Registry

    same = build.plan(Registry(()), [_Writes("a", b"x\n"), _Writes("b", b"x\n")])
    assert same.ok and [f.path for f in same.files] == ["AGENTS.md"]
    clash = build.plan(Registry(()), [_Writes("a", b"x\n"), _Writes("b", b"y\n")])
    assert not clash.ok
    assert [d.code for d in clash.diagnostics] == ["AR090"]


def test_build_cli_owns_and_prunes_its_outputs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    shutil.copytree(EXAMPLES, "reg")
    Path("out").mkdir()
    Path("out/README.md").write_text("mine\n")
    assert main(["build", "reg", "--out", "out", "--report", "report.json"]) == 0
    assert Path("out/.claude/agents/triage.md").exists()
    report = json.loads(Path("report.json").read_text())
    assert report["summary"]["claude"]["items"] == 20 and report["summary"]["claude"]["servers"] == 2
    # Nothing changed: --check is clean and a rebuild rewrites nothing.
    assert main(["build", "reg", "--out", "out", "--check"]) == 0
    before = {p: p.stat().st_mtime_ns for p in Path("out").rglob("*") if p.is_file()}
    assert main(["build", "reg", "--out", "out"]) == 0
    assert "0 created, 0 updated, 0 deleted" in capsys.readouterr().err
    assert before == {p: p.stat().st_mtime_ns for p in Path("out").rglob("*") if p.is_file()}
    # Remove an item: --check reports the stale file, build deletes it and prunes its dir.
    shutil.rmtree("reg/agents/docs-writer")
    assert main(["build", "reg", "--out", "out", "--check"]) == 1
    assert "stale: out/.claude/agents/docs-writer.md" in capsys.readouterr().err
    assert main(["build", "reg", "--out", "out"]) == 0
    assert not Path("out/.claude/agents/docs-writer.md").exists()
    assert not Path("out/.claude/agentrc/agents/docs-writer").exists()
    assert Path("out/README.md").read_text() == "mine\n"  # never touched


def test_report_has_one_line_per_item_and_reads_as_the_document(tmp_path, monkeypatch):
    """`--report` and the packaged REPORT: the same bytes (`pipeline.report_bytes`), a JSON
    document equal to `report_document` and laid out as `report_layout` lays it out (each
    item of `items` on a line of its own), though its items' lines are encoded apart."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(EXAMPLES, "reg")
    assert main(["build", "reg", "--out", "out", "--client", "claude,opencode", "--report", "report.json"]) == 0
    data = Path("report.json").read_bytes()
    plan, files = pipeline.package(read_tree(["reg"]).tree, ["claude", "opencode"])
    assert dict((p, c) for p, c, _ in files)[pipeline.REPORT] == data
    document = pipeline.report_document(["claude", "opencode"], plan)
    assert json.loads(data) == document and len(document["items"]) > 20
    assert pipeline.report_layout(document) == data
    assert any(i.get("also_loaded_by") for i in document["items"])  # the line's optional key, too
    lines = data.decode().splitlines()
    assert lines[0] == "{" and lines[-1] == "}" and lines[1] == '  "version": 2,'
    item_lines = [line for line in lines if line.startswith('    {"client": ')]
    assert [json.loads(line.rstrip(",")) for line in item_lines] == document["items"]
    # Empty collections and scalars stay on their key's line.
    assert pipeline.report_layout({"a": [], "b": {}, "c": 1}) == b'{\n  "a": [],\n  "b": {},\n  "c": 1\n}\n'


def test_build_cli_json_and_usage_errors(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    shutil.copytree(EXAMPLES, "reg")
    assert main(["build", "reg", "--out", "out", "--client", "claude", "--format", "json", "--check"]) == 1
    doc = json.loads(capsys.readouterr().out)
    # The only finding: the examples' platform-baseline bundle declares a plugin, which a build does not install.
    assert [d["code"] for d in doc["diagnostics"]] == ["AR215"] and doc["changes"]["create"]
    assert main(["build", "reg", "--out", "out", "--client", "emacs"]) == 2
    assert "unknown client(s): emacs" in capsys.readouterr().err
    assert main(["lint", "missing-dir"]) == 2
    assert main(["build", "reg"]) == 2  # --out is required without a project file
    assert "--out is required; or run it in a project with an agentrc.yaml" in capsys.readouterr().err


def test_absolute_registry_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["build", str(EXAMPLES), "--out", "out", "--client", "claude", "--no-cache"]) == 0
    assert Path("out/.claude/skills/review/SKILL.md").exists()
