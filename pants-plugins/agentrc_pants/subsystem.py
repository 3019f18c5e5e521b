"""The `[agentrc]` options: default clients, and how generation runs."""

from __future__ import annotations

from enum import Enum

from pants.option.option_types import BoolOption, EnumOption, SkipOption, StrListOption
from pants.option.subsystem import Subsystem

from agentrc.clients.registry import CLIENTS, DEFAULT_CLIENTS


class Execution(Enum):
    in_process = "in-process"
    process = "process"


class AgentrcSubsystem(Subsystem):
    options_scope = "agentrc"
    name = "agentrc"
    help = "Compile portable AI-assistant content (rules, skills, agents, bundles) for each client."

    clients = StrListOption(
        default=list(DEFAULT_CLIENTS),
        help=f"Clients to generate for when a target sets no `clients=` and no agentrc.yaml above it names "
             f"`clients` ({', '.join(CLIENTS)}).",
    )
    execution = EnumOption(
        default=Execution.in_process,
        help=(
            "`in-process` runs the agentrc core inside the Pants daemon (fastest; cached in "
            "pantsd's memory). `process` runs it as a sandboxed Process, whose results Pants stores "
            "in its local and remote caches."
        ),
    )
    process_python_search_path = StrListOption(
        default=["/usr/bin", "/usr/local/bin", "/bin"],
        help=(
            "Where `execution = \"process\"` looks for a python3 (>= 3.9). A system path keeps the "
            "interpreter, and so the cache key, the same in every clone and on every machine of a kind."
        ),
    )
    skip = SkipOption("fmt", "lint")
    tailor = BoolOption(default=True, help="If true, `tailor` adds agentrc targets for item directories and bundles.")
    release_memory = BoolOption(
        default=True,
        help=(
            "If true, a thread in pantsd gives memory its threads freed back to the system (glibc's "
            "`malloc_trim`) each time its RSS grew by 256 MiB. Without it, glibc keeps that memory, "
            "and on large registries pantsd crosses `[GLOBAL].pantsd_max_memory_usage` and restarts "
            "cold (docs/benchmarks.md)."
        ),
    )
    strict = BoolOption(default=False, help="Fail `package` when any field is dropped for a client (build --strict).")


class AgentrcFmt(Subsystem):
    """A scope of its own so `pants fmt`/`lint` name the formatter apart from the validator."""

    options_scope = "agentrc-fmt"
    name = "agentrc-fmt"
    help = "agentrc's canonical formatter for entrypoints, override files and bundle manifests (spec 001 §3.8)."

    skip = SkipOption("fmt", "lint")
