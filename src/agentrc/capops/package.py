"""A package made ready to install, in a staging directory: fetched (a directory, a shallow
git clone hardened as `agentrc add` runs git, or an official catalog entry), its manifests
and capabilities validated all at once, runtime closures materialised and checked as the
kernel does, then each capability materialised with its `.oas-installation.json` and hashed.
Nothing here changes a scope: `acquire` and `restore` commit what this stages. `cap pack`
runs the same validation and writes what an install would fetch.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import tempfile

from agentrc.capabilities import catalog as catalogs
from agentrc.capabilities import lock as locks
from agentrc.capabilities import source as sources
from agentrc.capabilities.manifest import compatible, parse_capability, parse_package
from agentrc.capabilities.model import (
    CAPABILITY_FILE,
    DEFAULT_PACKAGE_PATH,
    INSTALLATION_FILE,
    OAS_CONTRACT,
    PACKAGE_FILE,
    Capability,
    Installation,
    Package,
)
from agentrc.capops import closure as capclosure
from agentrc.capops import safe as capsafe
from agentrc.capops.failure import KERNEL_CODES, Failure, Outcome, fail
from agentrc.capops.scope import rmtree, write_in
from agentrc.classcode import dataclass
from agentrc.diagnostics import Diagnostics
from agentrc.inputs import captree
from agentrc.inputs import fetch as gitfetch

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

GIT_TIMEOUT = 600


def copy_tree(src: str, dest: str) -> None:
    """Copy `src` to `dest` as it is: links recreated verbatim (never followed), files with
    their permission bits, directories' modes set after their contents; FIFOs, sockets and
    devices refused (captree.TreeError)."""
    count = [0]

    def copy(s: str, d: str, depth: int) -> None:
        st = os.lstat(s)
        count[0] += 1
        if count[0] > captree.MAX_ENTRIES or depth > captree.MAX_DEPTH:
            raise captree.TreeError("AR157", s, f"{src}: more than {captree.MAX_ENTRIES} entries or "
                                    f"{captree.MAX_DEPTH} levels")
        if stat.S_ISLNK(st.st_mode):
            os.symlink(os.readlink(s), d)
        elif stat.S_ISREG(st.st_mode):
            shutil.copyfile(s, d, follow_symlinks=False)
            os.chmod(d, stat.S_IMODE(st.st_mode) & 0o777)
        elif stat.S_ISDIR(st.st_mode):
            os.mkdir(d, 0o700)
            for name in sorted(os.listdir(s)):
                copy(os.path.join(s, name), os.path.join(d, name), depth + 1)
            os.chmod(d, (stat.S_IMODE(st.st_mode) & 0o777) | 0o700)
        else:
            raise captree.TreeError("AR157", s, f"{s}: is a FIFO, socket or device; packages carry files, "
                                    "directories and symbolic links only")

    copy(src, dest, 0)


def _git(args: Sequence[str], cwd: Optional[str] = None) -> str:
    """Run git hardened as `agentrc add` runs it (`inputs.fetch`): only the https, ssh and
    file transports, no hooks, no templates, no submodules, no system config, no prompt, no
    input, a time limit (AGENTRC_GIT_TIMEOUT)."""
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="", SSH_ASKPASS="", GIT_CONFIG_NOSYSTEM="1",
               LC_ALL="C")
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    timeout = gitfetch._timeout()
    try:
        proc = subprocess.run([os.environ.get("AGENTRC_GIT") or "git", *gitfetch._GIT_CONFIG, *args], cwd=cwd,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout, env=env)
    except FileNotFoundError:
        raise _GitError("git is not on PATH") from None
    except subprocess.TimeoutExpired:
        raise _GitError(f"git {args[0]} took longer than {timeout:g} s (AGENTRC_GIT_TIMEOUT)") from None
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise _GitError(f"git {args[0]} failed: {err[-1] if err else 'exit ' + str(proc.returncode)}")
    return proc.stdout.decode("utf-8", "replace").strip()


class _GitError(Exception):
    pass


def _clone(url: str, ref: str, checkout: str) -> str:
    """`ref` (a branch, a tag or a full commit; "" the default branch) of `url`, fetched
    shallow into a new repository at `checkout` and checked out; its commit."""
    _git(["init", "-q", "--template=", checkout])
    _git(["-C", checkout, "remote", "add", "origin", "--", url])
    try:
        _git(["-C", checkout, "fetch", "-q", "--depth", "1", "--no-tags", "--no-recurse-submodules",
              "--end-of-options", "origin", ref or "HEAD"])
        sha = _git(["-C", checkout, "rev-parse", "--verify", "--quiet", "FETCH_HEAD^{commit}"])
    except _GitError as exc:
        if ref:
            raise fail(url, "AR160", f"the git ref {ref!r} is not a commit of {url} ({exc})") from None
        raise
    if len(sha) != 40 or any(c not in "0123456789abcdef" for c in sha):
        raise fail(url, "AR160", f"the git ref {ref!r} is not a commit of {url}")
    _git(["-C", checkout, "checkout", "-q", "--detach", sha])
    return sha


def _select_payload(checkout: str, package_path: str, url: str) -> str:
    """The package root inside a checkout, walked one component at a time: a link on the way
    may lead elsewhere inside the checkout, never out of it (AR156)."""
    base = capsafe.real(checkout)
    current = checkout
    parts = [] if package_path == "." else package_path.split("/")
    for i, part in enumerate(parts):
        current = os.path.join(current, part)
        if not os.path.lexists(current):
            break
        if os.path.islink(current):
            real = capsafe.real(current)
            if not os.path.exists(current) or not captree.inside(base, real):
                raise fail(url, "AR156", f"the package path {package_path!r} leads outside the repository at "
                            f"{'/'.join(parts[:i + 1])!r}")
    real = capsafe.real(current)
    if not captree.inside(base, real):
        raise fail(url, "AR156", f"the package path {package_path!r} leads outside the repository")
    if not os.path.isdir(real):
        hint = " (the default; select another with #path, or #. for the repository root)" \
            if package_path == "oas-package" else ""
        raise fail(url, "AR160", f"the package path {package_path!r} is not a directory of the repository{hint}")
    if not os.path.isfile(os.path.join(real, PACKAGE_FILE)):
        raise fail(url, "AR151", f"has no {PACKAGE_FILE} at the package path {package_path!r}")
    return real


CATALOG_ENV = "OAS_PACKAGE_CATALOG"
BUNDLED_CATALOG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                               "oas-package-catalog.json")


def read_catalog() -> catalogs.Catalog:
    """The official package catalog, found as the OAS kernel finds it: the file
    $OAS_PACKAGE_CATALOG names, else the one agentrc ships (the kernel 0.20.0 catalog's
    entries). A missing file is an empty catalog; an invalid one is AR253. Raises Failure."""
    path = os.environ.get(CATALOG_ENV) or BUNDLED_CATALOG
    if not os.path.isfile(path):
        return catalogs.Catalog(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(captree.MAX_MANIFEST_BYTES + 1)
    except OSError as exc:
        raise fail(path, "AR253", f"cannot read the package catalog: {exc}", "invalid-source") from None
    d = Diagnostics()
    cat = catalogs.parse_catalog(path, raw, d)
    if cat is None:
        raise Failure(d.items, "invalid-source")
    return cat


def fetch_package(src: sources.Source, dest: str, label: str, commit: str = "",
                  package_path: str = "") -> Tuple[str, str]:
    """Put the package root of `src` at `dest`; (commit, package path) it was taken at.
    `commit` and `package_path` pin a restore to what the lock records."""
    if src.kind == "catalog":
        resolved = read_catalog().resolve(src.catalog_id, src.selector)
        if resolved is None:
            raise fail(label, "AR160", f"the official package catalog ({read_catalog().path}) cannot resolve "
                       f"{src.catalog_id!r}" + (f" at {src.selector!r}" if src.selector else ""))
        url, ref, entry_path = resolved
        try:
            entry_root = sources.normalize_path(entry_path, f"the package path of catalog entry {src.catalog_id!r}") \
                if entry_path is not None else DEFAULT_PACKAGE_PATH
        except sources.SourceError as exc:
            raise fail(label, "AR156" if exc.escape else "AR160", str(exc)) from None
        try:
            entry = sources.git_source(url, ref, None)
        except sources.SourceError as exc:
            raise fail(label, exc.code, f"catalog entry {src.catalog_id!r}: {exc}") from None
        return fetch_package(entry, dest, label, commit, package_path or entry_root)
    if src.kind == "path":
        root = src.path
        if not os.path.isdir(root):
            raise fail(label, "AR160", f"the directory {root} does not exist")
        if not os.path.isfile(os.path.join(root, PACKAGE_FILE)):
            raise fail(os.path.join(label, PACKAGE_FILE), "AR151", "is missing: a package is a directory holding "
                        "oas-package.json")
        real_root = capsafe.real(root)
        if captree.inside(real_root, capsafe.real(os.path.dirname(dest))):
            raise fail(label, "AR160", f"the directory {root} holds this scope's installed/ store, so copying it "
                       "would copy the copy into itself; install the package from another directory (or keep its "
                       "capabilities under .agents/capabilities/owned/)")
        copy_tree(real_root, dest)
        rmtree(os.path.join(dest, ".git"))
        return "local", "."
    path = package_path or src.root
    checkout = dest + ".checkout"
    try:
        try:
            head = _clone(src.url, commit or src.ref, checkout)
        except _GitError as exc:
            raise fail(label, "AR160", f"cannot fetch {src.url}: {exc}") from None
        payload = _select_payload(checkout, path, src.url)
        os.rename(payload, dest)
        rmtree(os.path.join(dest, ".git"))
        return head, path
    finally:
        rmtree(checkout)


@dataclass
class Staged:
    """A package fetched and checked in the staging area, before its install is committed."""
    id: str
    dir: str
    package: Package
    source: str
    path: str
    commit: str
    integrity: str
    deps: List[str]
    caps: List[Tuple[str, str, Capability]]  # (root, staged dir, capability)


def load_package(dest: str, label: str) -> Tuple[Package, List[Tuple[str, str, Capability]]]:
    """The staged package's manifest and capabilities, every problem reported at once."""
    d = Diagnostics()
    shown = f"{label}/{PACKAGE_FILE}"
    raw = captree.read_manifest(dest, PACKAGE_FILE)
    if raw is None:
        raise fail(shown, "AR151", "is missing or not a regular file inside the package")
    pkg = parse_package(shown, raw, d)
    if pkg is None:
        raise Failure(d.items)
    root = capsafe.real(dest)
    caps = _capabilities(dest, label, pkg, d)
    _check_payloads(dest, label, caps, d)
    for t in pkg.templates:
        full = os.path.join(dest, t.path)
        if not os.path.isfile(full) or not captree.inside(root, capsafe.real(full)):
            d.error(shown, (0, 0), "AR151", f"config template {t.name!r}: {t.path!r} is not a file inside the package")
    if d.has_errors:
        errors = [x for x in d.items if x.is_error]
        # A declared path that leads out through a symlink: AR156, as the spec names it, but
        # the kernel's code for it is capability-not-self-contained (path-escape is '..').
        resolved_out = all(x.code == "AR157" or (x.code == "AR156" and not x.line and x.path.endswith(CAPABILITY_FILE))
                           for x in errors)
        raise Failure(d.items, "capability-not-self-contained" if resolved_out else "")
    return pkg, caps


