"""`agentrc remove-mcp NAME...`: unregister MCP servers from every target the lock configured."""

from __future__ import annotations

from agentrc.cli import consumer
from agentrc.cli.common import say
from agentrc.consumer import consume


def run(args) -> int:
    project = consumer.project(args)
    result = consume.remove_mcp(project, args.names, force=args.force, user=args.user,
                                allow_local=tuple(args.allow_local))
    code = consumer.report(result, args, "removed", "remove-mcp")
    if result.ok and consumer.fmt(args) == "text":
        for name in args.names:
            say(f"removed MCP server {name}")
    return code
