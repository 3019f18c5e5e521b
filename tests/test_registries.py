"""Registries (issue 10 point 14): the core rule both front doors share. A directory holding
agentrc-registry.yaml is a registry root and a namespace of its own; a bare name resolves in
its own registry; another registry is reached with `{ name, source: <its root, relative> }`."""

from __future__ import annotations

from pathlib import Path

from agentrc.cli.main import main
from agentrc.model import Kind, SourceFile, SourceTree
from agentrc.pipeline import stages as pipeline
from agentrc.portable import discovery


def _skill(team: str, name: str, requires: str = "") -> str:
    return (f"---\nschema: 1\ndescription: Use when {name} for team {team}\n{requires}---\n\n"
            f"## {name}\n\nTeam {team}'s {name}.\n")


def _rule(team: str, requires: str = "") -> str:
    return f"---\nschema: 1\ndescription: Style of team {team}\n{requires}---\n\n## Style\n\nTeam {team}'s style.\n"


CORE = "schema: 1\nname: core\ndescription: Core\nitems:\n  rules:\n    - style\n  skills:\n    - review\n"
TWO = {
    **{f"teams/{t}/{p}": c for t in ("a", "b") for p, c in {
        "agentrc-registry.yaml": f"schema: 1\ndescription: Team {t}\n",
        "core.bundle.yaml": CORE,
        "skills/review/SKILL.md": _skill(t, "review"),
        "rules/style/RULE.md": _rule(t),
    }.items()},
    "teams/b/skills/deploy/SKILL.md": _skill("b", "deploy", "requires:\n  skills:\n    - name: review\n"
                                                             "      source: ../a\n"),
    "teams/b/full.bundle.yaml": "schema: 1\nname: full\ndescription: Full\nitems:\n  skills:\n    - deploy\n"
                                "requires:\n  - name: core\n    source: ../a\n",
}


def _tree(files):
    return SourceTree(tuple(SourceFile(p, c.encode()) for p, c in sorted(files.items())))


def _write(root: Path, files) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


def _errors(diags):
    return [d for d in diags if d.is_error]


def test_registry_of_and_source_root():
    roots = ("teams/a", "teams/b", "teams/b/nested")
    assert discovery.registry_roots(["teams/a/agentrc-registry.yaml", "x/RULE.md", "teams/b/agentrc-registry.yaml"]) \
        == ("teams/a", "teams/b")
    assert discovery.registry_of("teams/a/skills/review", roots) == "teams/a"
    assert discovery.registry_of("teams/b/nested/x", roots) == "teams/b/nested"  # the nearest root wins
    assert discovery.registry_of("teams/a", roots) == "teams/a"
    assert discovery.registry_of("examples/registry/skills/x", roots) == ""  # the unnamed registry
    assert discovery.source_root("teams/a", "../b", roots) == "teams/b"
    assert discovery.source_root("./teams/a", "../b/nested/", ("./teams/b/nested",)) == "./teams/b/nested"
    assert discovery.source_root("teams/a", "../c", roots) is None
    assert discovery.source_root("", "./teams/a", roots) == "teams/a"
    assert [discovery.is_local_source(s) for s in ("../b", "./b", "/abs/b", "owner/repo@v1", "https://x/y.git")] \
        == [True, True, True, False, False]


def test_two_registries_reuse_names_and_reference_each_other_explicitly():
    loaded = pipeline.load(_tree(TWO))
    assert loaded.ok and not loaded.diagnostics, [d.format() for d in loaded.diagnostics]
    assert loaded.registry.roots == ("teams/a", "teams/b")
    # Each registry's bundle, named by its file, builds its own items.
    for team in ("a", "b"):
        plan = pipeline.generate(_tree(TWO), ["claude"], [f"teams/{team}/core.bundle.yaml"])
        assert plan.ok, [d.format() for d in plan.diagnostics]
        files = {f.path: f.content for f in plan.files}
        assert f"Team {team}'s review.".encode() in files[".claude/skills/review/SKILL.md"]
        assert f"Team {team}'s style.".encode() in files[".claude/rules/style.md"]
    # b's bundle requires a's core (explicitly): a's review and style, b's deploy, and not b's review.
    plan = pipeline.generate(_tree(TWO), ["claude"], ["full"])
    assert plan.ok, [d.format() for d in plan.diagnostics]
    files = {f.path: f.content for f in plan.files}
    assert b"Team a's review." in files[".claude/skills/review/SKILL.md"]
    assert b"Team b's deploy." in files[".claude/skills/deploy/SKILL.md"]
    # The registry marker is no item and no resource.
    assert all("agentrc-registry" not in f.path for f in plan.files)


def test_without_markers_the_names_clash_as_before():
    unmarked = {p: c for p, c in TWO.items() if not p.endswith("agentrc-registry.yaml")}
    codes = sorted(d.code for d in _errors(pipeline.load(_tree(unmarked)).diagnostics))
    assert codes.count("AR013") == 2 and "AR064" in codes


