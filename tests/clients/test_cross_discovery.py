"""Cross-discovery (issue 10 point 16): a client that also loads other clients' directories
(opencode and Copilot read .claude/skills and .agents/skills) gets its own switch written where
it has one that works from a project file (opencode: `permission.skill.<name>: deny` in
opencode.json), and otherwise the fidelity report of the item names who else loads it and from
where, in the same words as AR095. tests/conformance/test_cross_discovery.py checks the same
trees with the real clients."""

from __future__ import annotations

import json
import re
from typing import Dict, List, Sequence

from agentrc.cli.main import main
from agentrc.clients import registry
from agentrc.model import Kind
from agentrc.output.plan import FOREIGN, SECOND, cross_discovery
from agentrc.pipeline import stages as pipeline

from . import harness
from .harness import item

# An item only Claude Code should see, one everyone gets, a path-scoped rule (Codex, Gemini
# CLI, OpenClaw and Hermes get it as a skill in .agents/skills) and a command (a skill there).
TREE: Dict[str, str] = {
    **item("skill", "deep", "description: Use when thinking hard\naudience:\n  - claude\n", "Think hard.\n"),
    **item("skill", "plain", "description: Use when planning\n", "Plan the work.\n"),
    **item("rule", "style", "description: House style for Python files\nscope:\n  paths:\n    - \"src/**/*.py\"\n",
           "Use four spaces.\n"),
    **item("command", "ship", "description: Ship it\n", "Ship the change.\n"),
}
ALL = ("claude", "copilot", "opencode", "codex", "gemini")


def _build(files: Dict[str, str], clients: Sequence[str]):
    return harness.build(files, clients)


def _ar095(plan) -> List[str]:
    return [d.message for d in plan.diagnostics if d.code == "AR095"]


def _loaded_by(plan, client: str, kind: str, name: str):
    report = next(r for r in plan.reports if (r.client, r.kind, r.name) == (client, kind, name))
    return {(c, p): d for c, p, d in report.also_loaded_by}


def test_opencode_gets_a_deny_for_each_foreign_skill_it_has_no_skill_of_its_own_by():
    plan, out = _build(TREE, ALL)
    config = json.loads(out["opencode.json"])
    # deep: audience claude; style and ship: opencode has them as an instruction and a command.
    assert config["permission"] == {"skill": {"deep": "deny", "ship": "deny", "style": "deny"}}
    assert ".agents/rules/style/RULE.md" in config["instructions"]
    assert ".opencode/commands/ship.md" in out
    # plain is opencode's own skill too (identical copies): never denied.
    assert "plain" not in config["permission"]["skill"]
    assert not [m for m in _ar095(plan) if m.startswith("opencode ")], _ar095(plan)


def test_the_report_names_every_reader_and_path_and_agrees_with_ar095():
    plan, _ = _build(TREE, ALL)
    deep = _loaded_by(plan, "claude", "skill", "deep")
    assert deep[("opencode", ".claude/skills/deep/SKILL.md")] == (
        "hidden from opencode by permission.skill.deep: deny in opencode.json")
    assert deep[("copilot", ".claude/skills/deep/SKILL.md")] == (
        "copilot loads it although its audience (claude) excludes copilot")
    style = _loaded_by(plan, "codex", "rule", "style")
    assert style == _loaded_by(plan, "gemini", "rule", "style")  # one shared file, both writers' reports
    assert style[("copilot", ".agents/skills/style/SKILL.md")].startswith(
        "copilot loads it a second time, beside its own copy .github/instructions/style.instructions.md")
    assert _loaded_by(plan, "claude", "rule", "style")[("copilot", ".claude/rules/style.md")].startswith(
        "copilot loads it a second time")
    # Every copy still loaded is in exactly one AR095, by reader, count and name; hidden ones in none.
    warnings = _ar095(plan)
    for s in cross_discovery(registry.get(ALL), _items(), _entries(plan)):
        if s.why == "shared" or (s.name == "plain" and s.skill):
            continue  # one file several clients write, or one shared copy for every reader: loaded once
        matching = [w for w in warnings if w.startswith(f"{s.reader} also loads ") and f"({s.name})" in w
                    and f"from {s.path.rsplit('/', 2 if s.skill else 1)[0]}" in w]
        assert len(matching) == (0 if s.hidden else 1), (s, warnings)
    # one line per (reader, directory), each part with its count, kind, writer and reason
    assert any(w.startswith("copilot also loads ") and "from .claude/skills" in w
               and "1 skill written for claude, outside its audience (deep)" in w for w in warnings), warnings


