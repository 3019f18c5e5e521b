"""What the Copilot adapter says Copilot also loads from other clients' files (AR095), as the
Copilot CLI 1.0.102 was seen to load it (tests/conformance/test_copilot_discovery.py)."""

from agentrc.pipeline import stages as pipeline

from .harness import item as _item, tree as _tree


def _warnings(files, clients):
    plan = pipeline.generate(_tree(files), list(clients))
    return [d.message for d in plan.diagnostics if d.code == "AR095" and d.message.startswith("copilot ")]


def test_copilot_warns_that_it_also_loads_the_commands_claude_gets_as_skills():
    """Claude Code receives a command as .claude/skills/<name>/SKILL.md, which the Copilot CLI
    loads as a skill (its own copy, a .github/prompts file, is VS Code's alone)."""
    files = _item("command", "fix-issue", "description: Fix an issue\n", "Fix issue $ARGUMENTS.\n")
    warnings = _warnings(files, ("claude", "copilot"))
    assert "copilot also loads 1 command written for claude from .claude/skills, as a second copy beside its own " \
        "(fix-issue)" in warnings, warnings
    assert not _warnings(files, ("copilot",))
