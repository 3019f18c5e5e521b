"""Front doors that read the disk: command-line paths in, `SourceTree`s out.

`tree` reads registry directories and files (bounded, no symlink followed out of a
root), `config` finds canonical projects and reads their layers, `read` joins both into
what the pipeline takes. The only place, beside `agentrc.output` and `agentrc.memo`,
where the core touches the file system.
"""