def _items(files: Dict[str, str] = TREE):
    return pipeline.load(harness.tree(files)).registry.items


def _entries(plan):
    """(client, kind, name) -> entrypoint OutputFile, as plan() keeps them."""
    by_path = {f.path: f for f in plan.files}
    out = {}
    for r in plan.reports:
        if r.generated and r.outputs and r.kind not in ("mcp", "tools") and r.outputs[0] in by_path:
            out[(r.client, Kind(r.kind), r.name)] = by_path[r.outputs[0]]
    return out


def test_a_skill_opencode_has_itself_is_never_denied_and_a_differing_copy_is_reported():
    files = dict(TREE)
    files.update(item("skill", "plain", "description: Use when planning\n",
                      "Plan the work.\n\n<!-- @client:claude -->\nUse plan mode.\n<!-- @endclient -->\n"))
    plan, out = _build(files, ("claude", "opencode"))
    assert "plain" not in json.loads(out["opencode.json"])["permission"]["skill"]
    assert _loaded_by(plan, "claude", "skill", "plain") == {
        ("opencode", ".claude/skills/plain/SKILL.md"):
            "opencode has its own copy .opencode/skills/plain/SKILL.md, which differs; "
            "which of the two it loads is not defined"}
    assert ("opencode also loads 1 skill written for claude from .claude/skills, different from its own copy "
            "(plain); which of the two it loads is not defined") in _ar095(plan)


def test_copilot_own_skill_wins_and_it_gets_no_switch():
    files = dict(TREE)
    files.update(item("skill", "plain", "description: Use when planning\n",
                      "Plan.\n\n<!-- @client:claude -->\nUse plan mode.\n<!-- @endclient -->\n"))
    plan, out = _build(files, ("claude", "copilot"))
    assert not any(p.startswith(".github/copilot/") for p in out)
    plain = _loaded_by(plan, "claude", "skill", "plain")
    assert "its own copy wins" in plain[("copilot", ".claude/skills/plain/SKILL.md")]


def test_a_skill_name_opencode_uses_for_its_own_skill_is_not_denied_for_another_item():
    # A rule and a skill named alike: the rule's .agents/skills copy may not be hidden by name,
    # because the deny would hide opencode's own skill too.
    files = dict(TREE)
    files.update(item("skill", "style", "description: Style skill\n", "Skill text.\n"))
    plan = harness.plan(files, ("opencode", "codex"))
    names = {s.skill for s in cross_discovery(registry.get(("opencode", "codex")),
                                               _items(files), _entries(plan)) if s.hidden}
    assert "style" not in names


def test_no_switch_without_a_foreign_writer():
    _, alone = _build(TREE, ("opencode",))
    assert "permission" not in json.loads(alone["opencode.json"])
    _, with_gemini = _build(TREE, ("opencode", "gemini"))
    # Gemini CLI writes the rule (and deep is not built for it): only style is foreign to opencode.
    assert json.loads(with_gemini["opencode.json"])["permission"] == {"skill": {"style": "deny"}}


def test_sighting_reasons():
    plan, _ = _build(TREE, ALL)
    found = {(s.reader, s.name, s.path): s for s in cross_discovery(registry.get(ALL), _items(), _entries(plan))}
    assert found[("opencode", "deep", ".claude/skills/deep/SKILL.md")].why == FOREIGN
    assert found[("opencode", "style", ".agents/skills/style/SKILL.md")].why == SECOND
    assert found[("opencode", "ship", ".agents/skills/ship/SKILL.md")].writers == ("codex",)  # Gemini: TOML
    # Gemini CLI loads Codex's command as a skill from .agents/skills (its own is TOML).
    ship = found[("gemini", "ship", ".agents/skills/ship/SKILL.md")]
    assert (ship.why, ship.hidden) == (SECOND, "skills.disabled: [ship] in .gemini/settings.json")
    # Claude Code and Codex read no other client's directory here.
    assert {r for r, _, _ in found} == {"opencode", "copilot", "gemini"}


