"""`agentrc add --global`: the project outputs of a build moved to the user's locations.

The build renders project paths; a global installation writes under the user's home the
files each client reads for every project (docs/reference CLIENT_FORMATS.md, "User
skills", "User instructions", ...). A client directory moves as a whole, so the relative
links between its files (a rule to its resources under `agentrc/`) still hold:

| Project path | User path |
| --- | --- |
| `.claude/` (skills, agents, commands, rules, `settings.json`) | `~/.claude/` |
| `.github/skills/`, `agents/`, `instructions/`, `hooks/`, `agentrc/`, `copilot-instructions.md` | `~/.copilot/...` |
| `.opencode/` (skills, agents, commands) | `~/.config/opencode/` |
| `opencode.json` (its `mcp`, `plugin`, ... keys) | `~/.config/opencode/opencode.json` |
| `.agents/skills/` | `~/.agents/skills/` |
| `.mcp.json` (Copilot's servers) | `~/.copilot/mcp-config.json` |

Claude Code's servers are registered with `claude mcp add-json --scope user` (its user
servers live in `~/.claude.json`, the client's own state, which agentrc never writes).
Everything else has no user-level form agentrc knows (`.github/prompts/`, `.vscode/mcp.json`,
whose user file lives in the VS Code profile, the root `AGENTS.md` and `CLAUDE.md`, which
import project files, `.agents/rules/` and opencode's `instructions` paths, the other
clients' files): it is reported (AR217) and not written. A hook command that runs a file
from the project (`${CLAUDE_PROJECT_DIR:-.}/.claude/...`) is pointed at the same file
under `${HOME}/.claude/`; any other reference to the project directory in a config file
(`CLAUDE_PROJECT_DIR`, `${workspaceFolder}`, `$PWD`) is refused (AR218), since it
would name whatever project the client runs in.
"""

from __future__ import annotations

from agentrc.files import OutputFile

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import List, Optional, Sequence, Tuple

MOVES: Tuple[Tuple[str, str], ...] = (
    (".claude/", ".claude/"),
    (".github/skills/", ".copilot/skills/"),
    (".github/agents/", ".copilot/agents/"),
    (".github/instructions/", ".copilot/instructions/"),
    (".github/hooks/", ".copilot/hooks/"),
    (".github/agentrc/", ".copilot/agentrc/"),
    (".github/copilot-instructions.md", ".copilot/copilot-instructions.md"),
    (".opencode/", ".config/opencode/"),
    ("opencode.json", ".config/opencode/opencode.json"),
    (".agents/skills/", ".agents/skills/"),
    (".mcp.json", ".copilot/mcp-config.json"),
)
# Keys of merged config files that name project paths: left out, and reported.
PROJECT_KEYS = {"opencode.json": ("instructions",)}
PROJECT_DIR = ("${CLAUDE_PROJECT_DIR:-.}/.claude/", "${HOME}/.claude/")
CONFIGS = (".json", ".jsonc", ".toml")  # where a client runs commands from: checked for project paths
PROJECT_MARKERS = ("CLAUDE_PROJECT_DIR", "${workspaceFolder}", "$PWD", "${PWD}")


def user_path(path: str) -> Optional[str]:
    """Where the project output `path` goes under the user's home, or None."""
    for src, dst in MOVES:
        if path == src or (src.endswith("/") and path.startswith(src)):
            return dst + path[len(src):]
    return None


if TYPE_CHECKING:
    Refused = Tuple[Tuple[str, str], ...]


def relocate(files: Sequence[OutputFile]) -> Tuple[Tuple[OutputFile, ...], Tuple[str, ...], Refused]:
    """(the files at their user paths, the project outputs with no user form (a path, or
    `path#key`), the (path, why) of those refused because they name the project directory)."""
    out: List[OutputFile] = []
    skipped: List[str] = []
    refused: List[Tuple[str, str]] = []
    for f in files:
        dest = user_path(f.path)
        if dest is None:
            skipped.append(f.path)
            continue
        drop = PROJECT_KEYS.get(f.path, ())
        keys = tuple(k for k in f.keys if not (k[0] and k[0][0] in drop))
        skipped.extend(f"{f.path}#{'.'.join(k[0])}" for k in f.keys if k[0] and k[0][0] in drop)
        if f.merge and len(keys) != len(f.keys):
            content = _without(f.content, drop)
        else:
            content = f.content
        old, new = PROJECT_DIR
        text = content.decode("utf-8", "surrogateescape")
        if old in text:
            content = text.replace(old, new).encode("utf-8", "surrogateescape")
            keys = tuple((k, v.replace(old, new), a) for k, v, a in keys)
        text = content.decode("utf-8", "surrogateescape") if f.path.endswith(CONFIGS) else ""
        hit = next((m for m in PROJECT_MARKERS if m in text), None)
        if hit is not None:
            refused.append((f.path, hit))
            continue
        if f.merge and not keys:
            continue
        # A plain OutputFile: a memoized rendering's file is one known by digest (OnDemand).
        out.append(OutputFile(dest, content, f.executable, f.owner, f.merge, keys))
    return tuple(out), tuple(skipped), tuple(refused)


def _without(content: bytes, drop: Sequence[str]) -> bytes:
    """A merged JSON file's agentrc-only content without the top-level keys `drop`."""
    import json
    try:
        data = json.loads(content.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return content
    if not isinstance(data, dict):
        return content
    for k in drop:
        data.pop(k, None)
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
