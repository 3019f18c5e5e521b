"""agentrc: compile portable AI-assistant content into every client's native files.

The package is a pure library: parsing, validation, resolution and rendering are functions
over bytes -> model -> files. The CLI (`agentrc.cli`) and the Pants plugin only read inputs,
call these functions and write outputs.
"""

__version__ = "0.1.0"

# The highest `schema:` version of the portable format (spec 001 §8) this release reads.
SUPPORTED_SCHEMA = 1
