"""opencode (the real CLI, offline) discovers and parses what agentrc generates for it.

opencode skips broken skills and broken agent frontmatter silently (see /tmp/probe/REPORT.md
of the tool probe), so these tests compare the exact sets of names and the parsed fields
with the build output instead of relying on exit codes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Set, Tuple

from .conformance_helpers import Opencode, opencode_agent_files, read_frontmatter, skill_dirs, skill_names, split_frontmatter

# Only project skills under .opencode/ (drops the .claude/skills and .agents/skills roots,
# which opencode also reads): used to check where each skill is loaded from.
ONLY_OPENCODE_SKILLS = {"OPENCODE_DISABLE_EXTERNAL_SKILLS": "1"}


def _project_skills(opencode: Opencode, project: Path, empty: Path, extra_env=None) -> List[dict]:
    """`opencode debug skill` entries for `project`, minus opencode's built-ins (the entries
    it also reports for an empty project)."""
    builtins: Set[Tuple[str, str]] = {
        (s["name"], s.get("location")) for s in opencode.json(empty, "debug", "skill", extra_env=extra_env)
    }
    found = opencode.json(project, "debug", "skill", extra_env=extra_env)
    assert isinstance(found, list), found
    return sorted(
        (s for s in found if (s["name"], s.get("location")) not in builtins),
        key=lambda s: (s["name"], s.get("location") or ""),
    )


def test_opencode_discovers_every_generated_skill(opencode: Opencode, oc_project: Path, oc_empty_project: Path, build: Path):
    dirs = skill_dirs(build, "opencode")
    assert dirs, "the build generated no skills under .opencode/skills"
    expected = {}
    for d in dirs:
        name = read_frontmatter(d / "SKILL.md").get("name")
        assert name, f"{d.name}/SKILL.md has no name in its frontmatter (opencode silently skips such skills)"
        expected[str(name)] = d

    found = _project_skills(opencode, oc_project, oc_empty_project, extra_env=ONLY_OPENCODE_SKILLS)

    assert sorted(s["name"] for s in found) == sorted(expected), "skills opencode discovered != generated .opencode/skills"
    for s in found:
        d = expected[s["name"]]
        location = Path(s["location"]).resolve().relative_to(oc_project.resolve()).as_posix()
        assert location == f".opencode/skills/{d.name}/SKILL.md", s
        assert s.get("description") == read_frontmatter(d / "SKILL.md").get("description"), s["name"]


def test_opencode_sees_all_generated_skill_roots_in_a_multi_client_checkout(
    opencode: Opencode, oc_project: Path, oc_empty_project: Path, build: Path
):
    """With its defaults opencode also loads .claude/skills and .agents/skills, so in a
    checkout holding every client's output it sees the union of those skill names."""
    expected: Set[str] = set(skill_names(skill_dirs(build, "opencode")))
    expected |= set(skill_names(skill_dirs(build, "claude")))
    expected |= set(skill_names(sorted(p.parent for p in (build / ".agents" / "skills").glob("*/SKILL.md"))))

    found = _project_skills(opencode, oc_project, oc_empty_project)

    assert sorted({s["name"] for s in found}) == sorted(expected)


def test_opencode_agent_list_has_every_generated_agent_with_its_mode(
    opencode: Opencode, oc_project: Path, oc_empty_project: Path, build: Path
):
    files = opencode_agent_files(build)
    assert files, "the build generated no agents under .opencode/agents"
    generated: Dict[str, str] = {f.stem: str(read_frontmatter(f).get("mode", "all")) for f in files}

    expected = dict(opencode.agent_modes(oc_empty_project))  # opencode's built-in agents
    expected.update(generated)

    assert opencode.agent_modes(oc_project) == expected


def test_opencode_config_parses_every_generated_agent_field(opencode: Opencode, oc_project: Path, build: Path):
    files = opencode_agent_files(build)
    assert files, "the build generated no agents under .opencode/agents"
    config = opencode.json(oc_project, "debug", "config")
    agents = config.get("agent") or {}

    assert sorted(agents) == sorted(f.stem for f in files)
    for f in files:
        frontmatter, body = split_frontmatter(f.read_text(encoding="utf-8"))
        # Without parseable frontmatter opencode silently uses mode `all` and no description.
        assert frontmatter.get("description"), f"{f.name}: generated agent has no description"
        parsed = agents[f.stem]
        assert parsed.get("name") == f.stem
        for key, value in frontmatter.items():
            assert parsed.get(key) == value, f"{f.name}: opencode parsed {key}={parsed.get(key)!r}, generated {value!r}"
        assert (parsed.get("prompt") or "").strip() == body.strip(), f"{f.name}: prompt != generated body"


def test_opencode_config_has_the_generated_instructions(opencode: Opencode, oc_project: Path, build: Path):
    generated = json.loads((build / "opencode.json").read_text(encoding="utf-8"))
    instructions = generated.get("instructions")
    assert instructions, "opencode.json has no instructions"
    for entry in instructions:
        assert (build / entry).is_file(), f"opencode.json instruction {entry!r} names no generated file"

    config = opencode.json(oc_project, "debug", "config")

    assert config.get("instructions") == instructions
