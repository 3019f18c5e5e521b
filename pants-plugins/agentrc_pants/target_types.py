"""Target types: items (rules, skills, agents), the item-directory generator, bundles, and
registry roots.

The fields only locate sources and carry options; what the sources mean is decided by the
agentrc core, so `pants package` and `agentrc build` cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from pants.core.goals.package import OutputPathField, PackageFieldSet
from pants.engine.target import (
    COMMON_TARGET_FIELDS,
    BoolField,
    Dependencies,
    FieldSet,
    InvalidFieldException,
    MultipleSourcesField,
    SingleSourceField,
    StringSequenceField,
    Target,
    TargetGenerator,
    TriBoolField,
)

from agentrc.clients.registry import CLIENTS
from agentrc.model import Kind
from agentrc.names import REGISTRY_MARKER, is_bundle_file, is_registry_marker

BUILD_FILES = ("!BUILD", "!BUILD.*")
# A package's or capability's own directory and every directory below it may hold BUILD files
# (its capabilities', its items'): none of them is payload.
NESTED_BUILD_FILES = (*BUILD_FILES, "!**/BUILD", "!**/BUILD.*")


class AgentrcClientsField(StringSequenceField):
    alias = "clients"
    valid_choices = tuple(CLIENTS)
    help = (
        "The clients to generate for (" + ", ".join(CLIENTS) + "). "
        "Defaults to `[agentrc].clients`."
    )


class AgentrcDependenciesField(Dependencies):
    help = (
        "Other agentrc targets this one needs. Usually inferred: item `requires`, "
        "`preload-skills`, and bundle `items`/`requires` become dependencies automatically."
    )


class AgentrcSupportingFilesField(MultipleSourcesField):
    alias = "supporting_files"
    default = ("**/*", *BUILD_FILES)
    help = (
        "Files of the item directory copied beside the generated entrypoint (templates, scripts, "
        "references) and per-client override files (`SKILL.claude.md`). The item's own `ignore:` "
        "list still applies."
    )


class AgentrcEntrypointField(SingleSourceField):
    required = False  # SingleSourceField stays required even with a default (Pants 2.17)
    expected_file_extensions = (".md",)
    kind: Kind


class AgentrcRuleSourceField(AgentrcEntrypointField):
    default = "RULE.md"
    kind = Kind.RULE
    help = "The rule's entrypoint, `RULE.md` (spec 001 §2.1)."


class AgentrcSkillSourceField(AgentrcEntrypointField):
    default = "SKILL.md"
    kind = Kind.SKILL
    help = "The skill's entrypoint, `SKILL.md` (spec 001 §2.1)."


class AgentrcAgentSourceField(AgentrcEntrypointField):
    default = "AGENT.md"
    kind = Kind.AGENT
    help = "The agent's entrypoint, `AGENT.md` (spec 001 §2.1)."


class AgentrcCommandSourceField(AgentrcEntrypointField):
    default = "COMMAND.md"
    kind = Kind.COMMAND
    help = "The command's entrypoint, `COMMAND.md` (a slash command; docs/format.md)."


class AgentrcHookSourceField(AgentrcEntrypointField):
    default = "HOOK.md"
    kind = Kind.HOOK
    help = "The hook's entrypoint, `HOOK.md` (event, tools, script; docs/format.md)."


class AgentrcContextSourceField(AgentrcEntrypointField):
    default = "CONTEXT.md"
    kind = Kind.CONTEXT
    help = "The context item's entrypoint, `CONTEXT.md` (a section of the shared AGENTS.md; docs/format.md)."


class AgentrcOutputPathField(OutputPathField):
    help = (
        "Where `pants package` writes this target's client tree, relative to the dist dir. "
        "Defaults to `<path.to.target>/<name>`."
    )


class AgentrcPackageField(BoolField):
    """Whether `pants package` builds this target's own tree. Pants 2.17 cannot tell `::` from
    an address named on the command line, so this is a field: a default that keeps
    `pants package ::` to one tree per registry, whatever the number of items (issue 13)."""

    alias = "package"
    default = False


class AgentrcItemPackageField(AgentrcPackageField):
    default = False
    help = (
        "Whether `pants package` writes this item's own tree (the item and its `requires` closure) to "
        "`dist/<output_path>/`. Off by default: every item is in its registry's tree (`agentrc_registry`), "
        "and one tree per item made `pants package ::` grow with the number of items (docs/pants.md)."
    )


class AgentrcBundlePackageField(TriBoolField):
    """Unset by default, decided by the rule (`package.package_bundle`): a bundle inside a
    packaged registry is already in that registry's tree, and 25 bundles' own trees were a
    third of `dist/` at 5,000 items, all cleared and rewritten by every `package ::` (issue 13)."""

    alias = "package"
    help = (
        "Whether `pants package` writes this bundle's own tree (its whole closure) to `dist/<output_path>/`. "
        "Unset (the default): only when no registry tree already holds the bundle, that is when it is under "
        "no `agentrc_registry`, or its registry sets `package=False`, or the bundle's `clients` differ from "
        "the registry's. `True`: always. `False`: never."
    )


class AgentrcRegistryPackageField(AgentrcPackageField):
    default = True
    help = (
        "Whether `pants package` writes this registry's tree to `dist/<output_path>/`: every item and bundle of "
        "the registry (and what they reference in other registries), as `agentrc build <registry directory>` "
        "writes it."
    )


_ITEM_FIELDS = (*COMMON_TARGET_FIELDS, AgentrcDependenciesField, AgentrcSupportingFilesField,
                AgentrcClientsField, AgentrcOutputPathField, AgentrcItemPackageField)


class AgentrcRuleTarget(Target):
    alias = "agentrc_rule"
    core_fields = (*_ITEM_FIELDS, AgentrcRuleSourceField)
    help = "An always-on rule (`RULE.md`) with its supporting files."


class AgentrcSkillTarget(Target):
    alias = "agentrc_skill"
    core_fields = (*_ITEM_FIELDS, AgentrcSkillSourceField)
    help = "An on-demand skill (`SKILL.md`, an Agent Skills directory) with its supporting files."


class AgentrcAgentTarget(Target):
    alias = "agentrc_agent"
    core_fields = (*_ITEM_FIELDS, AgentrcAgentSourceField)
    help = "An agent persona (`AGENT.md`) with its supporting files."


class AgentrcCommandTarget(Target):
    alias = "agentrc_command"
    core_fields = (*_ITEM_FIELDS, AgentrcCommandSourceField)
    help = "A slash command (`COMMAND.md`) with its supporting files."


class AgentrcHookTarget(Target):
    alias = "agentrc_hook"
    core_fields = (*_ITEM_FIELDS, AgentrcHookSourceField)
    help = "A hook (`HOOK.md`) with its script and other supporting files."


class AgentrcContextTarget(Target):
    alias = "agentrc_context"
    core_fields = (*_ITEM_FIELDS, AgentrcContextSourceField)
    help = "A section of the project's global context (`CONTEXT.md`), shared as AGENTS.md."


ITEM_TARGETS = {Kind.RULE: AgentrcRuleTarget, Kind.SKILL: AgentrcSkillTarget, Kind.AGENT: AgentrcAgentTarget,
                Kind.COMMAND: AgentrcCommandTarget, Kind.HOOK: AgentrcHookTarget, Kind.CONTEXT: AgentrcContextTarget}
ENTRYPOINT_FIELDS = (AgentrcRuleSourceField, AgentrcSkillSourceField, AgentrcAgentSourceField,
                     AgentrcCommandSourceField, AgentrcHookSourceField, AgentrcContextSourceField)


class AgentrcRecursiveField(BoolField):
    alias = "recursive"
    default = False
    help = (
        "Generate a target for every item directory at and below this one, not only this one: one BUILD file "
        "(`pants tailor` puts it at the registry root) instead of one per item directory, which Pants re-parses in "
        "every run. Stops at a nested registry root (`agentrc-registry.yaml`), a spec-000 project (`ai.config.*`), "
        "a capability package or capability (`oas-package.json`, `oas.json`); do not also give those item directories "
        "targets of their own (an item owned twice is declared twice). Each generated target is addressed by its "
        "entrypoint's path (`reg/skills/review/SKILL.md:../../items` for `reg:items`)."
    )


class AgentrcItemsGeneratorTarget(TargetGenerator):
    alias = "agentrc_items"
    help = (
        "Owns an item directory: generates an `agentrc_rule`, `agentrc_skill` and/or "
        "`agentrc_agent` target for each entrypoint (`RULE.md`, `SKILL.md`, `AGENT.md`) in it. "
        "Co-located kinds share the directory's supporting files (spec 001 §2.1)."
    )
    generated_target_cls = AgentrcRuleTarget  # one of three; the generation rule picks per entrypoint
    core_fields = (*COMMON_TARGET_FIELDS, AgentrcSupportingFilesField, AgentrcClientsField,
                   AgentrcDependenciesField, AgentrcItemPackageField, AgentrcRecursiveField)
    copied_fields = COMMON_TARGET_FIELDS
    moved_fields = (AgentrcSupportingFilesField, AgentrcClientsField, AgentrcDependenciesField,
                    AgentrcItemPackageField)


class AgentrcBundleSourceField(SingleSourceField):
    expected_file_extensions = (".yaml",)
    help = "The bundle manifest, `<name>.bundle.yaml` (spec 001 §2.2)."

    def validate_resolved_files(self, files) -> None:
        super().validate_resolved_files(files)
        for f in files:
            if not is_bundle_file(f):
                raise InvalidFieldException(f"{self.address}: `source` must be a *.bundle.yaml file, not {f}")


class AgentrcBundleTarget(Target):
    alias = "agentrc_bundle"
    core_fields = (*COMMON_TARGET_FIELDS, AgentrcBundleSourceField, AgentrcDependenciesField, AgentrcClientsField,
                   AgentrcOutputPathField, AgentrcBundlePackageField)
    help = (
        "A bundle manifest. It carries no content: it references items by name (dependencies are "
        "inferred from `items` and `requires`), like Pants' `archive` target."
    )


class AgentrcRegistrySourceField(SingleSourceField):
    required = False  # SingleSourceField stays required even with a default (Pants 2.17)
    default = REGISTRY_MARKER
    expected_file_extensions = (".yaml",)
    help = (
        f"The registry root marker, `{REGISTRY_MARKER}`: its directory is a registry, a namespace of item and bundle "
        "names of its own."
    )

    def validate_resolved_files(self, files) -> None:
        super().validate_resolved_files(files)
        for f in files:
            if not is_registry_marker(f):
                raise InvalidFieldException(f"{self.address}: `source` must be a {REGISTRY_MARKER} file, not {f}")


class AgentrcRegistryTarget(Target):
    alias = "agentrc_registry"
    core_fields = (*COMMON_TARGET_FIELDS, AgentrcRegistrySourceField, AgentrcDependenciesField, AgentrcClientsField,
                   AgentrcOutputPathField, AgentrcRegistryPackageField)
    help = (
        f"A registry root: the `{REGISTRY_MARKER}` marking its directory. Items and bundles below it (up to a nested "
        "registry root) form one registry: their names are unique within it and may be reused by other registries; "
        "a bare name refers to the same registry, another registry's item or bundle is reached with "
        "`{ name, source: <path of its root> }` (docs/pants.md). Every agentrc target below it depends on it "
        "(inferred), so its marker travels with every build. `pants package` writes the whole registry as one "
        "tree, as `agentrc build <its directory>` does."
    )


class _PackagedUnlessOff:
    """A target whose `package` field is false is left out of `pants package` (opt-out)."""

    @classmethod
    def opt_out(cls, tgt: Target) -> bool:
        return not tgt.get(AgentrcPackageField).value


@dataclass(frozen=True)
class AgentrcItemFieldSet(_PackagedUnlessOff, PackageFieldSet):
    required_fields = (AgentrcEntrypointField,)

    source: AgentrcEntrypointField
    supporting_files: AgentrcSupportingFilesField
    clients: AgentrcClientsField
    output_path: AgentrcOutputPathField


@dataclass(frozen=True)
class AgentrcBundleFieldSet(PackageFieldSet):
    required_fields = (AgentrcBundleSourceField,)

    source: AgentrcBundleSourceField
    clients: AgentrcClientsField
    output_path: AgentrcOutputPathField
    package: AgentrcBundlePackageField

    @classmethod
    def opt_out(cls, tgt: Target) -> bool:
        return tgt[AgentrcBundlePackageField].value is False  # unset: the rule decides


@dataclass(frozen=True)
class AgentrcRegistryFieldSet(_PackagedUnlessOff, PackageFieldSet):
    required_fields = (AgentrcRegistrySourceField,)

    source: AgentrcRegistrySourceField
    clients: AgentrcClientsField
    output_path: AgentrcOutputPathField


@dataclass(frozen=True)
class AgentrcFieldSet(FieldSet):
    """Any agentrc target (all of them have agentrc dependencies): what lint, fmt and
    dependency inference operate on."""

    required_fields = (AgentrcDependenciesField,)

    dependencies: AgentrcDependenciesField


class AgentrcLockSourceField(SingleSourceField):
    required = False  # SingleSourceField stays required even with a default (Pants 2.17)
    default = "agentrc.lock.json"
    expected_file_extensions = (".json",)
    help = "The consumer project's lockfile, `agentrc.lock.json` (written by `agentrc add`; docs/cli/add.md)."


class AgentrcLockTarget(Target):
    alias = "agentrc_lock"
    core_fields = (*COMMON_TARGET_FIELDS, AgentrcLockSourceField, AgentrcOutputPathField)
    help = (
        "A consumer project's `agentrc.lock.json` as a build input: `pants package` fetches every locked "
        "source at its locked commit (a cached Process) and builds the locked bundles and items for the "
        "lock's clients, checking each against its SHA-256 in the lock."
    )


@dataclass(frozen=True)
class AgentrcLockFieldSet(PackageFieldSet):
    required_fields = (AgentrcLockSourceField,)

    source: AgentrcLockSourceField
    output_path: AgentrcOutputPathField
