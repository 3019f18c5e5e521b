"""`agentrc import DIR --from CLIENT --out REGISTRY`: client files -> canonical document ->
portable items, written like build writes: all or nothing, never over a file the last
import did not write (AR091)."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

from agentrc.cli import progress
from agentrc.cli.common import UsageError, print_diags, say, summarize, unknown
from agentrc.diagnostics import WARNING, Diagnostics, count_summary
from agentrc.fdio import read_regular
from agentrc.files import OutputFile
from agentrc.importers import combine
from agentrc.importers import document as importer
from agentrc.importers import published as layouts
from agentrc.inputs.projectread import read_project
from agentrc.model import SourceFile, SourceTree
from agentrc.output import atomic, imports, writer
from agentrc.pipeline import importing, published

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Optional


def run(args) -> int:
    if not os.path.isdir(args.project):
        raise UsageError(f"no such directory: {args.project}")
    args.clients = _clients(args.client, os.path.normpath(args.project))
    args.client = ",".join(args.clients)
    if not args.out.strip():
        raise UsageError("--out: an empty path")
    if args.canonical is not None:
        canonical, out_dir = os.path.abspath(args.canonical), os.path.abspath(args.out)
        if not args.canonical.strip() or os.path.isdir(canonical) or \
                os.path.commonpath([canonical, out_dir]) == canonical:
            raise UsageError(f"--canonical: {args.canonical!r} is not a file name (a directory, or --out or a "
                             "directory above it)")
    if args.canonical and os.path.dirname(os.path.abspath(args.canonical)) == os.path.abspath(args.out) and \
            os.path.basename(args.canonical).startswith("ai.config."):
        raise UsageError("--canonical: an ai.config file at the top of --out would make the registry a canonical "
                         "project, whose portable items are then not read; name another file or directory")
    with progress.activity(f"importing from {', '.join(args.clients)}") as activity:
        return _import(args, activity.say)


def _clients(given, root: str) -> list:
    """The clients to import: `--from a,b,c`, else every client whose own files the
    directory holds (`Importer.own`), in the importers' order."""
    if given is None:
        published = [c for c in ("claude", "copilot") if _published_layout(root, c)]
        if published:  # a plugin, a marketplace, Copilot's files at the root: read as published
            return published[:1]
        found = [name for name, imp in importer.IMPORTERS.items()
                 if any(os.path.lexists(os.path.join(root, own.rstrip("/"))) for own in imp.own)]
        if not found:
            raise UsageError(f"{root}: no client files found (CLAUDE.md, .claude/, .github/, ...); "
                             f"name the client with --from ({', '.join(importer.IMPORTERS)})")
        return found
    names = [c.strip() for c in given.split(",") if c.strip()]
    bad = [c for c in names if c not in importer.IMPORTERS]
    if bad or not names:
        raise UsageError(unknown("client to import from", bad or [given], list(importer.IMPORTERS)))
    return list(dict.fromkeys(names))


