"""`pants fmt` / `pants fmt --check` and `pants lint`: agentrc's canonical formatter (spec 001 §3.8).

The same `agentrc.portable.fmt.format_source` as `agentrc fmt`: entrypoints, override files and
bundle manifests; any other supporting file passes through untouched.
"""

from __future__ import annotations


from pants.core.goals.fmt import FmtResult, FmtTargetsRequest
from pants.core.util_rules.partitions import PartitionerType, Partitions
from pants.engine.fs import CreateDigest, Digest, DigestContents, FileContent, Snapshot
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.engine.target import SourcesPaths, SourcesPathsRequest, WrappedTarget, WrappedTargetRequest
from pants.util.logging import LogLevel

from agentrc.portable.fmt import format_source, formattable

from agentrc_pants.subsystem import AgentrcFmt
from agentrc_pants.target_types import (
    AgentrcFieldSet,
    AgentrcBundleSourceField,
    AgentrcEntrypointField,
    AgentrcSupportingFilesField,
)


class AgentrcFmtRequest(FmtTargetsRequest):
    field_set_type = AgentrcFieldSet
    tool_subsystem = AgentrcFmt
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
    changed = []
    out = []
    problems = []
    for fc in contents:
        try:
            text = fc.content.decode("utf-8")
        except UnicodeDecodeError:
            out.append(fc)
            continue
        result = format_source(fc.path, text)
        if result.error:
            problems.append(f"{fc.path}:{result.error_line}:1: error[{result.error_code}] {result.error}")
        if result.changed and not result.error:
            changed.append(fc.path)
            out.append(FileContent(fc.path, result.text.encode("utf-8"), fc.is_executable))
        else:
            out.append(fc)
    output = await Get(Snapshot, CreateDigest(out))
    stdout = "".join(f"reformatted {p}\n" for p in changed)
    return FmtResult(request.snapshot, output, stdout, "\n".join(problems), request.tool_name)


def rules():
    return [*collect_rules(), *AgentrcFmtRequest.rules()]
