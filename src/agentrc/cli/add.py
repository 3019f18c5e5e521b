"""`agentrc add SOURCE [--bundle NAME ...] [--item KIND:NAME ...] [--dry-run]`: install from a source
into the project and record it in agentrc.lock.json (agentrc.consumer.consume). `--client`
chooses the project's clients only while it has none (no project file's `clients:`, no lock);
after that, a different set is refused unless `--set-clients` says so (agentrc.cli.clientset)."""

from __future__ import annotations

from agentrc.cli import clientset, consumer, projectsources
from agentrc.cli.common import UsageError, say
from agentrc.consumer import consume


def run(args) -> int:
    project = consumer.project(args)
    items = []
    for text in args.item:
        kind, sep, name = text.partition(":")
        if not sep or not kind or not name:
            raise UsageError(f"--item {text!r}: write KIND:NAME, e.g. skill:pr-summary")
        items.append((kind, name))
    if getattr(args, "set_clients", False) and args.client is None:
        raise UsageError(f"{clientset.FLAG}: name the new set with --client LIST")
    requested = consumer.clients(args.client) if args.client is not None else ()
    filled = getattr(args, "project_file", None)
    if filled is not None and requested == tuple(filled.clients):
        requested = ()  # the project file's own set (projectargs filled it), not a flag
    lock, _ = consume.read_lock(project, args.user)
    clients, refused = clientset.choose(args, project, requested, lock.clients if lock is not None else None)
    if refused:
        return consumer.report(consume.Result(refused), args, "added", "add")
    result = consumer.with_consent(args, lambda trust: consume.add(
        project, args.source, tuple(args.bundle), tuple(items), clients, args.force, user=args.user,
        allow_local=tuple(args.allow_local), trust=trust, dry_run=args.dry_run))
    projectsources.sync(args, project, result)
    if result.ok and result.lock is not None and not args.dry_run:
        written = clientset.record(args, project, result.lock.clients)
        if written is not None:
            say(f"{written}: clients set to {', '.join(result.lock.clients)}")
    return consumer.report(result, args, "added", "add")
