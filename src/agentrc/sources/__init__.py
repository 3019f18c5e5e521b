"""Sources and the lockfile (spec 001 §3.7): where a consumer project's items come from.

Pure: no disk, no network, no process. `dsl` parses a source locator (`owner/repo@ref`,
a git URL with `@ref`, a local path, each with an optional `#subpath`) into a frozen
`Source`; `lock` is the model of `agentrc.lock.json` and its deterministic bytes;
`closure` turns a selection of bundles and items from a loaded source into the entries
the lock records, each with its `required_by`. Fetching (git, the cache) lives in
`agentrc.inputs.fetch`; the add/install/remove transactions in `agentrc.consumer.consume`.
"""
