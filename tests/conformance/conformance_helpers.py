"""Helpers for tests/conformance (see conftest.py): tool locations, running commands,
the shared build of examples/registry, reading the build output, and an isolated opencode runner."""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
REGISTRY = ROOT / "examples" / "registry"
CLIENTS = ("claude", "copilot", "opencode")
TOOLS_DIR = ROOT / ".tools"
NPM_MODULES = TOOLS_DIR / "npm" / "node_modules"
SKILLS_REF_VENV = TOOLS_DIR / "skills-ref-venv"
MARKDOWNLINT_CONFIG = HERE / "markdownlint.jsonc"

def _pinned_skills_ref() -> str:
    text = (ROOT / "tools" / "skills-ref-requirements.txt").read_text(encoding="utf-8")
    m = re.search(r"^skills-ref==(\S+)\s*$", text, re.M)
    assert m, "tools/skills-ref-requirements.txt does not pin skills-ref==X.Y.Z"
    return m.group(1)


SKILLS_REF_VERSION = _pinned_skills_ref()
INSTALL_HINT = "run tools/install.sh (it installs the pinned tools into .tools/)"

# Timeout for every external command (seconds). `timeout` is used when available so that a
# hung tool is killed; Python's own timeout is the backstop.
COMMAND_TIMEOUT = 90

# The Agent Skills standard frontmatter keys (what skills-ref accepts).
STANDARD_SKILL_KEYS = frozenset({"name", "description", "license", "compatibility", "metadata", "allowed-tools"})

# Where each client's skills live in the build output.
SKILL_ROOTS = {"claude": ".claude/skills", "copilot": ".github/skills", "opencode": ".opencode/skills"}


# ---------------------------------------------------------------------------------------------
# Missing tools
# ---------------------------------------------------------------------------------------------


def tools_required() -> bool:
    return os.environ.get("AGENTRC_REQUIRE_TOOLS") == "1"


def tool_missing(message: str) -> None:
    """Skip (or, with AGENTRC_REQUIRE_TOOLS=1, fail) because a conformance tool is unusable."""
    message = f"{message}; {INSTALL_HINT}"
    if tools_required():
        pytest.fail(f"AGENTRC_REQUIRE_TOOLS=1: {message}", pytrace=False)
    pytest.skip(message)


@lru_cache(maxsize=None)
def pinned_npm_versions() -> Dict[str, str]:
    data = json.loads((ROOT / "tools" / "package.json").read_text(encoding="utf-8"))
    deps: Dict[str, str] = {}
    deps.update(data.get("dependencies", {}))
    deps.update(data.get("devDependencies", {}))
    # A CLI published for one platform only (droid's linux-x64 package): its judge skips elsewhere.
    deps.update(data.get("optionalDependencies", {}))
    return deps


def _installed_npm_version(package: str) -> Optional[str]:
    try:
        return json.loads((NPM_MODULES / package / "package.json").read_text(encoding="utf-8"))["version"]
    except (OSError, ValueError, KeyError):
        return None


def check_npm_package(package: str) -> None:
    want = pinned_npm_versions()[package]
    have = _installed_npm_version(package)
    if have is None:
        tool_missing(f"{package} {want} is not installed in {NPM_MODULES.relative_to(ROOT)}")
    if have != want:
        tool_missing(f"{package} {have} is installed in {NPM_MODULES.relative_to(ROOT)}, but tools/package.json pins {want}")


def opencode_candidates() -> List[Path]:
    os_name = {"linux": "linux", "darwin": "darwin", "win32": "windows"}.get(sys.platform, sys.platform)
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)
    return [
        NPM_MODULES / f"opencode-{os_name}-{arch}" / "bin" / "opencode",
        NPM_MODULES / f"opencode-{os_name}-{arch}-baseline" / "bin" / "opencode",
        NPM_MODULES / ".bin" / "opencode",
    ]


# ---------------------------------------------------------------------------------------------
# Running commands
# ---------------------------------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def run(
    cmd: Sequence[str],
    cwd: Path,
    env: Optional[Mapping[str, str]] = None,
    timeout: int = COMMAND_TIMEOUT,
) -> subprocess.CompletedProcess:
    """Run `cmd` (with a `timeout` wrapper when available) and return the completed process."""
    argv = [str(c) for c in cmd]
    if shutil.which("timeout"):
        argv = ["timeout", "-k", "5", str(timeout)] + argv
    try:
        proc = subprocess.run(
            argv,
            cwd=str(cwd),
            env=dict(env) if env is not None else None,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            universal_newlines=True,
            timeout=timeout + 15,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"timed out after {timeout}s: {' '.join(argv)} (in {cwd})", pytrace=False)
    if proc.returncode == 124 and argv[0] == "timeout":
        pytest.fail(f"timed out after {timeout}s: {' '.join(argv)} (in {cwd})", pytrace=False)
    return proc


def describe(proc: subprocess.CompletedProcess, limit: int = 6000) -> str:
    """A readable account of a finished command, for assertion messages."""
    out = strip_ansi(proc.stdout or "")
    err = strip_ansi(proc.stderr or "")
    if len(out) > limit:
        out = out[:limit] + "\n...[truncated]"
    if len(err) > limit:
        err = err[:limit] + "\n...[truncated]"
    args = proc.args if isinstance(proc.args, str) else " ".join(proc.args)
    return f"$ {args}\nexit code {proc.returncode}\n--- stdout ---\n{out}\n--- stderr ---\n{err}"


# ---------------------------------------------------------------------------------------------
# The build (shared by collection-time parametrization and the session fixture)
# ---------------------------------------------------------------------------------------------


class BuildFailed(Exception):
    pass