def test_gemini_and_codex_share_agents_skills_and_gemini_hides_what_is_not_for_it():
    files = dict(TREE)
    files.update(item("skill", "cdx", "description: Codex only\naudience:\n  - codex\n"))
    files.update(item("skill", "gem", "description: Gemini only\naudience:\n  - gemini\n"))
    plan, out = _build(files, ("codex", "gemini"))
    settings = json.loads(out[".gemini/settings.json"])
    assert sorted(settings["skills"]["disabled"]) == ["cdx", "ship"]
    # Codex has no switch: the report of Gemini CLI's copy says Codex loads it anyway.
    gem = _loaded_by(plan, "gemini", "skill", "gem")
    assert gem == {("codex", ".agents/skills/gem/SKILL.md"):
                   "codex loads it although its audience (gemini) excludes codex"}
    assert "codex also loads 1 skill written for gemini from .agents/skills, outside its audience (gem)" in _ar095(plan)
    hidden = "hidden from gemini by skills.disabled: [cdx] in .gemini/settings.json"
    assert _loaded_by(plan, "codex", "skill", "cdx") == {("gemini", ".agents/skills/cdx/SKILL.md"): hidden}
    # An item both build is one file: nobody "also" loads it.
    assert _loaded_by(plan, "codex", "skill", "plain") == {}


def test_build_report_file_and_merge_into_a_users_opencode_json(tmp_path, capsys):
    src = tmp_path / "src"
    for rel, text in TREE.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    out = tmp_path / "out"
    out.mkdir()
    (out / "opencode.json").write_text('{\n  // mine\n  "permission": {"bash": "ask", "skill": {"mine": "deny"}}\n}\n')
    report = tmp_path / "report.json"
    code = main(["build", str(src), "--out", str(out), "--client", "claude,opencode,codex", "--report", str(report)])
    err = capsys.readouterr().err
    assert code == 0, err
    text = (out / "opencode.json").read_text()
    assert "// mine" in text and '"bash": "ask"' in text
    assert '"mine": "deny"' in text and '"deep": "deny"' in text and '"ship": "deny"' in text, text
    items = json.loads(report.read_text())["items"]
    deep = next(i for i in items if (i["client"], i["name"]) == ("claude", "deep"))
    hidden = "hidden from opencode by permission.skill.deep: deny in opencode.json"
    assert deep["also_loaded_by"] == [{"client": "opencode", "path": ".claude/skills/deep/SKILL.md", "detail": hidden}]
    # Single-client items keep the report's shape.
    assert "also_loaded_by" not in next(i for i in items if (i["client"], i["name"]) == ("opencode", "plain"))
    # Without codex, style's .agents/skills copy is gone and its deny with it; deep, and ship,
    # which Claude Code gets as a skill in .claude/skills, stay hidden.
    code = main(["build", str(src), "--out", str(out), "--client", "claude,opencode"])
    assert code == 0, capsys.readouterr().err
    config = json.loads(re.sub(r"//.*", "", (out / "opencode.json").read_text()))
    assert config["permission"]["skill"] == {"mine": "deny", "deep": "deny", "ship": "deny"}
    assert config["permission"]["bash"] == "ask"


def test_each_clients_skill_names_are_gathered_once_and_only_when_a_copy_could_be_hidden(monkeypatch):
    """Whether the reader has a skill of the copy's name is asked only of a skill copy its
    switch could hide, and every client's skill names are gathered then, in one pass over
    the renderings (at 10,000 items, a pass over 30,000 of them for builds that hide
    nothing: Copilot's second copies of .claude/rules are no skills)."""
    from agentrc.output import discovery

    passes: List[int] = []
    real = discovery._skills_of
    monkeypatch.setattr(discovery, "_skills_of", lambda entries: passes.append(len(entries)) or real(entries))
    rules = {k: v for k, v in TREE.items() if "/rules/" in k}
    plan = harness.plan(rules, ("claude", "copilot"))
    assert _loaded_by(plan, "claude", "rule", "style")  # Copilot loads Claude Code's copy: a sighting
    assert passes == []
    plan = harness.plan(TREE, ("claude", "opencode", "codex"))
    assert passes == [len(_entries(plan))]
    assert json.loads(dict((f.path, f.content) for f in plan.files)["opencode.json"])["permission"] == {
        "skill": {"deep": "deny", "ship": "deny", "style": "deny"}}
