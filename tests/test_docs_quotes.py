"""Every command output the docs quote is what agentrc prints today (issue 32 item 8).

A quote is a fenced `console` block holding a `$ agentrc ...` line: each `$ ` line is a
command, the lines after it (up to the next `$ `) its output, standard error and standard
output as a terminal shows them, in order. `$ echo $?` prints the previous command's exit
code. The blocks of one page run in order in one workspace, a copy of `examples/` (so
`examples/registry` is the example registry), as a reader would type them.

Two HTML comments, invisible on the rendered page, prepare or exempt a block; they stand on
the lines right above its fence:

- `<!-- docs-quote setup: SHELL -->` runs SHELL (bash, may span lines) in the workspace
  first: the files a quote talks about ("a registry with two errors"); `$AGENTRC_CHECKOUT`
  is this checkout (for its test fixtures);
- `<!-- docs-quote file: PATH -->` above any fenced block writes the block's text to PATH
  in the workspace (the file a page shows is the file its next quote runs on);
- `<!-- docs-quote skip: WHY -->` leaves a block unchecked (it runs another tool).

A line `...` in an output matches any lines. Paths of the workspace are shown relative to
it. `AGENTRC_REGEN_DOCS=1` writes what the tool printed into the pages (review the diff)."""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Tuple

import pytest

from helpers import ROOT

PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
_FENCE = re.compile(r"^(```+|~~~+)\s*([\w-]*)")
_DIRECTIVE = re.compile(r"<!--\s*docs-quote\s+(setup|skip|file):(.*?)-->", re.S)


@dataclass
class Command:
    line: str
    expected: List[str]
    first: int  # the index of the first expected line in the page's lines


@dataclass
class Block:
    page: Path
    lineno: int
    setup: str = ""
    skip: Optional[str] = None
    commands: List[Command] = field(default_factory=list)
    write: Tuple[str, str] = ("", "")  # a `file:` block: the path it is written to, its text


def quotes(page: Path) -> List[Block]:
    """The page's quote blocks, with their directives."""
    lines = page.read_text().split("\n")
    blocks: List[Block] = []
    n = 0
    while n < len(lines):
        m = _FENCE.match(lines[n])
        if not m:
            n += 1
            continue
        fence, lang = m.group(1), m.group(2)
        end = next((k for k in range(n + 1, len(lines)) if lines[k].startswith(fence)), len(lines))
        body = lines[n + 1:end]
        directives = _DIRECTIVE.findall(_comment_above(lines, n))
        files = [t.strip() for kind, t in directives if kind == "file"]
        if files:
            setup = "".join(t.strip() + "\n" for kind, t in directives if kind == "setup")
            blocks.append(Block(page, n + 1, setup=setup, write=(files[0], "\n".join(body) + "\n")))
        elif lang == "console" and any(x.startswith("$ agentrc") for x in body):
            block = Block(page, n + 1)
            above = _comment_above(lines, n)
            for kind, text in _DIRECTIVE.findall(above):
                if kind == "setup":
                    block.setup += text.strip() + "\n"
                else:
                    block.skip = text.strip()
            for k, x in enumerate(body):
                if x.startswith("$ "):
                    block.commands.append(Command(x[2:], [], n + 2 + k))
                elif block.commands:
                    block.commands[-1].expected.append(x)
            blocks.append(block)
        n = end + 1
    return blocks


def _comment_above(lines: List[str], fence: int) -> str:
    """The HTML comments directly above line `fence` (blank lines between allowed)."""
    k = fence - 1
    while k >= 0 and not lines[k].strip():
        k -= 1
    if k < 0 or not lines[k].rstrip().endswith("-->"):
        return ""
    start = k
    while start >= 0 and "<!--" not in lines[start]:
        start -= 1
    above = "\n".join(lines[max(start, 0):k + 1])
    return above + "\n" + _comment_above(lines, start) if start > 0 else above


def matches(expected: List[str], actual: List[str]) -> bool:
    """`...` lines in `expected` match any run of lines."""
    parts = []
    for line in expected:
        parts.append(r"(?:.*\n)*?" if line.strip() == "..." else re.escape(line.rstrip()) + r"\n")
    return re.fullmatch("".join(parts), "".join(x.rstrip() + "\n" for x in actual)) is not None


