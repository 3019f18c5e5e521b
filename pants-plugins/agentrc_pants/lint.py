"""`pants lint`: agentrc's validation (spec rules, references, body and markdown rules).

References cross targets, so a batch is validated together with its transitive
dependencies; only diagnostics about the batch's own files are reported.
"""

from __future__ import annotations

from pants.core.goals.lint import LintResult, LintTargetsRequest
from pants.core.util_rules.partitions import PartitionerType
from pants.engine.rules import Get, collect_rules, rule
from pants.util.logging import LogLevel

from agentrc.diagnostics import count_summary
from agentrc.pipeline import stages as pipeline
from agentrc_pants.sources import AgentrcSources, AgentrcSourcesRequest
from agentrc_pants.subsystem import AgentrcSubsystem
from agentrc_pants.target_types import (
    AgentrcFieldSet,
)


class AgentrcLintRequest(LintTargetsRequest):
    field_set_type = AgentrcFieldSet
    # Pants' SkippableSubsystem protocol types `skip` as SkipOption, while the option descriptor
    # gives a bool: every Pants backend's `tool_subsystem = X` fails this check the same way.
    tool_subsystem = AgentrcSubsystem  # type: ignore[assignment]
    partitioner_type = PartitionerType.DEFAULT_SINGLE_PARTITION


@rule(desc="Lint with agentrc", level=LogLevel.DEBUG)
async def agentrc_lint(request: AgentrcLintRequest.Batch) -> LintResult:
    addresses = tuple(fs.address for fs in request.elements)
    mine = await Get(AgentrcSources, AgentrcSourcesRequest(addresses, transitive=False))
    closure = await Get(AgentrcSources, AgentrcSourcesRequest(addresses, transitive=True))
    _, diags = pipeline.lint(closure.tree)
    own = {f.path for f in mine.tree.files}
    shown = [d for d in diags if d.path in own or d.path.startswith("<")]
    errors = any(d.is_error for d in shown)
    text = "".join(d.format() + "\n" for d in shown)
    text += f"{count_summary(shown)} in {len(own)} file(s)\n"
    return LintResult(1 if errors else 0, text, "", request.tool_name, request.partition_metadata.description)


def rules():
    return [*collect_rules(), *AgentrcLintRequest.rules()]
