"""The `agentrc` command line: lint, fmt, build.

A thin shell: it reads paths into a SourceTree, calls the pure pipeline, prints
diagnostics and writes outputs. Exit codes: 0 ok, 1 content errors (or --check found
work to do), 2 usage errors.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import List, Optional, Sequence

from agentrc.model import Kind
from agentrc import __version__
from agentrc.memo import cache
from agentrc.pipeline import stages as pipeline
from agentrc.output import writer
from agentrc.output.plan import summary
from agentrc.clients import registry as client_registry
from agentrc.diagnostics import Diagnostic, count_summary
from agentrc.codes import CODES
from agentrc.portable.fmt import format_source, formattable
from agentrc.inputs import config as configload
from agentrc.inputs.read import read_inputs
from agentrc.inputs.tree import read_tree


class UsageError(Exception):
    pass


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        for p in getattr(args, "paths", []):
            if not os.path.exists(p):
                raise UsageError(f"no such file or directory: {p}")
        return args.run(args)
    except UsageError as exc:
        print(f"agentrc: error: {exc}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agentrc", description="Compile portable AI-assistant content for every client.")
    p.add_argument("--version", action="version", version=f"agentrc {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("paths", nargs="+", metavar="PATH", help="source registry directories or files")
        sp.add_argument("--format", choices=("text", "json"), default="text", help="output format")

    lint = sub.add_parser("lint", help="validate items and bundles; report every problem")
    common(lint)
    lint.set_defaults(run=cmd_lint)

    fmt = sub.add_parser("fmt", help="rewrite sources in canonical form (spec 001 §3.8)")
    common(fmt)
    fmt.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file would change")
    fmt.set_defaults(run=cmd_fmt)

    b = sub.add_parser("build", help="generate client files into an output directory")
    common(b)
    b.add_argument("--client", default=",".join(client_registry.DEFAULT_CLIENTS),
                   help=f"comma-separated clients (known: {', '.join(client_registry.CLIENTS)})")
    b.add_argument("--out", required=True, metavar="DIR", help="the project tree to write into")
    b.add_argument("--bundle", action="append", default=[], metavar="NAME",
                   help="build only this bundle's closure (repeatable)")
    b.add_argument("--layout", choices=("project", "plugin"), default="project",
                   help="project: the files a repository holds (default); plugin: the client's plugin package")
    b.add_argument("--plugin-name", default="", metavar="NAME",
                   help="the plugin's name with --layout plugin (default: the one --bundle built)")
    b.add_argument("--check", action="store_true", help="write nothing; exit 1 listing out-of-date files")
    b.add_argument("--report", metavar="FILE", help="write the fidelity report as JSON")
    b.add_argument("--strict", action="store_true", help="fail when any field is dropped for a client")
    b.add_argument("--jobs", type=int, default=0, metavar="N",
                   help="processes for a cold build of a large registry (default: one per CPU; 1 = none)")
    b.add_argument("--no-cache", action="store_true",
                   help="parse and render everything (the cache lives in $AGENTRC_CACHE_DIR or ~/.cache/agentrc)")
    b.set_defaults(run=cmd_build)

    i = sub.add_parser("inspect", help="print a project's canonical document with the provenance of every part")
    i.add_argument("paths", nargs="+", metavar="PATH", help="project directories (holding ai.config.* or .ai/)")
    i.add_argument("--json", action="store_true", help="print JSON")
    i.set_defaults(run=cmd_inspect)

    im = sub.add_parser("import", help="read a project's client files into portable items (and a canonical document)")
    im.add_argument("project", metavar="DIR", help="the project holding the client's files")
    im.add_argument("--from", dest="client", required=True, metavar="CLIENT",
                    help="the client whose files to read (claude, copilot, opencode, cursor or codex)")
    im.add_argument("--out", required=True, metavar="REGISTRY", help="the directory to write portable items into")
    im.add_argument("--canonical", metavar="FILE.json", help="also write the canonical document (an ai.config.json)")
    im.set_defaults(run=cmd_import)
    return p


def _print_diags(diags: Sequence[Diagnostic], fmt: str, extra: Optional[dict] = None) -> None:
    if fmt == "json":
        doc = {"diagnostics": [d.to_json() for d in diags]}
        doc.update(extra or {})
        print(json.dumps(doc, indent=2, sort_keys=True))
        return
    for d in diags:
        print(d.format(), file=sys.stderr)


def cmd_lint(args) -> int:
    inputs = read_inputs(args.paths)
    registry, diags = pipeline.lint(inputs.tree, inputs.explicit, inputs.canonical)
    if not registry.items and not registry.bundles and not any(d.is_error for d in diags):
        diags = tuple(sorted(diags + tuple(Diagnostic(p, 0, 0, "warning", "AR017", "no items or bundles here",
                                                      CODES["AR017"].hint) for p in args.paths
                                           if not configload.is_project(p))))
    errors = any(d.is_error for d in diags)
    counts = {kind.plural: 0 for kind in Kind}
    for item in registry.items:
        counts[item.kind.plural] += 1
    _print_diags(diags, args.format, {"items": counts, "bundles": [b.name for b in registry.bundles]})
    if args.format == "text":
        shown = [f"{n} {plural}" for plural, n in counts.items()
                 if n or plural in ("rules", "skills", "agents")]
        print(f"{', '.join(shown)}, {len(registry.bundles)} bundles: {count_summary(diags)}", file=sys.stderr)
    return 1 if errors else 0


def cmd_fmt(args) -> int:
    tree, _ = read_tree(args.paths)
    changed: List[str] = []
    diags: List[Diagnostic] = []
    outputs = {}
    sources = [f for f in tree.files if formattable(f.path)]
    for f in sources:
        try:
            text = f.content.decode("utf-8")
        except UnicodeDecodeError:
            diags.append(Diagnostic(f.path, 1, 1, "error", "AR008", "not UTF-8", CODES["AR008"].hint))
            continue
        result = format_source(f.path, text)
        if result.error:
            diags.append(Diagnostic(f.path, result.error_line, 1, "error", result.error_code, result.error,
                                    CODES[result.error_code].hint))
        elif result.changed:
            changed.append(f.path)
            outputs[f.path] = result.text
    if args.check:
        for path in changed:
            diags.append(Diagnostic(path, 1, 1, "error", "AR101", "not in canonical form",
                                    "Run 'agentrc fmt PATH' to rewrite it."))
    elif not any(d.is_error for d in diags):
        for path, text in outputs.items():
            _atomic_write(Path(path), text.encode("utf-8"))
    diags.sort()
    _print_diags(diags, args.format, {"changed": changed, "check": args.check})
    failed = any(d.is_error for d in diags)
    if args.format == "text":
        if failed and not args.check:
            print("fmt failed: nothing written", file=sys.stderr)
        else:
            verb = "would reformat" if args.check else "reformatted"
            refused = len({d.path for d in diags if d.code != "AR101"})
            canonical = len(sources) - len(changed) - refused
            tail = f", {refused} could not be formatted" if refused else ""
            print(f"{verb} {len(changed)} file(s), {canonical} already canonical{tail}", file=sys.stderr)
    return 1 if failed else 0


def cmd_build(args) -> int:
    clients = [c.strip() for c in args.client.split(",") if c.strip()]
    if args.layout == "plugin" and args.client == ",".join(client_registry.DEFAULT_CLIENTS):
        clients = ["claude"]  # one plugin per build; --client picks another client's layout
    if args.plugin_name and args.layout != "plugin":
        raise UsageError("--plugin-name needs --layout plugin")
    table = client_registry.PLUGIN_LAYOUTS if args.layout == "plugin" else client_registry.CLIENTS
    unknown = [c for c in clients if c not in table]
    if unknown or not clients:
        what = "client(s) with a plugin layout" if args.layout == "plugin" else "client(s)"
        raise UsageError(f"unknown {what}: {', '.join(unknown) or '(none)'} (known: {', '.join(table)})")
    if args.layout == "plugin" and len(clients) > 1:
        raise UsageError("--layout plugin builds one client's plugin at a time (one --client)")
    inputs = read_inputs(args.paths)
    tree, explicit = inputs.tree, inputs.explicit
    out = Path(args.out)
    memo_path = None if args.no_cache else cache.location(args.out, args.paths)
    key = cache.digest([inputs.digest.encode(), json.dumps([clients, args.bundle, args.strict, explicit, args.layout, args.plugin_name]).encode()])
    if memo_path and not args.report:
        stamp = cache.load_stamp(memo_path)
        if stamp and stamp.get("key") == key and writer.untouched(out, stamp.get("manifest", "")):
            # Same sources, same options, outputs as last written: the last result stands.
            diags = [Diagnostic(**d) for d in stamp["diagnostics"]]
            changes = writer.Changes((), (), (), stamp["files"])
            _finish_build(args, diags, stamp["summary"], changes, out)
            return 0
    memo = cache.load(memo_path) if memo_path else None
    if memo is not None and not memo.data and args.jobs != 1:
        from agentrc.memo import warm as parallel

        parallel.warm(tree, clients, memo, args.jobs or (os.cpu_count() or 1))
    plan = pipeline.generate(tree, clients, args.bundle, args.strict, explicit, memo, layout=args.layout,
                             plugin_name=args.plugin_name, canonical=inputs.canonical)
    if memo_path and plan.ok:
        cache.save(memo_path, memo)
    diags = list(plan.diagnostics)
    changes = None
    if plan.ok:
        changes, _, wdiags = writer.diff(out, plan.files)
        diags.extend(wdiags)
    ok = not any(d.is_error for d in diags)
    totals = summary(plan.reports)
    if ok and args.report:
        report = {"version": 1, "clients": clients, "summary": totals,
                  "items": [r.to_json() for r in plan.reports]}
        merged = pipeline.merged_keys(plan.files)
        if merged:  # what a workspace sync needs to merge rather than overwrite (as `pants package` writes)
            report["merged"] = merged
        if not args.check:
            _atomic_write(Path(args.report), (json.dumps(report, indent=2) + "\n").encode())
    if ok and not args.check and changes is not None:
        writer.apply(out, plan.files, changes)
        if memo_path:
            cache.save_stamp(memo_path, {"key": key, "manifest": writer.manifest_digest(out),
                                         "diagnostics": [d.to_json() for d in sorted(set(diags))],
                                         "summary": totals, "files": len(plan.files)})
    return _finish_build(args, sorted(set(diags)), totals if plan.ok else None, changes, out)


def cmd_inspect(args) -> int:
    from agentrc.canonical import show as inspect_doc

    inputs = read_inputs(args.paths)
    diags = inputs.canonical.diagnostics if inputs.canonical else ()
    missing = [p for p in args.paths if os.path.normpath(p).replace(os.sep, "/") not in {r for r, _ in inputs.documents}
               and not any(d.is_error for d in diags)]
    for p in missing:
        raise UsageError(f"{p}: not a project (no ai.config.* and no .ai/ directory)")
    _print_diags(diags, "text")
    if any(d.is_error for d in diags):
        return 1
    for root, document in inputs.documents:
        if args.json:
            print(json.dumps({"project": root, **document.to_json()}, indent=2, ensure_ascii=False))
        else:
            print(inspect_doc.render_text(root, document), end="")
    return 0


def cmd_import(args) -> int:
    """Client files -> canonical document -> portable items, written like build writes: all
    or nothing, never over a file the last import did not write (AR091)."""
    from agentrc.importers import document as importer
    from agentrc.files import OutputFile
    from agentrc.diagnostics import Diagnostics
    from agentrc.inputs.tree import read_project

    if args.client not in importer.IMPORTERS:
        raise UsageError(f"unknown client to import from: {args.client} (known: {', '.join(importer.IMPORTERS)})")
    if not os.path.isdir(args.project):
        raise UsageError(f"no such directory: {args.project}")
    if args.canonical and os.path.dirname(os.path.abspath(args.canonical)) == os.path.abspath(args.out) and \
            os.path.basename(args.canonical).startswith("ai.config."):
        raise UsageError("--canonical: an ai.config file at the top of --out would make the registry a canonical "
                         "project, whose portable items are then not read; name another file or directory")
    root = os.path.normpath(args.project)
    tree = read_project(root, lambda rel: importer.wants(args.client, rel))
    doc, found = importer.import_tree(args.client, tree, "" if root == "." else root.replace(os.sep, "/"))
    diags = Diagnostics(list(found))
    out = Path(args.out)
    portable = importer.portable_from_document(doc, diags, source=str(out / importer.BUNDLE))
    if doc.get("tools") and not args.canonical:
        diags.warning(str(out / importer.BUNDLE), (0, 0), "AR130",
                      f"settings of {', '.join(sorted(doc['tools']))} (tools.<client>) have no portable form; "
                      "write the canonical document with --canonical FILE.json to keep them")
    _, checked = pipeline.lint(importer.relative(portable, str(out).replace(os.sep, "/")))
    diags.extend(checked)
    files = [OutputFile(f.path, f.content, f.executable, "import") for f in portable.files]
    canonical_data = (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode() if args.canonical else None
    outside = None
    if args.canonical:
        rel = os.path.relpath(os.path.abspath(args.canonical), os.path.abspath(args.out))
        if rel.startswith(".."):
            outside = Path(args.canonical)
            if outside.exists() and outside.read_bytes() != canonical_data:
                diags.error(str(outside), (0, 0), "AR091", "exists and was not written by this import; "
                            "remove it or name another file")
        else:
            files.append(OutputFile(rel.replace(os.sep, "/"), canonical_data, False, "import"))
    changes = None
    if not diags.has_errors:
        changes, _, wdiags = writer.diff(out, files)
        diags.extend(wdiags)
    result = diags.sorted()
    _print_diags(result, "text")
    if any(d.is_error for d in result):
        print("import failed: nothing written", file=sys.stderr)
        return 1
    writer.apply(out, files, changes)
    if outside is not None:
        _atomic_write(outside, canonical_data)
    counts = [f"{len(doc[k])} {k}" for k in ("rules", "skills", "agents", "commands") if doc.get(k)]
    if doc.get("hooks"):
        counts.append(f"{sum(len(v) if isinstance(v, list) else 1 for v in doc['hooks'].values())} hooks")
    if doc.get("mcp"):
        counts.append(f"{len(doc['mcp']['servers'])} mcp servers")
    if doc.get("context"):
        counts.append("the global context")
    print(f"imported from {args.client}: {', '.join(counts) or 'nothing'}; {count_summary(result)}", file=sys.stderr)
    print(f"{out}: {len(changes.create)} created, {len(changes.update)} updated, {len(changes.delete)} deleted, "
          f"{changes.unchanged} unchanged", file=sys.stderr)
    return 0


def _finish_build(args, diags, totals, changes, out: Path) -> int:
    ok = not any(d.is_error for d in diags)
    extra = {"summary": totals or {}}
    if changes is not None:
        extra["changes"] = {"create": list(changes.create), "update": list(changes.update),
                            "delete": list(changes.delete), "unchanged": changes.unchanged}
    _print_diags(diags, args.format, extra)
    if args.format == "text":
        _print_build_summary(totals, changes, args.check, ok, out)
    if not ok:
        return 1
    return 1 if (args.check and changes is not None and not changes.empty) else 0


def _print_build_summary(totals, changes, check: bool, ok: bool, out: Path) -> None:
    err = sys.stderr
    if not ok:
        print("build failed: nothing written", file=err)
        return
    for client, s in (totals or {}).items():
        fields = ", ".join(f"{s.get(k, 0)} {k}" for k in ("emitted", "mapped", "degraded", "dropped"))
        servers = f", {s['servers']} MCP servers" if s.get("servers") else ""
        print(f"{client}: {s['items']} items generated, {s['skipped']} not generated (audience, or a kind the client "
              f"lacks){servers}; fields: {fields}", file=err)
    if changes is None:
        return
    if check:
        for label, paths in (("missing", changes.create), ("outdated", changes.update), ("stale", changes.delete)):
            for p in paths:
                print(f"{label}: {out / p}", file=err)
        state = "up to date" if changes.empty else "out of date"
        print(f"{out}: {state}", file=err)
    else:
        print(f"{out}: {len(changes.create)} created, {len(changes.update)} updated, "
              f"{len(changes.delete)} deleted, {changes.unchanged} unchanged", file=err)


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.agentrc-tmp")
    tmp.write_bytes(data)
    try:
        os.chmod(tmp, path.stat().st_mode & 0o777)
    except FileNotFoundError:
        pass
    os.replace(tmp, path)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
