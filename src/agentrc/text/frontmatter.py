"""Splitting an entrypoint into its YAML frontmatter and its markdown body."""

from __future__ import annotations

from agentrc.classcode import dataclass

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Optional


@dataclass(frozen=True)
class Split:
    """A file's frontmatter and body, apart, with the line each starts on."""
    yaml_text: Optional[str]  # None when the file has no frontmatter block
    yaml_line: int  # 1-based line of the first YAML line
    body: str
    body_line: int  # 1-based line of the first body line
    closed: bool = True  # False when '---' opened but never closed


def split(text: str) -> Split:
    """Split `---\\n<yaml>\\n---\\n<body>`; the blank lines of the seam are not body."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return Split(None, 0, text, 1)
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            yaml_text = "\n".join(lines[1:i]) + "\n"
            body_start = i + 1
            while body_start < len(lines) and not lines[body_start].strip():
                body_start += 1
            body = "\n".join(lines[body_start:])
            return Split(yaml_text, 2, body, body_start + 1)
    return Split("\n".join(lines[1:]), 2, "", len(lines) + 1, closed=False)