TEMP_DIRS: List[Path] = []


def make_temp_dir(prefix: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix=prefix))
    TEMP_DIRS.append(path)
    return path


@lru_cache(maxsize=None)
def _build_result() -> Tuple[Optional[Path], str]:
    out = make_temp_dir("agentrc-conformance-build-") / "out"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH", "")) if p)
    # The registry is named relative to the repo root, as in the documented command.
    cmd = [sys.executable, "-m", "agentrc", "build", REGISTRY.relative_to(ROOT).as_posix(),
           "--client", ",".join(CLIENTS), "--out", str(out)]
    proc = subprocess.run(
        cmd,
        cwd=str(ROOT),
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=True,
        timeout=COMMAND_TIMEOUT,
    )
    if proc.returncode != 0 or not out.is_dir():
        return None, "agentrc build of examples/registry failed:\n" + describe(proc)
    return out, describe(proc)


def build_output() -> Path:
    out, log = _build_result()
    if out is None:
        raise BuildFailed(log)
    return out


# ---------------------------------------------------------------------------------------------
# Reading the build output
# ---------------------------------------------------------------------------------------------


def split_frontmatter(text: str) -> Tuple[Dict[str, object], str]:
    """(frontmatter mapping, body) of a Markdown file; ({}, text) when it has none."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---\n", 4)
    if end < 0:
        if text.endswith("\n---"):
            end = len(text) - 4
        else:
            return {}, text
    data = yaml.safe_load(text[4 : end + 1]) or {}
    assert isinstance(data, dict), f"frontmatter is not a mapping: {data!r}"
    return data, text[end + 5 :]


def read_frontmatter(path: Path) -> Dict[str, object]:
    return split_frontmatter(path.read_text(encoding="utf-8"))[0]


def skill_dirs(build: Path, client: str) -> List[Path]:
    """Skill directories (containing SKILL.md) generated for `client`, sorted."""
    root = build / SKILL_ROOTS[client]
    if not root.is_dir():
        return []
    return sorted(p.parent for p in root.glob("*/SKILL.md"))


def skill_names(dirs: Iterable[Path]) -> List[str]:
    return sorted(str(read_frontmatter(d / "SKILL.md").get("name")) for d in dirs)


def opencode_agent_files(build: Path) -> List[Path]:
    return sorted((build / ".opencode" / "agents").glob("*.md"))


def rel(path: Path, base: Path) -> str:
    return path.relative_to(base).as_posix()


# ---------------------------------------------------------------------------------------------
# opencode
# ---------------------------------------------------------------------------------------------


class Opencode:
    """Runs opencode offline and isolated: private HOME and XDG dirs, no model catalogue
    fetch, no auto-update, and each project is its own git root (opencode stops walking up
    for .opencode/.agents/.claude at the git root)."""

    def __init__(self, binary: Path, base: Path):
        self.binary = binary
        self.base = base
        home = base / "home"
        home.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        for key in list(env):
            if key.startswith("OPENCODE_"):
                del env[key]
        env.update(
            HOME=str(home),
            XDG_CONFIG_HOME=str(home / ".config"),
            XDG_DATA_HOME=str(home / ".local" / "share"),
            XDG_CACHE_HOME=str(home / ".cache"),
            XDG_STATE_HOME=str(home / ".local" / "state"),
            OPENCODE_DISABLE_AUTOUPDATE="1",
            OPENCODE_DISABLE_MODELS_FETCH="1",
            OPENCODE_DISABLE_SHARE="1",
            OPENCODE_DISABLE_LSP_DOWNLOAD="1",
            OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
        )
        self.env = env
        self._cache: Dict[Tuple[str, Tuple[str, ...], Tuple[Tuple[str, str], ...]], subprocess.CompletedProcess] = {}

    def project(self, source: Optional[Path], name: str) -> Path:
        """A git-initialised copy of `source` (or an empty project when None)."""
        dest = self.base / name
        if source is None:
            dest.mkdir(parents=True)
        else:
            shutil.copytree(str(source), str(dest))
        proc = run(["git", "init", "-q"], cwd=dest)
        assert proc.returncode == 0, describe(proc)
        return dest

    def run(self, project: Path, *args: str, extra_env: Optional[Mapping[str, str]] = None) -> subprocess.CompletedProcess:
        """Run `opencode ARGS` in `project` (cached); fail unless it exits 0."""
        extra = tuple(sorted((extra_env or {}).items()))
        key = (str(project), tuple(args), extra)
        if key not in self._cache:
            env = dict(self.env)
            env.update(extra)
            proc = run([self.binary, *args], cwd=project, env=env)
            assert proc.returncode == 0, f"opencode failed in {project}:\n" + describe(proc)
            self._cache[key] = proc
        return self._cache[key]

    def json(self, project: Path, *args: str, extra_env: Optional[Mapping[str, str]] = None) -> object:
        proc = self.run(project, *args, extra_env=extra_env)
        try:
            return json.loads(proc.stdout)
        except ValueError as exc:
            pytest.fail(f"opencode {' '.join(args)} did not print JSON ({exc}):\n{describe(proc)}", pytrace=False)
            raise

    def agent_modes(self, project: Path) -> Dict[str, str]:
        """{name: mode} from the `name (mode)` header lines of `opencode agent list`."""
        proc = self.run(project, "agent", "list")
        modes = {}
        for line in strip_ansi(proc.stdout).splitlines():
            m = re.match(r"^(\S+) \((primary|subagent|all)\)$", line)
            if m:
                modes[m.group(1)] = m.group(2)
        assert modes, "no `name (mode)` lines in `opencode agent list`:\n" + describe(proc)
        return modes
