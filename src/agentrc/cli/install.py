"""`agentrc install [--frozen | --check]`: make the project hold exactly what agentrc.lock.json
records. `--frozen` installs it only if the lock would not change (npm ci, uv sync --frozen);
`--check` writes nothing and lists every drift (the CI check)."""

from __future__ import annotations

from agentrc.cli import clientset, consumer, projectsources
from agentrc.cli.common import UsageError, say


def run(args) -> int:
    if args.frozen and args.check:
        raise UsageError("--frozen and --check: choose one (--frozen installs, --check writes nothing)")
    project = consumer.project(args)
    wanted = projectsources.declared(args, project)
    clients = clientset.declared(args, project)
    done = None if args.frozen or args.check or args.user else _unchanged(args, project, wanted, clients)
    if done is not None:
        return consumer.report(done, args, "installed", "install")
    from agentrc.consumer import consume  # past the no-change check: the workflow, the pipeline, the adapters

    check = None
    if (wanted is not None or clients) and (args.frozen or args.check):
        check = _mismatch(wanted, clients)
    elif wanted is not None and not _added(args, project, wanted):
        return 1
    result = consumer.with_consent(args, lambda trust: consume.install(
        project, frozen=args.frozen, force=args.force, user=args.user, allow_local=tuple(args.allow_local),
        trust=trust, check=args.check, declared=check, clients=clients))
    code = consumer.report(result, args, "installed", "install")
    if args.check and result.ok and consumer.fmt(args) == "text":
        say(f"{args.dir}: matches agentrc.lock.json")
    return code


def _unchanged(args, project: str, wanted, clients):
    """The last command's result, when an install has nothing to do (`consumer.unchanged`):
    the project as it left it, and nothing the project file declares missing from the lock."""
    from agentrc.consumer import unchanged

    stamp = unchanged.installed(project, clients)
    if stamp is None:
        return None
    if wanted is not None:
        from agentrc.project.sources import missing

        if missing(wanted, unchanged.direct(stamp)):
            return None
    return unchanged.answer(stamp, consumer.lock_as_read(project) if consumer.fmt(args) == "json" else None)


def _mismatch(wanted, clients):
    """What `install --frozen` and `--check` stop at: the lock against the project file (its
    sources, when it declares them, and its client set, when it declares one)."""
    from agentrc.project.sources import mismatch

    def problems(lock):
        found = mismatch(wanted, lock.entries) if wanted is not None else []
        if clients and set(clients) != set(lock.clients):
            found.append(f"clients: {', '.join(clients)} are declared but the lock was installed for "
                         f"{', '.join(lock.clients)}")
        return found

    return problems


def _added(args, project: str, wanted) -> bool:
    """What the project file declares and the lock lacks, added first (`agentrc add` of each),
    so a plain `install` installs what the project declares; False when an add failed."""
    from agentrc.consumer import consume
    from agentrc.project.sources import missing

    lock, _ = consume.read_lock(project)
    for d in missing(wanted, lock.entries if lock is not None else ()):
        items = tuple((kind, name) for kind, _, name in (i.partition(":") for i in d.items))
        locator = d.source if not d.ref else _with_ref(d.source, d.ref)
        result = consumer.with_consent(args, lambda trust: consume.add(
            project, locator, d.bundles, items, (), args.force, allow_local=tuple(args.allow_local), trust=trust,
            cwd=project))
        if not result.ok:
            consumer.report(result, args, "added", "install")
            return False
        say(f"added {locator}, which agentrc.yaml declares")
    return True


def _with_ref(name: str, ref: str) -> str:
    """`SOURCE#SUB` at `ref`: `SOURCE@REF#SUB`."""
    head, sep, sub = name.partition("#")
    return f"{head}@{ref}{sep}{sub}"
