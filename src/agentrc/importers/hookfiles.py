"""The files a hook command runs, brought into the hook's item directory on import.

What enters is one hook handler's command as a client file wrote it
(`.claude/hooks/check.sh`, `"$CLAUDE_PROJECT_DIR"/.claude/hooks/x.py`,
`node ${CLAUDE_PLUGIN_ROOT}/hooks/start.js`, `.github/hooks/log/log.sh`) and the Reader whose
root the source is; what leaves is the HOOK.md `script:` (`./file args`, or `node ./start.js`
after a runner), the file's bytes and executable bit for the item directory, and AR130 for a
named file that cannot travel: outside the root, reached through a link, or missing under
`${CLAUDE_PLUGIN_ROOT}` (that hook is not imported, since its HOOK.md would name a file
consumers never get), or a project path missing from the source (kept as written: it runs
from the project root of a project that has it).

Why a rewrite at all: a hook command names a path in its source's layout, and every client
adapter copies a HOOK.md's `./file` into its own layout (`clients.base.hook_script`), so a
`./file` is the only form that runs everywhere. `${CLAUDE_PLUGIN_ROOT}` and
`$CLAUDE_PROJECT_DIR` resolve against the Reader's root and nothing else: a plugin read with
its directory as root resolves plugin paths, a project resolves project paths.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from typing import Dict, List, NamedTuple, Optional, Tuple

from agentrc.importers.files import ProjectFiles
from agentrc.model import HOOK_RUNNERS
from agentrc.patterns import pattern

# The variables a client sets to the root a hook command's paths start from.
ROOT_VARS = ("CLAUDE_PLUGIN_ROOT", "CLAUDE_PROJECT_DIR", "CURSOR_PROJECT_DIR", "CURSOR_PLUGIN_ROOT",
             "GEMINI_PROJECT_DIR", "PLUGIN_ROOT")
ROOT_RE = pattern(r"^\$(?:\{(%s)(?::-[^}]*)?\}|(%s)\b)/?" % ("|".join(ROOT_VARS), "|".join(ROOT_VARS)))
# The first word of a command (a quoted or bare word, quotes possibly inside it), and the rest.
LEAD_RE = pattern(r"""^((?:"[^"]*"|'[^']*'|[^\s"'])+)(.*)$""", re.S)


class HookFile(NamedTuple):
    """A file the hook's item directory gets: its name there, bytes and executable bit."""

    name: str
    content: bytes
    executable: bool


class Resolved(NamedTuple):
    """A hook command for HOOK.md: `script` and the files its item directory holds."""

    script: str
    files: Tuple[HookFile, ...]


def unquote(word: str) -> str:
    """A shell word without its quotes (`"$X"/a.sh` -> `$X/a.sh`)."""
    try:
        parts = shlex.split(word)
    except ValueError:
        return word
    return parts[0] if len(parts) == 1 else word


def source_path(word: str, cwd: str) -> Optional[str]:
    """The path below the root a command word names (`${CLAUDE_PLUGIN_ROOT}/hooks/x.py` ->
    `hooks/x.py`, `./a.sh` -> `<cwd>/a.sh`), "" for a path outside it (absolute, `~`, `..`),
    or None when the word is not a path (`npm`, `-c`)."""
    word = unquote(word)
    m = ROOT_RE.match(word)
    if m:
        rest = word[m.end():]
    elif word.startswith(("/", "~")):
        return ""
    elif "/" in word:
        rest = posixpath.join(cwd, word) if cwd else word
    else:
        return None
    if "$" in rest or not rest:
        return None
    rel = posixpath.normpath(rest)
    return "" if rel == ".." or rel.startswith("../") else rel


def resolve(r: ProjectFiles, rel: str, where: str, command: str, cwd: str = "") -> Optional[Resolved]:
    """The HOOK.md form of `command` (see the module's docstring), or None with AR130 when
    the file it runs cannot travel. A command that runs no file of the source (`npm test`,
    a program on the PATH) is kept as written, with no files."""
    lead = LEAD_RE.match(command.strip())
    if lead is None:
        return Resolved(command.strip(), ())
    first, rest = lead.group(1), lead.group(2)
    runner = ""
    if unquote(first) in HOOK_RUNNERS:
        second = LEAD_RE.match(rest.strip())
        if second is None:
            return Resolved(command.strip(), ())
        runner, first, rest = unquote(first), second.group(1), second.group(2)
    target = source_path(first, cwd)
    if target is None:
        return Resolved(command.strip(), ())
    shown = unquote(first)
    if target == "":
        if ROOT_RE.match(shown) or shown.startswith("..") or "/.." in shown:
            r.lossy(rel, f"{where}: the command runs {shown}, outside the source; the hook is not imported")
            return None
        return Resolved(command.strip(), ())  # a file of the user's machine, run as written
    f = r.files.get(target)
    if f is None and not ROOT_RE.match(shown):
        r.lossy(rel, f"{where}: the command runs {shown}, which is not in the source" + where_from(shown, target)
                     + "; kept as written, a path from the project root: the hook's directory gets no copy, so "
                       "a project that consumes the imported items must have that file itself")
        return Resolved(command.strip(), ())
    if f is None or f.link is not None:
        why = "is reached through a link" if f is not None else "is not in the source"
        why += where_from(shown, target)
        r.lossy(rel, f"{where}: the command runs {shown}, which {why}; the hook is not imported (consumers would "
                     "get a command naming a file they do not have)")
        return None
    files = [HookFile(posixpath.basename(target), f.content, f.executable)]
    files += siblings(r, rel, where, target, rest, cwd)
    args = own_arguments(rest, files, cwd) if len(files) > 1 else rest.rstrip()
    script = (f"{runner} " if runner else "") + f"./{files[0].name}" + args
    return Resolved(script, tuple(files))


def where_from(shown: str, target: str) -> str:
    """Where below the root a command's path led, when a working directory changed it."""
    return "" if ROOT_RE.match(shown) or posixpath.normpath(shown) == target else f" ({target} from its root)"


def siblings(r: ProjectFiles, rel: str, where: str, target: str, rest: str, cwd: str) -> List[HookFile]:
    """The files the command's arguments name: a bare name of a file beside the script
    (`run-hook.cmd session-start`, which the script finds beside itself) travels with it;
    a path to another file of the source cannot be rewritten in the arguments, so it is
    reported."""
    try:
        words = shlex.split(rest)
    except ValueError:
        words = rest.split()
    out: List[HookFile] = []
    directory = posixpath.dirname(target)
    seen = {posixpath.basename(target)}
    for word in words:
        path = source_path(word, cwd)
        if path is None and "/" not in word:
            beside = posixpath.join(directory, word) if directory else word
            f = r.files.get(beside)
            if f is not None and f.link is None and word not in seen:
                out.append(HookFile(word, f.content, f.executable))
                seen.add(word)
        elif path and path in r.files and r.files[path].link is None and \
                posixpath.basename(path) not in seen:
            # a path to another file of the source: it travels too, and the argument names it as
            # the hook's own (`./file`), which each client calls by its path in its own layout
            f = r.files[path]
            out.append(HookFile(posixpath.basename(path), f.content, f.executable))
            seen.add(posixpath.basename(path))
        elif path and (path in r.files or ROOT_RE.match(word)):
            r.lossy(rel, f"{where}: the argument {word} names a file of the source that cannot travel with the "
                         "hook (a link, one missing, or one whose name another of its files has)")
    return out


def own_arguments(rest: str, files: List[HookFile], cwd: str) -> str:
    """The arguments with each word naming a file that travels (`siblings`) written as the
    hook's own file, `./NAME` (a bare name beside the script stays as it is)."""
    names = {f.name for f in files}
    try:
        words = shlex.split(rest)
    except ValueError:
        return rest
    out = []
    for word in words:
        path = source_path(word, cwd)
        out.append(f"./{posixpath.basename(path)}" if path and posixpath.basename(path) in names
                   else shlex.quote(word))
    return (" " + " ".join(out)) if out else ""


def hook_name(source: str, event: str, position: int) -> str:
    """An imported hook's item name: its source (the importer's client, or the name its
    caller gives, such as a plugin's), its event and its position among that event's hooks
    (`claude-pretooluse-1`), so that two sources' hooks of one event never share a name."""
    base = re.sub(r"[^a-z0-9]+", "-", source.lower()).strip("-") or "imported"
    return f"{base[:40].rstrip('-')}-{event.lower()}-{position}"


def files_of(fields: Dict[str, object]) -> Tuple[HookFile, ...]:
    """The hook files an import carries in an item's fields (`FILES`)."""
    value = fields.get(FILES)
    return tuple(value) if isinstance(value, tuple) else ()


# Keys of a hook's portable fields (`Reader.fields`) that are not frontmatter: the files of
# its item directory and its item name. No frontmatter key has a space.
FILES = "hook files"
NAME = "hook name"
