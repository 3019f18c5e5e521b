"""`agentrc add SOURCE [--bundle NAME ...] [--item KIND:NAME ...] [--dry-run]`: install from a source
into the project and record it in agentrc.lock.json (agentrc.pipeline.consume)."""

from __future__ import annotations

from agentrc.cli import consumer, projectsources
from agentrc.cli.common import UsageError
from agentrc.pipeline import consume


def run(args) -> int:
    project = consumer.project(args)
    items = []
    for text in args.item:
        kind, sep, name = text.partition(":")
        if not sep or not kind or not name:
            raise UsageError(f"--item {text!r}: write KIND:NAME, e.g. skill:pr-summary")
        items.append((kind, name))
    clients = consumer.clients(args.client) if args.client is not None else ()
    result = consumer.with_consent(args, lambda trust: consume.add(
        project, args.source, tuple(args.bundle), tuple(items), clients, args.force, user=args.user,
        allow_local=tuple(args.allow_local), trust=trust, dry_run=args.dry_run))
    projectsources.sync(args, project, result)
    return consumer.report(result, args, "added", "add")
