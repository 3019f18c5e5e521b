"""The pure pipeline the CLI and the Pants plugin share.

load -> check references -> select -> plan. Keeping it in one place is what makes
`pants package` and `agentrc build` produce byte-identical trees.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import replace
from json.encoder import encode_basestring_ascii

from agentrc.clients import registry as client_registry
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.files import Fragment, OutputFile
from agentrc.loaded import Loaded, join
from agentrc.model import IgnoreList, Registry, SourceTree
from agentrc.output.merge import recover
from agentrc.output.plan import Plan, summary
from agentrc.output.plan import plan as plan_files
from agentrc.pipeline.fmt import format_files, not_canonical
from agentrc.portable import resolve
from agentrc.portable.load import load_registry

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import AbstractSet, Dict, Iterable, List, Optional, Sequence, Tuple


def load(tree: SourceTree, explicit: Iterable[str] = (), memo=None, canonical: Optional[Loaded] = None,
         cross_source: bool = False) -> Loaded:
    """The registry of the portable sources in `tree`, joined with the items of canonical
    projects (`canonical`, from agentrc.inputs.read): one model, two front doors.
    `cross_source`: `source:` references are resolved by the caller (not AR065)."""
    registry, diags = load_registry(tree, client_registry.client_names(), explicit, memo)
    reports: tuple = ()
    if canonical is not None:
        registry, joined = join(registry, canonical.registry)
        diags = diags + canonical.diagnostics + joined
        reports = canonical.reports
    return Loaded(registry, tuple(sorted(set(diags + resolve.check(registry, cross_source)))), reports)


def lint(tree: SourceTree, explicit: Iterable[str] = (),
         canonical: Optional[Loaded] = None) -> Tuple[Registry, Tuple[Diagnostic, ...]]:
    """Validation plus the canonical-form check of every source (AR101), apart from the
    body style findings validation reports itself (AR020-AR022, which `fmt` fixes)."""
    loaded = load(tree, explicit, canonical=canonical)
    run = format_files(((f.path, f.content) for f in tree.files), style=False)
    extra = tuple(not_canonical(path, "warning") for path in run.changed)
    return loaded.registry, tuple(sorted(set(loaded.diagnostics + extra)))


def generate(tree: SourceTree, clients: Sequence[str], bundles: Optional[Sequence[str]] = None,
             strict: bool = False, explicit: Iterable[str] = (), memo=None,
             entrypoints: Optional[Sequence[str]] = None, layout: str = "project",
             plugin_name: str = "", canonical: Optional[Loaded] = None, cross_source: bool = False,
             skip_servers: AbstractSet[str] = frozenset(), extra_fragments: Sequence[Fragment] = (),
             report_plugins: bool = True, spill=None, shared_copies: bool = True,
             ignore: IgnoreList = IgnoreList()) -> Plan:
    """`memo` (agentrc.memo.cache.Memo) lets unchanged item directories skip parsing and rendering.
    `skip_servers`: MCP servers not to configure (what `agentrc remove-mcp` took out). `spill`
    (agentrc.output.spill.Spill): where a large plan keeps its rendered bytes. `shared_copies`:
    the project file's `shared-copies` (`ProjectFile.shares`): one copy of an item for clients
    that read each other's directories (agentrc.output.plan.shared_view). `ignore`: the project
    file's `ignore:` list, which each client's ignore file gets (agentrc.clients.ignorefile)."""
    loaded = load(tree, explicit, memo, canonical, cross_source)
    if not loaded.ok:
        return Plan((), (), loaded.diagnostics)
    items, sel_diags = resolve.select(loaded.registry, bundles, entrypoints)
    if any(d.is_error for d in sel_diags):
        return Plan((), (), tuple(sorted(set(loaded.diagnostics + sel_diags))))
    servers = tuple(s for s in resolve.servers(loaded.registry, bundles, entrypoints) if s.name not in skip_servers)
    if report_plugins:
        sel_diags += _plugins_not_installed(resolve.built_bundles(loaded.registry, bundles, entrypoints))
    adapters = client_registry.get(clients, layout)
    registry = replace(loaded.registry, ignore=ignore) if ignore.patterns else loaded.registry
    result = plan_files(registry, adapters, items, strict, memo, servers, extra_fragments, spill,
                        shared_copies)
    files = result.files
    if layout == "plugin" and result.ok:
        files = _with_plugin_files(files, _plugin_files(loaded.registry, adapters, bundles, plugin_name))
    return Plan(files, result.reports,
                tuple(sorted(set(loaded.diagnostics + sel_diags + result.diagnostics))), loaded.reports,
                result.context, result.shared)


def _plugins_not_installed(bundles) -> Tuple[Diagnostic, ...]:
    """A build writes files; plugins are installed by the clients' CLIs (`agentrc add`,
    which passes `report_plugins=False`): said once per bundle that declares some (AR215)."""
    d = Diagnostics()
    for b in bundles:
        if b.plugins:
            d.warning(b.path, (0, 0), "AR215", f"bundle {b.name} declares plugins ({', '.join(sorted(b.plugins))}), "
                      "which a build does not install")
    return d.sorted()


def _plugin_files(registry: Registry, adapters, bundles: Optional[Sequence[str]], plugin_name: str):
    """The plugin manifest (and a one-plugin marketplace beside it). Name, description and
    version come from the one bundle built, else from --plugin-name."""
    bundle = resolve.bundle_for(registry, bundles[0]) if bundles and len(bundles) == 1 else None
    name = plugin_name or (bundle.name if bundle else "agentrc-plugin")
    description = bundle.description if bundle else f"{name}, built by agentrc"
    version = str(bundle.metadata.get("version", "")) if bundle else ""
    out = []
    for adapter in adapters:
        out.append(adapter.manifest(name, description, version))
        market = adapter.marketplace(f"{name}-marketplace", name, description)
        if market is not None:  # a client that installs from the directory itself (Gemini CLI)
            out.append(market)
    return tuple(out)


def _with_plugin_files(files, extra) -> tuple:
    """The build's files plus the manifest and marketplace. Where the items also wrote keys
    into the manifest (Codex's component paths, Gemini CLI's mcpServers and contextFileName),
    it is one JSON file: the manifest's keys first, then theirs. agentrc owns all of it."""
    by_path = {f.path: f for f in files}
    for f in extra:
        built = by_path.get(f.path)
        if built is not None and built.merge == "json":
            data = json.loads(f.content.decode("utf-8"), object_pairs_hook=OrderedDict)
            for key, value in json.loads(built.content.decode("utf-8"), object_pairs_hook=OrderedDict).items():
                data.setdefault(key, value)
            f = OutputFile(f.path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"), False,
                           f.owner)
        by_path[f.path] = f
    return tuple(by_path[p] for p in sorted(by_path))


