"""`agentrc doctor`: the project's installed files, MCP servers, plugins and capability references
checked against its lock."""

from __future__ import annotations

import json

from agentrc.cli import consumer
from agentrc.cli.common import print_diags, say
from agentrc.consumer import doctor


def run(args) -> int:
    project = consumer.project(args)
    checks, diags = doctor.doctor(project, args.user)
    failing = [c for c in checks if c.failing]
    if consumer.fmt(args) == "json":
        print(json.dumps({"diagnostics": [d.to_json() for d in diags], "checks": [c.to_json() for c in checks],
                          "summary": doctor.summary(checks), "clean": not failing and not diags},
                         indent=2, sort_keys=True))
        return 1 if failing or any(d.is_error for d in diags) else 0
    print_diags(diags, "text")
    if any(d.is_error for d in diags):
        return 1
    for c in checks:
        if c.status in (doctor.OK, doctor.REGISTERED):
            continue
        who = f"{c.kind} {c.name}" + (f" ({c.client}, {c.target})" if c.kind == "mcp" else "")
        mark = "error" if c.failing else "note"
        say(f"{mark}: {who}: {c.status}" + (f": {c.detail}" if c.detail else ""))
    counts = ", ".join(f"{n} {s}" for s, n in doctor.summary(checks).items()) or "nothing installed"
    say(f"{args.dir}: {counts}; {'not clean' if failing else 'clean'}")
    return 1 if failing else 0
