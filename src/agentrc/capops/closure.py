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

npm runs hardened (issue 30; stricter than the OAS kernel, which runs `npm ci` as it is):
`--ignore-scripts` does not stop npm from running the `git` a package's `.npmrc` names, nor
from copying a `file:` dependency from anywhere on the disk, so before npm runs, a capability
whose closure ships its own `.npmrc`, a package.json or package-lock.json that is a link
leading out of the package (npm would read it there), or whose package.json or
package-lock.json names a git dependency (`git+...`, `git:`, `github:`, `user/repo`...) or a
`file:`, `link:` or path dependency resolving outside the package, is refused (AR242). npm
then runs with a user and a global config agentrc writes (empty), `--prefix` the capability
root (so no project config or workspace root above it is read), `git` pinned to the real git,
its cache under agentrc's cache directory, `--install-links=false`, and none of those
settings taken from the environment (`npm_config_*`).
"""

from __future__ import annotations

import json
import os
import posixpath
import shutil
import stat
import subprocess
import tempfile

from agentrc.capops import safe as capsafe
from agentrc.diagnostics import Diagnostics
from agentrc.fdio import read_regular
from agentrc.inputs import captree
from agentrc.inputs import fetch as gitfetch
from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, Iterator, List, Optional, Set, Tuple

NPM_ARGV = ("npm", "ci", "--omit=dev", "--omit=peer", "--ignore-scripts", "--no-audit", "--no-fund")
NPM_TIMEOUT = 300
MAX_LOCK_BYTES = 16 << 20


def has_closure(cdir: str) -> bool:
    return all(os.path.isfile(os.path.join(cdir, f)) for f in ("package.json", "package-lock.json"))


def platform_variant(cdir: str, package_root: str = "") -> List[str]:
    """The production entries of the closure's npm lock that make it platform-variant (the
    kernel's list); an unreadable lock is left to npm ci, which fails closed."""
    parsed = _json(os.path.join(cdir, "package-lock.json"), package_root or cdir)
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


def preflight(caps: List[Any], label_of: Any, d: Diagnostics, package_root: str = "") -> None:
    """AR255 for each closure (of `caps`, (rel, cdir, cap) rows) that is platform-variant;
    AR242 for one that ships an `.npmrc`, links a closure file out of `package_root` or
    reaches outside it (`refused`)."""
    for rel, cdir, cap in caps:
        if has_closure(cdir):
            for why in refused(cdir, package_root or cdir):
                d.error(label_of(rel), (0, 0), "AR242", f"{cap.id}: {why}; npm is not run")
            variant = platform_variant(cdir, package_root or cdir)
            if variant:
                d.error(label_of(rel), (0, 0), "AR255", f"{cap.id}: platform-variant runtime closure: "
                        + ", ".join(variant))


GIT_PREFIXES = ("git+", "git:", "github:", "gitlab:", "bitbucket:", "gist:")
_SHORTHAND = pattern(r"[A-Za-z0-9][\w.-]*/[\w.-]+(?:#.*)?")
_SPEC_MAPS = ("dependencies", "optionalDependencies", "devDependencies", "peerDependencies")
# npm settings agentrc decides, never the environment: where configs are read, what runs, where
# npm writes.
PINNED = frozenset(("userconfig", "globalconfig", "git", "cache", "prefix", "install_links", "ignore_scripts",
                    "script_shell", "shell", "workspaces", "workspace", "include_workspace_root", "global",
                    "location", "node_options", "onload_script", "npm_config_userconfig"))


def refused(cdir: str, package_root: str) -> List[str]:
    """Why npm must not run in the capability root `cdir`: its own `.npmrc` (npm would read
    it as the project's config: `git=`, `cache=`, `install-links=`), or a dependency of its
    package.json or package-lock.json that is a git one or a local path resolving outside
    `package_root`; or a package.json or package-lock.json that is a symbolic link leading out
    of `package_root` (npm would read it there; agentrc reads nothing outside the package).
    Other unreadable files are left to npm, which fails closed."""
    out = []
    if os.path.lexists(os.path.join(cdir, ".npmrc")):
        out.append("the runtime closure ships its own .npmrc, which npm would read as its configuration "
                   "(agentrc runs npm only with its own)")
    for name in ("package.json", "package-lock.json"):
        if _within(os.path.join(cdir, name), package_root) is None:
            out.append(f"the runtime closure's {name} is a symbolic link leading out of the package, which "
                       "npm would follow")
    for where, spec, base in _specs(cdir, package_root):
        why = _spec_problem(spec, base, package_root)
        if why:
            out.append(f"{where}: {why}")
    return out


