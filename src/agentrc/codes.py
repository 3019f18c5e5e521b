"""The registry of diagnostic codes.

Every diagnostic agentrc emits carries one of these codes. `docs/error-codes.md` is generated
from this table (`python -m agentrc.docgen`), and the test suite checks that each code has a
case under `tests/cases/diagnostics/` that triggers it, so no code exists without a test.
"""

from __future__ import annotations

from agentrc.classcode import dataclass

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict


@dataclass(frozen=True)
class Code:
    """A diagnostic code: its number, name, one-line summary and hint (docs/errors.md)."""
    code: str
    name: str
    summary: str
    hint: str


def _table(*rows: Code) -> Dict[str, Code]:
    return {row.code: row for row in rows}


CODES: Dict[str, Code] = _table(
    # --- reading files ---------------------------------------------------------------
    Code("AR001", "yaml-syntax", "Frontmatter or manifest is not valid YAML.",
         "Fix the YAML syntax at the position shown; quote strings that contain ': ' or start with special "
         "characters."),
    Code("AR002", "frontmatter-missing", "An entrypoint does not start with a `---` delimited YAML frontmatter block.",
         "Start the file with '---', the YAML fields, and a closing '---' line."),
    Code("AR003", "not-a-mapping", "Frontmatter or a manifest is YAML but not a mapping of keys to values.",
         "Write 'key: value' pairs at the top level."),
    Code("AR004", "duplicate-key", "A YAML mapping repeats a key.",
         "Keep one occurrence of the key; YAML silently keeps only the last one."),
    Code("AR005", "schema-unsupported", "The file's `schema:` is newer than this agentrc supports.",
         "Upgrade agentrc (pip install -U agentrc) to a release that supports this schema version."),
    Code("AR006", "field-invalid", "A field has the wrong type or value, or a required field is missing.",
         "See docs/format.md for the fields each kind accepts."),
    Code("AR007", "field-unknown", "A rule or agent has a top-level field the format does not define; it is ignored.",
         "Move client-specific fields into a passthrough block (claude:, copilot:, opencode:) or into metadata:."),
    Code("AR008", "not-utf8", "A source file is not valid UTF-8 text.",
         "Re-save the file as UTF-8."),
    Code("AR009", "yaml-bound",
         "A YAML document exceeds agentrc's bounds: its aliases copy more values than the document's length plus "
         "10 000, or its collections nest more than 100 levels deep.",
         "Write the values out instead of repeating aliases of aliases, and flatten the nesting; see "
         "docs/security.md."),
    # --- names and identity ----------------------------------------------------------
    Code("AR010", "name-invalid",
         "An effective name is not lowercase letters, digits and hyphens (single hyphens for skills).",
         "Use lowercase a-z, 0-9 and '-', not starting or ending with '-', e.g. 'api-conventions'."),
    Code("AR011", "name-too-long", "An effective name is longer than 64 characters.",
         "Shorten the name (and the directory) to at most 64 characters."),
    Code("AR012", "skill-name-mismatch", "A skill's `name:` differs from its directory name.",
         "Rename the directory or the name: the Agent Skills standard requires them to match (or omit name:)."),
    Code("AR013", "duplicate-item", "Two items of one registry share the same kind and effective name.",
         "Rename one of them: identity is (kind, name) within a registry, whatever the directories. If they belong "
         "to different teams' registries, mark each registry's root with an agentrc-registry.yaml (docs/format.md, "
         "Registries): each is then a namespace of its own."),
    Code("AR014", "description-too-long", "A description is longer than 1024 characters.",
         "Shorten the description; clients truncate or reject longer ones."),
    Code("AR015", "skill-description-long", "A skill description is longer than about 200 characters.",
         "Front-load the use case in ~200 characters: the description is read on every selection decision."),
    Code("AR016", "orphan-override", "An override file has no canonical entrypoint beside it.",
         "Add the canonical entrypoint (e.g. SKILL.md) or delete the override file."),
    Code("AR017", "no-items", "A path given on the command line holds no items or bundles.",
         "Point agentrc at a source registry: directories holding RULE.md, SKILL.md, AGENT.md, COMMAND.md, HOOK.md or "
         "CONTEXT.md."),
    Code("AR018", "registry-name-clash",
         "One build selects items of the same kind and name from two registries (they would be written to the same "
         "client files), or two bundles of one name (spec 001 §3.7: one source per name within a closure).",
         "Build the registries separately (a bundle or a target each: `--bundle PATH/TO/x.bundle.yaml`, or one "
         "`pants package` target per registry), or rename one of the items."),
    # --- bodies ---------------------------------------------------------------------
    Code("AR020", "body-h1", "A body contains an H1 heading.",
         "Start headings at '##': generated output derives the H1 from the item's name."),
    Code("AR021", "heading-skip", "A heading skips a level (e.g. ## followed by ####).",
         "Use the next level down (one more '#') or restructure the section."),
    Code("AR022", "fence-language", "A fenced code block has no language.",
         "Add a language after the opening fence, e.g. ```text when none fits."),
    Code("AR023", "client-construct", "A client-specific construct appears in content that reaches every client.",
         "Wrap it in a matching <!-- @client:X --> block, move it to an override file, or restrict audience:."),
    # --- directives -----------------------------------------------------------------
    Code("AR030", "directive-unbalanced", "A <!-- @client --> block is not closed, or an @endclient has no opener.",
         "Close every <!-- @client:... --> with <!-- @endclient --> on its own line."),
    Code("AR031", "directive-nested", "A <!-- @client --> block is opened inside another one.",
         "Close the outer block first; directives do not nest."),
    Code("AR032", "directive-unknown-client", "A directive names a client identifier outside the known set.",
         "Use claude, copilot, codex or opencode (optionally prefixed with !)."),
    Code("AR033", "directive-malformed", "A directive comment is not of the form <!-- @client:a,b --> on its own line.",
         "Write the directive alone on its line: <!-- @client:claude,copilot --> or <!-- @client:!opencode -->."),
    Code("AR034", "directive-in-override", "An override file contains a <!-- @client --> directive.",
         "Delete the directive lines: an override file is read by its one client only, verbatim."),
    # --- overrides ------------------------------------------------------------------
    Code("AR040", "override-frontmatter", "An override file carries YAML frontmatter.",
         "Delete the frontmatter: overrides hold body content only; frontmatter comes from the canonical file."),
    Code("AR041", "override-unknown-client", "An override file's suffix names none of agentrc's clients (the format "
         "names claude, copilot and opencode; agentrc takes each client it has).",
         "Rename it to <KIND>.<client>.md for one of the clients the message lists, or use a directive."),
    # --- supporting files -----------------------------------------------------------
    Code("AR050", "path-escape",
         "A link or supporting file points outside the item directory, or a symlink leads out of the registry, "
         "project or preset it was found in (nothing outside is read).",
         "Copy the file into the item directory and link to it with a relative path."),
    Code("AR051", "link-broken", "A relative link points at a file that is not copied with the item.",
         "Fix the path, add the file, or remove it from the item's ignore: list."),
    Code("AR052", "ignore-invalid", "An ignore: pattern cannot be parsed.",
         "Use .gitignore syntax, one pattern per list entry."),
    Code("AR053", "hook-script-missing", "A hook's script starts with ./FILE, and FILE is not in the hook's directory.",
         "Put the script beside HOOK.md (it is copied for every client), or write a command without the ./ prefix."),
    Code("AR054", "source-unreadable",
         "A source path is not a regular file agentrc can read: a dangling or looping symlink, a FIFO, socket or "
         "device, a directory where a file belongs, a file over 16 MiB, or one it may not read. A symlink to a "
         "directory is not followed (a warning).",
         "Replace it with a regular file (or a symlink to one inside the same root), or move it out of the sources."),
    # --- bundles --------------------------------------------------------------------
    Code("AR060", "bundle-name-mismatch", "A bundle's name differs from its file name stem.",
         "Rename the file to <name>.bundle.yaml or change name:."),
    Code("AR061", "bundle-item-unresolved", "A bundle lists an item that does not exist.",
         "Check the item's effective name and kind, or add the item to the registry."),
    Code("AR062", "bundle-requires-unresolved", "A bundle requires a bundle that does not exist.",
         "Check the bundle name, or add <name>.bundle.yaml to the registry."),
    Code("AR063", "bundle-cycle", "Bundle requires form a cycle.",
         "Remove one of the requires edges shown in the cycle."),
    Code("AR064", "duplicate-bundle", "Two bundle files of one registry declare the same name.",
         "Bundle names are identities; rename or delete one of them."),
    Code("AR065", "source-unsupported",
         "A remote `source:` locator (`owner/repo@ref`, a URL) is used in a registry given to `lint` or `build`, "
         "which read local paths only.",
         "Install with 'agentrc add SOURCE', which fetches cross-source requires; to build locally, vendor the "
         "required items or bundles; a registry of the same repository is referenced by its local path "
         "(`source: ../other-registry`)."),
    Code("AR066", "bundle-unknown",
         "A bundle named on the command line does not exist, or its name is defined in several registries.",
         "Run 'agentrc lint' to list the registry's bundles, or fix the name."),
    Code("AR067", "mcp-conflict", "Two bundles define an MCP server of the same name differently.",
         "Give one of the servers another name, or define it once in a bundle the others require."),
    Code("AR068", "registry-not-found",
         "A `source:` local path names no registry root among the inputs.",
         "Make `source:` the path of the other registry's root (the directory holding its agentrc-registry.yaml), "
         "relative to this registry's root, and give agentrc that registry too: on the command line (`agentrc build "
         "teams/a teams/b`); in Pants its targets are inferred."),
    Code("AR069", "cross-registry-implicit",
         "A bare name refers to an item or bundle that is not in the referencing file's registry but in another one.",
         "A bare name resolves in its own registry only. Reference another registry's item or bundle explicitly, "
         "with `{ name: X, source: ../other-registry }` in an item's requires.<kind> or a bundle's requires, as the "
         "message shows."),
    # --- item requires --------------------------------------------------------------
    Code("AR070", "requires-unresolved", "An item requires an item that does not exist.",
         "Check the required item's kind and effective name, or add it to the registry."),
    Code("AR071", "requires-cycle", "Item requires form a cycle.",
         "Remove one of the requires edges shown in the cycle."),
    Code("AR072", "preload-skill-missing", "A preloaded skill is not in the registry; it is kept as a runtime hint.",
         "Add the skill to the registry if it should be installed with the agent."),
    Code("AR073", "bundle-version-mismatch",
         "A bundle's `requires` entry has a `version` constraint the required bundle's `metadata.version` does not "
         "meet (or the required bundle has no `metadata.version`).",
         "Require a version the bundle has (see its metadata.version), or take the source at a ref that has it."),
    Code("AR074", "version-invalid",
         "A `requires` entry's `version` is not a semver constraint, or the required bundle's `metadata.version` is "
         "not a semantic version.",
         "Write constraints as ^1.2.0, ~1.2.0, >=1.0.0 <2.0.0, 1.x or 1.0.0 - 1.5.0, and versions as "
         "MAJOR.MINOR.PATCH."),
    # --- agents ---------------------------------------------------------------------
    Code("AR080", "tool-unknown", "An agent lists a tool outside the capability vocabulary.",
         "Use a neutral capability (see docs/clients/tools.md) or a client passthrough block."),
    Code("AR081", "model-unknown", "An agent's model is neither a portable alias nor a provider/model id.",
         "Use sonnet, opus, haiku, inherit, or a fully qualified id such as anthropic/claude-sonnet-4-5."),
    Code("AR082", "hook-matcher-ignored",
         "A hook has tools: or matcher: on an event that takes neither (tools: is for tool events only).",
         "Remove tools: (tool events only) or matcher: (tool events, SessionStart, SessionEnd, PreCompact, "
         "Notification, SubagentStop), or use one of those events."),
    # --- generation -----------------------------------------------------------------
    Code("AR090", "output-conflict", "Two outputs need different bytes at the same path.",
         "Rename one of the items, or build the clients into separate output directories."),
    Code("AR091", "foreign-file", "An output path holds a file agentrc did not write.",
         "Move the file away, or delete it if it is stale: agentrc never overwrites files it does not own."),
    Code("AR092", "capability-dropped", "A field or tool has no equivalent in a client and is dropped from its output.",
         "Restrict the item's audience, or use the client's passthrough block for a native equivalent."),
    Code("AR093", "manifest-invalid", "The output directory's ownership manifest cannot be read.",
         "Delete DIR/.agentrc/manifest.json and rebuild; agentrc then owns only what it writes next."),
    Code("AR094", "output-edited", "A file agentrc wrote was edited since; rebuilding would lose the edit.",
         "Move the change into the source item (the output is generated), or delete the file, then rebuild."),
    Code("AR095", "cross-client-discovery",
         "A client also loads another client's outputs, which its audience excludes, differ from its own, or "
         "repeat what it already has; the fidelity report names each copy (also_loaded_by).",
         "Leave the client (or the one whose files it also reads) out of clients: in agentrc.yaml for this tree, "
         "or turn its reading off with its own switch where it has one; copies with the same bytes are written "
         "once already (shared-copies; docs/fidelity.md#cross-discovery)."),
    Code("AR096", "user-key-conflict", "A file the user owns already defines a key agentrc would write.",
         "Rename the item or server, or remove the user's entry: agentrc changes only keys it added itself."),
    Code("AR097", "merge-unreadable", "A file the user owns, which agentrc merges keys into, cannot be parsed.",
         "Fix the file's syntax (agentrc reads JSON with comments and TOML), or move it away and rebuild."),
    Code("AR098", "comments-in-strict-json",
         "A file agentrc merges into has comments, but its client reads it as strict JSON.",
         "Remove the comments: Claude Code ignores a .claude/settings.json or .mcp.json it cannot parse as JSON."),
    # --- the output directory ------------------------------------------------------
    Code("AR140", "output-symlink",
         "A path agentrc would write, merge or delete goes through a symbolic link inside the output directory (or "
         "is not a relative path inside it).",
         "Replace the link with a real directory or file, or build into another directory: agentrc never follows "
         "links below --out, which could lead to files outside it (docs/security.md)."),
    Code("AR141", "output-locked", "Another agentrc run held the output directory for longer than the wait allows.",
         "Let the other run finish, then run again; AGENTRC_LOCK_TIMEOUT sets the wait in seconds (default 60). "
         "The lock goes away with the process that held it."),
    Code("AR142", "output-io-error",
         "The output directory (or the report) cannot be read or written: permissions, a full disk, a path too "
         "long, or a write an earlier run was interrupted in.",
         "Fix the cause the message names and run again: a write that failed before its commit changed nothing, "
         "and one interrupted after it is completed by the next run, before anything else."),
    # --- sources and the lockfile (spec 001 §3.7) ----------------------------------
    Code("AR200", "source-invalid",
         "A source locator is not one agentrc fetches: not owner/repo[@ref], an https://, ssh://, file:// or "
         "user@host:path git URL with an optional @ref, or a local directory; or its @ref or #subpath is malformed.",
         "Write e.g. `owner/repo@v1.2.0`, `https://host/team/registry.git@main#skills` or `./registry`; refs and "
         "subpaths never start with '-' and hold no '..'."),
    Code("AR201", "fetch-failed",
         "git could not fetch the source: the repository is unreachable, the ref does not exist, or git failed.",
         "Check the URL and the ref (git ls-remote URL), your network and credentials; the message shows git's own."),
    Code("AR202", "git-missing", "Fetching a git source needs `git`, and it is not on PATH.",
         "Install git, or use a local directory as the source."),
    Code("AR203", "lock-invalid", "agentrc.lock.json cannot be read: not JSON, or not the lockfile's shape.",
         "Restore the file from version control, or delete it and add the sources again."),
    Code("AR204", "lock-drift",
         "What the lock records differs from what is there: a source's content at the locked commit, or a file "
         "agentrc installed (missing, edited or out of date).",
         "Run 'agentrc install' to restore the files the lock records; a source whose locked commit changed "
         "content is not to be trusted: check it, then add it again."),
    Code("AR205", "selection-unknown", "A bundle or item asked for (--bundle, --item) is not in the source.",
         "Run 'agentrc lint' on the source to see its bundles and items, or fix the name (--item KIND:NAME)."),
    Code("AR206", "source-conflict",
         "An item or bundle of one name comes from two different sources (or two refs of one source).",
         "Remove one of them first ('agentrc remove NAME'), or take both from the same source and ref."),
    Code("AR207", "not-installed", "'agentrc remove NAME' names nothing the lock installed directly.",
         "Run 'agentrc list' to see the installed bundles and items."),
    Code("AR208", "subpath-missing", "A source's #subpath is not a directory in the repository or directory.",
         "Check the subpath: it is relative to the repository's root."),
    Code("AR209", "mcp-env-unset",
         "An installed bundle's MCP server declares in `requires-env` an environment variable that is not set (its "
         "value is never read).",
         "Set the variable where the client runs (the server's config refers to it as ${VAR}), or ignore this if "
         "the client gets it another way."),
    Code("AR210", "plugin-cli-missing",
         "A bundle's plugin is installed with its client's CLI, which is not on PATH; it is skipped (and recorded "
         "as skipped-cli-missing), the rest is installed.",
         "Install the client (or put its CLI on PATH) and run 'agentrc install' again, or install the plugin by hand "
         "from the install_url shown."),
    Code("AR211", "plugin-failed",
         "A client's CLI failed to register a plugin's marketplace or to install or uninstall the plugin; the rest "
         "is installed and the plugin is not recorded.",
         "Read the CLI's message shown; fix the plugin's source or marketplace, then run 'agentrc install' again."),
    Code("AR212", "plugin-instructions",
         "A bundle's plugin for a client has no automatic install (instructions, a VS Code extension, an opencode "
         "module or plugin_uri): what to do is shown.",
         "Follow the instructions shown; agentrc records that it showed them."),
    Code("AR213", "plugin-ambiguous",
         "A plugin descriptor holds the fields of more than one form (auto-install, config-write, instructions-only); "
         "the first form wins.",
         "Keep the fields of one form: source/marketplace/plugin, plugin_uri, or instructions_url/summary (install_url "
         "goes with any)."),
    Code("AR214", "build-output-in-project",
         "The project holds files `agentrc build --out` wrote, which the lock did not install: the consumer "
         "workflow (add, install, update, remove) owns the directory's outputs and would delete them.",
         "Build into another directory, or install that content with 'agentrc add' instead; --force deletes them."),
    Code("AR215", "plugins-not-built",
         "A bundle built by `agentrc build` (or `pants package`) declares plugins; a build writes files and does "
         "not install plugins.",
         "Install the bundle with 'agentrc add SOURCE --bundle NAME', which installs its plugins with the clients' "
         "own CLIs, or install them by hand."),
    Code("AR216", "mcp-cli-failed",
         "Registering or unregistering a bundle's MCP server with its client's CLI (`claude mcp add-json`, "
         "`claude mcp remove`, `copilot mcp add`, `copilot mcp remove`) failed; the server is recorded as "
         "cli-failed and the rest is installed.",
         "Read the CLI's message shown, fix its cause (a hand-edited config it cannot parse, a server of the "
         "same name it owns) and run 'agentrc install' again; 'agentrc doctor' shows what the client reports."),
    Code("AR217", "no-user-location",
         "`agentrc add --global` installs into the user's locations, and some outputs have no user-level form "
         "agentrc knows (Copilot prompt files, VS Code's .vscode/mcp.json, the root AGENTS.md and CLAUDE.md, "
         ".agents/rules/ and opencode's instructions paths, clients without a user directory): they are not "
         "installed.",
         "Install the bundle into a project (without --global) to get them, or copy what you need by hand."),
    Code("AR218", "project-path-in-global",
         "`agentrc add --global` would install a config file that refers to the project directory "
         "(CLAUDE_PROJECT_DIR, ${workspaceFolder}, $PWD) other than the hook scripts agentrc installs itself; "
         "installed for the user it would name whatever project the client runs in. Nothing is written.",
         "Install the bundle into a project (without --global), or make the hook or server independent of the "
         "project directory."),
    Code("AR219", "capability-ref-invalid",
         "A capability reference (a preset's package.json#ai.capabilities, or the config's capabilities) is not "
         "of ai-jue's form NAME -> {source, type, ref?, path?, config?, integrity?}: a name that is not one safe "
         "path segment, an unknown type or field, a status (not loadable), a github: source that is not "
         "owner/repo, or a ref given twice.",
         "Write e.g. \"review\": {\"source\": \"github:acme/skills\", \"ref\": \"v1\", \"path\": "
         "\"skills/review\", \"type\": \"skill\"}; see docs/canonical.md, Capability references."),
    Code("AR220", "capability-source-unsupported",
         "A capability reference names an npm: source; agentrc fetches git repositories and directories only.",
         "Reference the capability's git repository (github:owner/repo, or its https://, ssh:// or file:// URL) "
         "with a ref."),
    Code("AR221", "capability-missing",
         "The directory a capability reference selects does not hold that capability: no SKILL.md for a skill, no "
         "prompt.md (or AGENTS.md) for a rule or agent, no prompt.md for a command, no prompt.md or index.json for "
         "a hook, no server of that name in mcp.json or package.json (and no bin) for an mcp.",
         "Point `path` at the capability's own directory, or fix its type."),
    Code("AR222", "capability-lock-mismatch",
         "A capability reference is locked in agentrc.lock.json at a commit whose content is no longer what the "
         "lock records (the repository's history was rewritten, or the lock was edited).",
         "Check the source; to accept its content, delete the capability's record from agentrc.lock.json and "
         "build again."),
    Code("AR223", "capability-not-locked",
         "A build that reads locked commits only (the Pants backend's agentrc_config) met a git capability "
         "reference that agentrc.lock.json does not pin, or pins for another source or ref: it is not fetched there.",
         "Run 'agentrc build PROJECT' outside Pants once, which resolves the reference and records its commit "
         "in agentrc.lock.json, and commit the lock."),
    # --- canonical documents (spec 000) ---------------------------------------------
    Code("AR110", "config-unreadable", "A project's ai.config.*, mcp.json, index.json or package.json cannot be read.",
         "Fix the syntax at the position shown; JSON allows no comments or trailing commas."),
    Code("AR111", "node-missing", "ai.config.js (or .mjs/.cjs) needs Node.js to evaluate, and `node` is not on PATH.",
         "Install Node.js, or write the configuration as ai.config.json, .yaml or .toml."),
    Code("AR112", "config-not-data", "The configuration is not plain data (a function, a cycle, or not an object).",
         "Export a plain object: strings, numbers, booleans, arrays and objects only."),
    Code("AR113", "preset-not-found", "A preset named in `presets` (or package.json#ai.presets) was not found.",
         "Use a path starting with ./ or ../, or install the package so node_modules/NAME (or "
         "node_modules/jue-preset-NAME) exists."),
    Code("AR114", "preset-cycle", "Presets require each other in a cycle.",
         "Remove one of the presets from the other's package.json#ai.presets."),
    Code("AR115", "canonical-invalid", "The merged canonical document does not match spec 000's shapes.",
         "See docs/canonical.md for the fields of each capability."),
    Code("AR116", "command-empty", "A command has no prompt or content.",
         "Write the command's prompt in commands/NAME/prompt.md or in its `prompt:` field."),
    Code("AR117", "unsafe-path", "A skill's files map names a path outside the skill (absolute, or with ..).",
         "Use relative paths inside the skill directory."),
    Code("AR118", "capability-unknown",
         "The configuration has a top-level key that is not one of the six capabilities.",
         "Use rules, commands, skills, agents, hooks or mcp (plus context, presets and tools); spec 000 §2 allows no "
         "others."),
    Code("AR119", "canonical-degraded",
         "A canonical field has no portable equivalent; the warning says what happens to it.",
         "Nothing to do if the stated behaviour is fine; otherwise change the field as the message suggests."),
    Code("AR121", "config-timeout",
         "Evaluating ai.config.js (or .mjs/.cjs) took longer than its time limit (5 s unless AGENTRC_NODE_TIMEOUT "
         "says otherwise); Node was stopped.",
         "A configuration is data: remove loops and waits. On a slow machine, set AGENTRC_NODE_TIMEOUT (seconds)."),
    Code("AR122", "config-denied",
         "ai.config.js tried what its sandbox refuses: reading outside the project and the node_modules above it, "
         "writing, starting a process or worker, loading a native addon, or the network.",
         "Compute the configuration from the project's own files only; see docs/security.md."),
    Code("AR123", "tools-not-portable",
         "An agent's or command's tool list (tools, allowed-tools, disallowedTools) names a tool with no portable "
         "capability name. Built without the list, the agent would get every tool, so it is not built.",
         "Use the portable names (read, write, edit, bash, grep, glob, web-fetch, web-search) or Claude Code's (Read, "
         "Write, Edit, MultiEdit, Bash, Grep, Glob, WebFetch, WebSearch); describe other tools in the body."),
    # --- import (client files -> canonical document and portable items) -------------
    Code("AR130", "import-lossy",
         "A client file holds something the canonical document or portable items cannot represent as it is: it is left "
         "out, or kept in the form the warning names.",
         "Nothing to do if that is fine; otherwise add it back by hand, often in a client passthrough block (claude:, "
         "cursor:, ...) of the imported item."),
    Code("AR131", "import-unreadable",
         "A client file cannot be read (invalid JSON, TOML or YAML frontmatter, or not UTF-8); nothing is imported.",
         "Fix the file's syntax at the position shown (the client would fail on it too), then import again."),
    Code("AR132", "import-item-skipped",
         "An imported item's portable form fails lint, so the import leaves it out and writes the rest (an error with "
         "--strict, which writes nothing): what an import writes always lints clean.",
         "Read the lint error quoted in the message, then add the item to the registry by hand in a form that lints."),
    # --- capability packages (spec 003; docs/capabilities.md) ------------------------
    Code("AR150", "cap-manifest-invalid",
         "An oas.json (capability manifest) is not valid JSON or does not match its schema.",
         "See docs/capabilities.md for the fields of oas.json; src/agentrc/schemas/oas-capability.schema.json is "
         "the exact shape."),
    Code("AR151", "package-manifest-invalid",
         "An oas-package.json is missing, not valid JSON, does not match its schema, or lists a capability root "
         "that is not a capability.",
         "See docs/capabilities.md for the fields of oas-package.json; every listed root must hold an oas.json."),
    Code("AR152", "cap-duplicate-id",
         "Two capabilities have the same id: in one package, or in two packages at one scope.",
         "Capability ids are identities; rename one of them, or remove the package that also exports it."),
    Code("AR153", "cap-layer-conflict",
         "Two capabilities active for one soul implement the same fundamental layer (knowledge, messaging, tasks).",
         "Keep one integration per layer for the soul: disable the other for it, or bind the layer explicitly."),
    Code("AR154", "cap-hook-unsupported", "A capability declares a hook other than soul-scaffold, spawn and retire.",
         "Remove the hook; only soul-scaffold, spawn and retire exist (spec 003)."),
    Code("AR155", "cap-hook-required",
         "A soul-scaffold or retire hook is marked required; only a spawn hook can be.",
         "Drop `required` (or set it to false): retire and soul-scaffold run outside a spawn, so nothing could "
         "enforce it."),
    Code("AR156", "cap-path-escape",
         "A path a capability or package declares is absolute, uses '..', or leads outside its root once symlinks "
         "are resolved.",
         "Keep every declared file inside the capability's own directory (copy it in instead of linking out)."),
    Code("AR157", "cap-not-self-contained",
         "A capability declares a skill, injection, command, hook or agent that is missing from its directory, or "
         "carries something agentrc cannot materialise as it is (a FIFO, a socket, a device).",
         "Add the file to the capability directory, or remove the declaration."),
    Code("AR158", "cap-misplaced",
         "A capability (a directory with an oas.json) sits directly under .agents/capabilities/.",
         "Move it into .agents/capabilities/owned/ (authored here) or install it into installed/ with "
         "'agentrc cap install'."),
    Code("AR159", "lock-invalid",
         "oas-lock.json is not valid JSON, does not match its schema, or its rows disagree with each other.",
         "Fix or delete the lock and install again; agentrc never repairs a lock on its own."),
    Code("AR160", "cap-source-invalid",
         "A package source is none of: a local directory, a git URL (file://, https://, ssh) or git: shorthand "
         "with an optional @ref and #path, an official catalog id the catalog holds; or it cannot be fetched.",
         "Use a directory holding oas-package.json, or a git URL with an optional @REF and #PATH (#. selects the "
         "repository root)."),
    Code("AR161", "cap-integrity-drift",
         "The bytes of a package or an installed capability differ from the integrity oas-lock.json records.",
         "Reinstall from the locked source; if the change is intended, remove the package and install it again."),
    Code("AR162", "cap-remove-blocked",
         "A package cannot be removed: oas-config.yaml references one of its capabilities, or another locked "
         "package depends on it.",
         "Remove the references (or the dependent package) first."),
    Code("AR163", "cap-incompatible",
         "A package's compatibility.oas does not admit the OAS contract agentrc implements.",
         "Install a version of the package made for this contract, or upgrade agentrc."),
    Code("AR164", "cap-package-conflict",
         "Two sources claim one package id at a scope, packages depend on each other in a cycle, or a locked "
         "package would move to other bytes or another path on install.",
         "Install one source per package id; a locked package changes only by removing it and installing again."),
    Code("AR165", "cap-legacy-lock",
         "The scope's oas-lock.json is lockfileVersion 1, which agentrc reads but does not write.",
         "Convert the scope with 'oas migrate' first; agentrc never converts a lock as a side effect."),
    Code("AR166", "cap-unknown", "A package or capability named on the command line is not locked at the scope.",
         "Run 'agentrc cap list --dir SCOPE' to see what is installed."),
    Code("AR167", "cap-scope-unsafe",
         "A directory agentrc writes installed capabilities into (.agents, .agents/capabilities, installed) is a "
         "symbolic link or not a directory.",
         "Replace the link with a real directory: agentrc never writes through links in a scope."),
    Code("AR168", "cap-config-invalid",
         "An oas-config.yaml does not match its schema, or uses a key of an earlier release (groups, a top-level "
         "layers, injection, from: bundled), or overrides the injection of a source the scope owns.",
         "See docs/capabilities.md (Activation); the message names the replacement of a renamed key."),
    Code("AR169", "cap-binding-ambiguous",
         "Two bindings of one capability at the same specificity and scope disagree: different values of a setting, "
         "or enabled and disabled.",
         "Keep one value: a soul binding beats an agent-type binding, which beats global, and a closer scope beats an "
         "outer one; YAML order never decides."),
    Code("AR170", "cap-activation-invalid",
         "An activated capability is not acquired, sits under another layer than its manifest declares (or under "
         "additive while it declares one), comes from elsewhere than its from: says, or claims another's command "
         "namespace.",
         "Install the capability, move its entry under capabilities.layers.<its layer> (or additive), or fix from:."),
    Code("AR171", "cap-skill-duplicate",
         "Two sources of one soul's skills (capabilities active for it; for a spawn also the soul and agentrc's own "
         "skills, source kernel) contribute a skill of the same name, and skill-overrides names no winner.",
         "Add `skill-overrides: {NAME: SOURCE}` (a capability id, soul or kernel) to oas-config.yaml, or deactivate "
         "one of the capabilities for the soul."),
    Code("AR172", "cap-required-hook-untrusted",
         "A capability active for the soul declares a required spawn hook, but its executable surface is not "
         "trusted, so the spawn cannot run the setup the instance relies on.",
         "Run 'agentrc cap trust CAPABILITY --dir SCOPE' (an installed capability), or deactivate it for the soul."),
    Code("AR173", "cap-required-hook-failed",
         "A required spawn hook failed: the spawn was rolled back (retire hooks, home removed), or, when that "
         "compensation did not finish, the home is kept with .oas-rollback-incomplete.json.",
         "Fix the hook's cause and spawn again; a kept home is retried with 'agentrc cap retire INSTANCE'."),
    Code("AR174", "cap-spawn-invalid",
         "The instance home cannot be composed: the soul's repository or AGENTS.md is missing, the agent's "
         "instances/ directory is a link, a skill links outside itself, or an active capability declares a skill "
         "tree or injection that does not exist, or agentrc's own skills (oas, oas-config, oas-packages) are missing "
         "from its installation.",
         "Fix the soul (soul.yaml, AGENTS.md), the skill or the capability's declaration; reinstall a broken agentrc."),
    Code("AR175", "cap-instance-unidentified",
         "An instance home has no readable instance.json and no usable cleanup descriptor (or a rollback marker that "
         "cannot drive a retry), so what still depends on it is unknown (E_UNIDENTIFIED_INSTANCE_HOME).",
         "Inspect the home, then 'agentrc cap retire INSTANCE --force' removes it anyway."),
    Code("AR176", "cap-retire-incomplete",
         "Retiring a quarantined instance could not prove its cleanup: an outstanding retire hook failed, did not "
         "run, or reported incomplete cleanup. The home is kept.",
         "Fix the cause and retire again; --force removes the home and prints what you now own."),
    Code("AR178", "cap-migrate-failed",
         "A lockfileVersion 1 scope cannot be converted: an entry has no package source agentrc can map (a catalog "
         "id the catalog does not hold, an unknown source, an entry --official keeps beside official ones), or "
         "acquiring a mapped package failed (then everything was rolled back).",
         "Fix the source, or convert the scope with 'oas migrate'; 'agentrc cap migrate --dry-run' shows the plan."),
    Code("AR250", "cap-spawn-lineage",
         "The lineage of a spawn cannot be recorded: the flags contradict each other (--parent with --relation, a "
         "relation without --relative-to, a relation other than child for an attached instance), the anchor "
         "instance does not exist, its name is ambiguous across agents roots, it has no instance.json to inherit "
         "from, or an attached work dir belongs to no instance and no --parent names its owner.",
         "Name an existing instance with --parent INSTANCE, or --relation child|sibling|parent --relative-to "
         "INSTANCE (--relative-root AGENTS-ROOT when several roots hold that name); an attached instance is always "
         "a child of the owner of its work tree."),
    Code("AR251", "cap-spawn-work",
         "The work tree of a spawn cannot be prepared: an unknown work mode, attached without an existing "
         "--work-dir, workspace without a team: block or workspace-scope config, worktree outside a git "
         "repository, or `git worktree add` failed (the branch exists, say). Nothing is kept.",
         "Pass --work worktree|checkout|attached|workspace with what the mode needs; for a worktree, pick a free "
         "--branch or delete the old one."),
    Code("AR252", "cap-soul-ambiguous",
         "A soul that is not under the local agents root is in more than one member repository of the team scope.",
         "Spawn it with --dir pointing into the repository whose soul you mean."),
    Code("AR253", "cap-catalog-invalid",
         "The official package catalog ($OAS_PACKAGE_CATALOG, else the one agentrc ships) is not valid JSON or does "
         "not match its schema: packages must map ids to {url, ref?, path?}, capabilities ids to package ids.",
         "Fix the catalog file (src/agentrc/schemas/oas-package-catalog.schema.json is its exact shape), or unset "
         "OAS_PACKAGE_CATALOG to use the bundled one."),
    Code("AR254", "cap-spawn-bad-args",
         "A spawn flag cannot be used: --task-file names no readable regular file (or one over 1 MiB), or --runtime "
         "is neither pi nor claude (the kernel's E_BAD_ARGS).",
         "Pass an existing --task-file (or the text with --task), and --runtime pi or --runtime claude."),
    Code("AR255", "cap-closure-platform-variant",
         "A capability's runtime closure (package.json + package-lock.json) is not platform-invariant: its npm lock "
         "is lockfileVersion 1, a production entry has os/cpu/libc constraints, is optional or has an install "
         "script, or the installed node_modules holds a native .node binary (the kernel's invalid-package-manifest).",
         "Vendor a pure-JS dependency or drop it, and regenerate package-lock.json with a modern npm."),
    Code("AR256", "cap-closure-npm-failed",
         "`npm ci --omit=dev --omit=peer --ignore-scripts` failed in a capability root with a runtime closure (npm "
         "missing, a lock out of sync with package.json, a registry dependency with no network). Nothing is "
         "installed.",
         "Run the same command in the capability directory to see npm's error; keep package-lock.json in sync, "
         "or vendor the dependency as a local file: dependency."),
    Code("AR257", "cap-closure-link-escape",
         "A link npm made under a capability's node_modules is broken or leads outside the capability root (a "
         "file: dependency outside it, say), so the artifact would not be self-contained (the kernel's "
         "path-escape).",
         "Keep file: dependencies inside the capability directory."),
    Code("AR258", "cap-agent-provider-untrusted",
         "The soul to spawn is a capability-defined agent (a soul in a declared capability's `agents:`), but its "
         "provider cannot be used: an installed capability that no longer matches its lock's integrity, or an "
         "agent soul that is not self-contained (no AGENTS.md, or a link leading out of the capability).",
         "Restore the capability with 'agentrc cap install', or fix the agent's soul directory in the capability."),
    Code("AR259", "cap-no-primary-checkout",
         "A spawn from a linked git worktree: instance homes belong in the primary checkout (agentrc moves them "
         "there, as the kernel does), but git cannot establish it: the repository cannot be read, or the primary "
         "checkout `git worktree list` names does not exist (the kernel's E_NO_CANONICAL_ROOT).",
         "Restore the primary checkout (or repair git), or spawn with --dir pointing into the primary checkout."),
    Code("AR260", "cap-soul-scaffold-conflict",
         "A capability's soul-scaffold hook, run when spawn writes a local soul (--instructions-file, --def-file), "
         "changed or deleted a file of the soul it did not create, or created one another capability owns "
         "(.oas-scaffold-owners.json); the soul is restored as it was before that hook (the kernel's ownership rule).",
         "Fix the capability's soul-scaffold hook so that it only creates files, and changes only files it created."),
    Code("AR179", "cap-local-soul-invalid",
         "`cap spawn --instructions-file/--def-file` cannot write the local soul: the name is a persistent soul "
         "(agents/NAME), the file cannot be read (or is over 1 MiB), a value would put a line break into "
         "soul.yaml, or local-agents/ is a link (the kernel's E_BAD_ARGS).",
         "Spawn a persistent soul without those flags; pass a readable file and single-line values."),
    Code("AR177", "cap-unknown-instance", "No instance of that name under the agents root above the scope.",
         "Check the name: instances live in agents/<soul>/instances/ and local-agents/<soul>/instances/."),
    Code("AR230", "cap-runtime-package-missing",
         "A capability active for the soul requires a package of the instance's runtime (a Claude Code plugin, a pi "
         "package) that the runtime's own list does not show installed and enabled, or whose spec is not a plain "
         "token. Spawn never installs it (the kernel's E_RUNTIME_RESOURCE_MISSING).",
         "Run the consent command shown ('agentrc cap install --accept-requirement RUNTIME:PACKAGE --dir SCOPE', "
         "which shows and runs every step), enable a disabled plugin, or deactivate the capability for the soul."),
    Code("AR231", "cap-requirement-policy",
         "A requirement of an active capability can never be consented to: its command is not a plain executable "
         "name, its runtime package or marketplace is not a plain token, or two capabilities ask for one package "
         "with different install steps (E_REQUIREMENT_POLICY). --no-requirements does not skip this check.",
         "Fix the capability's requires entry, or deactivate one of the capabilities asking for it."),
    Code("AR232", "cap-requirement-install-failed",
         "A consented requirement install failed: a step exited non-zero, or after all steps the runtime's list "
         "still does not show the package installed and enabled.",
         "Run the steps shown by hand to see why they fail (a marketplace that cannot be reached, a plugin name "
         "the marketplace does not list), then run 'agentrc cap install' again."),
    Code("AR233", "cap-artifact-drift",
         "An installed capability does not hash to the integrity its oas-lock.json row records (the Pants "
         "`agentrc_oas_lock` target verifies it from digests).",
         "Restore it with 'agentrc cap install' (bare) or 'oas install', which replace a copy that does not match; "
         "an artifact holding a symbolic link is checked by 'agentrc cap list' instead."),
    Code("AR234", "cap-artifact-missing",
         "A capability oas-lock.json records is not installed beside it, or Pants cannot see it (dot-directories "
         "and gitignored paths are hidden from Pants by default).",
         "Run 'agentrc cap install' (bare) at the scope, and let Pants see the installed capabilities: "
         "pants_ignore.add = [\"!.agents/\", \"**/.agents/*\", \"!**/.agents/capabilities/\"] (docs/pants.md)."),
    # --- the boundary of fetched content (issue: fetch surfaces) ---------------------
    Code("AR224", "write-through-link",
         "A file agentrc would write (a lock, a report, a formatted or imported file, a capability scope's files), "
         "or a directory between its root and it, is a symbolic link: agentrc never writes through one.",
         "Remove the link (it may have been committed to make agentrc write elsewhere) and run again; links above "
         "the project, scope or output root, such as a linked ~/.config, are followed (docs/security.md)."),
    Code("AR225", "source-credentials",
         "A source URL holds a password or token (user:secret@ or a token as the user name): it would reach the "
         "lock, the output and the terminal. It is refused and not shown.",
         "Remove the credentials from the URL and let git's credential helper supply them (git config --global "
         "credential.helper, or an ssh key); ssh user names such as git@host:org/repo are fine."),
    Code("AR226", "source-origin",
         "A source requires another source its origin does not allow: a source fetched over https or ssh may "
         "require only https or ssh sources (and paths inside its own tree); a local directory named in a lock "
         "must lie inside the project unless named on the command line.",
         "Take the required content from a git source over https or ssh, or add the local directory yourself "
         "('agentrc add ./dir')."),
    Code("AR227", "source-too-large",
         "A source's checkout is over a bound: a file over 16 MiB, more than 50,000 files, or more than 512 MiB in "
         "all (checked from git's listing before anything is checked out). Nothing is written.",
         "Select a smaller #subpath, or raise the bound for this run: AGENTRC_MAX_FILE_BYTES, AGENTRC_MAX_FILES, "
         "AGENTRC_MAX_CHECKOUT_BYTES."),
    Code("AR228", "cache-modified",
         "A cached checkout's files no longer match the digests recorded when it was fetched (edited, appended to "
         "or replaced on disk); the entry is discarded and fetched again, or refused when it cannot be.",
         "Nothing to do when the fetch succeeded; otherwise check who writes to the cache "
         "($AGENTRC_CACHE_DIR, else ~/.cache/agentrc) and delete its sources/ directory."),
    Code("AR229", "consent-required",
         "A source brings an executable surface (hook commands, MCP server commands and URLs, executable "
         "scripts) that was not approved; without approval nothing is written.",
         "Read what is listed, then run again with --trust (or answer y at the prompt on a terminal); the "
         "approval is recorded in agentrc.lock.json and asked again when that surface changes."),
    Code("AR240", "hidden-unicode",
         "Fetched text holds invisible or bidirectional Unicode control characters, which can hide instructions "
         "from a reader (a prompt-injection vector).",
         "Look at the line shown with a tool that shows the characters (cat -A); ask the source's authors to "
         "remove them, or do not install the item."),
    Code("AR241", "argument-invalid",
         "A value from a source, a lock or a config that would reach a command line (an MCP server or plugin "
         "name, a marketplace, a ref) is not valid for its kind: it starts with '-', holds spaces or control "
         "characters, or breaks its grammar. Nothing is run.",
         "Fix the name where it is written (names are lowercase letters, digits and hyphens; plugin identifiers "
         "are name@marketplace); a lock edited by hand can be restored from version control."),
    Code("AR242", "cap-dependency-refused",
         "A capability package's npm dependencies reach outside the package (a git, file: or link dependency "
         "resolving outside it, or a package.json or package-lock.json that is a link leading out of it) or its "
         "own .npmrc would change how npm runs; npm is not run.",
         "Publish the dependency to a registry, or vendor it inside the package; agentrc runs npm with its own "
         "configuration and never the package's .npmrc (docs/security.md)."),
    Code("AR243", "project-file-invalid",
         "agentrc.yaml, the project file, cannot be used: not YAML, not its shape (docs/project-file.md), an "
         "unknown client or code, a level for an error, or a source that is not a locator.",
         "Fix the key shown; `agentrc init` writes a valid one, and the schema (schemas/project.schema.json) "
         "gives editors completion and checks."),
    Code("AR244", "client-set-change",
         "--client names another set than the project's client set (agentrc.yaml's clients:, else the clients the "
         "lock was installed for); installing for it would delete the other clients' files.",
         "Edit clients: in agentrc.yaml (then run 'agentrc install'), or repeat the command with --set-clients; to "
         "keep the set, drop --client."),
    Code("AR245", "context-repeated",
         "Text agentrc writes in its marked block of a file the user also writes (CLAUDE.md, AGENTS.md) is also in "
         "the file's own text: the client reads it twice.",
         "Delete the repeated text from the file (the sources hold it now), or build once with --adopt, which hands "
         "the file to agentrc."),
    Code("AR246", "empty-body",
         "Directives leave a client nothing of an item's body but headings: the client gets an item without "
         "instructions.",
         "Give the client its own text (a block for its family, or an override file), or leave it out of the "
         "item's audience."),
    Code("AR262", "plugins-elsewhere",
         "A marketplace added whole lists plugins that live in other repositories: they are not installed with it.",
         "Add each one you want by its name: agentrc add MARKETPLACE --bundle NAME (it is fetched from its own "
         "repository)."),
    Code("AR261", "skill-renamed",
         "Items of different kinds share a name; a client that writes them as Agent Skills into one directory "
         "invokes the later kind as NAME-KIND.",
         "Nothing to do if that name is fine; otherwise rename one of the items "
         "(docs/format.md#one-name-several-kinds)."),
    # --- fmt ------------------------------------------------------------------------
    Code("AR100", "fmt-unsafe",
         "Reordering the frontmatter would change its data (duplicate keys); the file is left as it is.",
         "Remove the duplicate keys (AR004) first; the last occurrence is the value YAML keeps."),
    Code("AR101", "not-formatted", "The file is not in canonical form.",
         "Run 'agentrc fmt PATH' to rewrite it."),
    Code("AR263", "cap-command-unknown",
         "cap run names a command namespace no capability acquired for the context declares, two capabilities "
         "declare it, or the namespace has no such command.",
         "Run 'agentrc cap doctor' to see the active capabilities, and 'agentrc cap run NAMESPACE' to list the "
         "namespace's commands."),
    Code("AR264", "cap-command-refused",
         "cap run refuses a capability's command: the capability is not active for the context (or soul), its "
         "executable surface is not trusted at its locked integrity, or the command's value is empty or its script "
         "is missing or resolves outside the capability's directory.",
         "Activate it with 'agentrc cap use CAPABILITY', approve it with 'agentrc cap trust CAPABILITY --dir SCOPE' "
         "after reviewing it, or fix the manifest's commands (a script inside the capability)."),
    Code("AR265", "cap-scope-state",
         "cap init at a scope that already has an oas-config.yaml, or cap status where no agents/ or local-agents/ "
         "directory is found above the scope (with --team: no team declared).",
         "Edit the existing config or change it with 'agentrc cap use'; for status, run it inside a deployment "
         "(or spawn a soul there first)."),
    Code("AR270", "cap-legacy-needs-kernel",
         "A capability of a lockfileVersion 1 scope from the OAS kernel's marketplace declares skills that ship "
         "with the kernel, outside the capability's directory, and no installed kernel resolves them ('oas root' "
         "finds none, or the kernel does not ship them at the capability's version). cap doctor leaves them out; "
         "cap spawn stops.",
         "Install the OAS kernel so that 'oas root' prints its directory, or migrate the scope with "
         "'agentrc cap migrate'."),
)
