"""The portable format (spec 001): source files in, a `Registry` out.

Enters: a `SourceTree` (paths and bytes, read by `agentrc.inputs`). Leaves: the frozen
model of `agentrc.model` (items, bundles, MCP servers) and `Diagnostic`s. `load` is the
entry point that wires the parse: `discovery` finds item directories and sorts their files,
`checks` validates text, frontmatter fields and bodies, `items` builds `Item`s, `bundles`
parses bundle files; `body` and `directives` check and process bodies, `resolve` selects
bundle closures and checks references, `peek` finds names without a full parse, `fmt`
rewrites sources in canonical form (§3.8). Pure: no disk, no network.
"""
