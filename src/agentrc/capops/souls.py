"""The soul a spawn composes from (spec 003, souls): a capability-defined agent found and its
provider checked, a local soul written from --instructions-file or --def-file as the OAS
kernel writes it, the soul-scaffold hooks run with their ownership rules, and the files the
spawn's flags name read without blocking.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat

from agentrc.capabilities.model import CAPABILITY_FILE
from agentrc.capops import doctor as capdoctor
from agentrc.capops import install as capinstall
from agentrc.capops import instances as ci
from agentrc.capops import safe as capsafe
from agentrc.capops.hooks import inside, run_hooks
from agentrc.capops.install import Failure, fail
from agentrc.capops.instances import SpawnOptions
from agentrc.diagnostics import Diagnostics
from agentrc.inputs import captree
from agentrc.text.yamlpos import YamlError
from agentrc.text.yamlpos import load as load_yaml

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple

MAX_TASK_BYTES = 1 << 20
SCAFFOLD_OWNERS = ".oas-scaffold-owners.json"
_LOCAL_ORDER = ("name", "kind", "description", "type", "repo", "work", "runtime", "model")


def yaml_map(raw: Optional[bytes]) -> Dict[str, Any]:
    """A soul.yaml's mapping; {} when it is missing, not YAML, or not a mapping."""
    if raw is None:
        return {}
    try:
        doc = load_yaml(raw.decode("utf-8", "replace")).data
    except YamlError:
        return {}
    return doc if isinstance(doc, dict) else {}


# --- a capability-defined agent -----------------------------------------------------------


def capability_agent(scope: str, name: str) -> Optional[Tuple[str, Any, str]]:
    """(capability id, manifest, soul directory) of the capability-defined agent `name`: a
    soul directory listed in the `agents:` of a capability that the config chain at `scope`
    declares (in any binding) and that is acquired, named by its soul.yaml's `name:` (else its
    directory). The provider must be trusted as the kernel requires (owned or path:, or
    installed matching its lock's integrity; no executable approval needed) and the soul must
    stay inside it: else AR258. None when no declared capability provides `name`."""
    try:
        chain = capdoctor.config_chain(scope)
        found = capdoctor.acquired(chain)
    except Failure:
        return None
    problems: List[str] = []
    for cid in dict.fromkeys(entry.id for cfg in chain for entry in cfg.entries):
        if cid not in found:
            continue
        cap, origin, cdir = found[cid]
        for rel in cap.agents:
            sdir = os.path.join(cdir, rel)
            if not _names(cdir, sdir, name):
                continue
            problem = _provider_problem(cid, cap, origin, cdir, sdir, rel)
            if problem:
                problems.append(problem)
                continue
            return cid, cap, os.path.realpath(sdir)
    if problems:
        raise fail(scope, "AR258", problems[0], "E_SPAWN_FAILED")
    return None


def _names(cdir: str, sdir: str, name: str) -> bool:
    """Whether the soul directory `sdir` (inside the capability `cdir`) is the agent `name`."""
    raw = captree.read_manifest(sdir, "soul.yaml") if inside(cdir, sdir) else None
    if raw is None:
        return False
    try:
        doc = load_yaml(raw.decode("utf-8", "replace")).data
    except YamlError:
        return False
    declared_name = doc.get("name") if isinstance(doc, dict) and isinstance(doc.get("name"), str) else ""
    return (declared_name or os.path.basename(os.path.normpath(sdir))) == name


def _provider_problem(cid: str, cap: Any, origin: str, cdir: str, sdir: str, rel: str) -> str:
    """Why the agent at `sdir` cannot be spawned from its provider `cid` ("" when it can)."""
    if not _provider_trusted(cid, origin, cdir):
        return (f"capability agent provider {cid!r} is not trusted: its artifact does not match its lock's integrity "
                "(restore it with `agentrc cap install`)")
    d = Diagnostics()
    captree.check_contained(cdir, cap, os.path.join(cdir, CAPABILITY_FILE), d)
    if d.has_errors or not os.path.isfile(os.path.join(sdir, "AGENTS.md")):
        return (f"{cid}: the agent {rel!r} is not a self-contained soul inside the capability (soul.yaml and "
                "AGENTS.md, no link leading out)")
    return ""


def _provider_trusted(cid: str, origin: str, cdir: str) -> bool:
    if origin.startswith(("owned:", "path:")):
        return True
    if not origin.startswith("installed:"):
        return False
    try:
        lock = capinstall.read_lock(origin.split(":", 1)[1])
    except Failure:
        return False
    row = lock.capability(cid) if lock is not None and lock.version == 2 else None
    return row is not None and capinstall.hash_or_empty(cdir) == row.integrity


# --- a local soul -------------------------------------------------------------------------