REPORT = ".agentrc/report.json"


def package(tree: SourceTree, clients: Sequence[str], bundles: Optional[Sequence[str]] = None,
            entrypoints: Optional[Sequence[str]] = None, strict: bool = False,
            explicit: Iterable[str] = (), memo=None, cross_source: bool = False,
            skip_servers: AbstractSet[str] = frozenset(), shared_copies: bool = True,
            ignore: IgnoreList = IgnoreList()) -> Tuple[Plan, Tuple[Tuple[str, bytes, bool], ...]]:
    """What `pants package` writes for a target: the client tree plus the fidelity report at
    REPORT, as (path, bytes, executable). The tree is exactly `agentrc build`'s."""
    plan = generate(tree, clients, list(bundles or ()) or None, strict, explicit, memo, entrypoints,
                    cross_source=cross_source, skip_servers=skip_servers, shared_copies=shared_copies,
                    ignore=ignore)
    if not plan.ok:
        return plan, ()
    files = [(f.path, f.content, f.executable) for f in plan.files]
    files.append((REPORT, report_bytes(clients, plan), False))
    return plan, tuple(files)


def report_bytes(clients: Sequence[str], plan: Plan) -> bytes:
    """The report as written (REPORT in a package, `--report`): `report_layout` of
    `report_document`, with each item's line encoded from its ItemReport directly (a
    5,000-item report: 0.45 -> 0.1 s, in every edit of a Pants registry)."""
    return report_layout(_document(clients, plan, _Encoded(_item_lines(plan.reports))))


class _Encoded(list):
    """Lines of JSON already encoded, which `report_layout` writes as they are."""