class Workspace:
    """A copy of examples/ and a shell to run a page's commands in."""

    def __init__(self, tmp: Path):
        self.root = tmp / "ws"
        self.root.mkdir()
        shutil.copytree(ROOT / "examples", self.root / "examples",
                        ignore=shutil.ignore_patterns("BUILD", "__pycache__"))
        bindir = tmp / "bin"
        bindir.mkdir()
        shim = bindir / "agentrc"
        shim.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT / "src"}" exec "{sys.executable}" -m agentrc "$@"\n')
        shim.chmod(0o755)
        (tmp / "home").mkdir()
        self.env = {"PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}", "HOME": str(tmp / "home"),
                    "AGENTRC_CACHE_DIR": str(tmp / "cache"), "LANG": "C.UTF-8", "NO_COLOR": "1", "TERM": "dumb",
                    "PYTHONUNBUFFERED": "1", "COLUMNS": "80", "GIT_CONFIG_NOSYSTEM": "1",
                    "GIT_CONFIG_GLOBAL": os.devnull, "AGENTRC_CHECKOUT": str(ROOT)}
        self.rc = 0

    def shell(self, script: str) -> Tuple[int, str]:
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-c", script], cwd=self.root, env=self.env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=300)
        return proc.returncode, proc.stdout

    def run(self, line: str) -> List[str]:
        if line.strip() == "echo $?":
            return [str(self.rc)]
        self.rc, out = self.shell(line)
        for root in {str(self.root), os.path.realpath(self.root)}:
            out = out.replace(root + "/", "").replace(root, ".")
        return out.rstrip("\n").split("\n") if out.strip() else []


def _check(page: Path, tmp: Path, regen: bool) -> List[str]:
    blocks = quotes(page)
    if not any(b.commands for b in blocks):
        return []
    ws = Workspace(tmp)
    problems: List[str] = []
    edits: List[Tuple[Command, List[str]]] = []
    for block in blocks:
        if block.setup and block.skip is None:
            code, out = ws.shell(block.setup)
            assert code == 0, f"{page}:{block.lineno}: the setup failed:\n{out}"
        if block.write[0]:
            target = ws.root / block.write[0]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.write[1])
            continue
        if block.skip is not None:
            assert block.skip, f"{page}:{block.lineno}: a skip needs its reason"
            continue
        for cmd in block.commands:
            actual = ws.run(cmd.line)
            if not matches(cmd.expected, actual):
                edits.append((cmd, actual))
                diff = "\n".join(difflib.unified_diff(cmd.expected, actual, "docs", "agentrc", lineterm=""))
                problems.append(f"{page.relative_to(ROOT)}:{cmd.first}: $ {cmd.line}\n{diff}")
    if regen and edits:
        lines = page.read_text().split("\n")
        for cmd, actual in sorted(edits, key=lambda e: -e[0].first):
            lines[cmd.first:cmd.first + len(cmd.expected)] = actual
        page.write_text("\n".join(lines))
    return problems


def _pages_with_quotes() -> List[Path]:
    return [p for p in PAGES if any(b.commands for b in quotes(p))]


@pytest.mark.parametrize("page", _pages_with_quotes(), ids=lambda p: str(p.relative_to(ROOT)))
def test_quoted_outputs_are_what_agentrc_prints(page, tmp_path):
    problems = _check(page, tmp_path, os.environ.get("AGENTRC_REGEN_DOCS") == "1")
    assert not problems, "quoted outputs differ from the tool's (AGENTRC_REGEN_DOCS=1 rewrites them):\n\n" + \
        "\n\n".join(problems)


def test_the_quote_reader_and_matcher(tmp_path):
    """The reader finds commands, outputs and directives; `...` matches lines; a changed
    line does not match (so the test above can fail)."""
    page = tmp_path / "p.md"
    page.write_text("Text.\n\n<!-- docs-quote setup: mkdir -p a\n  touch a/b -->\n\n```console\n$ agentrc lint a\n"
                    "one\ntwo\n$ echo $?\n1\n```\n\n<!-- docs-quote skip: runs claude -->\n```console\n"
                    "$ agentrc x\n```\n\n```text\n$ agentrc not-a-quote\n```\n\n<!-- docs-quote file: r/S.md -->\n"
                    "```markdown\nbody\n```\n")
    first, second, third = quotes(page)
    assert third.write == ("r/S.md", "body\n") and not third.commands
    assert first.setup == "mkdir -p a\n  touch a/b\n" and first.skip is None
    assert [(c.line, c.expected) for c in first.commands] == [("agentrc lint a", ["one", "two"]), ("echo $?", ["1"])]
    assert second.skip == "runs claude"
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"]) and matches(["a", "..."], ["a"])
    assert not matches(["a", "b"], ["a", "c"]) and not matches(["a"], ["a", "b"])
