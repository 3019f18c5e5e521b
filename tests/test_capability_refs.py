"""Capability references (ai-jue's `package.json#ai.capabilities`, the config's
`capabilities`) resolved through agentrc's sources: real bare git repositories made here,
served over file://, HOME and the cache isolated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sourcerepos import Repo, git, isolated_home, write

from agentrc.cli.main import main
from agentrc.inputs import capref
from agentrc.inputs.read import read_inputs
from agentrc.sources.dsl import GIT, SourceError
from agentrc.sources.lock import LOCK_FILE

SKILL = "---\nname: review\ndescription: Use when reviewing a change.\n---\n\nRead the diff {}.\n"


@pytest.fixture
def repo(tmp_path, monkeypatch):
    isolated_home(monkeypatch, tmp_path)
    r = Repo(tmp_path, "caps")
    r.v1 = r.commit({
        "skills/review/SKILL.md": SKILL.format("once"),
        "skills/review/references/checklist.md": "- tests\n",
        "rules/style/prompt.md": "---\ndescription: Style from the repository\n---\n\nWrap at 100.\n",
        "servers/mcp.json": json.dumps({"servers": {"notes": {"command": "notes-mcp", "args": ["--ro"]}}}),
    }, tag="v1")
    r.v2 = r.commit({"skills/review/SKILL.md": SKILL.format("twice")}, tag="v2")
    return r


def project(tmp_path: Path, repo: Repo, config_caps=None, preset_caps=None, preset_files=None) -> Path:
    p = tmp_path / "p"
    write(p, {"ai.config.json": json.dumps({"presets": ["./presets/team"], **(
        {"capabilities": config_caps} if config_caps is not None else {})})})
    write(p / "presets" / "team", {"package.json": json.dumps({"name": "team", "ai": {"capabilities": preset_caps or {}}}),
                                   **(preset_files or {})})
    return p


def build(p: Path, out: Path, capsys) -> str:
    code = main(["build", str(p), "--client", "claude", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    return err


def test_references_resolve_through_sources_and_are_locked(repo, tmp_path, capsys):
    p = project(tmp_path, repo,
                config_caps={"notes": {"source": repo.url, "ref": "v1", "path": "servers", "type": "mcp"}},
                preset_caps={"review": {"source": repo.url, "ref": "v1", "path": "skills/review", "type": "skill"},
                             "style": {"source": repo.url, "ref": "v1", "path": "rules/style", "type": "rule"}})
    out = tmp_path / "out"
    build(p, out, capsys)
    skill = (out / ".claude/skills/review/SKILL.md").read_text()
    assert "Read the diff once." in skill
    assert (out / ".claude/skills/review/references/checklist.md").read_text() == "- tests\n"
    assert "Wrap at 100." in (out / ".claude/rules/style.md").read_text()
    assert json.loads((out / ".mcp.json").read_text())["mcpServers"]["notes"]["args"] == ["--ro"]
    lock = json.loads((p / LOCK_FILE).read_text())
    records = {(c["layer"], c["name"]): c for c in lock["capabilities"]}
    assert sorted(records) == [("ai.config.json", "notes"), ("preset ./presets/team", "review"),
                               ("preset ./presets/team", "style")]
    assert records[("preset ./presets/team", "review")]["commit"] == repo.v1
    assert records[("preset ./presets/team", "review")]["source"] == f"{repo.url}#skills/review"
    assert records[("preset ./presets/team", "review")]["ref"] == "v1"
    assert lock["bundles"] == [] and lock["items"] == [] and lock["clients"] == ["claude"]
    # Where each capability came from is shown as the source, never the cache's path.
    doc = dict(read_inputs([str(p)]).documents)[str(p)].to_json()
    where = doc["provenance"]["skills.review"]
    assert where["layer"] == "capability review (preset ./presets/team)"
    assert where["file"] == f"{repo.url}@v1/skills/review/SKILL.md"
    assert doc["provenance"]["mcp.servers.notes"]["file"] == f"{repo.url}@v1/servers/mcp.json"


def test_a_locked_reference_is_read_at_its_commit_and_checked(repo, tmp_path, capsys, monkeypatch):
    p = project(tmp_path, repo,
                preset_caps={"review": {"source": repo.url, "ref": "main", "path": "skills/review", "type": "skill"}})
    out = tmp_path / "out"
    build(p, out, capsys)
    assert "Read the diff twice." in (out / ".claude/skills/review/SKILL.md").read_text()
    locked = (p / LOCK_FILE).read_bytes()
    # main moves on; the lock keeps the build at its commit, without running git.
    repo.commit({"skills/review/SKILL.md": SKILL.format("three times")})
    monkeypatch.setenv("AGENTRC_GIT", str(tmp_path / "no-git-here"))
    build(p, tmp_path / "out2", capsys)
    assert "Read the diff twice." in (tmp_path / "out2/.claude/skills/review/SKILL.md").read_text()
    assert (p / LOCK_FILE).read_bytes() == locked
    # A lock whose digest is not what the locked commit holds is AR222, and nothing is built.
    data = json.loads(locked)
    data["capabilities"][0]["sha256"] = "0" * 64
    (p / LOCK_FILE).write_text(json.dumps(data))
    code = main(["build", str(p), "--client", "claude", "--out", str(tmp_path / "out3")])
    err = capsys.readouterr().err
    assert code == 1 and "error[AR222]" in err and "capability review" in err
    assert not (tmp_path / "out3").exists()
    # Without its record, the reference resolves its ref again (git is back).
    monkeypatch.delenv("AGENTRC_GIT")
    (p / LOCK_FILE).write_text(json.dumps(dict(data, capabilities=[])))
    build(p, tmp_path / "out4", capsys)
    assert "three times" in (tmp_path / "out4/.claude/skills/review/SKILL.md").read_text()
    assert json.loads((p / LOCK_FILE).read_text())["capabilities"][0]["commit"] == git(repo.work, "rev-parse",
                                                                                       "HEAD")


def test_precedence_follows_ai_jue(repo, tmp_path, capsys):
    """In a preset: its presets, then its capability references, then its own files; in
    the project: presets, .ai/, AGENTS.md, the config's references, then the config's keys."""
    p = project(tmp_path, repo,
                preset_caps={"style": {"source": repo.url, "ref": "v1", "path": "rules/style", "type": "rule"},
                             "review": {"source": repo.url, "ref": "v1", "path": "skills/review", "type": "skill"}},
                preset_files={"rules/style/prompt.md": "---\ndescription: The preset's own\n---\n\nWrap at 80.\n"},
                config_caps={"review": {"source": repo.url, "ref": "v2", "path": "skills/review", "type": "skill"}})
    config = json.loads((p / "ai.config.json").read_text())
    config["skills"] = {"review": {"description": "Use when the config says so."}}
    (p / "ai.config.json").write_text(json.dumps(config))
    out = tmp_path / "out"
    build(p, out, capsys)
    assert "Wrap at 80." in (out / ".claude/rules/style.md").read_text()
    skill = (out / ".claude/skills/review/SKILL.md").read_text()
    assert "Read the diff twice." in skill  # the config's reference (v2) over the preset's (v1)
    assert "Use when the config says so." in skill  # the config's own key over both


def test_a_local_reference_stays_inside_its_preset(repo, tmp_path, capsys):
    p = project(tmp_path, repo, preset_caps={"x": {"source": "file:../../outside", "type": "rule"}})
    write(tmp_path / "outside", {"prompt.md": "Leak.\n"})
    code = main(["lint", str(p)])
    err = capsys.readouterr().err
    assert code == 1 and "error[AR050]" in err and "capabilities.x" in err
    # Inside the preset it is read, and recorded as written (not as this machine's path).
    p2 = project(tmp_path / "two", repo, preset_caps={"x": {"source": "file:./caps/x", "type": "rule"}},
                 preset_files={"caps/x/prompt.md": "---\ndescription: Local\n---\n\nLocal rule.\n"})
    build(p2, tmp_path / "out", capsys)
    assert "Local rule." in (tmp_path / "out/.claude/rules/x.md").read_text()
    record = json.loads((p2 / LOCK_FILE).read_text())["capabilities"][0]
    assert (record["source"], record["commit"]) == ("file:./caps/x", None)


def test_source_forms_map_onto_the_source_dsl(tmp_path):
    src = capref._source("github:acme/skills", "v1", "skills/review", str(tmp_path), str(tmp_path))
    assert (src.kind, src.label) == (GIT, "acme/skills@v1#skills/review")
    src = capref._source("https://example.com/a/b.git#reg", None, "x", str(tmp_path), str(tmp_path))
    assert src.subpath == "reg/x"
    for bad, code in (("npm:left-pad@1.0.0", "AR220"), ("github:acme", "AR219"), ("file:~/x", "AR219")):
        with pytest.raises(SourceError) as exc:
            capref._source(bad, None, None, str(tmp_path), str(tmp_path))
        assert exc.value.code == code, bad
    with pytest.raises(SourceError):
        capref._source("github:acme/skills", "--upload-pack=x", None, str(tmp_path), str(tmp_path))


def test_malformed_references_are_ar219_whatever_their_shape(tmp_path):
    """Found by the fuzzer: a `type` that is a list (unhashable) and keys that are not
    strings (a YAML config) were a traceback, not a diagnostic."""
    from agentrc.diagnostics import Diagnostics

    d = Diagnostics()
    refs = capref.references({"x": {"source": "acme/skills", "type": ["skill"]}, 7: {"source": "a/b", "type": "skill"},
                              "y": {"source": "acme/skills", "type": "skill", "config": {1: "a", "b": 2}}},
                             "ai.config.yaml", str(tmp_path), str(tmp_path), d)
    assert [r.name for r in refs] == ["y"]
    assert sorted(x.code for x in d.items) == ["AR219", "AR219"]
    assert any("capabilities.x: type must be one of" in x.message for x in d.items)


def test_a_package_preset_cannot_reference_a_repository_on_this_machine(repo, tmp_path, capsys):
    p = tmp_path / "p"
    write(p, {"ai.config.json": json.dumps({"presets": ["team"]}),
              "node_modules/jue-preset-team/package.json": json.dumps({"name": "jue-preset-team", "ai": {
                  "capabilities": {"review": {"source": repo.url, "ref": "v1", "path": "skills/review",
                                              "type": "skill"}}}})})
    code = main(["lint", str(p)])
    err = capsys.readouterr().err
    assert code == 1 and "error[AR219] capabilities.review: a preset installed as a package cannot reference" in err


def test_update_resolves_capability_references_again(repo, tmp_path, capsys):
    p = project(tmp_path, repo,
                config_caps={"notes": {"source": repo.url, "ref": "v1", "path": "servers", "type": "mcp"}},
                preset_caps={"review": {"source": repo.url, "ref": "main", "path": "skills/review", "type": "skill"}})
    build(p, tmp_path / "out", capsys)
    locked = (p / LOCK_FILE).read_bytes()
    head = repo.commit({"skills/review/SKILL.md": SKILL.format("three times")})
    # --dry-run shows the commits that would change and writes nothing.
    assert main(["update", "--dir", str(p), "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert f"~ capability review (preset ./presets/team): {repo.v2[:12]} -> {head[:12]}" in err
    assert "notes" not in err
    assert (p / LOCK_FILE).read_bytes() == locked
    # A name the lock does not hold is AR207; nothing changes.
    assert main(["update", "capability:nosuch", "--dir", str(p)]) == 1
    assert "error[AR207]" in capsys.readouterr().err
    assert (p / LOCK_FILE).read_bytes() == locked
    # Updating it moves the lock's record to the branch's new commit; the next build reads it.
    assert main(["update", "review", "--dir", str(p), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(c["name"], c["old"]["commit"], c["new"]["commit"]) for c in out["capabilities"]] == [
        ("review", repo.v2, head)]
    records = {c["name"]: c for c in json.loads((p / LOCK_FILE).read_text())["capabilities"]}
    assert records["review"]["commit"] == head and records["notes"]["commit"] == repo.v1
    build(p, tmp_path / "out2", capsys)
    assert "three times" in (tmp_path / "out2/.claude/skills/review/SKILL.md").read_text()
    assert main(["update", "--dir", str(p)]) == 0
    assert "every source is at the commit its ref names" in capsys.readouterr().err