def _within(path: str, package_root: str) -> Optional[str]:
    """The path to read for the closure file `path`: itself, or where it leads when it is a
    link resolving inside `package_root` (packages may carry links); None when it leads out."""
    if not os.path.islink(path):
        return path
    try:
        real = capsafe.real(path)
    except capsafe.Escape:
        return None
    return real if captree.inside(capsafe.real(package_root), real) else None


def _json(path: str, package_root: str) -> Any:
    """The package's own JSON file (through a link only inside `package_root`), None when it
    is not a regular file (a FIFO is not blocked on), leads out of the package or is not JSON."""
    target = _within(path, package_root)
    if target is None:
        return None
    try:
        return json.loads(read_regular(target, MAX_LOCK_BYTES)[0].decode("utf-8"))
    except (OSError, ValueError):
        return None


def _specs(cdir: str, package_root: str) -> Iterator[Tuple[str, str, str]]:
    """(where, spec, directory it is relative to) of every dependency spec and local path
    the closure's package.json and package-lock.json hold."""
    manifest = _json(os.path.join(cdir, "package.json"), package_root)
    if isinstance(manifest, dict):
        yield from _spec_maps("package.json", manifest, cdir)
        yield from _strings("package.json overrides", manifest.get("overrides"), cdir)
        spaces = manifest.get("workspaces")
        spaces = spaces.get("packages") if isinstance(spaces, dict) else spaces
        for w in spaces if isinstance(spaces, list) else ():
            if isinstance(w, str):
                yield "package.json workspaces", f"file:{w}", cdir
    lock = _json(os.path.join(cdir, "package-lock.json"), package_root)
    packages = lock.get("packages") if isinstance(lock, dict) else None
    for key, entry in packages.items() if isinstance(packages, dict) else ():
        where = f"package-lock.json {key or '(root)'!r}"
        if key and not key.startswith("node_modules/"):
            yield where, f"file:{key}", cdir
        if not isinstance(entry, dict):
            continue
        for field in ("version", "resolved"):
            value = entry.get(field)
            if isinstance(value, str):
                link = field == "resolved" and entry.get("link") is True
                yield where, (f"file:{value}" if link else value), cdir
        yield from _spec_maps(where, entry, cdir)


def _spec_maps(where: str, doc: Dict[str, Any], base: str) -> Iterator[Tuple[str, str, str]]:
    for key in _SPEC_MAPS:
        specs = doc.get(key)
        for name, spec in specs.items() if isinstance(specs, dict) else ():
            if isinstance(spec, str):
                yield f"{where} {key} {name!r}", spec, base


def _strings(where: str, value: Any, base: str, depth: int = 0) -> Iterator[Tuple[str, str, str]]:
    if depth > 32:
        return
    if isinstance(value, str):
        yield where, value, base
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(where, v, base, depth + 1)


def _spec_problem(spec: str, base: str, package_root: str) -> Optional[str]:
    """Why the dependency spec `spec` (relative to `base`) is refused, or None."""
    s = spec.strip()
    low = s.lower()
    if low.startswith("npm:") and "@" in s[5:]:
        return _spec_problem(s[4:][s[4:].rindex("@") + 1:], base, package_root)
    if low.startswith(GIT_PREFIXES) or _SHORTHAND.fullmatch(s):
        return f"{spec!r} is a git dependency (npm would run git on it)"
    if low.startswith(("file:", "link:")):
        path = s[5:]
    elif s.startswith((".", "/", "~")):
        path = s
    else:
        return None
    if path.startswith("~"):
        return f"{spec!r} is a path in a home directory, outside the package"
    full = posixpath.normpath(path if path.startswith("/") else os.path.join(base, path))
    try:
        inside = captree.inside(capsafe.real(package_root), capsafe.real(full))
    except capsafe.Escape:
        inside = False
    return None if inside else f"{spec!r} resolves outside the package"


