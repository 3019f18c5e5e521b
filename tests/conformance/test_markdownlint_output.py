"""markdownlint-cli2 finds no problems in the Markdown entrypoints agentrc generates.

Only entrypoints are linted (SKILL.md, agent files, rules, Copilot instructions, root
instruction files): their frontmatter and structure come from agentrc. Supporting resources
that are copied verbatim from the source item (a skill's references/, a rule's attached
files, .<client>/agentrc/...) are the author's Markdown and are not linted. The rules are in
tests/conformance/markdownlint.jsonc (all defaults except MD013, see the file).

Every generated .md must be classified as one or the other, so a new kind of output file
cannot slip past the linter unnoticed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List, Sequence

import pytest

from .conformance_helpers import CLIENTS, MARKDOWNLINT_CONFIG, describe, run

# Generated Markdown entrypoints, per client (`*` does not cross "/", `**` does).
ENTRYPOINTS: Dict[str, Sequence[str]] = {
    "claude": (
        "CLAUDE.md",
        ".claude/CLAUDE.md",
        ".claude/agents/*.md",
        ".claude/rules/**.md",
        ".claude/skills/*/SKILL.md",
        ".claude/commands/**.md",
    ),
    "copilot": (
        ".github/copilot-instructions.md",
        ".github/agents/*.agent.md",
        ".github/instructions/**.instructions.md",
        ".github/skills/*/SKILL.md",
        ".github/prompts/*.prompt.md",
    ),
    "opencode": (
        "AGENTS.md",
        ".opencode/agents/*.md",
        ".opencode/skills/*/SKILL.md",
        ".opencode/commands/*.md",
        ".agents/rules/*/RULE.md",
    ),
}

# Supporting resources copied from the source items (author-written; not linted).
SUPPORTING = (
    ".claude/skills/*/**",
    ".github/skills/*/**",
    ".opencode/skills/*/**",
    ".agents/skills/*/**",
    ".agents/rules/*/**",
    ".claude/agentrc/**",
    ".github/agentrc/**",
    ".opencode/agentrc/**",
)


def _glob_regex(pattern: str) -> "re.Pattern[str]":
    out = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        else:
            out += re.escape(pattern[i])
            i += 1
    return re.compile(out + r"\Z")


def _matches(path: str, patterns: Sequence[str]) -> bool:
    return any(_glob_regex(p).match(path) for p in patterns)


def _generated_markdown(build: Path) -> List[str]:
    return sorted(p.relative_to(build).as_posix() for p in build.rglob("*.md") if p.is_file())


def _entrypoints(build: Path, client: str) -> List[str]:
    return [p for p in _generated_markdown(build) if _matches(p, ENTRYPOINTS[client])]


# `file:line[:col] severity MDxxx/alias... description [details]` on stderr.
_ISSUE = re.compile(r"^(?P<file>\S.*?):(?P<line>\d+)(?::(?P<col>\d+))? (?:error|warning) (?P<rule>MD\d+)\S* (?P<msg>.*)$")


def test_every_generated_markdown_file_is_classified(build: Path):
    unknown = [
        p
        for p in _generated_markdown(build)
        if not any(_matches(p, ENTRYPOINTS[c]) for c in CLIENTS) and not _matches(p, SUPPORTING)
    ]
    assert not unknown, (
        "generated Markdown that is neither a known entrypoint nor a copied supporting resource; "
        f"add its pattern to ENTRYPOINTS or SUPPORTING in {Path(__file__).name}: {unknown}"
    )


@pytest.mark.parametrize("client", CLIENTS)
def test_markdownlint_generated_entrypoints(client: str, build: Path, markdownlint_bin: Path):
    files = _entrypoints(build, client)
    assert files, f"no generated {client} Markdown entrypoints found in the build"

    # cwd = the build dir (no markdownlint config there), so paths in the report are relative.
    proc = run([markdownlint_bin, "--config", MARKDOWNLINT_CONFIG, "--", *files], cwd=build)

    issues = [m.groupdict() for m in map(_ISSUE.match, proc.stderr.splitlines()) if m]
    report = "\n".join(f"  {i['file']}:{i['line']} {i['rule']} {i['msg']}" for i in issues)
    assert proc.returncode == 0 and not issues, f"markdownlint issues in generated {client} files:\n{report}\n\n{describe(proc)}"
    # A path that does not exist is silently "0 files" with exit 0: check all were linted.
    linted = re.search(r"^Linting: (\d+) file", proc.stdout, re.M)
    assert linted and int(linted.group(1)) == len(files), describe(proc)
