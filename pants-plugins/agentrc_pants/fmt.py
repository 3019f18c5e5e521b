"""`pants fmt` / `pants fmt --check` and `pants lint`: agentrc's canonical formatter (spec 001 §3.8).

The same formatting run as `agentrc fmt` (`agentrc.pipeline.fmt.format_files`): entrypoints,
override files and bundle manifests; any other supporting file passes through untouched, and
problems are reported as the CLI reports them.
"""

from __future__ import annotations

from pants.core.goals.fmt import FmtResult, FmtTargetsRequest
from pants.core.util_rules.partitions import PartitionerType, Partitions
from pants.engine.fs import CreateDigest, Digest, DigestContents, FileContent, Snapshot
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.engine.target import SourcesPaths, SourcesPathsRequest, WrappedTarget, WrappedTargetRequest
from pants.util.logging import LogLevel

from agentrc.pipeline.fmt import format_files
from agentrc.portable.fmt import formattable
from agentrc_pants.subsystem import AgentrcFmt
from agentrc_pants.target_types import (
    AgentrcBundleSourceField,
    AgentrcEntrypointField,
    AgentrcFieldSet,
    AgentrcSupportingFilesField,
)


class AgentrcFmtRequest(FmtTargetsRequest):
    field_set_type = AgentrcFieldSet
    # Pants' SkippableSubsystem protocol types `skip` as SkipOption, while the option descriptor
    # gives a bool: every Pants backend's `tool_subsystem = X` fails this check the same way.
    tool_subsystem = AgentrcFmt  # type: ignore[assignment]
    partitioner_type = PartitionerType.CUSTOM


SOURCE_FIELDS = (AgentrcEntrypointField, AgentrcSupportingFilesField, AgentrcBundleSourceField)


@rule
async def partition_agentrc_fmt(request: AgentrcFmtRequest.PartitionRequest, subsystem: AgentrcFmt) -> Partitions:
    if subsystem.skip:
        return Partitions()
    wrapped = await MultiGet(Get(WrappedTarget, WrappedTargetRequest(fs.address, description_of_origin="fmt"))
                             for fs in request.field_sets)
    fields = [w.target[f] for w in wrapped for f in SOURCE_FIELDS if w.target.has_field(f)]
    paths = await MultiGet(Get(SourcesPaths, SourcesPathsRequest(f)) for f in fields)
    files = sorted({p for sp in paths for p in sp.files if formattable(p)})
    return Partitions.single_partition(files) if files else Partitions()


@rule(desc="Format with agentrc", level=LogLevel.DEBUG)
async def agentrc_fmt(request: AgentrcFmtRequest.Batch) -> FmtResult:
    contents = await Get(DigestContents, Digest, request.snapshot.digest)
    result = format_files((fc.path, fc.content) for fc in contents)
    new = dict(result.outputs)
    out = [FileContent(fc.path, new[fc.path].encode("utf-8"), fc.is_executable) if fc.path in new else fc
           for fc in contents]
    output = await Get(Snapshot, CreateDigest(out))
    stdout = "".join(f"reformatted {p}\n" for p in result.changed)
    stderr = "\n".join(d.format() for d in result.diagnostics)
    return FmtResult(request.snapshot, output, stdout, stderr, request.tool_name)


def rules():
    return [*collect_rules(), *AgentrcFmtRequest.rules()]
