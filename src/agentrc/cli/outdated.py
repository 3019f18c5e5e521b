"""`agentrc outdated`: the installed sources with newer commits on their ref, or newer tags
(agentrc.consumer.outdated). Writes nothing; exit 1 only when a remote cannot be listed."""

from __future__ import annotations

import sys

from agentrc.cli import consumer
from agentrc.cli.common import print_diags, say
from agentrc.consumer import consume
from agentrc.consumer import outdated as checker


def run(args) -> int:
    project = consumer.project(args)
    lock, diags = consume.need_lock(project, args.user)
    if lock is None:
        print_diags(diags, consumer.fmt(args))
        return 1
    fetcher = consume.ProjectFetcher(project)
    results, problems = checker.check(lock, fetcher)
    ok = not any(d.is_error for d in problems)
    if consumer.fmt(args) == "json":
        print_diags(problems, "json", {"sources": [r.to_json() for r in results],
                                       "outdated": sum(1 for r in results if r.outdated)})
        return 0 if ok else 1
    print_diags(problems, "text")
    lines = checker.listing(results)
    for line in lines:
        say(line, sys.stdout)
    if ok and not lines:
        say("every source is at the newest commit of its ref" + (", and no newer tag" if any(
            r.kind == "tag" for r in results) else ""))
    return 0 if ok else 1
