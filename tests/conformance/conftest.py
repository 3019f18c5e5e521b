"""Conformance tests: check agentrc's generated output with the real client tools.

The example registry (examples/registry) is built once per session for claude, copilot and
opencode with the agentrc CLI, then checked with:

* opencode (npm ``opencode-ai``): does it discover every generated skill and agent, with the
  generated mode/description/permissions, and the ``instructions`` of opencode.json?
* ``agentskills validate`` (PyPI ``skills-ref``): are the SKILL.md files valid Agent Skills?
* ``markdownlint-cli2``: are the generated Markdown entrypoints clean Markdown?

The tools are pinned in tools/package.json and tools/skills-ref-requirements.txt and
installed into .tools/ (gitignored) by ``tools/install.sh``. When a tool is missing the tests that need it
are skipped, or fail when AGENTRC_REQUIRE_TOOLS=1 (CI sets it).

Set AGENTRC_CONFORMANCE_KEEP=1 to keep the temporary build and opencode projects (their path
is printed) for debugging.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from .conformance_helpers import (
    CLIENTS,
    NPM_MODULES,
    ROOT,
    SKILLS_REF_VENV,
    SKILLS_REF_VERSION,
    TEMP_DIRS,
    BuildFailed,
    Opencode,
    build_output,
    check_npm_package,
    make_temp_dir,
    opencode_candidates,
    pinned_npm_versions,
    rel,
    run,
    skill_dirs,
    tool_missing,
)


def pytest_unconfigure(config: pytest.Config) -> None:
    if os.environ.get("AGENTRC_CONFORMANCE_KEEP") == "1":
        for path in TEMP_DIRS:
            print(f"agentrc conformance: kept {path}")
        return
    for path in TEMP_DIRS:
        shutil.rmtree(str(path), ignore_errors=True)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """`skill_dir` is parametrized with every generated skill directory, as
    "<client>:<path relative to the build>" (test ids like `opencode:review`). The build is
    made here, at collection time, so that each skill is its own test; the `build` fixture
    returns the same (memoized) build."""
    if "skill_dir" not in metafunc.fixturenames:
        return
    try:
        build = build_output()
    except BuildFailed:
        # The test fails at run time with the build log (via the `build` fixture).
        metafunc.parametrize("skill_dir", [pytest.param(None, id="build-failed")])
        return
    params = []
    for client in CLIENTS:
        for d in skill_dirs(build, client):
            params.append(pytest.param(f"{client}:{rel(d, build)}", id=f"{client}:{d.name}"))
    if not params:
        params.append(pytest.param(None, id="no-skills-generated"))
    metafunc.parametrize("skill_dir", params)


# ---------------------------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def build() -> Path:
    """The example registry built for claude, copilot and opencode (read-only: copy it before
    running tools that write into the project)."""
    try:
        return build_output()
    except BuildFailed as exc:
        pytest.fail(str(exc), pytrace=False)
        raise  # unreachable


@pytest.fixture(scope="session")
def opencode_bin() -> Path:
    check_npm_package("opencode-ai")
    want = pinned_npm_versions()["opencode-ai"]
    tried = []
    for cand in opencode_candidates():
        if not (cand.is_file() and os.access(str(cand), os.X_OK)):
            continue
        proc = run([cand, "--version"], cwd=ROOT)
        have = proc.stdout.strip()
        if proc.returncode == 0 and have == want:
            return cand
        tried.append(f"{cand}: exit {proc.returncode}, version {have!r}")
    tool_missing(
        f"no working opencode {want} binary under {NPM_MODULES.relative_to(ROOT)}"
        + (f" (tried: {'; '.join(tried)})" if tried else "")
    )
    raise AssertionError("unreachable")


@pytest.fixture(scope="session")
def markdownlint_bin() -> Path:
    if shutil.which("node") is None:
        tool_missing("node is not on PATH (markdownlint-cli2 needs it)")
    check_npm_package("markdownlint-cli2")
    path = NPM_MODULES / ".bin" / "markdownlint-cli2"
    if not path.exists():
        tool_missing(f"{path.relative_to(ROOT)} is missing")
    return path


@pytest.fixture(scope="session")
def agentskills_bin() -> Path:
    path = SKILLS_REF_VENV / "bin" / "agentskills"
    if not path.exists():
        tool_missing(f"skills-ref {SKILLS_REF_VERSION} (`agentskills`) is not installed in {SKILLS_REF_VENV.relative_to(ROOT)}")
    infos = list(SKILLS_REF_VENV.glob("lib/python3*/site-packages/skills_ref-*.dist-info"))
    versions = sorted(p.name[len("skills_ref-") : -len(".dist-info")] for p in infos)
    if versions != [SKILLS_REF_VERSION]:
        tool_missing(f"{SKILLS_REF_VENV.relative_to(ROOT)} has skills-ref {versions or 'unknown'}, expected {SKILLS_REF_VERSION}")
    return path


@pytest.fixture(scope="session")
def opencode(opencode_bin: Path, build: Path) -> Opencode:
    base = make_temp_dir("agentrc-conformance-opencode-")
    return Opencode(opencode_bin, base)


@pytest.fixture(scope="session")
def oc_project(opencode: Opencode, build: Path) -> Path:
    """A git-initialised copy of the full build (claude + copilot + opencode output)."""
    return opencode.project(build, "project")


@pytest.fixture(scope="session")
def oc_empty_project(opencode: Opencode) -> Path:
    """An empty git project: what opencode reports there are its built-ins."""
    return opencode.project(None, "empty")
