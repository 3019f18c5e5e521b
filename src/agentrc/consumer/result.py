"""What a consumer command gives back (`consumer.consume`), in a module of its own: the
no-change answer (`consumer.unchanged`) and the CLI's printing build and read one without
importing the workflow (the pipeline, the adapters: a fifth of a second of start-up)."""

from __future__ import annotations

from agentrc.classcode import dataclass

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Optional, Tuple

if TYPE_CHECKING:  # annotations only: the no-change answer imports none of them
    from agentrc.consumer import consumeplan
    from agentrc.diagnostics import Diagnostic
    from agentrc.output import writer
    from agentrc.sources import lock as lockfile
    from agentrc.sources import surface
    from agentrc.sources.lock import Entry, Lock


@dataclass(frozen=True)
class Result:
    """What a consumer command (add, install, update, remove) leaves for the shell to print."""
    diagnostics: Tuple[Diagnostic, ...]
    lock: Optional[Lock] = None  # the lock written (or, for a check, the one read)
    changes: Optional[writer.Changes] = None
    entries: Tuple[Entry, ...] = ()  # what the command added or removed
    git_runs: int = 0
    updates: Tuple[Tuple[str, Optional[Entry], Optional[Entry]], ...] = ()  # update: (id, old, new)
    # update: ((layer, name), old, new) of the canonical project's capability references
    capability_updates: Tuple[Tuple[Tuple[str, str], Optional[lockfile.CapabilityRecord],
                                    Optional[lockfile.CapabilityRecord]], ...] = ()
    consent: Tuple[surface.Exposure, ...] = ()  # what needs the consumer's consent (AR229)
    planned: Optional[consumeplan.Planned] = None  # --dry-run: MCP servers, plugins, hooks

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)
