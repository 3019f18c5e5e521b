"""One sandboxed, cached Process running the agentrc CLI on a target's files: the shape
`agentrc_config` (`agentrc build`) and `agentrc_oas_package` (`agentrc cap pack`) share.

The target's files and the agentrc core go in, `python -S -E -c <main> ARGS...` runs with
`--out __out__` among its arguments, and that directory comes out (its prefix removed).
Being a Process, a successful result is cached locally and remotely; a failed one is not
cached and its stderr is returned for the caller's message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

from pants.engine.fs import Digest, MergeDigests, RemovePrefix
from pants.engine.process import FallibleProcessResult, Process
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.util.frozendict import FrozenDict
from pants.util.logging import LogLevel

from agentrc_pants.generation import CODE_DIR, AgentrcCode, AgentrcPython

OUT = "__out__"
CLI = f"import sys; sys.path.insert(0, {CODE_DIR!r}); from agentrc.cli.entry import main; sys.exit(main(sys.argv[1:]))"


@dataclass(frozen=True)
class AgentrcCliRequest:
    args: Tuple[str, ...]  # the CLI's arguments; OUT is the output directory
    sources: Digest  # the target's files, at their paths from the build root
    description: str
    env: FrozenDict[str, str] = FrozenDict()  # added to AGENTRC_PYTHON (the interpreter's fingerprint)


@dataclass(frozen=True)
class AgentrcCliResult:
    exit_code: int
    tree: Digest  # OUT's contents, at their paths below OUT
    stderr: str


@rule(desc="Run the agentrc CLI in a sandbox", level=LogLevel.DEBUG)
async def run_agentrc_cli(request: AgentrcCliRequest) -> AgentrcCliResult:
    code, python = await MultiGet(Get(AgentrcCode), Get(AgentrcPython))
    inputs = await Get(Digest, MergeDigests([request.sources, code.digest]))
    result = await Get(FallibleProcessResult, Process(
        argv=(python.path.path, "-S", "-E", "-c", CLI, *request.args),
        input_digest=inputs,
        output_directories=(OUT,),
        env={"AGENTRC_PYTHON": python.path.fingerprint, **request.env},
        description=request.description,
        level=LogLevel.DEBUG,
    ))
    tree = await Get(Digest, RemovePrefix(result.output_digest, OUT)) if result.exit_code == 0 else result.output_digest
    return AgentrcCliResult(result.exit_code, tree, result.stderr.decode("utf-8", "replace"))


def rules():
    return collect_rules()
