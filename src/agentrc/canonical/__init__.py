"""The canonical document (spec 000): `ai.config.*`, presets and `.ai/` layers in, the
model out.

Enters: the layers' files as `SourceTree`s (read by `agentrc.inputs.config`). Leaves:
the merged, validated, normalized document (`document`), the items and servers it
defines, and a provenance view of it (`show`, behind `agentrc inspect`). Pure.
"""
