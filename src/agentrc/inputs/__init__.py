"""Front doors that read the disk: command-line paths in, `SourceTree`s out.

`tree` reads registry directories and files (bounded, no symlink followed out of a
root), `config` finds canonical projects and reads their layers (running Node for an
`ai.config.js`), `read` joins both into what the pipeline takes. Sources are read here
and nowhere else; outputs are written by `agentrc.output.writer`, the memo by
`agentrc.memo`.
"""