def _item_lines(reports) -> List[str]:
    """`json.dumps(r.to_json())` of each report, byte for byte (held equal by
    tests/test_build.py), each field list encoded once: the lists are shared tuples, few
    distinct ones among thousands of items (`fidelity.outcome`)."""
    enc, dumps = encode_basestring_ascii, json.dumps
    fields_json: Dict[int, str] = {}  # by the id of a tuple `reports` holds alive
    lines = []
    for r in reports:
        fields = fields_json.get(id(r.fields))
        if fields is None:
            fields = fields_json[id(r.fields)] = dumps([o.to_json() for o in r.fields])
        generated = "true" if r.generated is True else "false" if r.generated is False else dumps(r.generated)
        line = (f'{{"client": {enc(r.client)}, "kind": {enc(r.kind)}, "name": {enc(r.name)}, '
                f'"source": {enc(r.source)}, "generated": {generated}, '
                f'"outputs": [{", ".join(map(enc, r.outputs))}], "fields": {fields}')
        if r.also_loaded_by:
            line += ', "also_loaded_by": ' + dumps(r.to_json()["also_loaded_by"])
        lines.append(line + "}")
    return lines


def report_layout(report: dict) -> bytes:
    """A report document's bytes: each top-level key on a line of its own, and each item of
    a list (`items`, `canonical`) or entry of an object (`summary`, `merged`) below it on one
    line, compact. One line per item keeps a large report readable, and greppable by item
    name, and it is a third smaller than `indent=2`, whose pure-Python encoder was four
    times slower (0.69 s for 5,000 items); the C encoder writes each line."""
    dumps = json.dumps
    lines = ["{"]
    keys = list(report)
    for n, key in enumerate(keys):
        value = report[key]
        end = "," if n + 1 < len(keys) else ""
        if isinstance(value, list) and value:
            lines.append(f"  {dumps(key)}: [")
            encoded = value if isinstance(value, _Encoded) else map(dumps, value)
            lines.append(",\n".join("    " + v for v in encoded))
            lines.append(f"  ]{end}")
        elif isinstance(value, dict) and value:
            lines.append(f"  {dumps(key)}: {{")
            lines.append(",\n".join(f"    {dumps(k)}: {dumps(v)}" for k, v in value.items()))
            lines.append(f"  }}{end}")
        else:
            lines.append(f"  {dumps(key)}: {dumps(value)}{end}")
    lines.append("}")
    return ("\n".join(lines) + "\n").encode()


REPORT_VERSION = 2  # 2: `merged` names agentrc's keys without their values


def report_document(clients: Sequence[str], plan: Plan) -> dict:
    """The fidelity report of a build (`--report`, and REPORT in every package): per item
    and client what each field became, the per-client summary, and the merged keys."""
    return _document(clients, plan, [r.to_json() for r in plan.reports])


def _document(clients: Sequence[str], plan: Plan, items: list) -> dict:
    report = {"version": REPORT_VERSION, "clients": list(clients), "summary": summary(plan.reports), "items": items}
    if plan.intake:  # what the canonical front door did with each key, before any client
        report["canonical"] = [{"kind": r.kind, "name": r.name, "source": r.source,
                                "fields": [f.to_json() for f in r.fields]} for r in plan.intake]
    merged = merged_keys(plan.files)
    if merged:  # what a workspace sync needs to merge rather than overwrite
        report["merged"] = merged
    return report


def merged_keys(files) -> dict:
    """For each config file agentrc merges into users' files: its format and agentrc's keys, as
    [key path, appended array element?] pairs. The package report carries them so a workspace
    sync can merge instead of overwrite. Not their values: an MCP server's `env` or `headers`
    may hold tokens, and reports end up in CI logs and artifacts (issue 9); the packaged file
    holds agentrc's keys alone, values included, and `with_merge_info` reads them from there."""
    return {f.path: {"format": f.merge, "keys": [[list(k), a] for k, _, a in f.keys]}
            for f in files if f.merge}


def with_merge_info(files, report: dict):
    """OutputFiles rebuilt from a packaged tree, with the merge information of its report:
    each merged file's keys, their values read back from the file itself. A version 1 report
    (an older package) still lists the values, and those are used. ValueError when the report
    and the files disagree."""
    version = report.get("version", 1)
    if version not in (1, REPORT_VERSION):
        raise ValueError(f"{REPORT}: report version {version!r} is not one this agentrc reads")
    merged = report.get("merged", {})
    out = []
    for f in files:
        info = merged.get(f.path)
        if info:
            try:
                if version == 1:
                    keys = tuple((tuple(k), v, bool(a)) for k, v, a in info["keys"])
                else:
                    keys = recover(info["format"], f.content.decode("utf-8"),
                                   [(tuple(k), bool(a)) for k, a in info["keys"]])
            except (ValueError, TypeError, KeyError) as exc:
                raise ValueError(f"{f.path}: cannot take agentrc's keys from the package: {exc}") from None
            f = OutputFile(f.path, f.content, f.executable, f.owner, info["format"], keys)
        out.append(f)
    return out