def _import(args, notify) -> int:
    root = os.path.normpath(args.project)
    if any(_published_layout(root, c) for c in args.clients):
        return _import_published(args, root, notify)
    tree, unread = read_project(root, lambda rel: any(importer.wants(c, rel) for c in args.clients))
    shown = "" if root == "." else root.replace(os.sep, "/")
    imported = combine.combine([(c, importer.import_project(c, tree, shown)) for c in args.clients],
                               where=shown or ".")
    doc = imported.document
    found = imported.diagnostics
    if not args.strict:
        # A file that cannot be imported (AR131) is skipped and the rest written; --strict stops
        # instead. What the read boundary refused (a link out of the project, a FIFO) stays an error.
        found = tuple(replace(d, severity=WARNING) if d.is_error else d for d in found)
    diags = Diagnostics(list(unread + found))
    out = Path(args.out)
    portable, written = importing.portable_that_lints(doc, imported.fields, str(out).replace(os.sep, "/"),
                                                      str(out / importer.BUNDLE), args.strict)
    diags.extend(written)
    if doc.get("tools") and not args.canonical:
        diags.warning(str(out / importer.BUNDLE), (0, 0), "AR130",
                      f"settings of {', '.join(sorted(doc['tools']))} (tools.<client>) have no portable form; "
                      "write the canonical document with --canonical FILE.json to keep them")
    if imported.fields and args.canonical:
        keys = sorted({k for fields in imported.fields.values() for k in fields})
        diags.warning(args.canonical, (0, 0), "AR130",
                      f"{len(imported.fields)} item(s) carry {', '.join(keys)}, which the canonical document has no "
                      f"field for: the portable items in {out} keep them, the canonical document does not")
    files = [OutputFile(f.path, f.content, f.executable, "import") for f in portable.files]
    canonical_data = (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode() if args.canonical else None
    outside = _canonical_place(args, canonical_data, files, diags)
    changes = None
    if not diags.has_errors:
        changes = _write_import(args, out, files, diags, notify)
    if not diags.has_errors and outside is not None and canonical_data is not None:
        try:
            writer.write_atomic(outside, canonical_data)
        except OSError as exc:
            diags.error(str(outside), (0, 0), atomic.code_of(exc, "AR142"), "cannot write the canonical document: "
                        f"{exc.strerror or exc}")
    return _report(args, diags, changes, f"from {args.client}", _counts(doc), {"client": args.client})


def _canonical_place(args, data: Optional[bytes], files: list, diags: Diagnostics) -> Optional[Path]:
    """Where `--canonical` goes: inside --out it is one more file of the write (appended to
    `files`); outside it, its path (checked now, before the registry is written: a link there
    or a file this import did not write stops the import)."""
    if not args.canonical or data is None:
        return None
    rel = os.path.relpath(os.path.abspath(args.canonical), os.path.abspath(args.out))
    if not rel.startswith(".."):
        files.append(OutputFile(rel.replace(os.sep, "/"), data, False, "import"))
        return None
    outside = Path(args.canonical)
    try:
        atomic.check(outside)
    except OSError as exc:
        diags.error(str(outside), (0, 0), atomic.code_of(exc, "AR142"), "cannot write the canonical "
                    f"document: {exc.strerror or exc}")
    if not diags.has_errors and os.path.lexists(outside) and _other_than(str(outside), data):
        diags.error(str(outside), (0, 0), "AR091", "exists and was not written by this import; "
                    "remove it or name another file")
    return outside


def _other_than(path: str, data: bytes) -> bool:
    """Whether the file at `path` holds anything but `data` (read no further than one byte
    past it; a link, a FIFO or anything not a regular file is other)."""
    try:
        return read_regular(path, len(data))[0] != data
    except OSError:
        return True


def _write_import(args, out: Path, files: list, diags: Diagnostics, notify):
    """The files written into --out under the writer's lock (recovered first), added to what
    imports of other clients wrote there (their items kept, the bundle and context joined),
    replacing what these clients' last import wrote; then the import record. The changes, or
    None when the directory could not be opened."""
    try:
        with writer.session(out, write=True, notify=notify) as target:
            imports.recover(out)  # an import killed after its files: its record written first
            record = imports.read(out)
            kept = imports.kept(record, args.clients, target.owned_paths())
            portable_files = importing.added_to(
                SourceTree(tuple(SourceFile(f.path, f.content, f.executable) for f in files)), target.read_owned,
                kept, join_context=imports.shared_with_others(record, args.clients, importing.CONTEXT))
            files = [OutputFile(f.path, f.content, f.executable, "import") for f in portable_files.files]
            changes, _, wdiags = target.diff(files, keep=kept)
            diags.extend(wdiags)
            if not diags.has_errors:
                new_record = imports.recorded(record, args.clients, [f.path for f in files])
                diags.extend(imports.commit(out, lambda: target.apply(files, changes), new_record))
            return changes
    except writer.OutputError as exc:
        diags.extend(exc.diagnostics)
        return None


def _published_layout(root: str, client: str) -> bool:
    """Whether `root` is published as a plugin or a marketplace (`--from claude`), or as
    Copilot's shapes at its root (`--from copilot`, awesome-copilot's layout): then the
    layout's reader imports it (`importers.published`), as `agentrc add` reads it."""
    if client == "claude":
        return any(os.path.isfile(os.path.join(root, *p.split("/"))) for p in (layouts.PLUGIN, layouts.MARKETPLACE))
    if client == "copilot":  # Copilot's files at the root (a .github/ of workflows beside them is read too)
        return any(name.endswith(suffix) for d, _, suffix in layouts.COPILOT_DIRS[:3]
                   for name in _names(os.path.join(root, d)))
    return False


def _names(directory: str) -> list:
    try:
        return os.listdir(directory) if os.path.isdir(directory) and not os.path.islink(directory) else []
    except OSError:
        return []


def _import_published(args, root: str, notify) -> int:
    """A published layout imported: its portable items and bundles (one per plugin) written
    to --out, the layout's findings reported at the files as published."""
    if args.canonical:
        raise UsageError("--canonical: a plugin or marketplace is imported as portable items and bundles only")
    shown = "" if root == "." else root.replace(os.sep, "/")
    tree, unread = read_project(root, lambda rel: True)
    got = published.portable(tree, shown)
    if got is None:
        raise UsageError(f"{args.project}: not a plugin, marketplace or Copilot layout after all")
    found = got.diagnostics if args.strict else tuple(replace(d, severity=WARNING) if d.is_error else d
                                                       for d in got.diagnostics)
    diags = Diagnostics(list(unread + found))
    for r in got.redirects:
        diags.warning(r.path, r.pos, "AR130", f"plugin {r.name} lives in {r.locator}: import that repository "
                                              "(or `agentrc add` the marketplace, which reads it from there)")
    cut = len(shown) + 1 if shown else 0
    files = [OutputFile(f.path[cut:], f.content, f.executable, "import") for f in got.tree.files]
    changes = None
    if not diags.has_errors:
        try:
            with writer.session(Path(args.out), write=True, notify=notify) as target:
                changes, _, wdiags = target.diff(files)
                diags.extend(wdiags)
                if not diags.has_errors:
                    diags.extend(target.apply(files, changes))
        except writer.OutputError as exc:
            diags.extend(exc.diagnostics)
    return _report(args, diags, changes, f"the {got.layout} layout", _tree_counts(files),
                   {"client": args.client, "layout": got.layout})


def _report(args, diags: Diagnostics, changes, what: str, counts: list, extra: dict) -> int:
    """What an import prints (JSON, or the diagnostics and the summary) and its exit code."""
    result = diags.sorted()
    failed = any(d.is_error for d in result) or changes is None
    if args.format == "json":
        extra = dict(extra, imported=counts, ok=not failed)
        if changes is not None and not failed:
            extra["changes"] = {"create": list(changes.create), "update": list(changes.update),
                                "delete": list(changes.delete), "unchanged": changes.unchanged}
        print_diags(result, "json", extra)
        return 1 if failed else 0
    print_diags(result, "text")
    if failed or changes is None:
        partial = any(writer.PARTIAL in d.message for d in result)
        say("import failed: the next import completes the interrupted write" if partial
            else "import failed: nothing written", style="error")
        return 1
    errors = sum(1 for d in result if d.is_error)
    summarize(f"imported {what}: {', '.join(counts) or 'nothing'}; {count_summary(result)}", errors,
              len(result) - errors)
    say(f"{args.out}: {len(changes.create)} created, {len(changes.update)} updated, {len(changes.delete)} deleted, "
        f"{changes.unchanged} unchanged")
    return 0


def _tree_counts(files) -> list:
    """'2 bundles', '3 skills', ... of the portable files written."""
    kinds: dict = {}
    for f in files:
        base = os.path.basename(f.path)
        if base.endswith(".bundle.yaml"):
            kinds["bundles"] = kinds.get("bundles", 0) + 1
        elif base.endswith(".md") and base[:-3].isupper():
            kind = base[:-3].lower() + "s"
            kinds[kind] = kinds.get(kind, 0) + 1
    order = ("bundles", "rules", "skills", "agents", "commands", "hooks", "contexts")
    return [f"{kinds[k]} {k}" for k in order if k in kinds]


def _counts(doc: dict) -> list:
    counts = [f"{len(doc[k])} {k}" for k in ("rules", "skills", "agents", "commands") if doc.get(k)]
    if doc.get("hooks"):
        counts.append(f"{sum(len(v) if isinstance(v, list) else 1 for v in doc['hooks'].values())} hooks")
    if doc.get("mcp"):
        counts.append(f"{len(doc['mcp']['servers'])} mcp servers")
    if doc.get("context"):
        counts.append("the global context")
    return counts
