"""What the adapters share for hooks: a hook's script placed with its own files, the tool
events and matchers, what a client without a narrowing or a condition loses, and the
outcomes of a hook a client refuses or runs only in part."""

from __future__ import annotations

import posixpath
import re

from agentrc.fidelity import Tracker
from agentrc.files import Fragment, OutputFile, fragment
from agentrc.model import MATCHER_EVENTS, TOOL_EVENTS, Item

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

    from agentrc.clients.base import ClientAdapter


def resource_files(item: Item, base: str, owner: str) -> List[OutputFile]:
    """An item's supporting files placed under `base`."""
    return [OutputFile(posixpath.join(base, r.path), r.content, r.executable, owner) for r in item.resources]


def hook_script(adapter: "ClientAdapter", item: Item, tracker: Tracker,
                project_var: str = "", plugin_root: str = "", root_note: str = "") -> Tuple[str, List[OutputFile]]:
    """The hook's command line for this client, and its supporting files. A script named
    `./file` in HOOK.md is copied to <resource_root>/hooks/<name>/ and called by a path from
    the project root (prefixed with `project_var`, e.g. "$CLAUDE_PROJECT_DIR", for clients
    that run hooks elsewhere), or from a plugin's own directory (`plugin_root`, e.g.
    "${extensionPath}", which the client replaces; `root_note` says so). Its runner and the
    `./file` arguments naming the hook's own files go along in either case."""
    spec = item.hook
    assert spec is not None
    files = resource_files(item, f"{adapter.resource_root}/hooks/{item.name}", adapter.owner(item))
    if spec.script_file is None:
        tracker.emitted("script", "command line as written")
        tracker.emitted("resources", f"{len(files)} file(s) copied" if files else "none")
        return spec.script, files
    path = f"{adapter.resource_root}/hooks/{item.name}/{spec.script_file}"
    # ${VAR:-.}: other clients that run this file's hooks (VS Code, Cursor) may not set VAR,
    # and run hooks from the project root.
    var = project_var.strip("${}")

    def called(where: str) -> str:
        if plugin_root:
            return f'"{plugin_root}/{where}"'
        return f'"${{{var}:-.}}/{where}"' if project_var else where

    command = called(path)
    if spec.runner:
        command = f"{spec.runner} {command}"
    if spec.script_args:
        command += " " + _own_files(spec.script_args, item, path.rsplit("/", 1)[0], called)
    via = plugin_root or project_var
    tracker.mapped("script", f"{spec.script_file} copied to {path}" + (f", called via {via}" if via else "")
                   + (f" ({root_note})" if root_note else ""))
    tracker.emitted("resources", f"{len(files)} file(s) copied to {adapter.resource_root}/hooks/{item.name}/")
    return command, files


def _own_files(args: str, item: Item, directory: str, called: Callable[[str], str]) -> str:
    """`args` with each `./file` word that names a file of the hook's directory called by its path in this
    client's layout (`called`), as the script is (`bash ./run.sh ./check.py`: both the hook's own files)."""
    own = {r.path for r in item.resources}

    def swap(m: "re.Match[str]") -> str:
        name = m.group(2)
        if name not in own:
            return m.group(0)
        return m.group(1) + called(f"{directory}/{name}")

    return re.sub(r"""(^|\s)["']?\./([\w.-]+(?:/[\w.-]+)*)["']?(?=\s|$)""", swap, args)


def tool_event(item: Item, tracker: Tracker) -> bool:
    """Whether the hook's event is about tools (so tools/matcher apply). For other events
    `tools` is reported omitted (lint warns AR082), and so is a matcher on an event with
    nothing to match; a matcher on SessionStart and the other MATCHER_EVENTS is the caller's
    to render or refuse (`narrowing_lost`). With `tools:` given, a raw `matcher:` is reported
    omitted, since the tools decide."""
    spec = item.hook
    assert spec is not None  # set for every hook item
    if spec.event not in TOOL_EVENTS:
        for key in ("tools", "matcher"):
            if key in item.fields and (key == "tools" or spec.event not in MATCHER_EVENTS):
                tracker.omitted(key, f"{spec.event} is not about tools (lint warns AR082)")
        return False
    if spec.tools is not None and spec.matcher is not None:
        tracker.omitted("matcher", "tools: given; it decides the matcher")
    return True


def narrowing_lost(item: Item, client: str, conditions: bool = False,
                   matcher_events: Sequence[str] = TOOL_EVENTS) -> str:
    """Why `client` cannot run the hook as narrowly as written, or "" when it can: an `if:`
    condition it has no field for (unless `conditions`), or a matcher on an event outside
    `matcher_events` (SessionStart's `startup|clear|compact`). Such a client does not get
    the hook (`refuse_hook`): without the condition it would run more often than written."""
    spec = item.hook
    assert spec is not None  # set for every hook item
    if spec.condition is not None and not conditions:
        return (f"{client} hooks have no condition like if: {spec.condition}; without it the hook would run on "
                f"every {spec.event} it matches, so {client} does not get it")
    if (spec.matcher is not None and spec.event not in TOOL_EVENTS and spec.event in MATCHER_EVENTS
            and spec.event not in matcher_events):
        return (f"{client} cannot limit {spec.event} hooks to matcher {spec.matcher!r}; the hook would run on every "
                f"{spec.event}, so {client} does not get it")
    return ""