def _manifest_label(label: str, rel: str) -> str:
    return f"{label}/{rel}/{CAPABILITY_FILE}" if rel != "." else f"{label}/{CAPABILITY_FILE}"


def _capabilities(dest: str, label: str, pkg: Package, d: Diagnostics) -> List[Tuple[str, str, Capability]]:
    """(root, directory, capability) of each capability root the package lists that exists,
    stays inside it and holds a valid `oas.json` with an id of its own; the rest in `d`."""
    shown = f"{label}/{PACKAGE_FILE}"
    root = capsafe.real(dest)
    caps: List[Tuple[str, str, Capability]] = []
    seen: Dict[str, str] = {}
    for rel in pkg.capabilities:
        cdir = os.path.join(dest, rel)
        real = capsafe.real(cdir)
        if not os.path.lexists(cdir):
            d.error(shown, (0, 0), "AR151", f"lists the capability root {rel!r}, which does not exist")
            continue
        if not captree.inside(root, real):
            d.error(shown, (0, 0), "AR156", f"the capability root {rel!r} leads outside the package once symlinks "
                    "are resolved")
            continue
        craw = captree.read_manifest(cdir, CAPABILITY_FILE)
        if craw is None:
            d.error(shown, (0, 0), "AR151", f"the capability root {rel!r} has no {CAPABILITY_FILE}")
            continue
        cap = parse_capability(_manifest_label(label, rel), craw, d, exported=True)
        if cap is None:
            continue
        if cap.id in seen:
            d.error(shown, (0, 0), "AR152", f"exports capability {cap.id!r} from both {seen[cap.id]!r} and {rel!r}")
            continue
        seen[cap.id] = rel
        caps.append((rel, cdir, cap))
    return caps


