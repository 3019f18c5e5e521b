"""The command line at a terminal and in a loop (issue 32, item 4): `--watch` with a real edit
and a real SIGINT, colour and the progress line at a real terminal (tmux) and neither when
piped, and shell completion sourced into real bash, zsh and fish."""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import List

import pytest

from helpers import ROOT

SRC = ROOT / "src"
TMUX = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def registry(root: Path, n: int = 3) -> Path:
    for i in range(n):
        write(root / "rules" / f"r{i}" / "RULE.md", f"---\ndescription: Rule {i}.\n---\n\nKeep it short, {i}.\n")
    return root


def env(tmp_path: Path, **extra: str) -> dict:
    e = dict(os.environ, PYTHONPATH=str(SRC), AGENTRC_CACHE_DIR=str(tmp_path / "cache"), **extra)
    for k in ("NO_COLOR", "FORCE_COLOR", "AGENTRC_PROGRESS", "AGENTRC_PROGRESS_DELAY"):
        if k not in extra:
            e.pop(k, None)
    return e


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Running:
    """A command whose stderr is read line by line while it runs."""

    def __init__(self, args: List[str], environ: dict, cwd: Path) -> None:
        # SIGINT as a terminal's foreground command gets it: a suite started in the background
        # by a shell script (`./test &`) ignores SIGINT, and its children would inherit that.
        self.proc = subprocess.Popen([sys.executable, "-m", "agentrc", *args], env=environ, cwd=str(cwd),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     preexec_fn=_default_sigint)
        self.lines: List[str] = []
        self._queue: "queue.Queue[str]" = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._queue.put(line)

    def wait_for(self, text: str, count: int = 1, timeout: float = 60) -> None:
        end = time.monotonic() + timeout
        while sum(text in line for line in self.lines) < count:
            try:
                self.lines.append(self._queue.get(timeout=max(0.01, end - time.monotonic())))
            except queue.Empty:
                pytest.fail(f"{text!r} x{count} not printed within {timeout} s:\n{''.join(self.lines)}")

    def drain(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                self.lines.append(self._queue.get(timeout=0.05))
            except queue.Empty:
                pass

    def interrupt(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        code = self.proc.wait(timeout=30)
        self.drain(0.3)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def test_build_watch_rebuilds_an_edit_and_stops_cleanly_on_sigint(tmp_path):
    reg, out = registry(tmp_path / "reg"), tmp_path / "out"
    run = Running(["build", str(reg), "--out", str(out), "--client", "claude", "--jobs", "1", "--watch"],
                  env(tmp_path), tmp_path)
    try:
        run.wait_for("watching")
        assert any("3 created" in line for line in run.lines), run.lines
        rule = reg / "rules" / "r1" / "RULE.md"
        rule.write_text(rule.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
        run.wait_for("0 created, 1 updated, 0 deleted, 2 unchanged")
        assert "One more line." in (out / ".claude" / "rules" / "r1.md").read_text(encoding="utf-8")
        assert sum("running again" in line for line in run.lines) == 1
        run.drain(1.0)  # the build's own writes are no change
        assert sum("running again" in line for line in run.lines) == 1, run.lines
        code = run.interrupt()
    finally:
        run.kill()
    assert code == 130
    text = "".join(run.lines)
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text


def test_an_in_place_watch_does_not_rebuild_its_own_output(tmp_path):
    """`agentrc build . --out .`: the output lies inside the watched sources; what the build
    writes (its files, .agentrc/, the report) must not start another build."""
    proj = registry(tmp_path / "proj", 2)
    run = Running(["build", ".", "--out", ".", "--client", "claude,copilot", "--jobs", "1", "--report",
                   "report.json", "--watch"], env(tmp_path), proj)
    try:
        run.wait_for("watching")
        run.drain(1.5)
        assert not any("running again" in line for line in run.lines), run.lines
        write(proj / "rules" / "r9" / "RULE.md", "---\ndescription: New.\n---\n\nNew rule.\n")
        run.wait_for("running again")
        run.wait_for("watching", 2)
        run.drain(1.5)
        assert sum("running again" in line for line in run.lines) == 1, run.lines
        assert (proj / ".claude" / "rules" / "r9.md").exists()
        assert run.interrupt() == 130
    finally:
        run.kill()


def test_lint_watch_reports_a_new_error_and_exits_130(tmp_path):
    reg = registry(tmp_path / "reg", 1)
    run = Running(["lint", str(reg), "--watch"], env(tmp_path), tmp_path)
    try:
        run.wait_for("watching")
        assert any("0 error(s)" in line for line in run.lines)
        write(reg / "agents" / "a" / "AGENT.md", "---\ndescription: An agent.\ntools: [Read]\n---\n\nA.\n")
        run.wait_for("unknown tool 'Read'; did you mean 'read'?")
        run.wait_for("1 error(s)")
        assert run.interrupt() == 130
    finally:
        run.kill()
    assert "Traceback" not in "".join(run.lines)


def test_ctrl_c_at_a_real_terminal_ends_the_watch_without_a_traceback(tmp_path):
    """The same through a terminal: Ctrl-C typed into tmux (SIGINT to the foreground group)."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    reg = registry(tmp_path / "reg", 1)
    done, log = tmp_path / "done", tmp_path / "log"
    cmd = (f"env PYTHONPATH={SRC} AGENTRC_CACHE_DIR={tmp_path / 'cache'} {sys.executable} -m agentrc lint {reg} "
           f"--watch 2> >(tee {log} >&2); echo $? > {done}")
    with Terminal(tmp_path) as term:
        term.type(cmd)
        term.until(lambda: "watching" in term.screen())
        term.keys("C-c")
        term.until(lambda: done.exists() and done.read_text().strip() != "")
        screen = term.screen()
    assert done.read_text().strip() == "130", screen
    assert "Traceback" not in screen and "KeyboardInterrupt" not in log.read_text()


class Terminal:
    """A bash at a tmux terminal: typed into, its screen read, every byte it showed logged."""

    def __init__(self, tmp_path: Path, environ: str = "") -> None:
        self.session = f"agentrc-term-{os.getpid()}-{id(self)}"
        self.raw = tmp_path / f"raw-{id(self)}"
        self.environ = environ

    def __enter__(self) -> "Terminal":
        subprocess.run(["tmux", "new-session", "-d", "-s", self.session, "-x", "160", "-y", "50",
                        f"env -u NO_COLOR -u FORCE_COLOR {self.environ} bash --norc --noprofile"], check=True)
        subprocess.run(["tmux", "pipe-pane", "-o", "-t", self.session, f"cat >> {self.raw}"], check=True)
        return self

    def __exit__(self, *exc) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.session], capture_output=True)

    def type(self, line: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.session, "-l", "--", line], check=True)
        subprocess.run(["tmux", "send-keys", "-t", self.session, "Enter"], check=True)

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.session, *keys], check=True)

    def screen(self, escapes: bool = False) -> str:
        return subprocess.run(["tmux", "capture-pane", "-p", *(["-e"] if escapes else []), "-t", self.session],
                              capture_output=True, text=True).stdout

    def shown(self) -> str:
        """Every byte the terminal was sent, including what was drawn and erased since."""
        return self.raw.read_text(errors="replace") if self.raw.exists() else ""

    def until(self, ready, timeout: float = 60) -> None:
        end = time.monotonic() + timeout
        while not ready():
            if time.monotonic() > end:
                pytest.fail(f"timed out; the screen:\n{self.screen()}")
            time.sleep(0.1)


def _broken(tmp_path: Path) -> Path:
    reg = registry(tmp_path / "reg", 1)
    write(reg / "agents" / "a" / "AGENT.md", "---\ndescription: An agent.\ntools: [Read]\npriority: 1\n---\n\nA.\n")
    return reg


@TMUX
@pytest.mark.parametrize("setting, coloured", [("", True), ("NO_COLOR=1", False), ("TERM=dumb", False),
                                               ("--color never", False), ("NO_COLOR=1 --color always", True)])
def test_colour_at_a_terminal_follows_no_color_term_and_the_flag(tmp_path, setting, coloured):
    reg, done = _broken(tmp_path), tmp_path / "done"
    variables = " ".join(w for w in setting.split() if "=" in w)
    flags = " ".join(w for w in setting.split() if "=" not in w and w)
    with Terminal(tmp_path, variables) as term:
        term.type(f"PYTHONPATH={SRC} {sys.executable} -m agentrc lint {reg} {flags}; echo $? > {done}")
        term.until(lambda: done.exists() and done.read_text().strip() != "")
        raw = term.shown()
    assert "unknown tool 'Read'" in raw and "1 error(s)" in raw
    assert ("\x1b[1;31merror[AR080]\x1b[0m" in raw) is coloured, raw
    assert ("\x1b[1;33mwarning[AR007]\x1b[0m" in raw) is coloured
    assert ("\x1b[1;31m1 rules, 0 skills, 1 agents, 0 bundles: 1 error(s), 1 warning(s)\x1b[0m" in raw) is coloured


@pytest.mark.parametrize("setting, coloured", [({}, False), ({"FORCE_COLOR": "1"}, True), ({"FORCE_COLOR": "0"}, False),
                                               ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False)])
def test_piped_output_has_no_colour_unless_forced(tmp_path, setting, coloured):
    reg = _broken(tmp_path)
    done = subprocess.run([sys.executable, "-m", "agentrc", "lint", str(reg)], env=env(tmp_path, **setting),
                          capture_output=True, text=True)
    assert done.returncode == 1
    assert ("\x1b[" in done.stderr) is coloured, done.stderr


@TMUX
def test_the_progress_line_shows_at_a_terminal_only_and_is_erased(tmp_path):
    reg, out, done = registry(tmp_path / "reg", 150), tmp_path / "out", tmp_path / "done"
    cmd = (f"PYTHONPATH={SRC} AGENTRC_CACHE_DIR={tmp_path / 'cache'} AGENTRC_PROGRESS_DELAY=0 {sys.executable} -m "
           f"agentrc build {reg} --out {out} --client claude,copilot --jobs 1 --no-cache; echo $? > {done}")
    with Terminal(tmp_path) as term:
        term.type(cmd)
        term.until(lambda: done.exists() and done.read_text().strip() != "")
        raw, screen = term.shown(), term.screen()
    assert done.read_text().strip() == "0", screen
    assert "agentrc: building [00:0" in raw, raw
    assert "agentrc: building" not in screen and "300 created" in screen, screen
    piped = subprocess.run([sys.executable, "-m", "agentrc", "build", str(reg), "--out", str(tmp_path / "out2"),
                            "--client", "claude", "--jobs", "1", "--no-cache"],
                           env=env(tmp_path, AGENTRC_PROGRESS_DELAY="0"), capture_output=True, text=True)
    assert piped.returncode == 0 and "building" not in piped.stderr and "\r" not in piped.stderr, piped.stderr


def _script(shell: str, tmp_path: Path) -> Path:
    done = subprocess.run([sys.executable, "-m", "agentrc", "completion", shell], env=env(tmp_path),
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return write(tmp_path / f"agentrc.{shell}", done.stdout)


def test_bash_completion_sourced_into_a_real_bash(tmp_path):
    script = _script("bash", tmp_path)
    (tmp_path / "somedir").mkdir()

    def complete(*words: str) -> List[str]:
        array = " ".join(f"'{w}'" for w in ("agentrc",) + words)
        probe = (f"source {script}; complete -p agentrc; COMP_WORDS=({array}); COMP_CWORD={len(words)}; "
                 "_shtab_agentrc; printf '%s\\n' \"${COMPREPLY[@]}\"")
        done = subprocess.run(["bash", "--norc", "-c", probe], cwd=str(tmp_path), capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert lines[0] == "complete -o bashdefault -F _shtab_agentrc agentrc", lines
        return lines[1:]

    assert complete("bu") == ["build"]
    assert "completion" in complete("")
    assert complete("build", "--wa") == ["--watch"]
    assert complete("lint", "--color", "") == ["auto", "always", "never"]
    assert complete("completion", "") == ["bash", "zsh", "fish"]
    assert complete("cap", "us") == ["use"]
    assert complete("build", "--out", "som") == ["somedir"]  # a directory (readline adds the slash)


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completion_parses_and_completes(tmp_path):
    script = _script("fish", tmp_path)
    assert subprocess.run(["fish", "--no-execute", str(script)], capture_output=True).returncode == 0
    done = subprocess.run(["fish", "--no-config", "-c", f"source {script}; complete -C 'agentrc bu'; "
                           "complete -C 'agentrc build --wa'; complete -C 'agentrc completion '"],
                          capture_output=True, text=True)
    names = [line.split("\t")[0] for line in done.stdout.splitlines()]
    assert names == ["build", "--watch", "bash", "zsh", "fish"], done.stdout + done.stderr


@TMUX
@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completion_parses_and_completes_at_a_terminal(tmp_path):
    script = _script("zsh", tmp_path)
    assert subprocess.run(["zsh", "-n", str(script)], capture_output=True).returncode == 0
    functions = tmp_path / "zfunc"
    functions.mkdir()
    shutil.copy(script, functions / "_agentrc")
    session = f"agentrc-zsh-{os.getpid()}"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "160", "-y", "40", "zsh -f"], check=True)
    try:
        def send(*keys: str, literal: bool = False) -> None:
            subprocess.run(["tmux", "send-keys", "-t", session, *(["-l", "--"] if literal else []), *keys],
                           check=True)

        def screen() -> str:
            return subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True,
                                  text=True).stdout

        send(f"fpath=({functions} $fpath); autoload -U compinit && compinit -u; echo READY", literal=True)
        send("Enter")
        end = time.monotonic() + 30
        while "\nREADY" not in screen() and time.monotonic() < end:
            time.sleep(0.1)
        send("agentrc bui", literal=True)
        send("Tab")
        time.sleep(0.5)
        send("--wat", literal=True)
        send("Tab")
        while "agentrc build --watch" not in screen() and time.monotonic() < end:
            time.sleep(0.1)
        assert "agentrc build --watch" in screen(), screen()
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
