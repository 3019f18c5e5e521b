"""`agentrc outdated`: the installed sources with newer commits on their ref, or newer tags."""

from __future__ import annotations

from agentrc.cli.common import UsageError


def run(args) -> int:
    raise UsageError("outdated: not implemented yet")