def _check_payloads(dest: str, label: str, caps: List[Tuple[str, str, Capability]], d: Diagnostics) -> None:
    """Each capability's declared paths contained (errors in `d`) and, when the manifests are
    valid, its runtime closure: as the kernel, every closure is checked platform-invariant
    before any npm ci; then each is materialized in staging, and only then are its declared
    paths checked (one may name something under node_modules). A closure error raises."""
    def label_of(rel: str) -> str:
        return _manifest_label(label, rel)

    if d.has_errors:
        for rel, cdir, cap in caps:
            captree.check_contained(cdir, cap, label_of(rel), d)
        return
    closure = Diagnostics()
    capclosure.preflight(caps, label_of, closure, dest)
    for rel, cdir, cap in caps:
        if closure.has_errors:
            break
        capclosure.materialize(cdir, cap.id, label_of(rel), closure)
        before = len(d.items)
        captree.check_contained(cdir, cap, label_of(rel), d)
        if len(d.items) == before:
            capclosure.check_deps(cdir, cap.id, label_of(rel), closure)
    if closure.has_errors:
        first = next(x for x in closure.items if x.is_error)
        raise Failure(closure.items, KERNEL_CODES[first.code])


class Closure:
    """A package and its dependencies, each fetched into `staging` and validated, by package
    id (`resolved`); the checks between them (cycles, two sources of one id, the OAS
    contract, pinned dependencies) in the order the kernel makes them."""

    def __init__(self, staging: str, notify: Callable[[str], None]):
        self.staging = staging
        self.notify = notify
        self.resolved: Dict[str, Staged] = {}
        self.count = 0

    def resolve(self, src: sources.Source, label: str, chain: List[str]) -> str:
        """Stage `src` and, depth first, what it depends on: its package id."""
        dest = os.path.join(self.staging, f"pkg-{self.count}")
        self.count += 1
        self.notify(f"fetching {label}")
        commit, path = fetch_package(src, dest, label)
        pkg, caps = load_package(dest, label)
        if pkg.id in chain:
            raise fail(label, "AR164", "packages depend on each other in a cycle: "
                       + " -> ".join(chain + [pkg.id]), "dependency-cycle")
        locked_source = src.locked(commit)
        key = f"{locked_source}#{path}"
        if pkg.id in self.resolved:
            prev = self.resolved[pkg.id]
            if f"{prev.source}#{prev.path}" != key:
                raise fail(label, "AR164", f"two sources claim package {pkg.id!r}: {prev.source}#{prev.path} "
                           f"and {key}")
            rmtree(dest)
            return pkg.id
        if not compatible(pkg.compatibility, OAS_CONTRACT):
            raise fail(f"{label}/{PACKAGE_FILE}", "AR163", f"package {pkg.id} needs OAS {pkg.compatibility}; "
                       f"agentrc implements the OAS {OAS_CONTRACT} contract")
        deps = [self.resolve(dep, spec, chain + [pkg.id]) for dep, spec in _dependencies(src, pkg, label)]
        try:
            payload = captree.tree_hash(dest, payload=True)
        except captree.TreeError as exc:
            raise fail(label, exc.code, exc.message) from None
        self.resolved[pkg.id] = Staged(pkg.id, dest, pkg, locked_source, path, commit, payload, sorted(set(deps)),
                                       caps)
        return pkg.id


