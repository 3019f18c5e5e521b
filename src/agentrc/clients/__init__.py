"""Client adapters: the one model in, each client's native files out.

Enters: one `Item` (or `McpServer`, or `tools.<client>` settings) and a `RenderContext`.
Leaves: `OutputFile`s, `Fragment`s of shared files, and an `ItemReport` accounting for
every field (emitted, mapped, degraded, dropped, omitted). `base` holds the rendering
frame and the helpers adapters share; one module per client; `registry` lists them, and
everything that depends on the set of clients is derived from it. Pure.
"""
