"""`agentrc remove NAME...`: uninstall directly installed bundles or items and what only
they required."""

from __future__ import annotations

from agentrc.cli import consumer
from agentrc.pipeline import consume


def run(args) -> int:
    project = consumer.project(args)
    result = consume.remove(project, args.names, force=args.force, user=args.user,
                            allow_local=tuple(args.allow_local))
    return consumer.report(result, args, "removed", "remove")
