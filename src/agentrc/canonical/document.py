"""The canonical document (spec 000): layers -> merge -> validate -> normalize -> the model.

A project configured the spec-000 way has layers: presets (a nested chain, depth first),
the `.ai/` directory, the root AGENTS.md and `ai.config.*`. Each layer is a partial
canonical document; `merge()` deep-merges them (later layers win per key, §4.1), appends
`context.global` in §4.3 order and records, for every capability and every overridden key,
which layer and file it came from. `to_registry()` then maps the document onto the one
internal model (Items and McpServers), so the same client adapters render it.

Everything here is pure: the layers' files come in as SourceTrees (agentrc.inputs.config reads
them from disk and evaluates `ai.config.js` with Node).

`document` is the front door's one name for its callers: it reads a layer in
`canonical.layers`, merges and checks in `canonical.merging`, and converts in
`canonical.convert`, each a module of its own job.
"""

from __future__ import annotations

from agentrc.canonical.convert import (  # noqa: F401 - re-exported: the front door's callers read them here
    AGENT_TOOLS,
    FRONT_DOOR,
    HOOK_TOOLS,
    Conversion,
    _slug,
    convert,
    skill_fields,
    split_globs,
    to_registry,
)
from agentrc.canonical.layers import Layer, layer_from_tree, strip_managed_block  # noqa: F401
from agentrc.canonical.merging import (  # noqa: F401 - re-exported: the front door's callers read them here
    CAPABILITIES,
    CONFIG_KEYS,
    Document,
    Origin,
    build_document,
    merge,
    merge_with_spots,
    normalize,
    validate,
)
from agentrc.frozen import FrozenMap, freeze  # noqa: F401 - re-exported: callers build a layer with them

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    pass
