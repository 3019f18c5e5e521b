"""`agentrc install [--frozen | --check]`: make the project hold exactly what agentrc.lock.json
records. `--frozen` installs it only if the lock would not change (npm ci, uv sync --frozen);
`--check` writes nothing and lists every drift (the CI check)."""

from __future__ import annotations

from agentrc.cli import consumer
from agentrc.cli.common import UsageError, say
from agentrc.pipeline import consume


def run(args) -> int:
    if args.frozen and args.check:
        raise UsageError("--frozen and --check: choose one (--frozen installs, --check writes nothing)")
    project = consumer.project(args)
    result = consumer.with_consent(args, lambda trust: consume.install(
        project, frozen=args.frozen, force=args.force, user=args.user, allow_local=tuple(args.allow_local),
        trust=trust, check=args.check))
    code = consumer.report(result, args, "installed", "install")
    if args.check and result.ok and consumer.fmt(args) == "text":
        say(f"{args.dir}: matches agentrc.lock.json")
    return code
