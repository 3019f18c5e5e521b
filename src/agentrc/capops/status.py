"""`agentrc cap status [--team]`: the souls of the agents root above the scope and each one's
instance homes, live, retained or quarantined, as the OAS kernel's `oas status` lists them.

Enters: the scope directory. Leaves: the kernel's document, `{root, agents}` (with `--team`,
`{team, roots: [{root, agents}]}` over the team scope's agents roots), and its text lines.
Reads only: nothing is written, no hook runs, tmux is only asked which windows it has.

Each agent is its `soul.yaml` read as the kernel reads it (top-level `key: value` lines, as
strings), with `name`, `kind` (persistent under agents/, local under local-agents/, or
capability for a capability-defined agent's instances) and `dir`; each instance is its
`instance.json`, or `{instance, home}` for a home that has none (a retained home), with
`running` (a tmux window of its name in the kernel's session) and, for a home an incomplete
rollback kept, `rollbackIncomplete` (its `.oas-rollback-incomplete.json`). Deliberate
differences: a name starting with `.` (agentrc's staged homes) or a link is not an instance;
an instance.json that cannot be read is reported as `{instance, home, unreadable: true}`
instead of the kernel's crash; and no agents root is AR265 (E_NO_DEPLOYMENT), not a
traceback.
"""

from __future__ import annotations

import os
import re
import subprocess

from agentrc.capops import instances as ci
from agentrc.capops.install import Outcome, fail
from agentrc.capops.spawn import MARKER, TMUX_SESSION, primary_checkout_path
from agentrc.inputs import captree
from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional

RESERVED = ("bin", "local-agents", "tmp-agents")
_FLAT = pattern(r"^([A-Za-z_][A-Za-z0-9_-]*):\s*(.*?)\s*(#.*)?$")


def status(scope: str, team: bool = False) -> Outcome:
    """The roster of `scope`'s agents root (or, with `team`, of every root of its team).
    Raises Failure (AR265) when there is none."""
    scope = os.path.abspath(scope)
    windows = tmux_windows()
    if team:
        declared = ci.team_of_dir(scope)
        if declared is None:
            raise fail(scope, "AR265", f"no team declared in the config chain from {scope}: add a team: block "
                       "(name, optional id) at the deployment scope", "E_NO_TEAM")
        roots = ci.team_roots(declared["scope"])
        doc = {"team": declared, "roots": [{"root": r, "agents": agents(r, windows)} for r in roots]}
        return Outcome(doc, _team_lines(doc))
    root = ci.agents_root(primary_checkout_path(scope))
    if root is None:
        raise fail(scope, "AR265", f"no agents/ or local-agents/ directory found walking up from {scope}: create one "
                   "(mkdir agents) or spawn a local soul", "E_NO_DEPLOYMENT")
    doc = {"root": root, "agents": agents(root, windows)}
    return Outcome(doc, _lines(doc))


