"""The consumer's workflow (spec 001 §3.7): `agentrc add`, `install`, `update`, `remove`,
`remove-mcp`, `outdated` and `doctor` on a project that takes other people's content.

What enters: a project's directory (its `agentrc.yaml`, `agentrc.lock.json` and installed
files) and a command's ask (a source locator, names, flags). What leaves: the project as the
command leaves it, the lock that records it, and what the command reports. Fetched sources
are read through `inputs` (`fetch`, `lockread`), built by `pipeline` (`stages`, `published`
for published layouts) and written by `output.writer`. Modules: `consume` (the transactions
and the closure across sources), `reading` (a source fetched and read as a registry, judged
for the selected closure only), `records` (MCP servers registered through the clients' CLIs,
a global installation's files, `install --check`'s comparison), `consumeplan` (drift and
dry-run plans), `consent` (the
executable surface a source brings, and the consent gate), `outdated`, `doctor` (the project
against its lock), `plugins` and `mcpcli` (bundle plugins and MCP servers through the
clients' own CLIs), `userscope` (the user's global locations).
"""
