"""`pants tailor`: an `agentrc_items(recursive=True)` target per registry root whose items have
no targets yet, else an `agentrc_items` target per item directory, an `agentrc_bundle` per manifest
(a `*.bundle.yaml` that discovery takes for a bundle), an `agentrc_config` per spec-000 project
(a directory with ai.config.*), an `agentrc_registry` per registry root (a directory holding
`agentrc-registry.yaml`), an `agentrc_oas_package` per capability package (a directory with
oas-package.json), an `agentrc_capability` per capability (a directory with oas.json, also inside a
package, whose own target owns its files: what decides is whether the directory has an
`agentrc_capability` yet) and an `agentrc_oas_lock` per `oas-lock.json`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, List, Sequence, Set, Tuple

from pants.core.goals.tailor import AllOwnedSources, PutativeTarget, PutativeTargets, PutativeTargetsRequest
from pants.engine.fs import DigestContents, PathGlobs, Paths
from pants.engine.rules import Get, collect_rules, rule
from pants.engine.target import AllTargets
from pants.engine.unions import UnionRule
from pants.util.logging import LogLevel

from agentrc.capabilities.model import CAPABILITIES_DIR, CAPABILITY_FILE, LOCK_FILE, PACKAGE_FILE
from agentrc.inputs.config import CONFIG_NAMES
from agentrc.model import ENTRYPOINTS
from agentrc.names import REGISTRY_MARKER
from agentrc.portable.bundles import is_bundle_content
from agentrc.portable.discovery import registry_of, registry_roots
from agentrc_pants.capability import AgentrcCapabilitySourcesField, AgentrcCapabilityTarget
from agentrc_pants.config import AgentrcConfigTarget
from agentrc_pants.oas_lock import AgentrcOasLockTarget
from agentrc_pants.oas_package import AgentrcOasPackageTarget
from agentrc_pants.subsystem import AgentrcSubsystem
from agentrc_pants.target_types import AgentrcBundleTarget, AgentrcItemsGeneratorTarget, AgentrcRegistryTarget


@dataclass(frozen=True)
class PutativeAgentrcTargetsRequest(PutativeTargetsRequest):
    pass


@rule(desc="Determine candidate agentrc targets to create", level=LogLevel.DEBUG)
async def find_putative_agentrc_targets(request: PutativeAgentrcTargetsRequest, owned: AllOwnedSources,
                                        subsystem: AgentrcSubsystem, all_targets: AllTargets) -> PutativeTargets:
    if not subsystem.tailor:
        return PutativeTargets()
    entries = await Get(Paths, PathGlobs, request.path_globs(*sorted(ENTRYPOINTS)))
    bundles = await Get(Paths, PathGlobs, request.path_globs("*.bundle.yaml"))
    configs = await Get(Paths, PathGlobs, request.path_globs(*CONFIG_NAMES))
    markers = await Get(Paths, PathGlobs, request.path_globs(REGISTRY_MARKER))
    oas_packages = await Get(Paths, PathGlobs, request.path_globs(PACKAGE_FILE))
    oas_capabilities = await Get(Paths, PathGlobs, request.path_globs(CAPABILITY_FILE))
    oas_locks = await Get(Paths, PathGlobs, request.path_globs(LOCK_FILE))
    # Installed capabilities are artifacts of an install, owned by the scope's agentrc_oas_lock:
    # no BUILD file goes into them (it would change their integrity), and nothing in them is
    # a target of its own.
    owned_set = set(owned) | {p for found in (entries, bundles, configs, markers, oas_packages, oas_capabilities)
                              for p in found.files if _in_store(p)}
    have = {t.address.spec_path for t in all_targets if t.has_field(AgentrcCapabilitySourcesField)}
    putative, package_dirs, projects = _scope_targets(markers.files, oas_packages.files, oas_capabilities.files,
                                                      oas_locks.files, configs.files, owned_set, have)
    # A project's presets hold SKILL.md files that are layer content, not portable items.
    owned_set |= {p for p in entries.files if any(p.startswith(d + "/") for d in projects)}
    # A package's or a capability's skills are its payload, not registry items of their own.
    payload_dirs = package_dirs + sorted({os.path.dirname(p) for p in oas_capabilities.files if not _in_store(p)})
    owned_set |= {p for p in entries.files if any(p.startswith(d + "/") or not d for d in payload_dirs)}
    putative += _item_targets(entries.files, owned_set, set(owned), markers.files)
    candidates = sorted(set(bundles.files) - owned_set)
    # The discovery gate (spec 001 §2.2): a `*.bundle.yaml` without an integer schema is no bundle.
    contents = await Get(DigestContents, PathGlobs(candidates)) if candidates else DigestContents()
    gated = {fc.path for fc in contents if is_bundle_content(fc.content)}
    for path in candidates:
        if path not in gated:
            continue
        directory, filename = os.path.split(path)
        putative.append(PutativeTarget.for_target_type(
            AgentrcBundleTarget, path=directory, name=filename[: -len(".bundle.yaml")],
            triggering_sources=[filename], kwargs={"source": filename}))
    return PutativeTargets(putative)


def _scope_targets(markers: Sequence[str], oas_packages: Sequence[str], oas_capabilities: Sequence[str],
                   oas_locks: Sequence[str], configs: Sequence[str], owned: Set[str], have: Set[str]
                   ) -> Tuple[List[PutativeTarget], List[str], List[str]]:
    """The targets of whole directories: registries, capability packages, capabilities
    (where no target has their sources yet: `have`), OAS locks and canonical projects; and
    the directories of the packages and of the projects (whose skills are not items)."""
    putative = []
    for path in sorted(set(markers) - owned):
        directory = os.path.dirname(path)
        putative.append(PutativeTarget.for_target_type(
            AgentrcRegistryTarget, path=directory, name="registry", triggering_sources=[REGISTRY_MARKER]))
    # A capability package (spec 003): one target for the whole directory; its skills are
    # package payload, not registry items of their own.
    package_dirs = sorted({os.path.dirname(p) for p in set(oas_packages) - owned})
    for directory in package_dirs:
        putative.append(PutativeTarget.for_target_type(
            AgentrcOasPackageTarget, path=directory, name=os.path.basename(directory) or "package",
            triggering_sources=[PACKAGE_FILE]))
    for directory in sorted({os.path.dirname(p) for p in oas_capabilities if not _in_store(p)} - have):
        putative.append(PutativeTarget.for_target_type(
            AgentrcCapabilityTarget, path=directory, name=os.path.basename(directory) or "capability",
            triggering_sources=[CAPABILITY_FILE]))
    for path in sorted(set(oas_locks) - owned):
        putative.append(PutativeTarget.for_target_type(
            AgentrcOasLockTarget, path=os.path.dirname(path), name="oas-lock", triggering_sources=[LOCK_FILE]))
    projects = sorted({os.path.dirname(p) for p in set(configs) - owned})
    for directory in projects:
        putative.append(PutativeTarget.for_target_type(
            AgentrcConfigTarget, path=directory, name=os.path.basename(directory) or "config",
            triggering_sources=[os.path.basename(p) for p in configs if os.path.dirname(p) == directory]))
    return putative, package_dirs, projects


def _item_targets(entries: Sequence[str], owned_set: Set[str], owned: Set[str], markers: Sequence[str]
                  ) -> List[PutativeTarget]:
    """The item generators for the entrypoints `owned_set` leaves. Under a registry root none
    of whose items has a target yet (`owned`): one recursive generator in the root's BUILD
    file, not a BUILD file per item directory (Pants re-parses every BUILD file in every run:
    at 5,000 items that was most of a no-op `package ::`). Its generator leaves out the same
    directories as here (nested registries, projects, packages). Elsewhere one per directory."""
    putative = []
    roots = registry_roots(markers)
    owned_entries = set(entries) & owned
    per_root: Dict[str, List[str]] = {}
    for path in sorted(set(entries) - owned_set):
        root = registry_of(os.path.dirname(path), roots)
        if root:
            per_root.setdefault(root, []).append(path)
    taken = set()
    for root, paths in sorted(per_root.items()):
        if any(registry_of(os.path.dirname(p), roots) == root for p in owned_entries):
            continue  # the registry's items already have targets: add per-directory ones beside them
        taken.update(paths)
        putative.append(PutativeTarget.for_target_type(
            AgentrcItemsGeneratorTarget, path=root, name="items",
            triggering_sources=[p[len(root) + 1:] for p in paths], kwargs={"recursive": True}))
    by_dir: Dict[str, List[str]] = {}
    for path in sorted(set(entries) - owned_set - taken):
        by_dir.setdefault(os.path.dirname(path), []).append(os.path.basename(path))
    for directory, files in sorted(by_dir.items()):
        putative.append(PutativeTarget.for_target_type(
            AgentrcItemsGeneratorTarget, path=directory, name=os.path.basename(directory),
            triggering_sources=files))
    return putative


def _in_store(path: str) -> bool:
    return f"/{CAPABILITIES_DIR}/" in f"/{path}"


def rules():
    return [*collect_rules(), UnionRule(PutativeTargetsRequest, PutativeAgentrcTargetsRequest)]