def _dependencies(src: sources.Source, pkg: Package, label: str) -> Iterator[Tuple[sources.Source, str]]:
    """Each dependency of `pkg` as a source (and its spec, redacted), checked one at a time as
    it is reached: a git one pinned with @ref, a relative directory only from a directory."""
    for raw_dep in pkg.dependencies:
        dep_spec = sources.redact(raw_dep)
        try:
            dep = sources.parse(raw_dep, base=src.path if src.kind == "path" else None)
        except sources.SourceError as exc:
            raise fail(f"{label}/{PACKAGE_FILE}", exc.code, f"dependency {dep_spec!r}: {exc}") from None
        if dep.kind == "git" and not dep.ref:
            raise fail(f"{label}/{PACKAGE_FILE}", "AR160", f"dependency {dep_spec!r} must be pinned with @ref")
        if dep.kind == "path" and dep.relative and src.kind != "path":
            raise fail(f"{label}/{PACKAGE_FILE}", "AR160", f"dependency {dep_spec!r} is a relative "
                       "directory, which only a package installed from a directory may name")
        yield dep, dep_spec


def materialize(cap: Capability, rel: str, cdir: str, staged: Staged, artifacts: str) -> Tuple[str, str]:
    """Move (or for '.', copy) one capability into `artifacts/<id>`, add its provenance
    file, and hash it: (artifact dir, integrity)."""
    dest = os.path.join(artifacts, cap.id)
    os.makedirs(artifacts, exist_ok=True)
    if rel == ".":
        copy_tree(cdir, dest)
    else:
        os.rename(cdir, dest)
    rec = Installation(cap.id, cap.version, staged.id, staged.package.version, staged.source, staged.commit,
                       staged.path, rel)
    target = os.path.join(dest, INSTALLATION_FILE)
    if os.path.lexists(target):
        rmtree(target)  # a package's own file (or link) of that name is replaced, never written through
    capsafe.write(dest, target, locks.installation_bytes(rec), 0o644)
    os.chmod(target, 0o644)
    return dest, captree.tree_hash(dest)


