"""Layouts people publish, read as client projects: one reader per layout, serving both
`agentrc import` and consumed sources (issue 31).

- a Claude Code plugin marketplace (`.claude-plugin/marketplace.json` listing plugins): each
  listed plugin is a part named after it; a plugin in the same tree (a relative source) is
  read from it, a plugin in another repository (a git source) is a `Redirect` to that
  repository, where the plugin is read as a plugin repository;
- a plugin repository (`.claude-plugin/plugin.json` at the root): one part named after it;
- a Copilot layout (`.github/agents`, `instructions`, `prompts`, `skills`, `hooks`) or the
  same shapes at the repository's root (as awesome-copilot publishes them): one part with
  no name.

A part is a client project in memory: a plugin's `skills/`, `agents/`, `commands/`,
`hooks/hooks.json` (or the paths its manifest names) and `.mcp.json` are placed where the
Claude importer reads them (`.claude/...`), every other file of the plugin stays at its
path, so a hook command naming `${CLAUDE_PLUGIN_ROOT}/scripts/x.sh` finds `scripts/x.sh`
below the part's root. `origins` maps each placed path back to the source's own path, so
diagnostics and the lock's digests speak of the files as published. An Agent Skills
repository (`skills/<name>/SKILL.md` and nothing else of these) is already portable: no
layout. Pure: the files come in as a SourceTree.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import field

from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostic, Diagnostics
from agentrc.model import ENTRYPOINTS, SourceFile, SourceTree
from agentrc.names import REGISTRY_MARKER, is_bundle_file, valid_name
from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple

MARKETPLACE = ".claude-plugin/marketplace.json"
PLUGIN = ".claude-plugin/plugin.json"
MAX_MANIFEST = 1 << 20  # a manifest larger than this is not read (parsing stays bounded)
# Where a plugin's components sit by default, and where the Claude importer reads them.
PLUGIN_DIRS = (("skills", ".claude/skills"), ("agents", ".claude/agents"), ("commands", ".claude/commands"))
# Copilot's shapes at a repository's root (awesome-copilot), and where the Copilot importer reads them.
COPILOT_DIRS = (("agents", ".github/agents", ".agent.md"), ("instructions", ".github/instructions", ".instructions.md"),
                ("prompts", ".github/prompts", ".prompt.md"), ("chatmodes", ".github/chatmodes", ".chatmode.md"),
                ("skills", ".github/skills", "/SKILL.md"), ("hooks", ".github/hooks", ".json"))
# Files a plugin does not give Claude Code as content (the plugin's own documentation).
NOT_CONTENT = ("CLAUDE.md", "AGENTS.md", "CLAUDE.local.md")
# Manifest keys that say where a component is, or describe the plugin; the rest are reported.
MANIFEST_KEYS = ("name", "version", "description", "author", "homepage", "repository", "license", "keywords",
                 "skills", "agents", "commands", "hooks", "mcpServers", "source", "strict", "category", "tags")


@dataclass(frozen=True)
class Part:
    """One plugin (or a whole flat layout, `name` None) as a client project in memory.
    `files` have display paths below `root`; `origins` maps each of them to the display
    path of the source file it was placed from."""

    name: Optional[str]
    description: str
    client: str  # the importer that reads it: "claude" or "copilot"
    root: str
    files: Tuple[SourceFile, ...]
    origins: Dict[str, str] = field(default_factory=dict, hash=False, compare=False)

    @property
    def tree(self) -> SourceTree:
        return SourceTree(self.files)


@dataclass(frozen=True)
class Redirect:
    """A marketplace's plugin that lives in another repository: the bundle `name` is read
    from the source `locator` (a git locator agentrc's source syntax takes)."""

    name: str
    locator: str
    path: str
    pos: Tuple[int, int] = (1, 1)


@dataclass(frozen=True)
class Layout:
    """What the reader found: the layout's name, its parts, the plugins that live elsewhere,
    and what could not be read."""

    kind: str  # "marketplace", "plugin" or "copilot"
    parts: Tuple[Part, ...]
    redirects: Tuple[Redirect, ...]
    diagnostics: Tuple[Diagnostic, ...]


def read(tree: SourceTree, root: str = "") -> Optional[Layout]:
    """The published layout of `tree` (display paths below `root`), or None when it has none
    (a portable registry, an Agent Skills repository, or nothing agentrc reads)."""
    root = root_of(tree, root)
    files = {_rel(f.path, root): f for f in tree.files}
    files.pop("", None)
    diags = Diagnostics()
    if MARKETPLACE in files:
        parts, redirects = _marketplace(files, root, diags)
        return Layout("marketplace", tuple(parts), tuple(redirects), diags.sorted())
    if PLUGIN in files:
        manifest = _json(files[PLUGIN], diags) or {}
        part = _plugin(files, root, "", manifest, _join(root, PLUGIN), diags)
        return Layout("plugin", (part,) if part is not None else (), (), diags.sorted())
    if _portable(files):
        return None
    part = _copilot(files, root)
    return Layout("copilot", (part,), (), diags.sorted()) if part is not None else None


def plain(tree: SourceTree, root: str = "") -> SourceTree:
    """`tree` without what is below a hidden directory (relative to `root`): a source with
    no published layout is read as a local directory is (`inputs.tree` skips them)."""
    root = root_of(tree, root)

    def hidden(path: str) -> bool:
        return any(p.startswith(".") for p in _rel(path, root).split("/")[:-1])
    kept = tuple(f for f in tree.files if not hidden(f.path))
    return tree if len(kept) == len(tree.files) else SourceTree(kept)


def root_of(tree: SourceTree, root: str) -> str:
    """The prefix the files' display paths really have: a local source's root may be shown
    as `./../dir` while its files read `../dir/...`."""
    if not root or root == "." or "://" in root or any(f.path.startswith(root + "/") for f in tree.files[:1]):
        return root
    short = posixpath.normpath(root)
    return short if any(f.path.startswith(short + "/") for f in tree.files[:1]) else root


def _rel(path: str, root: str) -> str:
    if not root or root == ".":
        return path
    return path[len(root) + 1:] if path.startswith(root + "/") else ""


def _join(root: str, rel: str) -> str:
    return posixpath.join(root, rel) if root and root != "." else rel


def _portable(files: Dict[str, SourceFile]) -> bool:
    """Whether the tree is agentrc's own format: a registry marker, a bundle, or an item
    entrypoint other than SKILL.md (which Agent Skills repositories share with it)."""
    for rel in files:
        base = posixpath.basename(rel)
        if base == REGISTRY_MARKER or is_bundle_file(base) or (base in ENTRYPOINTS and base != "SKILL.md"):
            return True
    return False


def _json(f: SourceFile, diags: Diagnostics) -> Optional[Dict[str, Any]]:
    """A manifest's object, or None with AR131 (too large, not UTF-8, not JSON, not an object)."""
    if len(f.content) > MAX_MANIFEST:
        diags.error(f.path, (1, 1), "AR131", f"larger than {MAX_MANIFEST} bytes; not read")
        return None
    try:
        data = json.loads(f.content.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        line, col = (getattr(exc, "lineno", 1), getattr(exc, "colno", 1))
        diags.error(f.path, (line, col), "AR131", f"not a JSON document: {str(exc).splitlines()[0][:120]}")
        return None
    if not isinstance(data, dict):
        diags.error(f.path, (1, 1), "AR131", "expected a JSON object")
        return None
    return data


def _inside(base: str, rel: str) -> Optional[str]:
    """`rel` (a manifest's `./path`) below `base`, normalized; None when it leaves the tree."""
    if not isinstance(rel, str) or not rel.strip() or rel.startswith("/") or "\\" in rel or "\0" in rel:
        return None
    joined = posixpath.normpath(posixpath.join(base, rel))
    if joined == ".":
        return ""
    return None if joined.startswith("../") or joined == ".." else joined


# --- a plugin --------------------------------------------------------------------------

def _plugin(files: Dict[str, SourceFile], root: str, prefix: str, manifest: Dict[str, Any], where: str,
            diags: Diagnostics, name: Optional[str] = None) -> Optional[Part]:
    """The plugin at `prefix` (relative to the tree's root) as a Claude project: its own
    files below the part's root, components where the Claude importer reads them."""
    if not name:
        name = manifest.get("name") if isinstance(manifest.get("name"), str) else None
    if not name or not valid_name(name):
        diags.error(where, (1, 1), "AR131", f"a plugin needs a name made of lowercase letters, digits and '-' "
                                            f"(got {name!r})")
        return None
    for key in sorted(k for k in manifest if k not in MANIFEST_KEYS):
        diags.warning(where, (1, 1), "AR130", f"plugin {name}: {key} has no portable form; not installed")
    mine = {rel[len(prefix) + 1:] if prefix else rel: f for rel, f in files.items()
            if not prefix or rel.startswith(prefix + "/")}
    placed: Dict[str, Tuple[SourceFile, str]] = {}  # part-relative path -> (file, source rel)
    for rel, f in mine.items():
        if rel.startswith(".claude-plugin/") or rel in NOT_CONTENT or rel.startswith(".claude/"):
            continue
        placed[rel] = (f, rel)
    for key, target in PLUGIN_DIRS:
        for where_rel in _component_paths(manifest.get(key), key, mine, name, where, diags):
            # a path naming one skill's directory places it under its own name
            base = f"{target}/{posixpath.basename(where_rel)}" if f"{where_rel}/SKILL.md" in mine else target
            for rel, f in mine.items():
                if rel == where_rel or rel.startswith(where_rel + "/"):
                    inner = posixpath.basename(rel) if rel == where_rel else rel[len(where_rel) + 1:]
                    placed.pop(rel, None)
                    placed[f"{base}/{inner}"] = (f, rel)
    hooks = _hooks(manifest.get("hooks"), mine, name, where, diags)
    servers = _servers(manifest.get("mcpServers"), mine, name, where, diags)
    placed.pop("hooks/hooks.json", None)
    placed.pop(".mcp.json", None)
    if hooks is not None:
        placed[".claude/settings.json"] = (SourceFile("", json.dumps({"hooks": hooks[0]}).encode()),
                                           hooks[1] or PLUGIN)
    if servers is not None:
        placed[".mcp.json"] = (SourceFile("", json.dumps({"mcpServers": servers[0]}).encode()), servers[1] or PLUGIN)
    part_root = _join(root, prefix) if prefix else (root or "")
    out, origins = [], {}
    for rel, (f, src) in sorted(placed.items()):
        display = _join(part_root, rel)
        out.append(SourceFile(display, f.content, f.executable, f.link))
        origins[display] = _join(part_root, src)
    description = manifest.get("description")
    description = description if isinstance(description, str) else ""
    return Part(name, " ".join(description.split()) or f"The {name} plugin", "claude", part_root, tuple(out), origins)


def _component_paths(value: Any, key: str, mine: Dict[str, SourceFile], name: str, where: str,
                     diags: Diagnostics) -> List[str]:
    """Where a plugin's `key` component is: its default directory, plus what the manifest
    names (a path or a list of them, each inside the plugin)."""
    named = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    # Listed paths add to the default directory, except skills listed one by one: a plugin that
    # names its skill directories (a marketplace entry over a shared skills/) has those only.
    chosen = key == "skills" and any(isinstance(i, str) and f"{_inside('', i)}/SKILL.md" in mine for i in named)
    found = [key] if not chosen and any(r == key or r.startswith(key + "/") for r in mine) else []
    if value is not None and not isinstance(value, (str, list)):
        diags.warning(where, (1, 1), "AR130", f"plugin {name}: {key} is neither a path nor a list of paths; "
                                              "its default directory is read")
    for item in named:
        rel = _inside("", item) if isinstance(item, str) else None
        if rel is None:
            diags.warning(where, (1, 1), "AR130", f"plugin {name}: {key} path {item!r} is outside the plugin; "
                                                  "not read")
        elif rel not in found:
            found.append(rel)
    return found


def _component(value: Any, key: str, default: str, inner_key: str, mine: Dict[str, SourceFile], name: str,
               where: str, diags: Diagnostics) -> Optional[Tuple[Any, str, Dict[str, Any]]]:
    """A plugin's JSON component (`hooks`, `mcpServers`): the object under `inner_key` of
    the file the manifest names (`value`, a path inside the plugin), else of `default`, or the
    manifest's own inline object; with the file it came from ("" inline) and the whole
    document read."""
    rel = default
    if isinstance(value, dict):
        return (value.get(inner_key, value), "", value)
    if isinstance(value, str):
        inner = _inside("", value)
        if inner is None or inner not in mine:
            diags.warning(where, (1, 1), "AR130", f"plugin {name}: {key} file {value!r} is not in the plugin")
            return None
        rel = inner
    if rel not in mine:
        return None
    data = _json(mine[rel], diags)
    return (data.get(inner_key, data), rel, data) if data is not None else None


def _hooks(value: Any, mine: Dict[str, SourceFile], name: str, where: str,
           diags: Diagnostics) -> Optional[Tuple[Any, str]]:
    """The plugin's hooks object (from `hooks/hooks.json`, the file the manifest names, or
    the manifest itself) and the file it came from."""
    found = _component(value, "hooks", "hooks/hooks.json", "hooks", mine, name, where, diags)
    if found is None:
        return None
    hooks, rel, data = found
    for key in sorted(k for k in data if k not in ("hooks", "description")) if rel else ():
        diags.warning(mine[rel].path, (1, 1), "AR130", f"plugin {name}: hooks file key {key} has no portable form")
    return (data.get("hooks", {}) if rel else hooks, rel)  # a hooks file without "hooks" holds none


def _servers(value: Any, mine: Dict[str, SourceFile], name: str, where: str,
             diags: Diagnostics) -> Optional[Tuple[Any, str]]:
    """The plugin's MCP servers (`.mcp.json`, the file the manifest names, or inline)."""
    found = _component(value, "mcpServers", ".mcp.json", "mcpServers", mine, name, where, diags)
    return (found[0], found[1]) if found is not None else None


# --- a marketplace -----------------------------------------------------------------------

def _marketplace(files: Dict[str, SourceFile], root: str,
                 diags: Diagnostics) -> Tuple[List[Part], List[Redirect]]:
    """Each listed plugin: a part when its source is a directory of this tree, a redirect
    when it is another repository."""
    where = files[MARKETPLACE].path
    data = _json(files[MARKETPLACE], diags)
    if data is None:
        return [], []
    plugins = data.get("plugins")
    if not isinstance(plugins, list):
        diags.error(where, (1, 1), "AR131", "plugins: expected a list of plugin entries")
        return [], []
    meta = data.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    plugin_root = meta.get("pluginRoot") if isinstance(meta.get("pluginRoot"), str) else ""
    parts: List[Part] = []
    redirects: List[Redirect] = []
    seen: Dict[str, int] = {}
    for index, entry in enumerate(plugins):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            diags.warning(where, (1, 1), "AR130", f"plugins[{index}]: not a plugin entry with a name; skipped")
            continue
        name = entry["name"]
        if name in seen:
            diags.warning(where, (1, 1), "AR130", f"plugins[{index}]: {name} is listed twice; the first is read")
            continue
        seen[name] = index
        source = entry.get("source")
        if isinstance(source, str) and not _is_remote(source):
            base = plugin_root if plugin_root and not source.startswith(("./", "../")) else ""
            prefix = _inside(_inside("", base) or "", source)
            if prefix is None:
                diags.warning(where, (1, 1), "AR130", f"plugin {name}: source {source!r} is outside the "
                                                      "marketplace's tree; skipped")
                continue
            part = _listed(files, root, prefix, entry, where, diags)
            if part is not None:
                parts.append(part)
            continue
        locator = _locator(source)
        if locator is None:
            diags.warning(where, (1, 1), "AR130", f"plugin {name}: source {json.dumps(source)[:80]} is not a "
                                                  "directory or git repository agentrc reads; skipped")
            continue
        redirects.append(Redirect(name, locator, where))
    return parts, redirects


def _listed(files: Dict[str, SourceFile], root: str, prefix: str, entry: Dict[str, Any], where: str,
            diags: Diagnostics) -> Optional[Part]:
    """A marketplace entry whose plugin is in this tree: its plugin.json, with what the
    entry itself says on top (an entry with `strict: false` is the whole manifest)."""
    own = files.get(_join(prefix, PLUGIN) if prefix else PLUGIN)
    manifest: Dict[str, Any] = {}
    if own is not None:
        manifest = _json(own, diags) or {}
    for key, value in entry.items():
        if key != "source" and (key not in manifest or key in ("skills", "agents", "commands", "hooks",
                                                                  "mcpServers")):
            manifest[key] = value
    if not any(r == prefix or r.startswith(prefix + "/") for r in files) and prefix:
        diags.warning(where, (1, 1), "AR130", f"plugin {entry['name']}: its directory {prefix} is not in the "
                                              "marketplace's tree; skipped")
        return None
    return _plugin(files, root, prefix, manifest, own.path if own is not None else where, diags,
                   name=entry["name"])


def _is_remote(source: str) -> bool:
    return "://" in source or source.startswith("git@")  # file:// included: a repository, not a directory


_REPO = pattern(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")


def _locator(source: Any) -> Optional[str]:
    """A remote plugin source as agentrc's locator (`owner/repo[@ref]`, `URL[@ref]`), or None."""
    if isinstance(source, str):
        return source if source.startswith(("https://", "ssh://", "git@", "file://")) else None
    if not isinstance(source, dict):
        return None
    kind = source.get("source")
    ref = source.get("sha") or source.get("ref")  # the commit a marketplace pins, else its ref
    ref = ref if isinstance(ref, str) and re.fullmatch(r"[A-Za-z0-9._/-]{1,200}", ref) else None
    if kind == "github" and isinstance(source.get("repo"), str) and _REPO.fullmatch(source["repo"]):
        base = source["repo"]
    elif kind in ("url", "git", "git-subdir") and isinstance(source.get("url"), str) and \
            source["url"].startswith(("https://", "ssh://", "git@", "file://")):  # where it may lead: AR226
        base = source["url"]
    else:
        return None
    path = source.get("path")
    sub = _inside("", path) if isinstance(path, str) else ""
    if sub is None:
        return None
    return base + (f"@{ref}" if ref else "") + (f"#{sub}" if sub else "")


# --- a Copilot layout ----------------------------------------------------------------------

def _copilot(files: Dict[str, SourceFile], root: str) -> Optional[Part]:
    """Copilot's shapes, in `.github/` or at the root, as one Copilot project; None when
    neither holds any."""
    placed: Dict[str, Tuple[SourceFile, str]] = {}
    for rel, f in files.items():
        if rel.startswith(".github/") and any(rel.startswith(t + "/") for _, t, _ in COPILOT_DIRS):
            placed[rel] = (f, rel)
    at_root = any(rel.startswith(d + "/") and rel.endswith(suffix) for rel in files
                  for d, _, suffix in COPILOT_DIRS[:4])
    if at_root:
        for rel, f in files.items():
            for d, target, _ in COPILOT_DIRS:
                if rel.startswith(d + "/"):
                    placed.setdefault(f"{target}/{rel[len(d) + 1:]}", (f, rel))
    if not placed:
        return None
    for rel, f in files.items():  # what hooks and skills may name stays where it is
        if not rel.startswith(".github/") and not any(rel.startswith(d + "/") for d, _, _ in COPILOT_DIRS):
            if posixpath.basename(rel) not in NOT_CONTENT and rel not in (".vscode/mcp.json",):
                placed.setdefault(rel, (f, rel))
    for rel in (".vscode/mcp.json", ".mcp.json"):
        if rel in files:
            placed[rel] = (files[rel], rel)
    out, origins = [], {}
    for rel, (f, src) in sorted(placed.items()):
        display = _join(root, rel)
        out.append(SourceFile(display, f.content, f.executable, f.link))
        origins[display] = _join(root, src)
    return Part(None, "", "copilot", root or "", tuple(out), origins)


def natural_name(rel: str) -> Optional[str]:
    """The item name a placed path (relative to its part) gives by its own path, as the
    importers name items: a skill's directory, an agent's, command's or rule's file stem."""
    parts = rel.split("/")
    if len(parts) >= 4 and parts[0] in (".claude", ".github") and parts[1] == "skills":
        return parts[2]
    if len(parts) == 3 and parts[0] in (".claude", ".github"):
        base = parts[2]
        for suffix in (".agent.md", ".instructions.md", ".prompt.md", ".chatmode.md", ".md"):
            if base.endswith(suffix):
                return base[:-len(suffix)]
    return None


def origins_of(part: Part, names: Sequence[str]) -> Dict[str, List[str]]:
    """For each item name, the source paths it was read from: the files whose own path
    names it (`natural_name`); a name no path gives (a hook, an MCP server) maps to the part's
    files no such name claims (its hooks file and scripts, its manifest)."""
    by_name: Dict[str, List[str]] = {}
    for display, src in part.origins.items():
        rel = display[len(part.root) + 1:] if part.root else display
        n = natural_name(rel)
        if n is not None:
            by_name.setdefault(n, []).append(src)
    claimed = {src for paths in by_name.values() for src in paths}
    rest = sorted(set(part.origins.values()) - claimed) or sorted(set(part.origins.values()))
    return {n: sorted(set(by_name.get(n, []))) or rest for n in names}