def _front_matter(text: str) -> Tuple[Dict[str, str], str]:
    """The kernel's flat front matter: `key: value` lines between `---` fences (quotes and
    `# comments` dropped), and the body trimmed with one final newline."""
    m = re.match(r"^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$", text)
    if not m:
        return {}, text
    meta: Dict[str, str] = {}
    for line in m.group(1).split("\n"):
        f = re.match(r"^([A-Za-z_][A-Za-z0-9_-]*):\s*(.*?)\s*(#.*)?$", line)
        if f:
            meta[f.group(1)] = re.sub(r"^[\"']|[\"']$", "", f.group(2))
    return meta, m.group(2).strip() + "\n"


def upsert_local_soul(scope: str, name: str, opts: SpawnOptions, notify: Callable[[str], None]) -> None:
    """Create or update the local soul `local-agents/<name>/soul/` (soul.yaml, AGENTS.md,
    CLAUDE.md -> AGENTS.md) from --instructions-file or --def-file, as the kernel's spawn
    does before it spawns: flags win over the definition's front matter, which wins over
    the existing soul.yaml. A persistent soul of that name, an unreadable file, or a value
    with a line break (it would add keys to soul.yaml) is AR179 (E_BAD_ARGS). The
    soul-scaffold hooks run later in the spawn (`scaffold_soul`), once the active
    capabilities are known."""
    root = ci.agents_root(scope) or os.path.join(scope, "agents")
    slugged = ci.slug(name)
    if os.path.isfile(os.path.join(root, slugged, "soul", "soul.yaml")):
        raise fail(scope, "AR179", f"{slugged!r} is a persistent agent: spawn it without --instructions-file/"
                   "--def-file", "E_BAD_ARGS")
    instructions, fields = _definition(scope, opts)
    agent_dir = os.path.join(os.path.dirname(root), "local-agents", slugged)
    soul_dir = os.path.join(agent_dir, "soul")
    existing = yaml_map(captree.read_manifest(soul_dir, "soul.yaml") if os.path.isdir(soul_dir) else None)
    record = _soul_record(scope, slugged, fields, existing)
    for p in (os.path.dirname(agent_dir), agent_dir, soul_dir):
        if os.path.islink(p):
            raise fail(p, "AR179", f"{p} is a link; a local soul is written only in the scope's own local-agents/",
                       "E_BAD_ARGS")
    os.makedirs(soul_dir, exist_ok=True)
    os.makedirs(os.path.join(agent_dir, "instances"), exist_ok=True)
    ci.write_file(os.path.join(soul_dir, "soul.yaml"),
                  ("\n".join(f"{k}: {record[k]}" for k in _LOCAL_ORDER if k in record) + "\n").encode("utf-8"),
                  root=agent_dir)
    if instructions is not None:
        ci.write_file(os.path.join(soul_dir, "AGENTS.md"), instructions.encode("utf-8"), root=agent_dir)
    if not os.path.lexists(os.path.join(soul_dir, "CLAUDE.md")):
        os.symlink("AGENTS.md", os.path.join(soul_dir, "CLAUDE.md"))
    notify(f"(local soul {slugged!r} written at {soul_dir})")


def _definition(scope: str, opts: SpawnOptions) -> Tuple[Optional[str], Dict[str, str]]:
    """(instructions, soul.yaml fields) from --instructions-file, --def-file and the flags."""

    def read(path: str) -> str:
        return read_bounded(scope, path, "AR179", f"file not found: {os.path.abspath(path)}", path)

    instructions: Optional[str] = read(opts.instructions_file) if opts.instructions_file else None
    fields: Dict[str, str] = {}
    if opts.def_file:
        meta, instructions = _front_matter(read(opts.def_file))
        fields = {k: meta[k] for k in ("description", "model", "repo", "work", "runtime") if meta.get(k)}
    for key, flag in (("repo", opts.repo), ("work", opts.work), ("runtime", opts.runtime), ("model", opts.model)):
        if flag:
            fields[key] = flag
    return instructions, fields


def _soul_record(scope: str, slugged: str, fields: Dict[str, str], existing: Dict[str, Any]) -> Dict[str, str]:
    """The local soul's soul.yaml: the fields over what it held, work and runtime defaulted;
    AR179 for a value with a line break."""
    record: Dict[str, str] = {"name": slugged, "kind": "local"}
    for key in ("description", "type", "repo", "work", "runtime", "model"):
        value = fields.get(key) or existing.get(key)
        if key == "work":
            value = value or "checkout"
        if key == "runtime":
            value = value or "pi"
        if isinstance(value, str) and value:
            record[key] = value
    bad = [k for k, v in record.items() if "\n" in v or "\r" in v]
    if bad:
        raise fail(scope, "AR179", f"the local soul's {', '.join(bad)} would hold a line break", "E_BAD_ARGS")
    return record


# --- the soul-scaffold hooks --------------------------------------------------------------


