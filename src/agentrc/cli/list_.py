"""`agentrc list`: the bundles and items agentrc.lock.json installed, and from where."""

from __future__ import annotations

import json
import sys

from agentrc.cli import consumer
from agentrc.cli.common import print_diags, say
from agentrc.consumer import consume


def run(args) -> int:
    project = consumer.project(args)
    lock, diags = consume.read_lock(project, args.user)
    if any(d.is_error for d in diags):
        print_diags(diags, consumer.fmt(args))
        return 1
    if consumer.fmt(args) == "json":
        doc = consumer.lock_json(lock) if lock is not None else {"clients": [], "bundles": [], "items": [], "files": 0,
                                                                 "mcps": [], "mcps_removed": []}
        print(json.dumps(doc, indent=2, sort_keys=True))
        return 0
    if lock is None or not lock.entries:
        say(f"{project}: nothing installed (no agentrc.lock.json entries)")
        return 0
    for line in consumer.entry_lines(lock.entries):
        say(line, sys.stdout)
    servers: dict = {}
    for m in lock.mcps:
        rec = dict(m)
        servers.setdefault((rec["name"], rec["bundle"]), set()).add(rec["client"])
    for (name, bundle), clients in sorted(servers.items()):
        say(f"mcp {name} from bundle {bundle} for {', '.join(sorted(clients))}", sys.stdout)
    say(f"{len(lock.bundles)} bundle(s), {len(lock.items)} item(s) for {', '.join(lock.clients)}; "
        f"{len(lock.files)} file(s)")
    return 0