def test_an_implicit_reference_into_another_registry_is_ar069():
    files = {**TWO, "teams/b/skills/deploy/SKILL.md": _skill("b", "deploy", "requires:\n  rules:\n    - only-a\n"),
             "teams/a/rules/only-a/RULE.md": _rule("a").replace("Style of", "Only")}
    errors = _errors(pipeline.load(_tree(files)).diagnostics)
    assert [(d.path, d.code) for d in errors] == [("teams/b/skills/deploy/SKILL.md", "AR069")]
    assert "write { name: only-a, source: ../a }" in errors[0].message
    assert "A bare name resolves in its own registry only" in errors[0].hint


def test_cycles_across_registries_are_found():
    # b/deploy requires a/review (explicitly); a/review requiring b/deploy back closes a cycle.
    files = {**TWO, "teams/a/skills/review/SKILL.md": _skill("a", "review", "requires:\n  skills:\n"
                                                                           "    - name: deploy\n      source: ../b\n")}
    errors = _errors(pipeline.load(_tree(files)).diagnostics)
    assert [d.code for d in errors] == ["AR071"]
    assert errors[0].message == "requires cycle: skill review -> skill deploy -> skill review"


def test_a_marker_must_be_valid():
    files = {**TWO, "teams/a/agentrc-registry.yaml": "schema: 1\nname: a\n"}
    errors = _errors(pipeline.load(_tree(files)).diagnostics)
    assert [(d.path, d.code) for d in errors] == [("teams/a/agentrc-registry.yaml", "AR006")]
    # Whatever it holds, its directory is still a registry root: the names do not clash.
    assert pipeline.load(_tree(files)).registry.roots == ("teams/a", "teams/b")


def test_the_cli_builds_two_registries_given_on_the_command_line(tmp_path, monkeypatch, capsys):
    _write(tmp_path, TWO)
    monkeypatch.chdir(tmp_path)
    assert main(["lint", "teams/a", "teams/b"]) == 0
    out = tmp_path / "out"
    assert main(["build", "teams/a", "teams/b", "--bundle", "teams/b/full.bundle.yaml", "--client", "claude",
                 "--out", str(out), "--no-cache"]) == 0
    assert "Team a's review." in (out / ".claude/skills/review/SKILL.md").read_text()
    capsys.readouterr()
    # A bundle name two registries define is ambiguous: name it by its file.
    assert main(["build", "teams/a", "teams/b", "--bundle", "core", "--client", "claude", "--out", str(out),
                 "--no-cache"]) == 1
    err = capsys.readouterr().err
    assert "error[AR066] bundle 'core' is defined in several registries (teams/a/core.bundle.yaml, " \
           "teams/b/core.bundle.yaml)" in err and "--bundle teams/a/core.bundle.yaml" in err
    # The whole of both registries would put two `review` skills into one tree.
    assert main(["build", "teams/a", "teams/b", "--client", "claude", "--out", str(out), "--no-cache"]) == 1
    assert "error[AR018] skill review (registry teams/b)" in capsys.readouterr().err
    # A registry a `source:` names must be among the inputs.
    assert main(["build", "teams/b", "--bundle", "full", "--client", "claude", "--out", str(out),
                 "--no-cache"]) == 1
    assert "error[AR068] bundle full requires bundle 'core' from source '../a'" in capsys.readouterr().err


def test_display_paths_as_typed(tmp_path, monkeypatch):
    """`agentrc lint .` shows `./teams/a/...`: roots and sources resolve the same way."""
    _write(tmp_path, TWO)
    monkeypatch.chdir(tmp_path)
    assert main(["lint", "."]) == 0
    loaded = pipeline.load(_tree({"./" + p: c for p, c in TWO.items()}))
    assert loaded.ok and loaded.registry.roots == ("./teams/a", "./teams/b")
    assert loaded.registry.item(Kind.SKILL, "deploy") is not None


def test_one_closure_holds_one_bundle_and_one_server_per_name():
    server = "mcps:\n  docs:\n    remote:\n      type: http\n      url: https://{team}.example.com/mcp\n"
    files = {**TWO,
             # b's full requires a's core and b's own core: two bundles named core in one closure (§3.7).
             "teams/b/full.bundle.yaml": TWO["teams/b/full.bundle.yaml"] + "  - name: core\n",
             "teams/a/core.bundle.yaml": CORE + server.format(team="a"),
             "teams/b/other.bundle.yaml": "schema: 1\nname: other\ndescription: Other\n" + server.format(team="b")}
    assert pipeline.load(_tree(files)).ok  # each registry on its own is fine
    plan = pipeline.generate(_tree(files), ["claude"], ["full"])
    assert [(d.path, d.code) for d in _errors(plan.diagnostics)] == [
        ("teams/b/core.bundle.yaml", "AR018"), ("teams/b/rules/style/RULE.md", "AR018"),
        ("teams/b/skills/review/SKILL.md", "AR018")]
    plan = pipeline.generate(_tree(files), ["claude"], ["teams/a/core.bundle.yaml", "other"])
    assert [(d.path, d.code) for d in _errors(plan.diagnostics)] == [("teams/b/other.bundle.yaml", "AR067")]
