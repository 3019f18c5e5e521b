"""Runtime closures of capabilities (spec 003: "A capability may carry a checked-in
package-lock.json for JS runtime dependencies; OAS materializes it with npm ci
--ignore-scripts only"), as the OAS kernel materializes them, so that both tools write the
same artifact and the same `integrity`.

A capability root holding both `package.json` and `package-lock.json` has a closure. Before
any `npm ci` of a package, every closure's lock is checked to be platform-invariant (npm
lockfileVersion >= 2; no production entry with os/cpu/libc constraints, optional, or an
install script): AR255. Then, in the staged capability root, `npm ci --omit=dev --omit=peer
--ignore-scripts --no-audit --no-fund` (the kernel's argv, so npm writes the same bytes);
a failure is AR256. The result is checked: every link under a `node_modules` resolves inside
the capability root (AR257, the kernel's path-escape) and no `.node` binary is in it (AR255).
The `node_modules` tree is then part of the artifact and its integrity; a package's payload
integrity leaves every `node_modules` out (captree.walk).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from typing import Any, List, Set

from agentrc.diagnostics import Diagnostics
from agentrc.inputs import captree

NPM_ARGV = ("npm", "ci", "--omit=dev", "--omit=peer", "--ignore-scripts", "--no-audit", "--no-fund")
NPM_TIMEOUT = 300
MAX_LOCK_BYTES = 16 << 20


def has_closure(cdir: str) -> bool:
    return all(os.path.isfile(os.path.join(cdir, f)) for f in ("package.json", "package-lock.json"))


def platform_variant(cdir: str) -> List[str]:
    """The production entries of the closure's npm lock that make it platform-variant (the
    kernel's list); an unreadable lock is left to npm ci, which fails closed."""
    try:
        with open(os.path.join(cdir, "package-lock.json"), "rb") as fh:
            parsed: Any = json.loads(fh.read(MAX_LOCK_BYTES + 1).decode("utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(parsed, dict):
        return []
    packages = parsed.get("packages")
    if not isinstance(packages, dict):
        return [f"(lockfile) unsupported npm lockfileVersion {parsed.get('lockfileVersion', 1)}: regenerate it with "
                "a modern npm (lockfileVersion >= 2) so the production closure can be checked"]
    out = []
    for path, e in packages.items():
        if not path or not isinstance(e, dict) or e.get("dev") or e.get("peer"):
            continue
        if isinstance(e.get("os"), list) or isinstance(e.get("cpu"), list) or e.get("libc"):
            out.append(f"{path} (os/cpu/libc constraint)")
        elif e.get("optional"):
            out.append(f"{path} (optional dependency: install-time variance)")
        elif e.get("hasInstallScript"):
            out.append(f"{path} (install script: the runtime likely expects what --ignore-scripts suppresses)")
    return out


def preflight(caps: List[Any], label_of: Any, d: Diagnostics) -> None:
    """AR255 for each closure (of `caps`, (rel, cdir, cap) rows) that is platform-variant."""
    for rel, cdir, cap in caps:
        if has_closure(cdir):
            variant = platform_variant(cdir)
            if variant:
                d.error(label_of(rel), (0, 0), "AR255", f"{cap.id}: platform-variant runtime closure: "
                        + ", ".join(variant))


def materialize(cdir: str, cid: str, label: str, d: Diagnostics) -> None:
    """Run npm ci in the staged capability root `cdir` (when it has a closure); what it made
    is checked by `check_deps` once the declared paths are (the kernel's order). Errors go
    to `d`."""
    if not has_closure(cdir):
        return
    try:
        proc = subprocess.run(list(NPM_ARGV), cwd=cdir, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=NPM_TIMEOUT)
        ok, why = proc.returncode == 0, proc.stderr.decode("utf-8", "replace").strip()[-400:]
    except subprocess.TimeoutExpired:
        ok, why = False, f"timed out after {NPM_TIMEOUT}s"
    except OSError as exc:
        ok, why = False, f"cannot run npm: {exc.strerror or exc}"
    if not ok:
        d.error(label, (0, 0), "AR256", f"{cid}: `{' '.join(NPM_ARGV)}` failed in the capability root: "
                f"{why or 'exit ' + str(proc.returncode)}")


def check_deps(cdir: str, cid: str, label: str, d: Diagnostics) -> None:
    """Every link under a node_modules of `cdir` resolves inside it (AR257), and no native
    `.node` binary is there (AR255)."""
    root = os.path.realpath(cdir)
    visited: Set[str] = set()

    def walk(directory: str, in_deps: bool, depth: int) -> None:
        real_dir = os.path.realpath(directory)
        if in_deps:
            if real_dir in visited or depth > 64:
                return
            visited.add(real_dir)
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            return
        for name in names:
            p = os.path.join(directory, name)
            now_in = in_deps or name == "node_modules"
            rel = os.path.relpath(p, cdir)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                if not now_in:
                    continue
                target = os.path.realpath(p)
                if not os.path.exists(target):
                    d.error(label, (0, 0), "AR257", f"{cid}: the runtime closure's link {rel} is broken")
                    continue
                if not captree.inside(root, target):
                    d.error(label, (0, 0), "AR257", f"{cid}: the runtime closure's link {rel} leads outside the "
                            f"capability root ({target})")
                    continue
                if os.path.isdir(target):
                    walk(target, True, depth + 1)
                elif target.endswith(".node"):
                    d.error(label, (0, 0), "AR255", f"{cid}: the runtime closure holds a native binary: {rel}")
            elif stat.S_ISDIR(st.st_mode):
                walk(p, now_in, depth + 1)
            elif now_in and stat.S_ISREG(st.st_mode) and name.endswith(".node"):
                d.error(label, (0, 0), "AR255", f"{cid}: the runtime closure holds a native binary: {rel}")

    walk(cdir, False, 0)