def tmux_windows(session: str = TMUX_SESSION) -> List[str]:
    """The window names of the kernel's tmux session ([] without tmux or the session)."""
    try:
        proc = subprocess.run(["tmux", "list-windows", "-t", session, "-F", "#{window_name}"], capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return []
    if proc.returncode != 0:
        return []
    return [w for w in proc.stdout.decode("utf-8", "replace").split("\n") if w]


def read_flat(text: str) -> Dict[str, str]:
    """A soul.yaml as the kernel reads it: each top-level `key: value` line, the value a
    string without its quotes and its comment."""
    out: Dict[str, str] = {}
    for line in text.split("\n"):
        m = _FLAT.match(line)
        if m:
            out[m.group(1)] = re.sub(r"""^["']|["']$""", "", m.group(2))
    return out


def _soul(agent_dir: str, kind: str) -> Optional[Dict[str, Any]]:
    raw = captree.read_manifest(os.path.join(agent_dir, "soul"), "soul.yaml")
    if raw is None:
        return None
    soul: Dict[str, Any] = dict(read_flat(raw.decode("utf-8", "replace")))
    soul["name"] = soul.get("name") or os.path.basename(agent_dir)
    if soul.get("kind") == "tmp":
        soul["kind"] = "local"
    soul["kind"] = soul.get("kind") or kind
    return soul


def _bases(root: str) -> List[str]:
    """Where local souls live for a root: local-agents/ beside it, then the older places in it."""
    return [os.path.join(os.path.dirname(root), "local-agents"), os.path.join(root, "local-agents"),
            os.path.join(root, "tmp-agents")]


def _subdirs(base: str) -> List[str]:
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return []
    return [n for n in names if os.path.isdir(os.path.join(base, n)) and not os.path.islink(os.path.join(base, n))]


def agents(root: str, windows: List[str]) -> List[Dict[str, Any]]:
    """The kernel's `listInstances` of one agents root."""
    out: List[Dict[str, Any]] = []
    for base, kind in [(root, "persistent")] + [(b, "local") for b in _bases(root)]:
        for name in _subdirs(base):
            if kind == "persistent" and name in RESERVED:
                continue
            soul = _soul(os.path.join(base, name), kind)
            if soul is not None:
                out.append(dict(soul, dir=os.path.join(base, name),
                                instances=_instances(os.path.join(base, name), windows)))
    seen = {a["name"] for a in out}
    for base in _bases(root):
        for name in _subdirs(base):
            homes = _instances(os.path.join(base, name), windows) if name not in seen else []
            if not homes:
                continue
            cap = next((i["capability"] for i in homes if i.get("capability")), None)
            out.append({"name": name, "kind": "capability", "capability": cap,
                        "description": f"capability agent ({cap})" if cap else "capability agent",
                        "dir": os.path.join(base, name), "instances": homes})
            seen.add(name)
    return out


def _instances(agent_dir: str, windows: List[str]) -> List[Dict[str, Any]]:
    instances = os.path.join(agent_dir, "instances")
    if os.path.islink(instances):
        return []
    out = []
    for name in _subdirs(instances):
        if name.startswith("."):
            continue
        home = os.path.join(instances, name)
        present, meta = ci.read_json(os.path.join(home, ci.INSTANCE_FILE))
        row: Dict[str, Any] = dict(meta) if isinstance(meta, dict) else {"instance": name, "home": home}
        if present and not isinstance(meta, dict):
            row["unreadable"] = True
        row["running"] = (row.get("instance") or name) in windows
        marker_present, marker = ci.read_json(os.path.join(home, MARKER))
        if marker_present or os.path.lexists(os.path.join(home, MARKER)):
            row["rollbackIncomplete"] = marker if marker is not None else {"reason": "rollback incomplete"}
        out.append(row)
    return out


def _agent_lines(a: Dict[str, Any], indent: str = "  ") -> List[str]:
    local = " (local)" if a.get("kind") == "local" else ""
    lines = [f"{indent}{a['name']}{local}  [work: {a.get('work') or 'checkout'}, repo: {a.get('repo') or '?'}]"]
    if a.get("description"):
        lines.append(f"{indent}    {a['description']}")
    for i in a["instances"]:
        state = "QUARANTINED" if "rollbackIncomplete" in i else "RUNNING" if i["running"] else "idle"
        lines.append(f"{indent}    - {i.get('instance') or '?'}  {state}  (branch {i.get('branch') or '?'}, "
                     f"{i.get('work') or '?'})" + (f"  home {i['home']}" if "rollbackIncomplete" in i else ""))
    return lines


def _lines(doc: Dict[str, Any]) -> List[str]:
    lines = [f"agentrc cap status: agents root {doc['root']}", ""]
    if not doc["agents"]:
        return lines + ["  (no agents: spawn one with `agentrc cap spawn NAME --instructions-file FILE`)"]
    for a in doc["agents"]:
        lines += _agent_lines(a)
    return lines


def _team_lines(doc: Dict[str, Any]) -> List[str]:
    t = doc["team"]
    lines = [f"agentrc cap status: team {t['name']}{' (' + t['id'] + ')' if t.get('id') else ''}  "
             f"[scope: {t['scope']}]", ""]
    if not doc["roots"]:
        return lines + ["  (no agents/ directories in the team scope)"]
    for r in doc["roots"]:
        lines.append(f"  {r['root']}")
        if not r["agents"]:
            lines.append("    (no agents)")
        for a in r["agents"]:
            lines += _agent_lines(a, "    ")
    return lines
