"""`agentrc install [--frozen]`: make the project hold exactly what agentrc.lock.json records."""

from __future__ import annotations

from agentrc.cli import consumer
from agentrc.cli.common import say
from agentrc.pipeline import consume


def run(args) -> int:
    project = consumer.project(args)
    result = consumer.with_consent(args, lambda trust: consume.install(
        project, frozen=args.frozen, force=args.force, user=args.user, allow_local=tuple(args.allow_local),
        trust=trust))
    code = consumer.report(result, args, "installed", "install")
    if args.frozen and result.ok and consumer.fmt(args) == "text":
        say(f"{args.dir}: matches agentrc.lock.json")
    return code
