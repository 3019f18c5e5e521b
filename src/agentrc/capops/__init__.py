"""The capability packages' workflow (spec 003): `agentrc cap` install, use, trust, doctor,
spawn, retire and migrate, one module per job, over the pure model of `agentrc.capabilities`.

What enters: a scope's directory (its `oas.json`, `oas-config.yaml`, `oas-lock.json` and
installed packages) and what a verb asks for. What leaves: the scope as the verb leaves it,
written through one transaction (`txn`, a plan run by `output/steps`) by the
scope's safe writer (`safe`), or as a plan of steps run by `output/steps` (`plan`: spawn
and retire; `migrating`: migrate), and the reports the CLI prints. Modules: `install` (the
facade of `acquire`, `restore`, `trust`, `listing`, `package`, `scope`, `failure`),
`closure` (a package's requirement closure), `reqs` (host requirements: the install gate,
spawn's runtime-package check), `use` (activation), `doctor` with `health` and `legacy`,
`migrate`, `spawn` and `retire` (over `home`, `hooks`, `souls`, `launch`), `instances` (a
soul's instances, their lineage), `run`, `status`, `scope_init`, `safe` and `txn`. They
import the stages before them (`capabilities`, `inputs`, `output`) and each other, never
`pipeline` or the CLI.
"""
