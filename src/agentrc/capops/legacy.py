"""The legacy kernel-marketplace exception of spec 003: a capability installed under a
lockfileVersion 1 lock row whose source is `marketplace:ID@VERSION` (the kernel's bundled
capabilities before packages existed) may declare skills outside its own directory
(`../../skills/skill-craft`), because they ship with the OAS kernel beside it, not in the
artifact. `oas doctor` and `oas spawn` resolve such a path against the kernel's own copy of
the capability (`<kernel>/capabilities/<dir>`, the one whose `oas.json` names the same id),
then against the kernel's root, and never outside the kernel.

Those skills are not agentrc's to ship, so agentrc resolves them through an installed kernel:
`oas root` (run with a fixed argv, bounded in time and output, its answer checked to be the
directory of a kernel) when `oas` is on PATH. Without one the entry is reported as needing it
(AR270, naming the command), never as a path escape; a path that exists next to the artifact
or leads out of the kernel is still AR156. Everything else about the capability is read as
`parse_capability` reads it.

Enters: an installed capability's directory and its scope. Leaves: the `Capability` with
each resolved skill as an absolute path (an unresolved one kept as declared, so a caller that
looks for it finds nothing there), and the list of what still needs the kernel.
"""

from __future__ import annotations

import dataclasses
import json
import os
import select
import shutil
import subprocess
import time

from agentrc.capabilities.manifest import lexical_escape, parse_capability
from agentrc.capabilities.model import CAPABILITY_FILE, LOCK_FILE, Capability
from agentrc.capops import safe as capsafe
from agentrc.capops.failure import Failure
from agentrc.diagnostics import Diagnostics
from agentrc.inputs import captree

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, Iterable, List, Optional, Tuple

ROOT_ARGV = ("oas", "root")
ROOT_COMMAND = " ".join(ROOT_ARGV)
ROOT_TIMEOUT = 10.0
MAX_ROOT_OUTPUT = 4096
_roots: Dict[str, Optional[str]] = {}


def kernel_root() -> Optional[str]:
    """The installed OAS kernel's directory as `oas root` prints it, or None: no `oas` on
    PATH, a failure, a timeout, more output than a path, or an answer that is not an
    absolute path to a directory holding the kernel's `capabilities/` and `skills/`.
    Asked once per `oas` program per process."""
    program = shutil.which(ROOT_ARGV[0])
    if program is None:
        return None
    if program not in _roots:
        _roots[program] = _ask_root(program)
    return _roots[program]


