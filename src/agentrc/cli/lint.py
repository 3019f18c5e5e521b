"""`agentrc lint PATH...`: validate items, bundles and canonical projects; report every problem.

A PATH with no item nor bundle is an error (AR017: the path is wrong, or its files are
misnamed), and a file named almost like an entrypoint (`skill.md`, `PROMPT.md`) where no
item is gets the entrypoint it was probably meant to be. `--watch` lints again on every
change (agentrc.cli.watch)."""

from __future__ import annotations

from agentrc.cli import projectargs
from agentrc.cli.common import print_diags, summarize
from agentrc.codes import CODES
from agentrc.diagnostics import Diagnostic, count_summary
from agentrc.inputs import config as configload
from agentrc.inputs.read import read_inputs
from agentrc.model import Kind
from agentrc.pipeline import stages

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Collection, List, Tuple


def run(args) -> int:
    if getattr(args, "watch", False):
        from agentrc.cli import watch

        return watch.loop(args.paths, lambda: (_once(args), ()))
    return _once(args)


def _once(args) -> int:
    inputs = read_inputs(args.paths)
    registry, diags = stages.lint(inputs.tree, inputs.explicit, inputs.canonical)
    misnamed = _misnamed(inputs.tree.files)
    if not registry.items and not registry.bundles and not any(d.is_error for d in diags):
        diags = diags + tuple(
            Diagnostic(p, 0, 0, "error", "AR017", "no items or bundles here" + "".join(
                f"; {path}: did you mean {meant}?" for path, meant in misnamed), CODES["AR017"].hint)
            for p in args.paths if not configload.is_project(p))
    elif misnamed:
        diags = diags + tuple(Diagnostic(path, 0, 0, "warning", "AR017", f"{path.rpartition('/')[2]} is not an "
                                         f"entrypoint (their names are exact, in capitals); did you mean {meant}?",
                                         CODES["AR017"].hint) for path, meant in misnamed)
    diags = projectargs.leveled(args, tuple(sorted(diags)))
    errors = sum(1 for d in diags if d.is_error)
    counts = {kind.plural: 0 for kind in Kind}
    for item in registry.items:
        counts[item.kind.plural] += 1
    print_diags(diags, args.format, {"items": counts, "bundles": [b.name for b in registry.bundles]})
    if args.format == "text":
        shown = [f"{n} {plural}" for plural, n in counts.items()
                 if n or plural in ("rules", "skills", "agents")]
        summarize(f"{', '.join(shown)}, {len(registry.bundles)} bundles: {count_summary(diags)}", errors,
                  len(diags) - errors)
    return 1 if errors else 0


def _misnamed(files: Collection) -> List[Tuple[str, str]]:
    """(path, entrypoint) for files discovery did not take that look like a misnamed one."""
    from agentrc.portable.checks import misnamed_entrypoints

    return misnamed_entrypoints([f.path for f in files])