def npm_cache() -> str:
    """npm's cache: `npm/` beside the sources in agentrc's cache directory."""
    return os.path.join(os.path.dirname(gitfetch.cache_dir()), "npm")


def npm_command(cdir: str, configs: str) -> Tuple[List[str], Dict[str, str]]:
    """The argv (the kernel's, plus agentrc's settings) and environment npm runs with;
    `configs` is a directory for the (empty) user and global config files."""
    user, glob = os.path.join(configs, "npmrc-user"), os.path.join(configs, "npmrc-global")
    for path in (user, glob):
        with open(path, "wb"):
            pass
    argv = list(NPM_ARGV) + [f"--userconfig={user}", f"--globalconfig={glob}", f"--prefix={cdir}",
                             f"--cache={npm_cache()}", f"--git={shutil.which('git') or 'git'}",
                             "--install-links=false"]
    env = {k: v for k, v in os.environ.items()
           if not (k.lower().startswith("npm_config_") and k.lower()[len("npm_config_"):].replace("-", "_") in PINNED)}
    return argv, env


def materialize(cdir: str, cid: str, label: str, d: Diagnostics) -> None:
    """Run npm ci in the staged capability root `cdir` (when it has a closure); what it made
    is checked by `check_deps` once the declared paths are (the kernel's order). Errors go
    to `d`."""
    if not has_closure(cdir):
        return
    try:
        with tempfile.TemporaryDirectory(prefix="agentrc-npm-") as configs:
            argv, env = npm_command(cdir, configs)
            proc = subprocess.run(argv, cwd=cdir, stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=NPM_TIMEOUT, env=env)
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
    _DepsWalk(cdir, cid, label, d).walk(cdir, False, 0)


class _DepsWalk:
    """One walk of a capability root for `check_deps`: directories in name order, links
    outside node_modules left alone, each resolved directory under node_modules entered once
    and no deeper than 64 levels."""

    def __init__(self, cdir: str, cid: str, label: str, d: Diagnostics):
        self.cdir, self.cid, self.label, self.d = cdir, cid, label, d
        self.root = os.path.realpath(cdir)
        self.visited: Set[str] = set()

    def walk(self, directory: str, in_deps: bool, depth: int) -> None:
        if in_deps:
            real_dir = os.path.realpath(directory)
            if real_dir in self.visited or depth > 64:
                return
            self.visited.add(real_dir)
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            return
        for name in names:
            p = os.path.join(directory, name)
            now_in = in_deps or name == "node_modules"
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                if now_in:
                    self.link(p, depth)
            elif stat.S_ISDIR(st.st_mode):
                self.walk(p, now_in, depth + 1)
            elif now_in and stat.S_ISREG(st.st_mode) and name.endswith(".node"):
                self.native(p)

    def link(self, p: str, depth: int) -> None:
        """A link under node_modules: broken or leading outside is AR257; a directory it
        leads to is walked, a `.node` file it leads to is AR255."""
        rel = os.path.relpath(p, self.cdir)
        target = os.path.realpath(p)
        if not os.path.exists(target):
            self.d.error(self.label, (0, 0), "AR257", f"{self.cid}: the runtime closure's link {rel} is broken")
        elif not captree.inside(self.root, target):
            self.d.error(self.label, (0, 0), "AR257", f"{self.cid}: the runtime closure's link {rel} leads outside "
                         f"the capability root ({target})")
        elif os.path.isdir(target):
            self.walk(target, True, depth + 1)
        elif target.endswith(".node"):
            self.native(p)

    def native(self, p: str) -> None:
        self.d.error(self.label, (0, 0), "AR255", f"{self.cid}: the runtime closure holds a native binary: "
                     f"{os.path.relpath(p, self.cdir)}")