def _ask_root(program: str) -> Optional[str]:
    try:
        proc = subprocess.Popen([program, *ROOT_ARGV[1:]], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
    except OSError:
        return None
    out = _read_bounded(proc)
    if out is None or proc.returncode != 0:
        return None
    text = out.decode("utf-8", "replace").strip()
    if "\n" in text or not os.path.isabs(text):
        return None
    try:
        root = capsafe.real(text)
    except capsafe.Escape:
        return None
    ok = all(os.path.isdir(os.path.join(root, d)) for d in ("capabilities", "skills"))
    return root if ok else None


def _readable(fd: int, timeout: float) -> bool:
    """Whether `fd` has something to read (or its end) within `timeout` seconds. poll, not
    select: select refuses a descriptor numbered 1024 or above, which a long-lived process
    with many files open hands out."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(timeout * 1000))


def _read_bounded(proc: "subprocess.Popen[bytes]") -> Optional[bytes]:
    """The process's output once it exits, or None (killed) past the time or size bound."""
    assert proc.stdout is not None
    deadline = time.monotonic() + ROOT_TIMEOUT
    out = b""
    while True:
        left = deadline - time.monotonic()
        ready = left > 0 and _readable(proc.stdout.fileno(), left)
        chunk = os.read(proc.stdout.fileno(), MAX_ROOT_OUTPUT) if ready else None
        if chunk == b"":
            break
        if chunk is None or len(out) + len(chunk) > MAX_ROOT_OUTPUT:
            proc.kill()
            proc.wait()
            proc.stdout.close()
            return None
        out += chunk
    proc.stdout.close()
    try:
        proc.wait(max(deadline - time.monotonic(), 0.1))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None
    return out


def marketplace_row(level: str, cid: str) -> Optional[Dict[str, Any]]:
    """The lockfileVersion 1 row of `cid` at `level` when its source is `marketplace:`."""
    raw = captree.read_manifest(level, LOCK_FILE)
    try:
        data = json.loads(raw.decode("utf-8")) if raw is not None else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("lockfileVersion") != 1:
        return None
    row = (data.get("capabilities") or {}).get(cid) if isinstance(data.get("capabilities"), dict) else None
    ok = isinstance(row, dict) and str(row.get("source", "")).startswith("marketplace:")
    return row if ok else None


def _anchor(root: str, cid: str) -> Optional[str]:
    """The kernel's own directory of capability `cid` (found by the id its oas.json names)."""
    base = os.path.join(root, "capabilities")
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return None
    for name in names:
        raw = captree.read_manifest(os.path.join(base, name), CAPABILITY_FILE)
        try:
            doc = json.loads(raw.decode("utf-8")) if raw is not None else None
        except (ValueError, RecursionError):
            continue
        if isinstance(doc, dict) and doc.get("capability") == cid:
            return os.path.join(base, name)
    return None


def _in_kernel(cid: str, version: str, locked: Optional[str], rel: str) -> Tuple[Optional[str], str]:
    """(absolute path, "") of a declared path through the installed kernel, else (None, why)."""
    root = kernel_root()
    if root is None:
        return None, f"it ships with the OAS kernel, and no installed kernel answers `{ROOT_COMMAND}`"
    if locked is not None and locked != version:
        return None, (f"the lock pins {locked} but the installed copy is {version}; delete the copy and install "
                      f"{cid} again")
    anchor = _anchor(root, cid)
    if anchor is None:
        return None, f"the installed OAS kernel at {root} does not ship {cid}"
    for candidate in (os.path.normpath(os.path.join(anchor, rel)), os.path.normpath(os.path.join(root, rel))):
        if not os.path.exists(candidate):
            continue
        try:
            inside = captree.inside(root, capsafe.real(candidate))
        except capsafe.Escape:
            inside = False
        return (candidate, "") if inside else (None, f"it leads out of the OAS kernel at {root}")
    return None, f"the installed OAS kernel at {root} has no {rel}"


def _escaping(data: Dict[str, Any]) -> List[str]:
    """The declared skills that lead out of the capability; a `skills` that is not a list is
    the manifest parser's to report (AR150), never a crash here."""
    skills = data.get("skills")
    return [s for s in skills if isinstance(s, str) and lexical_escape(s)] if isinstance(skills, list) else []


def parse(directory: str, level: str, d: Diagnostics) -> Optional[Capability]:
    """The capability installed at `directory` (in `level`'s installed/), as
    `parse_capability` reads it, except that a legacy marketplace capability's skills
    outside its directory resolve through the installed kernel (absolute paths), and one
    that does not is kept as declared (`pending` names it). Errors go to `d`."""
    path = os.path.join(directory, CAPABILITY_FILE)
    raw = captree.read_manifest(directory, CAPABILITY_FILE)
    if raw is None:
        return None
    first = Diagnostics()
    cap = parse_capability(path, raw, first)
    if cap is not None:
        return cap
    resolved = _legacy(directory, level, raw)
    if resolved is None:
        d.extend(first.items)
        return None
    data, skills = resolved
    kept = Diagnostics()
    cap = parse_capability(path, json.dumps(data).encode(), kept)
    if cap is None:
        d.extend(first.items)
        return None
    return dataclasses.replace(cap, skills=tuple(skills))


def _legacy(directory: str, level: str, raw: bytes) -> Optional[Tuple[Dict[str, Any], List[str]]]:
    """For a legacy marketplace capability with skills outside its directory, none of them
    present beside it: its manifest without those skills, and its skills in declared order
    (resolved ones absolute). None otherwise."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("capability"), str):
        return None
    outside = _escaping(data)
    row = marketplace_row(level, data["capability"]) if outside else None
    if row is None or any(os.path.lexists(os.path.join(directory, rel)) for rel in outside):
        return None
    skills = []
    for rel in data["skills"]:
        if rel in outside:
            found, _why = _in_kernel(data["capability"], str(data.get("version", "")), row.get("version"), rel)
            skills.append(found or rel)
        else:
            skills.append(rel)
    return dict(data, skills=[s for s in data["skills"] if s not in outside]), skills


def pending(found: Dict[str, Tuple[Capability, str, str]], ids: Iterable[str]) -> List[Tuple[str, str, str, str]]:
    """(capability id, its directory, declared skill, why) for each skill of a capability
    of `ids` that the legacy exception admits but no installed kernel resolves."""
    out = []
    for cid in ids:
        cap, origin, cdir = found[cid]
        if not origin.startswith("installed:"):
            continue
        level = origin.split(":", 1)[1]
        row = None
        for rel in cap.skills:
            if os.path.isabs(rel) or not lexical_escape(rel):
                continue
            row = row or marketplace_row(level, cid)
            if row is not None:
                why = _in_kernel(cid, cap.version, row.get("version"), rel)[1]
                out.append((cid, cdir, rel, why or "it did not resolve"))
    return out


def report(found: Dict[str, Tuple[Capability, str, str]], ids: Iterable[str], d: Diagnostics,
           error: bool = False) -> List[Dict[str, Any]]:
    """AR270 (a warning, or an error with `error`) for each `pending` skill, and the rows
    `cap doctor --json` lists under `needsKernel`."""
    rows: Dict[str, Dict[str, Any]] = {}
    for cid, cdir, rel, why in pending(found, ids):
        message = (f"{cid!r} declares the skill {rel!r} of the OAS kernel's marketplace (a lockfileVersion 1 "
                   f"entry): {why}; install the OAS kernel so that `{ROOT_COMMAND}` prints its directory")
        (d.error if error else d.warning)(os.path.join(cdir, CAPABILITY_FILE), (0, 0), "AR270", message)
        rows.setdefault(cid, {"capability": cid, "dir": cdir, "skills": [], "command": ROOT_COMMAND,
                              "reason": why})["skills"].append(rel)
    return list(rows.values())


def require(found: Dict[str, Tuple[Capability, str, str]], ids: Iterable[str], kernel_code: str) -> None:
    """Raise Failure (AR270, `kernel_code`) when a capability of `ids` needs a kernel that is
    not installed: for a verb that composes the skills (spawn), never a silent omission."""
    d = Diagnostics()
    report(found, ids, d, error=True)
    if d.has_errors:
        raise Failure(d.items, kernel_code)
