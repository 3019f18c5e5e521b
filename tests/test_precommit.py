"""`.pre-commit-hooks.yaml` run by the real `pre-commit` from PyPI (pinned in
tools/code-check-requirements.txt, installed by tools/install.sh into .tools/code-check-venv)
on a sample repository made here (issue 32 item 6).

The hooks are `language: python`: pre-commit clones the hook repository (a git repository
made here from this checkout's package files), makes a virtualenv and pip-installs agentrc
into it. The test runs offline: pip gets no index, only a directory of wheels repacked from
the distributions this interpreter already has (agentrc's dependencies) and the build
backend virtualenv embeds; the hook env's Python is this interpreter, so the repacked
compiled wheels fit it. A user's pre-commit installs the same way from PyPI."""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata as metadata
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Dict, List

import jsonschema
import pytest
import yaml

from agentrc.cli.main import main
from helpers import ROOT

CHECK_VENV = ROOT / ".tools" / "code-check-venv"
PRE_COMMIT = CHECK_VENV / "bin" / "pre-commit"
HOOKS = ROOT / ".pre-commit-hooks.yaml"
pytestmark = pytest.mark.slow

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _require_pre_commit() -> None:
    if not PRE_COMMIT.exists():
        if os.environ.get("AGENTRC_REQUIRE_TOOLS") == "1" or os.environ.get("CI"):
            pytest.fail(f"{PRE_COMMIT} is missing: run tools/install.sh")
        pytest.skip("pre-commit is not installed: run tools/install.sh")


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=dict(os.environ, **GIT_ENV))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


# --- an offline wheelhouse ------------------------------------------------------------------


def _dependency_names() -> List[str]:
    """agentrc's runtime dependencies, as pyproject.toml lists them."""
    text = (ROOT / "pyproject.toml").read_text()
    block = re.search(r"^dependencies\s*=\s*\[(.*?)\]", text, re.S | re.M)
    assert block, "pyproject.toml lists no dependencies"
    return [re.match(r"[A-Za-z0-9._-]+", s).group(0) for s in re.findall(r'"([^"]+)"', block.group(1))]


def _closure(names: List[str]) -> Dict[str, metadata.Distribution]:
    """The installed distributions `names` need, transitively; extras' requirements and
    requirements this interpreter does not have (their markers exclude it) left out."""
    out: Dict[str, metadata.Distribution] = {}
    todo = list(names)
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in out:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        out[key] = dist
        for req in dist.requires or []:
            if "extra ==" not in req.replace('"', "'") and "extra==" not in req:
                todo.append(re.match(r"[A-Za-z0-9._-]+", req).group(0))
    return out


def _repack(dist: metadata.Distribution, dest: Path) -> Path:
    """A wheel holding what `dist` installed into site-packages (its RECORD's files), with a
    new RECORD: the installed distribution turned back into what pip installs from."""
    files = [f for f in dist.files or [] if not str(f).startswith("..") and "__pycache__" not in str(f)]
    info = next(str(f).split("/")[0] for f in files if str(f).endswith(".dist-info/METADATA"))
    wheel_meta = Path(str(dist.locate_file(f"{info}/WHEEL"))).read_text()
    tag = re.search(r"^Tag: (\S+)", wheel_meta, re.M).group(1)
    path = dest / f"{info[: -len('.dist-info')]}-{tag}.whl"
    record = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in files:
            rel = str(f)
            if rel == f"{info}/RECORD" or rel in (f"{info}/INSTALLER", f"{info}/direct_url.json"):
                continue
            data = Path(str(dist.locate_file(f))).read_bytes()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{rel},sha256={digest},{len(data)}")
            zf.writestr(rel, data)
        record.append(f"{info}/RECORD,,")
        zf.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return path


def wheelhouse(dest: Path) -> Path:
    dest.mkdir()
    for dist in _closure(_dependency_names()).values():
        _repack(dist, dest)
    # The build backend pip needs for `pip install .` (setuptools): virtualenv's embedded
    # wheels, which pre-commit's own virtualenv seeds environments with.
    embed = next((CHECK_VENV / "lib").glob("python3*/site-packages/virtualenv/seed/wheels/embed"))
    for wheel in embed.glob("setuptools-*.whl"):
        shutil.copy(wheel, dest / wheel.name)
    return dest


