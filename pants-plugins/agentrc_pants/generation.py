"""Running the core's generation, in the daemon or as a cached Process.

Both paths call `agentrc.pipeline.generate` on the same SourceTree; the Process path exists
so results land in Pants' local and remote caches (plain rule results live only in pantsd's
memory). Either way the output is a Digest of the client tree plus `.agentrc/report.json`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Optional, Tuple

from pants.engine.fs import CreateDigest, Digest, FileContent
from pants.engine.rules import Get, collect_rules, rule

from agentrc import pipeline
from agentrc.build import summary
from agentrc.diagnostics import Diagnostic, count_summary
from agentrc.model import SourceTree

REPORT = ".agentrc/report.json"


@dataclass(frozen=True)
class GenerationRequest:
    digest: Digest
    tree: SourceTree
    clients: Tuple[str, ...]
    bundles: Tuple[str, ...] = ()
    entrypoints: Optional[Tuple[str, ...]] = None
    strict: bool = False
    explicit: Tuple[str, ...] = ()


@dataclass(frozen=True)
class GenerationResult:
    digest: Digest
    diagnostics: Tuple[Diagnostic, ...]
    files: int
    totals: str  # JSON of the per-client summary (hashable)

    def raise_on_error(self, where: str) -> None:
        errors = [d for d in self.diagnostics if d.is_error]
        if errors:
            raise AgentrcBuildError(where, self.diagnostics)

    def summary_line(self, prefix: str) -> str:
        return f"Wrote {self.files} file(s) to {prefix} ({count_summary(self.diagnostics)})"


class AgentrcBuildError(Exception):
    def __init__(self, where: str, diagnostics: Tuple[Diagnostic, ...]):
        text = "\n".join(d.format() for d in diagnostics)
        super().__init__(f"agentrc found problems building {where}:\n{text}")


def render(request: GenerationRequest):
    """The pure part: the plan's files and the report, as (path, bytes, executable) tuples."""
    plan = pipeline.generate(request.tree, request.clients, list(request.bundles) or None, request.strict,
                             request.explicit, None, request.entrypoints)
    if not plan.ok:
        return plan, ()
    report = {"version": 1, "clients": list(request.clients), "summary": summary(plan.reports),
              "items": [r.to_json() for r in plan.reports]}
    files = [(f.path, f.content, f.executable) for f in plan.files]
    files.append((REPORT, (json.dumps(report, indent=2) + "\n").encode(), False))
    return plan, tuple(files)


@rule
async def generate_in_process(request: GenerationRequest) -> GenerationResult:
    plan, files = render(request)
    digest = await Get(Digest, CreateDigest(FileContent(p, c, is_executable=x) for p, c, x in files))
    return GenerationResult(digest, plan.diagnostics, len(plan.files), json.dumps(summary(plan.reports)))


def rules():
    return collect_rules()
