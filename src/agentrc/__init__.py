"""agentrc: compile portable AI-assistant content into every client's native files.

The flow, one sub-package per stage (docs/architecture.md has the picture):

    inputs/ (reads the disk) -> portable/ | canonical/ (pure: bytes -> model)
    -> clients/ (pure: model -> files, fragments, fidelity) -> output/ (plan is pure;
    writer writes) ; memo/ caches parsing and rendering on disk ; pipeline/ orchestrates ;
    cli/ and the Pants plugin only parse flags, call the pipeline and print.

Shared types sit at the top: `model` (the one frozen model), `files` (what adapters
produce), `diagnostics` and `codes`, `fidelity`, `frozen`, `vocabulary`, `families`.
"""

__version__ = "0.1.0"

# The highest `schema:` version of the portable format (spec 001 §8) this release reads.
SUPPORTED_SCHEMA = 1

# Before any module of the package imports `dataclasses`: without `inspect` (agentrc.deferred).
from agentrc import deferred as _deferred  # noqa: E402

_deferred.import_dataclasses()