def pack(directory: str, out: str) -> Outcome:
    """Validate the package at `directory` exactly as an install would (every manifest,
    every capability self-contained) and write what an install would fetch: `out/payload/`
    (the package root without `.git`) and `out/integrity.json` (package id, version and
    payload integrity, and each capability's root). Nothing else is written. Raises Failure."""
    src = os.path.abspath(directory)
    if not os.path.isfile(os.path.join(src, PACKAGE_FILE)):
        raise fail(os.path.join(directory, PACKAGE_FILE), "AR151", "is missing: a package is a directory holding "
                    "oas-package.json")
    with tempfile.TemporaryDirectory(prefix="agentrc-pack-") as tmp:
        staged = os.path.join(tmp, "payload")
        try:
            copy_tree(capsafe.real(src), staged)
            rmtree(os.path.join(staged, ".git"))
            pkg, caps = load_package(staged, directory)
            integrity = captree.tree_hash(staged, payload=True)
            # What validation's npm ci made is not payload (an install runs it again).
            for dirpath, dirnames, _files in os.walk(staged):
                for name in [d for d in dirnames if d == "node_modules"]:
                    rmtree(os.path.join(dirpath, name))
                dirnames[:] = [d for d in dirnames if d != "node_modules"]
        except captree.TreeError as exc:
            raise fail(exc.rel or directory, exc.code, exc.message) from None
        if not compatible(pkg.compatibility, OAS_CONTRACT):
            raise fail(os.path.join(directory, PACKAGE_FILE), "AR163", f"package {pkg.id} needs OAS "
                        f"{pkg.compatibility}; agentrc implements the OAS {OAS_CONTRACT} contract")
        exported = {cap.id: {"version": cap.version, "path": rel} for rel, _d, cap in caps}
        record: Dict[str, Any] = {"package": pkg.id, "version": pkg.version, "integrity": integrity,
                                  "capabilities": exported}
        dest = os.path.abspath(out)
        if os.path.lexists(dest) and (os.path.islink(dest) or not os.path.isdir(dest) or os.listdir(dest)):
            raise fail(out, "AR091", "exists and is not an empty directory; cap pack writes a new tree")
        os.makedirs(dest, exist_ok=True)
        copy_tree(staged, os.path.join(dest, "payload"))
        write_in(dest, os.path.join(dest, "integrity.json"),
                     (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    lines = [f"{pkg.id}@{pkg.version} {integrity}"] + [f"  capability {cid} ({v['path']})"
                                                        for cid, v in exported.items()]
    return Outcome(record, lines)

