"""`agentrc update [NAME...] [--ref REF] [--dry-run]`: resolve the installed sources' refs
again (or re-pin one source to REF) and install what they give now, showing the commits and
files that change."""

from __future__ import annotations

from agentrc.cli import clientset, consumer, projectsources
from agentrc.cli.common import UsageError, print_diags, say


def run(args) -> int:
    if args.ref is not None and not args.names:
        raise UsageError("--ref: name the installed bundles or items whose source moves to it (update NAME --ref REF)")
    project = consumer.project(args)
    result = _updated(args, project)
    projectsources.sync(args, project, result)
    if consumer.fmt(args) == "json":
        extra = {"updates": [{"id": i, "old": consumer.entry_json(o) if o else None,
                              "new": consumer.entry_json(n) if n else None} for i, o, n in result.updates],
                 "capabilities": [{"layer": layer, "name": name, "old": o.to_json() if o else None,
                                   "new": n.to_json() if n else None}
                                  for (layer, name), o, n in result.capability_updates],
                 "dry_run": args.dry_run}
        if result.changes is not None:
            extra["changes"] = consumer.changes_json(result.changes)
        if args.dry_run:
            extra.update(consumer.plan_json(result))
        print_diags(result.diagnostics, "json", extra)
        return 0 if result.ok else 1
    consumer.diagnostics(result.diagnostics, args)
    if not result.ok:
        say("update failed: nothing written")
        return 1
    for line in _update_lines(result):
        say(line)
    for (layer, name), old_cap, new_cap in result.capability_updates:
        was = (old_cap.commit or old_cap.sha256)[:12] if old_cap else "nothing"
        now = (new_cap.commit or new_cap.sha256)[:12] if new_cap else "nothing"
        say(f"~ capability {name} ({layer}): {was} -> {now}" + ("" if args.dry_run else
            "; 'agentrc build' writes what it gives now"))
    if not result.updates and not result.capability_updates:
        say("every source is at the commit its ref names")
    for line in consumer.plan_lines(result, args.dry_run, args.dir):
        say(line)
    return 0


def _updated(args, project: str):
    """The update's result: the last command's when there is nothing new, else the command's."""
    clients = clientset.declared(args, project)
    result = _unchanged(args, project, clients)
    if result is not None:
        return result
    from agentrc.consumer import consume  # past the no-change check: the workflow, the pipeline, the adapters

    return consumer.with_consent(args, lambda trust: consume.update(
        project, args.names, dry_run=args.dry_run, force=args.force, user=args.user,
        allow_local=tuple(args.allow_local), trust=trust, ref=args.ref, clients=clients))


def _unchanged(args, project: str, clients):
    """The last command's result, when an update of every source finds nothing new: the
    project as it left it and each locked ref still at its commit (`consumer.unchanged`)."""
    if args.names or args.ref is not None or args.dry_run or args.user:
        return None
    from agentrc.consumer import unchanged
    from agentrc.inputs.fetch import Fetcher

    stamp = unchanged.installed(project, clients)
    if stamp is None or not _in_step(args, project, unchanged.direct(stamp)) or not unchanged.up_to_date(stamp,
                                                                                                  Fetcher(project)):
        return None
    return unchanged.answer(stamp, consumer.lock_as_read(project) if consumer.fmt(args) == "json" else None,
                            update=True)


def _in_step(args, project: str, direct) -> bool:
    """Whether the project file's sources (if it has a file) are the lock's direct entries'
    already, so the update would not rewrite them (`projectsources.sync`)."""
    path = projectsources._path(args, project)
    if path is None:
        return True
    from agentrc.inputs import projectfile
    from agentrc.project.sources import declared_from

    loaded, _ = projectfile.load(path)
    if loaded is None:  # the full command says what is wrong with it
        return False
    wanted = loaded.sources

    def shape(declared):
        return {(d.source, d.ref, frozenset(d.bundles), frozenset(d.items)) for d in declared}

    return len(wanted) == len(set(wanted)) and shape(wanted) == shape(declared_from(direct))


def _update_lines(result):
    for ident, old, new in result.updates:
        from agentrc.sources.closure import locator

        kind, name = ident.split(":", 1)
        if old is None and new is not None:
            yield f"+ {kind} {name} from {locator(new)}{_short(new.commit)}"
        elif new is None and old is not None:
            yield f"- {kind} {name} from {locator(old)}{_short(old.commit)}"
        elif old is not None and new is not None:
            was = old.commit[:12] if old.commit else old.sha256[:12]
            now = new.commit[:12] if new.commit else new.sha256[:12]
            moved = f" (was @{old.ref})" if old.ref != new.ref else ""
            yield f"~ {kind} {name} from {locator(new)}{moved}: {was} -> {now}"


def _short(commit) -> str:
    return f" ({commit[:12]})" if commit else ""
