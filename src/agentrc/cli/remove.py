"""`agentrc remove NAME... [--dry-run]`: uninstall directly installed bundles or items and
what only they required."""

from __future__ import annotations

from agentrc.cli import clientset, consumer, projectsources
from agentrc.consumer import consume


def run(args) -> int:
    project = consumer.project(args)
    result = consume.remove(project, args.names, force=args.force, user=args.user,
                            allow_local=tuple(args.allow_local), dry_run=args.dry_run,
                            clients=clientset.declared(args, project))
    projectsources.sync(args, project, result)
    return consumer.report(result, args, "removed", "remove")
