"""The `agentrc` program's entry point: the console script's and `python -m agentrc`'s.

The command line imports about 150 modules before its command does anything (190 for an
edit), and every object they make lives as long as the process: the cyclic garbage
collector's passes over them while they are imported (two dozen, 3 ms of a build with
nothing to do at 1,000 items) free nothing. So the collector is off from here until the
command's module is imported; then what exists is frozen (`gc.freeze`: left out of every
later collection, as it would survive them all) and the collector turned on again for the
command itself (a build pauses it again while it runs, agentrc.pipeline.nogc). `main`
called any other way (tests, a program importing agentrc.cli.main) is not affected.
"""

from __future__ import annotations

import gc

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Optional, Sequence


def main(argv: Optional[Sequence[str]] = None) -> int:
    if not gc.isenabled():  # turned off by whoever runs us: left as it is
        from agentrc.cli.main import main as run
        return run(argv)
    gc.disable()
    try:
        from agentrc.cli import main as cli

        cli.on_imported = _resume
        try:
            return cli.main(argv)
        finally:
            cli.on_imported = None  # a later call of `cli.main` (a test's) is not this run's
    finally:
        gc.enable()


def _resume() -> None:
    """The command's module imported: what the imports made frozen, the collector on."""
    gc.freeze()
    gc.enable()
