"""The capability-level tool vocabulary (spec 001 §4) and the portable model aliases (§3.4).

Per-client names live in each client adapter; this module holds only what is neutral.
The spec's §4 table lists eight capabilities; agentrc checks each client's column against
that client's current documentation (see docs/clients/) rather than copying the spec's
cells, which predate Copilot's and opencode's current tool names.
"""

from __future__ import annotations

from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Dict, Optional, Tuple

TOOLS = ("read", "write", "edit", "bash", "grep", "glob", "web-fetch", "web-search")

# §3.4: the guaranteed short aliases, plus `inherit` (use the session's model), which every
# client that has agents understands in some form.
MODEL_ALIASES = ("sonnet", "opus", "haiku", "inherit")

QUALIFIED_MODEL_RE = pattern(r"^[a-z0-9][a-z0-9-]*/[A-Za-z0-9][\w.:#@-]*$")


def check_model(model: str) -> bool:
    return model in MODEL_ALIASES or bool(QUALIFIED_MODEL_RE.match(model))


def join_model(provider: Optional[str], ident: str) -> str:
    """The inverse of `split_model`."""
    return f"{provider}/{ident}" if provider is not None else ident


def split_model(model: str):
    """`anthropic/claude-sonnet-4-5` -> ('anthropic', 'claude-sonnet-4-5'); aliases -> (None, alias)."""
    if "/" in model:
        provider, ident = model.split("/", 1)
        return provider, ident
    return None, model


# --- tool names of other clients, read back into capabilities -----------------------------
# Each name maps to the capabilities it grants (a Copilot alias can grant two) and how: ""
# when the capabilities do what the tool does, else a note saying what is nearest. A name
# found nowhere here has no portable equivalent. Mapping never widens silently: a tool that
# only reads command output, runs tests or tasks, or asks another agent gets no capability
# (granting `bash` for it would allow every command).

# GitHub Copilot / VS Code: the tool sets and aliases of custom agents (docs.github.com,
# "Custom agents configuration": read, edit, execute, search, web and their aliases,
# case-insensitive) and VS Code's built-in tools, by their current `set/tool` names
# (code.visualstudio.com/docs/agents/reference/tools-reference) and their older bare names
# (editFiles, runCommands, codebase, ...). Keys are lowercase.
if TYPE_CHECKING:
    Resolved = Tuple[Tuple[str, ...], str]  # (capabilities, "" or the note saying they are the nearest)
_NEAREST_SEARCH = "searches the workspace its own way; the nearest capabilities are grep and glob"
COPILOT_TOOL_TABLE: Dict[str, Resolved] = {
    # tool sets and the custom-agent aliases
    "read": (("read",), ""), "notebookread": (("read",), ""),
    "edit": (("write", "edit"), ""), "multiedit": (("write", "edit"), ""), "write": (("write", "edit"), ""),
    "notebookedit": (("write", "edit"), ""),
    "execute": (("bash",), ""), "shell": (("bash",), ""), "bash": (("bash",), ""), "powershell": (("bash",), ""),
    "search": (("grep", "glob"), ""), "grep": (("grep",), ""), "glob": (("glob",), ""),
    "web": (("web-fetch", "web-search"), ""), "webfetch": (("web-fetch",), ""), "websearch": (("web-search",), ""),
    # VS Code's built-in tools (read/, edit/, execute/, search/, web/ and the old names)
    "readfile": (("read",), ""),
    "editfiles": (("write", "edit"), ""), "createfile": (("write",), ""), "createdirectory": (("write",), ""),
    "editnotebook": (("edit",), ""),
    "runcommands": (("bash",), ""), "runinterminal": (("bash",), ""),
    "textsearch": (("grep",), ""), "filesearch": (("glob",), ""), "listdirectory": (("glob",), ""),
    "codebase": (("grep", "glob"), _NEAREST_SEARCH),
    "usages": (("grep",), "finds references through the language server; the nearest capability is grep"),
    "searchresults": (("grep",), "reads the Search view's results; the nearest capability is grep"),
    "fetch": (("web-fetch",), ""),
    "githubrepo": (("web-search",), "searches code in a GitHub repository; the nearest capability is web-search"),
}
# The built-in tool sets a VS Code `set/tool` name starts with; any other prefix is an MCP
# server's or an extension's tools, which have no portable equivalent.
COPILOT_TOOL_SETS = ("read", "edit", "execute", "search", "web", "vscode", "agent", "todo")

# Claude Code: the eight capabilities' own names (what the adapter writes), and the other
# built-in tools that have a nearest one.
CLAUDE_TOOL_TABLE: Dict[str, Resolved] = {
    "Read": (("read",), ""), "Write": (("write",), ""), "Edit": (("edit",), ""), "MultiEdit": (("edit",), ""),
    "Bash": (("bash",), ""), "Grep": (("grep",), ""), "Glob": (("glob",), ""), "WebFetch": (("web-fetch",), ""),
    "WebSearch": (("web-search",), ""),
    "NotebookEdit": (("edit",), "edits Jupyter notebooks; the nearest capability is edit"),
    "NotebookRead": (("read",), ""),
    "LS": (("glob",), "lists a directory; the nearest capability is glob"),
}
_PATTERN_RE = pattern(r"^([A-Za-z]+)\((.*)\)$")



def copilot_tool(name: str) -> Resolved:
    """The capabilities a Copilot / VS Code tool name grants, and a note when they are only
    the nearest ones; `((), "")` for a name with no portable equivalent (an MCP server's
    `github/*`, `vscodeAPI`, `todos`, ...)."""
    key = name.strip().lower()
    if "/" in key:
        head, tool = key.split("/", 1)
        if head not in COPILOT_TOOL_SETS:
            return (), ""
        key = head if tool == "*" else tool
    return COPILOT_TOOL_TABLE.get(key, ((), ""))


def claude_tool(name: str) -> Resolved:
    """The capabilities a Claude Code tool name or permission rule grants. A rule
    (`Bash(./scripts/gh.sh:*)`, `Read(./docs/**)`) allows part of its tool; the nearest
    capability is the whole tool, with a note saying so."""
    if name in CLAUDE_TOOL_TABLE:
        return CLAUDE_TOOL_TABLE[name]
    m = _PATTERN_RE.match(name.strip())
    if m and m.group(1) in CLAUDE_TOOL_TABLE:
        caps = CLAUDE_TOOL_TABLE[m.group(1)][0]
        return caps, (f"allows {m.group(1)} for {m.group(2)!r} only; the nearest is {', '.join(caps)} "
                      "for everything")
    return (), ""
