"""`agentrc init`'s content: a project file and one sample of each kind of item.

Every sample lints clean and builds for every client (tests/test_init.py builds them for
all of them), so the first `agentrc build` after `agentrc init` succeeds with no warning,
and each file shows the fields of its kind with a comment-free, minimal frontmatter that
`agentrc fmt` leaves as it is. The hook is the one sample that runs code: it is written,
not installed anywhere until a build, and its script only prints.
"""

from __future__ import annotations

import os

from agentrc.output import atomic
from agentrc.project import FILE_NAME

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, List, Sequence, Tuple

REGISTRY = "ai"
SCHEMA_HINT = "# yaml-language-server: $schema=https://agentrc.dev/schemas/project.schema.json\n"

SAMPLES: Dict[str, Tuple[str, bool]] = {
    "context/project/CONTEXT.md": ("---\nschema: 1\ndescription: What this repository is and how to work in it\n"
                                   "---\n\n## About this repository\n\nDescribe the project in a few lines: what it "
                                   "does, how to build it, how to test it.\n", False),
    "rules/style/RULE.md": ("---\nschema: 1\nname: style\ndescription: How code is written in this repository\n"
                            "---\n\n## Style\n\nPrefer small functions with names that say what they do.\n", False),
    "skills/summarize-changes/SKILL.md": (
        "---\nschema: 1\nname: summarize-changes\ndescription: Use when asked to summarize the changes of a branch "
        "or a pull request\n---\n\n## Steps\n\n1. List the commits since the base branch.\n2. Group the changes "
        "by what they do for users.\n3. Write one line per group, most important first.\n", False),
    "agents/reviewer/AGENT.md": ("---\nschema: 1\nname: reviewer\ndescription: Use when a change needs a careful "
                                 "review before it is merged\ntools:\n  - read\n  - grep\n  - glob\n---\n\n"
                                 "## Reviewer\n\nRead the change and its tests. Report what is wrong, what is "
                                 "missing and what is unclear, most important first.\n", False),
    "commands/release-notes/COMMAND.md": ("---\nschema: 1\ndescription: Draft release notes from the changes "
                                          "since the last tag\n---\n\nDraft release notes for the changes since "
                                          "the last tag, grouped by what they do for users.\n", False),
    "hooks/announce/HOOK.md": ("---\nschema: 1\ndescription: Say when a session starts\nevent: SessionStart\n"
                               "script: ./announce.sh\ntimeout: 10\n---\n\nPrints a line when a session starts; "
                               "replace it with a check of your own.\n", False),
    "hooks/announce/announce.sh": ("#!/bin/sh\necho \"agentrc sample hook: session started\"\n", True),
}


def project_file(clients: Sequence[str], paths: Sequence[str] = (REGISTRY,)) -> str:
    """The text of a new project file."""
    lines = [SCHEMA_HINT, "schema: 1\n", f"clients: [{', '.join(clients)}]\n", "build:\n",
             f"  paths: [{', '.join(paths)}]\n"]
    return "".join(lines)


def plan(root: str, clients: Sequence[str], samples: bool = True) -> List[Tuple[str, bytes, bool]]:
    """(path, bytes, executable) of what `init` writes into `root`."""
    out = [(os.path.join(root, FILE_NAME), project_file(clients).encode(), False)]
    if samples:
        out += [(os.path.join(root, REGISTRY, *rel.split("/")), text.encode(), x) for rel, (text, x) in SAMPLES.items()]
    return out


def existing(files: Sequence[Tuple[str, bytes, bool]]) -> List[str]:
    """The planned paths that are already there (init never overwrites a file)."""
    return [p for p, _, _ in files if os.path.lexists(p)]


def write(root: str, files: Sequence[Tuple[str, bytes, bool]]) -> None:
    """Write the planned files under `root` (through no link: the safe writer)."""
    for path, data, executable in files:
        atomic.write_atomic(path, data, root, 0o755 if executable else 0o644)
