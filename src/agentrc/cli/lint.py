"""`agentrc lint PATH...`: validate items, bundles and canonical projects; report every problem."""

from __future__ import annotations

from agentrc.cli import projectargs
from agentrc.cli.common import print_diags, say
from agentrc.codes import CODES
from agentrc.diagnostics import Diagnostic, count_summary
from agentrc.inputs import config as configload
from agentrc.inputs.read import read_inputs
from agentrc.model import Kind
from agentrc.pipeline import stages


def run(args) -> int:
    inputs = read_inputs(args.paths)
    registry, diags = stages.lint(inputs.tree, inputs.explicit, inputs.canonical)
    if not registry.items and not registry.bundles and not any(d.is_error for d in diags):
        diags = tuple(sorted(diags + tuple(Diagnostic(p, 0, 0, "warning", "AR017", "no items or bundles here",
                                                      CODES["AR017"].hint) for p in args.paths
                                           if not configload.is_project(p))))
    diags = projectargs.leveled(args, diags)
    errors = any(d.is_error for d in diags)
    counts = {kind.plural: 0 for kind in Kind}
    for item in registry.items:
        counts[item.kind.plural] += 1
    print_diags(diags, args.format, {"items": counts, "bundles": [b.name for b in registry.bundles]})
    if args.format == "text":
        shown = [f"{n} {plural}" for plural, n in counts.items()
                 if n or plural in ("rules", "skills", "agents")]
        say(f"{', '.join(shown)}, {len(registry.bundles)} bundles: {count_summary(diags)}")
    return 1 if errors else 0