# --- the repositories -----------------------------------------------------------------------


def hook_repo(dest: Path) -> str:
    """A git repository holding what pre-commit installs agentrc from: this checkout's package
    files and its .pre-commit-hooks.yaml. Its commit id."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy(ROOT / name, dest / name)
    shutil.copytree(ROOT / "src", dest / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", "agentrc")
    return git(dest, "rev-parse", "HEAD")


SKILL = "---\nname: hello\ndescription: Say hello to the team.\n---\n\nGreet the team by name.\n"
BUILD_ARGS = "[ai, --out, ., --client, claude]"


def sample_repo(dest: Path, hooks: Path, rev: str) -> Path:
    """A repository authoring one skill under ai/ and committing its Claude Code output, with a
    .pre-commit-config.yaml using the three hooks."""
    (dest / "ai" / "skills" / "hello").mkdir(parents=True)
    (dest / "ai" / "skills" / "hello" / "SKILL.md").write_text(SKILL)
    (dest / ".pre-commit-config.yaml").write_text(
        f"default_language_version:\n  python: {sys.executable}\n"
        f"repos:\n  - repo: {hooks}\n    rev: {rev}\n    hooks:\n"
        "      - id: agentrc-lint\n        args: [ai]\n"
        "      - id: agentrc-fmt\n        args: [ai]\n"
        f"      - id: agentrc-check\n        args: {BUILD_ARGS}\n")
    git(dest, "init", "-q", "-b", "main")
    return dest


def agentrc(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, "-m", "agentrc", *args], cwd=cwd, capture_output=True, text=True, env=env)


@pytest.fixture(scope="module")
def offline(tmp_path_factory):
    """The hook repository (this checkout's package, committed), its commit, and the
    environment that makes pip install from the repacked wheels only."""
    _require_pre_commit()
    base = tmp_path_factory.mktemp("offline")
    rev = hook_repo(base / "hooks")
    env = dict(os.environ, **GIT_ENV, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheelhouse(base / "wheels")),
               PIP_CONFIG_FILE=os.devnull, VIRTUALENV_NO_DOWNLOAD="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)  # what runs is the agentrc pip installed, not this checkout
    return base / "hooks", rev, env


def test_the_three_hooks_run_by_pre_commit_on_a_sample_repository(tmp_path, offline):
    hooks, rev, env = offline
    repo = sample_repo(tmp_path / "repo", hooks, rev)
    assert agentrc("build", "ai", "--out", ".", "--client", "claude", cwd=repo).returncode == 0
    git(repo, "add", "-A")
    env = dict(env, PRE_COMMIT_HOME=str(tmp_path / "pc-home"))

    def pre_commit(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(PRE_COMMIT), *args], cwd=repo, capture_output=True, text=True, env=env,
                              timeout=600)

    clean = pre_commit("run", "--all-files")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    for hook in ("agentrc lint", "agentrc fmt", "agentrc build --check"):
        assert re.search(rf"^{re.escape(hook)}\.+Passed$", clean.stdout, re.M), clean.stdout
    # The hooks ran the agentrc pip installed from the hook repository, not this checkout.
    envs = [p for p in (tmp_path / "pc-home").rglob("agentrc") if p.parent.name == "bin" and "py_env-" in str(p)]
    assert len(envs) == 1, clean.stdout

    # A commit through the installed git hook is stopped by each kind of problem.
    assert pre_commit("install").returncode == 0
    proc = subprocess.run(["git", "commit", "-qm", "first"], cwd=repo, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    skill = repo / "ai" / "skills" / "hello" / "SKILL.md"

    # lint: an error with its position.
    skill.write_text(SKILL.replace("name: hello\n", "name: Hello World\n"))
    git(repo, "add", "-A")
    bad = pre_commit("run", "agentrc-lint")
    assert bad.returncode == 1 and "ai/skills/hello/SKILL.md:2:1: error[AR010] invalid name" in bad.stdout, bad.stdout

    # fmt: rewrites the file, and pre-commit fails the run because a file changed.
    skill.write_text("---\ndescription: Say hello to the team.\nname: hello\n---\n\nGreet the team by name.\n")
    git(repo, "add", "-A")
    fmt = pre_commit("run", "agentrc-fmt")
    assert fmt.returncode == 1 and "files were modified by this hook" in fmt.stdout, fmt.stdout
    assert skill.read_text() == SKILL

    # check: a source edited without rebuilding; writes nothing, lists the stale file.
    skill.write_text(SKILL.replace("by name", "by first name"))
    git(repo, "add", "-A")
    before = (repo / ".claude" / "skills" / "hello" / "SKILL.md").read_bytes()
    stale = subprocess.run(["git", "commit", "-qm", "stale"], cwd=repo, capture_output=True, text=True, env=env)
    assert stale.returncode == 1 and "outdated: .claude/skills/hello/SKILL.md" in stale.stderr, stale.stderr
    assert re.search(r"^agentrc build --check\.+Failed$", stale.stderr, re.M) and git(repo, "rev-list", "--count",
                                                                                      "HEAD") == "1"
    assert (repo / ".claude" / "skills" / "hello" / "SKILL.md").read_bytes() == before
    assert agentrc("build", "ai", "--out", ".", "--client", "claude", cwd=repo).returncode == 0
    git(repo, "add", "-A")
    done = subprocess.run(["git", "commit", "-qm", "rebuilt"], cwd=repo, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_hooks_file_declares_the_three_hooks():
    """The hook ids docs/ci.md and users' configs name, each running agentrc's own command."""
    hooks = {h["id"]: h for h in yaml.safe_load(HOOKS.read_text())}
    assert {k: h["entry"] for k, h in hooks.items()} == {
        "agentrc-lint": "agentrc lint", "agentrc-fmt": "agentrc fmt", "agentrc-check": "agentrc build --check"}
    assert all(h["language"] == "python" and h["pass_filenames"] is False for h in hooks.values())


# --- action.yml -------------------------------------------------------------------------------


def run_action(action_path: Path, workspace: Path, env: Dict[str, str], skip: tuple = ("install",),
               **inputs: str) -> subprocess.CompletedProcess:
    """action.yml's steps as the runner runs a composite action: each `run:` through
    `bash --noprofile --norc -eo pipefail`, in its working-directory, with its `env:` and
    `${{ inputs.* }}` filled in from `inputs` and the defaults. The one `uses:` step
    (actions/setup-python) is the runner's: the caller's PATH gives the Python instead. The
    steps in `skip` (by id) are left out: pip installs agentrc once per test, not per run."""
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    values = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
    assert set(inputs) <= set(values), inputs
    values.update(inputs)

    def fill(text: str) -> str:
        return re.sub(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", lambda m: values[m.group(1)], str(text))

    assert action["runs"]["using"] == "composite"
    out = []
    for step in action["runs"]["steps"]:
        if "uses" in step:
            assert step["uses"].startswith("actions/setup-python@")
            continue
        if step["id"] in skip:
            continue
        assert step["shell"] == "bash" and "${{" not in step["run"]  # inputs reach scripts as env only
        step_env = dict(env, GITHUB_ACTION_PATH=str(action_path))
        step_env.update({k: fill(v) for k, v in step.get("env", {}).items()})
        cwd = workspace / fill(step.get("working-directory", "."))
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=cwd,
                              env=step_env, capture_output=True, text=True, timeout=600)
        out.append(proc.stdout + proc.stderr)
        if proc.returncode:
            return subprocess.CompletedProcess(step["id"], proc.returncode, "".join(out), "")
    return subprocess.CompletedProcess("done", 0, "".join(out), "")


def test_the_action_installs_agentrc_checks_the_build_and_the_lock(tmp_path, offline):
    hooks, _, env = offline
    venv = tmp_path / "venv"  # what actions/setup-python gives: a Python with pip on PATH
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    env = dict(env, PATH=f"{venv / 'bin'}{os.pathsep}{env['PATH']}")
    ws = tmp_path / "ws"
    author = ws / "team" / "author"
    (author / "ai" / "skills" / "hello").mkdir(parents=True)
    (author / "ai" / "skills" / "hello" / "SKILL.md").write_text(SKILL)
    assert agentrc("build", "ai", "--out", "out dir", "--client", "claude,copilot", cwd=author).returncode == 0

    ok = run_action(hooks, ws, env, skip=(), **{"working-directory": "team/author", "sources": "ai",
                                                "out": "out dir", "clients": "claude,copilot"})
    assert ok.returncode == 0, ok.stdout
    assert (venv / "bin" / "agentrc").exists()  # the install step put agentrc on the runner's PATH
    assert "no agentrc.lock.json; install check skipped" in ok.stdout
    # A client left out of the build: its files are missing, the check fails.
    missing = run_action(hooks, ws, env, **{"working-directory": "team/author", "sources": "ai", "out": "out dir",
                                            "clients": "claude,copilot,codex"})
    assert missing.args == "check" and missing.returncode == 1, missing.stdout
    assert "out dir/.agents/skills/hello/SKILL.md" in missing.stdout or ".agents" in missing.stdout

    # A consumer project: what agentrc add installed, checked against the lock.
    consumer = ws / "app"
    (consumer / "vendor").mkdir(parents=True)
    shutil.copytree(author / "ai", consumer / "vendor" / "registry")
    added = agentrc("add", "./vendor/registry", "--client", "claude", "--dir", str(consumer), cwd=consumer)
    assert added.returncode == 0, added.stderr
    ok = run_action(hooks, ws, env, **{"working-directory": "app"})
    assert ok.returncode == 0 and "no sources given; build check skipped" in ok.stdout, ok.stdout
    lock = consumer / "agentrc.lock.json"
    lock.write_text(re.sub(r'("sha256": ")[0-9a-f]', lambda m: m.group(1) + "0", lock.read_text(), count=1))
    bad = run_action(hooks, ws, env, **{"working-directory": "app"})
    assert bad.args == "frozen" and bad.returncode == 1 and "error[AR204]" in bad.stdout, bad.stdout


def test_docs_ci_names_the_hooks_and_the_actions_inputs():
    """docs/ci.md's example config uses only hook ids the hooks file has, and its table of
    the Action's inputs is action.yml's."""
    text = (ROOT / "docs" / "ci.md").read_text()
    config = yaml.safe_load(text.split("In\n`.pre-commit-config.yaml`:\n\n```yaml\n", 1)[1].split("```", 1)[0])
    ids = {h["id"] for h in yaml.safe_load(HOOKS.read_text())}
    assert {h["id"] for h in config["repos"][0]["hooks"]} == ids
    inputs = yaml.safe_load((ROOT / "action.yml").read_text())["inputs"]
    table = re.findall(r"^\| `([\w-]+)` \| (`[^`]*`|empty) \|", text, re.M)
    assert {name: default.strip("`") if default != "empty" else "" for name, default in table
            if name in inputs} == {k: str(v["default"]) for k, v in inputs.items()}


def test_a_yaml_language_server_line_changes_nothing(tmp_path, capsys):
    """The `# yaml-language-server: $schema=...` first line docs/ci.md recommends is a comment
    to agentrc: lint and fmt --check are as without it."""
    reg = tmp_path / "reg"
    shutil.copytree(ROOT / "examples" / "registry", reg, ignore=shutil.ignore_patterns("BUILD"))
    bundle = reg / "bundles" / "api.bundle.yaml"
    bundle.write_text("# yaml-language-server: $schema=../../schemas/bundle.schema.json\n" + bundle.read_text())
    marker = reg / "agentrc-registry.yaml"
    marker.write_text("# yaml-language-server: $schema=../schemas/registry.schema.json\n" + marker.read_text())
    assert main(["lint", str(reg)]) == 0
    assert main(["fmt", "--check", str(reg)]) == 0
    out = capsys.readouterr()
    assert "0 error(s), 0 warning(s)" in out.out + out.err
    # And the schema the line names accepts the bundle (as the language server would check it).
    schema = json.loads((ROOT / "src" / "agentrc" / "schemas" / "bundle.schema.json").read_text())
    jsonschema.validate(yaml.safe_load(bundle.read_text()), schema)
    jsonschema.validate(yaml.safe_load(marker.read_text()),
                        json.loads((ROOT / "src" / "agentrc" / "schemas" / "registry.schema.json").read_text()))