def _soul_snapshot(soul_dir: str) -> Dict[str, Tuple[str, bytes]]:
    """Every file and link below the soul (links not followed), as the kernel snapshots it
    around a soul-scaffold hook; the owners file is not part of it."""
    out: Dict[str, Tuple[str, bytes]] = {}
    for top, dirs, files in os.walk(soul_dir):
        for name in sorted(dirs + files):
            path = os.path.join(top, name)
            rel = os.path.relpath(path, soul_dir).replace(os.sep, "/")
            if rel == SCAFFOLD_OWNERS:
                continue
            if os.path.islink(path):
                out[rel] = ("link", os.readlink(path).encode("utf-8", "surrogateescape"))
                if name in dirs:
                    dirs.remove(name)  # a linked directory is one entry, never walked into
            elif os.path.isfile(path):
                with open(path, "rb") as fh:
                    out[rel] = ("file", fh.read())
    return out


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.unlink(path)


def _restore_snapshot(soul_dir: str, before: Dict[str, Tuple[str, bytes]], after: Dict[str, Tuple[str, bytes]]) -> None:
    for rel in after:
        if rel not in before:
            _remove(os.path.join(soul_dir, rel))
    for rel, (kind, value) in before.items():
        if after.get(rel) == (kind, value):
            continue
        path = os.path.join(soul_dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        _remove(path)
        if kind == "link":
            os.symlink(value.decode("utf-8", "surrogateescape"), path)
        else:
            ci.write_file(path, value, root=soul_dir)


def _owners(soul_dir: str) -> Dict[str, str]:
    """The scaffold owners file: which capability created which file of the soul."""
    raw = captree.read_manifest(soul_dir, SCAFFOLD_OWNERS)
    if raw is None:
        return {}
    try:
        loaded = json.loads(raw.decode("utf-8", "replace"))
    except ValueError:
        return {}
    return {k: v for k, v in loaded.items() if isinstance(k, str) and isinstance(v, str)} \
        if isinstance(loaded, dict) else {}


def scaffold_soul(soul_dir: str, name: str, caps: List[Dict[str, Any]], env: Dict[str, str]) -> List[str]:
    """The soul-scaffold hooks of the active, trusted capabilities, run in the soul (cwd) one
    capability at a time, as the kernel runs them when it writes a soul: each may create
    files and change the ones it created before (`.oas-scaffold-owners.json` records which
    capability created what); changing or deleting a file it does not own, or creating one
    another capability owns, restores the soul as it was before that hook and fails the
    spawn (AR260). A failing hook only warns (soul-scaffold cannot be required). Returns
    the warnings."""
    owners = _owners(soul_dir)
    warnings: List[str] = []
    ran = False
    for cap in caps:
        if not (cap.get("hooks") or {}).get("soul-scaffold"):
            continue
        ran = True
        before = _soul_snapshot(soul_dir)
        result = run_hooks("soul-scaffold", [cap], env, soul_dir, {})
        warnings += result["warnings"]
        after = _soul_snapshot(soul_dir)
        conflicts = [rel for rel, entry in after.items()
                     if (rel in before and before[rel] != entry and owners.get(rel) != cap["id"])
                     or (rel not in before and owners.get(rel) not in (None, cap["id"]))]
        conflicts += [rel for rel in before if rel not in after and owners.get(rel) != cap["id"]]
        if conflicts:
            _restore_snapshot(soul_dir, before, after)
            raise fail(soul_dir, "AR260", f"soul-scaffold ownership conflict: {cap['id']} attempted "
                       + ", ".join(sorted(set(conflicts))), "E_SPAWN_FAILED")
        for rel in after:
            if rel not in before:
                owners[rel] = cap["id"]
    if ran and owners:
        ci.write_file(os.path.join(soul_dir, SCAFFOLD_OWNERS), (json.dumps(owners, indent=2) + "\n").encode("utf-8"))
    return warnings


# --- files the flags name -----------------------------------------------------------------


def read_task(scope: str, path: str) -> str:
    """The text of --task-file (a regular file, at most MAX_TASK_BYTES), else AR254."""
    return read_bounded(scope, path, "AR254", f"--task-file not found: {path}", f"--task-file {path}")


def read_bounded(scope: str, path: str, code: str, missing: str, shown: str) -> str:
    """The text of a file a flag names (it may be anywhere: the user named it), read with the
    bounded reader (`capsafe.read_bounded`): a missing file is `code` (E_BAD_ARGS) with
    `missing`; a FIFO, `/dev/stdin`, a device or a directory is AR054 and never opened, so
    the spawn cannot block on it; larger than MAX_TASK_BYTES is `code` again."""
    if not os.path.lexists(path):
        raise fail(scope, code, f"{missing} (No such file or directory)", "E_BAD_ARGS")
    try:
        st = os.stat(path)
    except (OSError, RecursionError):
        st = None
    if st is not None and stat.S_ISREG(st.st_mode) and st.st_size > MAX_TASK_BYTES:
        raise fail(scope, code, f"{shown} is larger than {MAX_TASK_BYTES} bytes", "E_BAD_ARGS")
    try:
        data = capsafe.read_bounded(path, path, shown)
    except capsafe.Escape as exc:
        raise fail(scope, "AR054", exc.message, "E_BAD_ARGS") from None
    if len(data) > MAX_TASK_BYTES:
        raise fail(scope, code, f"{shown} is larger than {MAX_TASK_BYTES} bytes", "E_BAD_ARGS")
    return data.decode("utf-8", "replace")
