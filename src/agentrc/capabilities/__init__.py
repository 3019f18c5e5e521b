"""Capability packages (spec 003): the model of `oas.json`, `oas-package.json` and
`oas-lock.json`, their validation with coded diagnostics, package sources, and the tree
hash of `integrity` values, all interoperable with the OAS kernel.

Enters: bytes of the three files, and file listings walked by `agentrc.inputs.captree`.
Leaves: frozen `model` values and diagnostics. Pure: reading trees, fetching git and
installing live in `agentrc.inputs.captree` and `agentrc.capops.install`.
"""
