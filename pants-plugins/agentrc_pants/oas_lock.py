"""`agentrc_oas_lock`: a scope's `oas-lock.json` (spec 003) as a build input.

The target owns the lock and the artifacts installed beside it
(`.agents/capabilities/installed/<id>/`). `pants package` verifies, from the digests the
engine holds and nothing else, that every capability the lock records is installed and
hashes to its locked integrity (the kernel's tree hash, `agentrc.capabilities.integrity`),
then puts the verified artifacts and `verified.json` (id -> version, package, integrity,
trusted) under dist/. A lock that does not validate is AR159, a missing artifact AR234, a
changed one AR233. Restoring artifacts is `agentrc cap install` (bare) or `oas install`: a
build verifies, it never fetches.

Pants hides dot-directories and what .gitignore lists (installed/ is gitignored by
design), so a repository that builds with its installed capabilities adds them back in
pants.toml: `pants_ignore.add = ["!.agents/", "**/.agents/*", "!**/.agents/capabilities/"]`
(docs/pants.md). Pants follows symbolic links when it snapshots files, so an artifact
holding a link is verified as the file it leads to and does not match (AR233): such an
artifact is verified by `agentrc cap list` instead.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from typing import Dict, List, Tuple

from pants.core.goals.package import BuiltPackage, BuiltPackageArtifact, OutputPathField, PackageFieldSet
from pants.engine.fs import (
    AddPrefix,
    CreateDigest,
    Digest,
    DigestContents,
    DigestSubset,
    FileContent,
    MergeDigests,
    PathGlobs,
    RemovePrefix,
)
from pants.engine.rules import Get, collect_rules, rule
from pants.engine.target import (
    COMMON_TARGET_FIELDS,
    HydratedSources,
    HydrateSourcesRequest,
    MultipleSourcesField,
    Target,
)
from pants.engine.unions import UnionRule
from pants.util.logging import LogLevel

from agentrc.capabilities import integrity
from agentrc.capabilities import lock as locks
from agentrc.capabilities.model import CAPABILITIES_DIR, INSTALLED, LOCK_FILE
from agentrc.diagnostics import Diagnostics

STORE = f"{CAPABILITIES_DIR}/{INSTALLED}"


class AgentrcOasLockSourcesField(MultipleSourcesField):
    default = (LOCK_FILE, f"{STORE}/**/*")
    help = (f"The scope's `{LOCK_FILE}` and the capabilities installed beside it (`{STORE}/<id>/`), which Pants "
            "sees only once pants_ignore lets it (docs/pants.md).")


class AgentrcOasLockOutputPathField(OutputPathField):
    help = "Where `pants package` writes the verified capabilities and verified.json, relative to the dist dir."


class AgentrcOasLockTarget(Target):
    alias = "agentrc_oas_lock"
    core_fields = (*COMMON_TARGET_FIELDS, AgentrcOasLockSourcesField, AgentrcOasLockOutputPathField)
    help = ("A scope's `oas-lock.json` (spec 003) as a build input: `pants package` verifies, from digests, that "
            "every locked capability is installed at its locked integrity, and writes the verified capabilities.")


@dataclass(frozen=True)
class AgentrcOasLockFieldSet(PackageFieldSet):
    required_fields = (AgentrcOasLockSourcesField,)

    sources: AgentrcOasLockSourcesField
    output_path: AgentrcOasLockOutputPathField


class OasLockUnverified(Exception):
    """The lock is invalid, or an installed capability is missing or changed."""


def verify(lock_path: str, raw: bytes, artifacts: Dict[str, List[Tuple[str, bytes]]]
           ) -> Tuple[Dict[str, Dict[str, object]], Diagnostics]:
    """The verified capabilities of the lock in `raw` (id -> its row), given each installed
    artifact's files (id -> [(path inside it, bytes)]), and the problems (AR159, AR233,
    AR234). Pure: what is on disk reaches it only as bytes."""
    d = Diagnostics()
    lock = locks.parse(lock_path, raw, d)
    if lock is None:
        return {}, d
    if lock.version != 2:
        d.error(lock_path, (1, 1), "AR159", "is lockfileVersion 1: convert it with `agentrc cap migrate` (or `oas "
                "migrate`) before building with it")
        return {}, d
    verified: Dict[str, Dict[str, object]] = {}
    scope = posixpath.dirname(lock_path)
    for cid, row in lock.capabilities:
        where = posixpath.join(scope, STORE, cid)
        files = artifacts.get(cid)
        if not files:
            d.error(where, (0, 0), "AR234", f"capability {cid!r} is locked but not installed here, or not visible to "
                    "Pants (pants_ignore)")
            continue
        try:
            actual = integrity.tree_digest((rel, integrity.FILE, data) for rel, data in files)
        except integrity.UnorderableName as exc:
            d.error(where, (0, 0), "AR233", f"capability {cid!r}: {exc}")
            continue
        if actual != row.integrity:
            d.error(where, (0, 0), "AR233", f"capability {cid!r} hashes to {actual}; the lock says {row.integrity}")
            continue
        verified[cid] = {"version": row.version, "package": row.package, "integrity": row.integrity,
                         "trusted": row.trusted}
    return verified, d


@rule(desc="Verify an OAS lock's installed capabilities", level=LogLevel.DEBUG)
async def package_oas_lock(field_set: AgentrcOasLockFieldSet) -> BuiltPackage:
    sources = await Get(HydratedSources, HydrateSourcesRequest(field_set.sources))
    contents = await Get(DigestContents, Digest, sources.snapshot.digest)
    scope = field_set.address.spec_path
    lock_path = posixpath.join(scope, LOCK_FILE)
    store = posixpath.join(scope, STORE) + "/"
    raw = b""
    artifacts: Dict[str, List[Tuple[str, bytes]]] = {}
    for fc in contents:
        if fc.path == lock_path:
            raw = fc.content
        elif fc.path.startswith(store):
            cid, _, rel = fc.path[len(store):].partition("/")
            if rel and not cid.startswith("."):  # installed/.staging-*, .agentrc-lock: agentrc's own
                artifacts.setdefault(cid, []).append((rel, fc.content))
    verified, d = verify(lock_path, raw, artifacts)
    if d.has_errors:
        raise OasLockUnverified(f"{field_set.address}:\n" + "\n".join(x.format() for x in d.items))
    kept = await Get(Digest, DigestSubset(sources.snapshot.digest, PathGlobs(
        [f"{store}{cid}/**" for cid in sorted(verified)] or ["!**"])))
    tree = await Get(Digest, RemovePrefix(kept, store.rstrip("/"))) if verified else kept
    record = await Get(Digest, CreateDigest([FileContent(
        "verified.json", (json.dumps(verified, indent=2, sort_keys=True) + "\n").encode())]))
    prefix = field_set.output_path.value_or_default(file_ending=None)
    out = await Get(Digest, AddPrefix(await Get(Digest, MergeDigests([tree, record])), prefix))
    lines = tuple(f"capability {cid}@{row['version']} {row['integrity']}" + (" trusted" if row["trusted"] else "")
                  for cid, row in sorted(verified.items()))
    return BuiltPackage(out, (BuiltPackageArtifact(prefix, lines or ("no capabilities locked",)),))


def rules():
    return [*collect_rules(), UnionRule(PackageFieldSet, AgentrcOasLockFieldSet)]