def refuse_hook(tracker: Tracker, why: str) -> List[Any]:
    """No output for a hook the client cannot run as written: every field not reported yet
    is dropped, saying why (never a wider hook)."""
    for f in tracker.expected:
        if f not in tracker.outcomes:
            tracker.dropped(f, why)
    return []


def subagents_only(item: Item, tracker: Tracker, where: str, always: str) -> None:
    """`mode:` for a client whose custom agents are always subagents: `subagent` is implicit
    (the agent sits in `where`); any other mode is degraded (`always` says why)."""
    if item.mode is not None:
        if item.mode == "subagent":
            tracker.omitted("mode", f"implicit: {where}")
        else:
            tracker.degraded("mode", f"{always} (mode {item.mode})")


def sync_only(item: Item, tracker: Tracker, dropped: str, emitted: str) -> None:
    """`async:` for a client whose hooks always run synchronously: `async: true` is dropped
    (why: `dropped`), `async: false` is what the client does anyway (`emitted`)."""
    if "async" in item.fields:
        assert item.hook is not None  # set for every hook item
        if item.hook.run_async:
            tracker.dropped("async", dropped)
        else:
            tracker.emitted("async", emitted)


def hook_docs(item: Item, tracker: Tracker) -> None:
    """A hook's name, description and body document it; clients read only the config entry."""
    tracker.omitted("description", "documentation of the hook; hook configs have no description")
    tracker.omitted("body", "documentation of the hook; not read by clients")
    if "name" in item.fields:
        tracker.mapped("name", "names the script's directory")


def event_matcher(item: Item, tracker: Tracker) -> Optional[str]:
    """For an event that is not about a tool: the matcher as written (what started the event,
    for the MATCHER_EVENTS: SessionStart's `startup|clear`), else "". None for a tool event,
    whose tools or matcher each client maps to its own tool names."""
    spec = item.hook
    assert spec is not None  # set for every hook item
    if tool_event(item, tracker):
        return None
    if spec.matcher is not None and spec.event in MATCHER_EVENTS:
        tracker.emitted("matcher", f"as written (what started the {spec.event} event)")
        return spec.matcher
    return ""


def tool_matcher(item: Item, tracker: Tracker, names: Mapping[str, str], tools_detail: str,
                 matcher_detail: str) -> str:
    """The matcher of a client whose tool ids are `names` (portable tool -> id) and which reads
    a matcher as written (Claude Code, Qwen Code): a non-tool event's as `event_matcher` says,
    the portable tools as `id|id`, else the raw matcher."""
    spec = item.hook
    assert spec is not None  # set for every hook item
    plain = event_matcher(item, tracker)
    if plain is not None:
        return plain
    if spec.tools is not None:
        tracker.mapped("tools", tools_detail)
        return "|".join(dict.fromkeys(names[t] for t in spec.tools))
    if spec.matcher is not None:
        tracker.emitted("matcher", matcher_detail)
        return spec.matcher
    return ""


def settings_hook(adapter: "ClientAdapter", item: Item, tracker: Tracker, handler: Dict[str, Any], path: str,
                  event: str, matcher: Callable[[], str]) -> Fragment:
    """The hook in the settings shape Claude Code set and others follow (Qwen Code, droid,
    Auggie): `hooks.<event>` in `path` gets `{matcher, hooks: [handler]}` appended, the item's
    passthrough block merged into the handler."""
    adapter.merge_block(item, handler, tracker, "merged into the hook handler")
    entry: Dict[str, Any] = {}
    found = matcher()
    if found:
        entry["matcher"] = found
    entry["hooks"] = [handler]
    tracker.emitted("event", f"hooks.{event} in {path}")
    return fragment(path, "json", ("hooks", event), entry, adapter.owner(item), append=True)


def sync_settings_hook(adapter: "ClientAdapter", client: str, item: Item, tracker: Tracker, event: Optional[str],
                       where: Tuple[str, str], matcher: Callable[[], str]) -> List[Any]:
    """A hook for a client that takes Claude Code's settings shape with a command handler whose
    timeout is in seconds and runs every hook synchronously (droid, Auggie): refused when the
    client has no such `event` (None) or cannot narrow it as the item does, else its script's
    files and the settings entry. `client`: the client's name in the report; `where`: the
    settings file and the variable its scripts' paths start from (`hook_script`)."""
    path, project_var = where
    spec = item.hook
    assert spec is not None  # set for every hook item
    if event is None:
        return refuse_hook(tracker, f"{client} has no {spec.event} hook event")
    why = narrowing_lost(item, client)
    if why:
        return refuse_hook(tracker, why)
    hook_docs(item, tracker)
    command, files = hook_script(adapter, item, tracker, project_var)
    handler: Dict[str, Any] = {"type": "command", "command": command}
    if spec.timeout is not None:
        handler["timeout"] = spec.timeout
        tracker.emitted("timeout", "seconds")
    said = f"{client} runs hooks synchronously"
    sync_only(item, tracker, said, said)
    return [*files, settings_hook(adapter, item, tracker, handler, path, event, matcher)]
