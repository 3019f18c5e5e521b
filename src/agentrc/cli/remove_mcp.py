"""`agentrc remove-mcp NAME...`: unregister MCP servers from every target the lock configured."""

from __future__ import annotations

import sys

from agentrc.cli import consumer
from agentrc.pipeline import consume


def run(args) -> int:
    project = consumer.project(args)
    result = consume.remove_mcp(project, args.names, force=args.force, user=args.user)
    code = consumer.report(result, args, "removed", "remove-mcp")
    if result.ok and consumer.fmt(args) == "text":
        for name in args.names:
            print(f"removed MCP server {name}", file=sys.stderr)
    return code
