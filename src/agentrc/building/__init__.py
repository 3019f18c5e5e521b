"""The build workflow (`agentrc build`): a project's sources in, a client tree written into
an output directory out.

`build` is the whole transaction (the no-change check against the last build's stamp, the
stages of `pipeline`, the output writer), `incremental` an edit of a few items' bodies
replayed onto the last build. What the build shares with the Pants backend and the other
workflows (the pure stages, the worker processes, the garbage collector's pause) stays in
`pipeline`."""
