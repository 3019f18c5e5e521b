"""The capability packages' workflow (spec 003): `agentrc cap` install, use, trust, doctor,
spawn, retire and migrate, one module per job, over the pure model of `agentrc.capabilities`.

What enters: a scope's directory (its `oas.json`, `oas-config.yaml`, `oas-lock.json` and
installed packages) and what a verb asks for. What leaves: the scope as the verb leaves it,
written through one journaled transaction (`txn`, on the output writer's model) by the
scope's safe writer (`safe`), and the reports the CLI prints. Modules: `install` (acquire,
lock, restore, remove, update), `closure` (a package's requirement closure), `reqs` (host
requirements: the install gate, spawn's runtime-package check), `use` (activation),
`doctor`, `migrate`, `spawn` and `instances` (instances of a soul, their lineage and retire),
`safe` and `txn`. They import the stages before them (`capabilities`, `inputs`, `output`)
and each other, never `pipeline` or the CLI.
"""
