"""Ignore files (issue 33): each client's own CLI, offline, honours the file agentrc writes.

A small project (an `agentrc.yaml` whose `ignore:` names `secret.txt` and `private/`, and the
files secret.txt, private/key.txt and visible.txt, committed to git) is built with `agentrc
build` for one client at a time, so the client's ignore file is the only one in the tree.
Each test runs the client twice: in the build, and in a copy without the ignore file (the
control, which shows that what the test sees comes from that file and nothing else). Every
run has an isolated HOME, no credentials, stdin closed and a local sink as the HTTP(S) proxy
and, where one is needed, the model endpoint:

* Gemini CLI: the first model request's directory tree and the files of `@` references.
* Qwen Code: the files of `@` references in the first model request.
* Aider: `/ls` (the repository's files) and the files named on the command line, which it
  refuses to add to the chat ("Skipping ... due to aiderignore").
* Kilo Code: `kilo debug config`, where .kilocodeignore becomes `permission.read` and
  `permission.edit` deny rules.
* Mistral Vibe and Continue's cn: a fake model's calls record what their tools do with the
  file (Vibe: `vibe -p` offers no tool that reads .vibeignore; cn: does not read
  .continueignore), without a control: the file changes nothing there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from .conformance_helpers import NPM_MODULES, ROOT, check_npm_package, describe, make_temp_dir, run, tool_missing
from .offline_clients import LocalSink, cli_argv, isolated_dirs, offline_env
from .pypi_clients import model_requests, pypi_client

MARK = "AGENTRC-MARK"
SECRETS = {"secret.txt": f"{MARK} SECRET-ALPHA", "private/key.txt": f"{MARK} KEY-BRAVO"}
VISIBLE = {"visible.txt": f"{MARK} VISIBLE-CHARLIE"}
IGNORE = ("secret.txt", "private/")
RULE = "---\nschema: 1\nname: style\ndescription: The style rule.\n---\n\n## Rule\n\nBe brief.\n"
AT_PROMPT = "Compare @secret.txt @visible.txt and @private/key.txt"


def _git(project: Path, *args: str) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(project.parent), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "agentrc", "GIT_AUTHOR_EMAIL": "agentrc@example.com",
           "GIT_COMMITTER_NAME": "agentrc", "GIT_COMMITTER_EMAIL": "agentrc@example.com"}
    proc = run(["git", *args], cwd=project, env=env)
    assert proc.returncode == 0, describe(proc)


def _projects(client: str, ignore_file: str) -> Tuple[Path, Path]:
    """(the project built for `client`, a copy of it without `ignore_file`), both committed."""
    base = make_temp_dir(f"agentrc-ignore-{client}-")
    project = base / "project"
    (project / "ai" / "rules" / "style").mkdir(parents=True)
    (project / "ai" / "rules" / "style" / "RULE.md").write_text(RULE, encoding="utf-8")
    for path, text in {**SECRETS, **VISIBLE}.items():
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_text(text + "\n", encoding="utf-8")
    lines = ["schema: 1", f"clients: [{client}]", "build:", "  paths: [ai]", "ignore:", *(f"  - {p}" for p in IGNORE)]
    (project / "agentrc.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _git(project, "init", "-q")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRC_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH", "")) if p)
    proc = subprocess.run([sys.executable, "-m", "agentrc", "build", "--no-cache"], cwd=str(project), env=env,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=120)
    assert proc.returncode == 0, describe(proc)
    written = (project / ignore_file).read_text(encoding="utf-8").splitlines()
    assert [line for line in written if line and not line.startswith("#")] == list(IGNORE), written
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "the built project")
    control = base / "control"
    shutil.copytree(str(project), str(control))
    (control / ignore_file).unlink()
    return project.resolve(), control.resolve()


def _has(text: str, *needles: str) -> Dict[str, bool]:
    return {n: n in text for n in needles}


SEEN = {"SECRET-ALPHA": False, "KEY-BRAVO": False, "VISIBLE-CHARLIE": True}
SEEN_ALL = {"SECRET-ALPHA": True, "KEY-BRAVO": True, "VISIBLE-CHARLIE": True}


# ---------------------------------------------------------------------------------------------
# Gemini CLI
# ---------------------------------------------------------------------------------------------


def _gemini_contents(project: Path) -> str:
    """The contents (user turns) of `gemini -p AT_PROMPT`'s main model request, as text."""
    check_npm_package("@google/gemini-cli")
    binary = NPM_MODULES / ".bin" / "gemini"
    if not binary.exists():
        tool_missing(f"{binary} is missing")
    _, home, tmp = isolated_dirs("agentrc-ignore-gemini-run-")
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text(json.dumps({
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "security": {"auth": {"selectedType": "gemini-api-key"}},
    }), encoding="utf-8")
    with LocalSink() as proxy, LocalSink() as model:
        env = offline_env(home, tmp, proxy=proxy, extra={
            "GEMINI_CLI_HOME": str(home), "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "GEMINI_API_KEY": "agentrc-dummy-not-a-key", "GOOGLE_GEMINI_BASE_URL": model.url})
        proc = run([*cli_argv(binary), "--approval-mode", "yolo", "-p", AT_PROMPT, "-o", "json"], project, env,
                   timeout=60)
        requests = list(model.requests)
    assert proxy.requests == [], f"Gemini CLI tried to reach the network: {proxy.requests}"
    bodies = [r["body"] for r in requests if isinstance(r.get("body"), dict) and r["body"].get("tools")]
    assert bodies, f"no model request with tools reached the local sink:\n{describe(proc)}"
    return "\n".join(p.get("text", "") for c in bodies[0]["contents"] for p in c.get("parts", []))


def _tree(contents: str) -> List[str]:
    """The entries of Gemini's "Directory Structure" (names, `...` kept)."""
    start = contents.index("Directory Structure")
    block = contents[start:contents.index("</session_context>", start)]
    return [line.split("───")[-1] for line in block.splitlines() if "───" in line]


def test_gemini_leaves_geminiignore_paths_out_of_its_tree_and_at_references():
    project, control = _projects("gemini", ".geminiignore")
    sent = _gemini_contents(project)
    tree = _tree(sent)
    assert "visible.txt" in tree and "secret.txt" not in tree, tree
    assert "private/..." in tree and "key.txt" not in tree, tree  # the folder is shown, its files not
    assert _has(sent, *SEEN) == SEEN, sent[-3000:]
    # The control: without .geminiignore both files are listed and read.
    sent = _gemini_contents(control)
    tree = _tree(sent)
    assert {"secret.txt", "private/", "key.txt"} <= set(tree), tree
    assert _has(sent, *SEEN) == SEEN_ALL, sent[-3000:]


# ---------------------------------------------------------------------------------------------
# Qwen Code
# ---------------------------------------------------------------------------------------------


def _qwen_request(project: Path) -> str:
    """The messages of `qwen AT_PROMPT`'s first model request, as JSON text."""
    check_npm_package("@qwen-code/qwen-code")
    binary = NPM_MODULES / ".bin" / "qwen"
    if not binary.exists():
        tool_missing(f"{binary} is missing")
    _, home, tmp = isolated_dirs("agentrc-ignore-qwen-run-")
    (home / ".qwen").mkdir()
    (home / ".qwen" / "settings.json").write_text(json.dumps({"privacy": {"usageStatisticsEnabled": False}}),
                                                  encoding="utf-8")
    with LocalSink() as sink:
        env = offline_env(home, tmp, proxy=sink)
        proc = run([*cli_argv(binary), "--auth-type", "openai", "--openai-api-key", "agentrc-conformance",
                    "--openai-base-url", f"{sink.url}/v1", "-m", "m1", "-o", "stream-json", AT_PROMPT],
                   project, env, timeout=90)
    assert not sink.connects(), f"Qwen Code tried to reach the network: {sink.connects()}"
    bodies = model_requests(sink.requests)
    assert bodies, f"no model request:\n{describe(proc)}"
    return json.dumps(bodies[0]["messages"][1:])  # the system prompt quotes no file


def test_qwen_leaves_qwenignore_paths_out_of_at_references():
    project, control = _projects("qwen", ".qwenignore")
    sent = _qwen_request(project)
    assert _has(sent, *SEEN) == SEEN, sent[-3000:]
    assert "Content from visible.txt" in sent and "Content from secret.txt" not in sent, sent[-3000:]
    sent = _qwen_request(control)
    assert _has(sent, *SEEN) == SEEN_ALL, sent[-3000:]


# ---------------------------------------------------------------------------------------------
# Aider
# ---------------------------------------------------------------------------------------------

AIDER_FLAGS = ("--model", "openai/agentrc-test", "--yes-always", "--no-auto-commits", "--no-gitignore",
               "--map-tokens", "0", "--no-check-update", "--no-show-release-notes", "--no-analytics",
               "--no-show-model-warnings", "--no-pretty", "--no-stream")
AIDER_OWN_TRAFFIC = {"raw.githubusercontent.com:443"}  # litellm's price list, refused by the sink


def _aider(project: Path, *args: str) -> Tuple[subprocess.CompletedProcess, List[Dict[str, Any]]]:
    aider = pypi_client("aider", "aider-chat", "aider")
    _, home, tmp = isolated_dirs("agentrc-ignore-aider-run-")
    with LocalSink() as sink:
        env = offline_env(home, tmp, proxy=sink, extra={"OPENAI_API_KEY": "agentrc-conformance",
                                                       "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
        proc = run([str(aider), *AIDER_FLAGS, "--openai-api-base", f"{sink.url}/v1", *args], cwd=project, env=env)
    assert set(sink.connects()) <= AIDER_OWN_TRAFFIC, sink.connects()
    return proc, model_requests(sink.requests)


def _aider_ls(project: Path) -> List[str]:
    """The repository files `/ls` lists ("Repo files not in the chat")."""
    proc, _ = _aider(project, "--message", "/ls")
    out = proc.stdout
    assert "Repo files not in the chat:" in out, describe(proc)
    block = out[out.index("Repo files not in the chat:"):].split("\n\n", 2)[1]
    return [line.strip() for line in block.splitlines() if line.strip()]


def test_aider_leaves_aiderignore_paths_out_of_its_repo_and_chat():
    project, control = _projects("aider", ".aiderignore")
    listed = _aider_ls(project)
    assert "visible.txt" in listed and "secret.txt" not in listed and "private/key.txt" not in listed, listed
    proc, bodies = _aider(project, "secret.txt", "private/key.txt", "visible.txt", "--message", "hello")
    assert bodies, describe(proc)
    sent = json.dumps(bodies[0]["messages"])
    assert _has(sent, *SEEN) == SEEN, sent[-3000:]
    said = " ".join(proc.stdout.split())  # Aider wraps its lines
    for path in SECRETS:
        assert f"Skipping {project / path} that matches aiderignore spec." in said, describe(proc)
    # The control: without .aiderignore both are repository files, and added to the chat.
    listed = _aider_ls(control)
    assert {"visible.txt", "secret.txt", "private/key.txt"} <= set(listed), listed
    proc, bodies = _aider(control, "secret.txt", "private/key.txt", "visible.txt", "--message", "hello")
    assert bodies, describe(proc)
    assert _has(json.dumps(bodies[0]["messages"]), *SEEN) == SEEN_ALL
    assert "aiderignore" not in proc.stdout, describe(proc)


# ---------------------------------------------------------------------------------------------
# Kilo Code
# ---------------------------------------------------------------------------------------------

# Kilo's own traffic off (as in test_kilo_discovery.py).
KILO_QUIET = {"KILO_DISABLE_MODELS_FETCH": "1", "KILO_TELEMETRY_LEVEL": "off", "KILO_DISABLE_AUTOUPDATE": "1",
              "KILO_DISABLE_DEFAULT_PLUGINS": "1", "KILO_DISABLE_LSP_DOWNLOAD": "1",
              "KILO_DISABLE_CODEBASE_INDEXING": "1", "KILO_DISABLE_SESSION_INGEST": "1", "KILO_DISABLE_SHARE": "1"}


def _kilo_permission(project: Path) -> Dict[str, Any]:
    """`kilo debug config`'s merged `permission`."""
    check_npm_package("@kilocode/cli")
    binary = NPM_MODULES / "@kilocode" / "cli-linux-x64" / "bin" / "kilo"
    kilo = cli_argv(binary if binary.exists() else NPM_MODULES / ".bin" / "kilo")
    _, home, tmp = isolated_dirs("agentrc-ignore-kilo-run-")
    with LocalSink() as sink:
        proc = run(kilo + ["debug", "config"], cwd=project, env=offline_env(home, tmp, proxy=sink, extra=KILO_QUIET))
    assert proc.returncode == 0, describe(proc)
    config = json.loads(proc.stdout[proc.stdout.index("{"):])
    return config.get("permission") or {}


def test_kilo_turns_kilocodeignore_into_read_and_edit_deny_rules():
    project, control = _projects("kilo", ".kilocodeignore")
    permission = _kilo_permission(project)
    for tool in ("read", "edit"):
        rules = permission.get(tool) or {}
        assert rules.get("secret.txt") == "deny" and rules.get("private/*") == "deny", permission
    for tool, rules in _kilo_permission(control).items():
        assert not any(v == "deny" and ("secret" in k or "private" in k) for k, v in (rules or {}).items()), rules


# ---------------------------------------------------------------------------------------------
# Mistral Vibe
# ---------------------------------------------------------------------------------------------


def _vibe_run(project: Path) -> Tuple[List[str], List[str]]:
    """A fake model calls `read_file` on secret.txt: (the tools Vibe offered its model, the
    tool results it sent back)."""
    from .test_copilot_discovery import FakeModel
    from .test_vibe_discovery import CONFIG

    vibe = pypi_client("vibe", "mistral-vibe", "vibe")
    base, home, tmp = isolated_dirs("agentrc-ignore-vibe-run-")
    with LocalSink(FakeModel([("read_file", {"path": "secret.txt"})])) as sink:
        (home / ".vibe").mkdir()
        (home / ".vibe" / "config.toml").write_text(CONFIG.format(url=sink.url), encoding="utf-8")
        env = offline_env(home, tmp, proxy=sink, extra={"AGENTRC_SINK_KEY": "agentrc-conformance"})
        proc = run([str(vibe), "--trust", "--output-dir", str(base / "export"), "-p", "hello", "--max-turns", "3",
                    "--auto-approve"], cwd=project, env=env)
    assert not sink.connects(), f"Vibe tried to reach the network: {sink.connects()}"
    bodies = model_requests(sink.requests)
    assert bodies, describe(proc)
    tools = [str((t.get("function") or {}).get("name")) for t in bodies[0].get("tools") or []]
    results = [str(m.get("content")) for m in bodies[-1]["messages"] if m.get("role") == "tool"]
    return tools, results


def test_vibe_print_mode_offers_no_tool_that_reads_vibeignore():
    """Vibe's Python `grep` tool reads .vibeignore, but `vibe -p` runs its native harness,
    which offers no `grep` and whose `read_file` returns an ignored file: the file is written
    (degraded) and this records what the pinned CLI does with it. Not a control-checked judge:
    with or without .vibeignore the result is the same."""
    project, control = _projects("vibe", ".vibeignore")
    tools, results = _vibe_run(project)
    assert "read_file" in tools and "grep" not in tools, tools
    assert len(results) == 1 and "SECRET-ALPHA" in results[0], results
    results = _vibe_run(control)[1]
    assert len(results) == 1 and "SECRET-ALPHA" in results[0], results


# ---------------------------------------------------------------------------------------------
# Continue (cn)
# ---------------------------------------------------------------------------------------------


def test_continue_cn_lists_and_reads_continueignore_paths():
    """cn does not read .continueignore (its bundle names the file only among the files it
    never indexes): a fake model's `List` of the project shows secret.txt and `Read` returns
    it with the file present. What the status `degraded` says; the editor extensions that read
    the file have no CLI here."""
    import yaml

    from .test_copilot_discovery import FakeModel

    check_npm_package("@continuedev/cli")
    cn = cli_argv(NPM_MODULES / "@continuedev" / "cli" / "dist" / "cn.js")
    project, _ = _projects("continue", ".continueignore")
    _, home, tmp = isolated_dirs("agentrc-ignore-continue-run-")
    calls = [("List", {"dirpath": "."}), ("Read", {"filepath": "secret.txt"})]
    with LocalSink(FakeModel(calls)) as sink:
        config = home / ".continue" / "config.yaml"
        config.parent.mkdir()
        config.write_text(yaml.safe_dump({
            "name": "sink", "version": "1.0.0", "schema": "v1",
            "models": [{"name": "sink", "provider": "openai", "model": "gpt-4o", "apiBase": f"{sink.url}/v1",
                        "apiKey": "agentrc-conformance", "roles": ["chat"]}]}), encoding="utf-8")
        proc = run(cn + ["-p", "hello", "--config", str(config), "--auto"], cwd=project,
                   env=offline_env(home, tmp, proxy=sink), timeout=60)
    assert not sink.connects(), f"cn tried to reach the network: {sink.connects()}"
    bodies = model_requests(sink.requests)
    assert bodies, describe(proc)
    listing, read = [str(m.get("content")) for m in bodies[-1]["messages"] if m.get("role") == "tool"]
    assert "secret.txt (file" in listing and "private (directory)" in listing, listing
    assert "SECRET-ALPHA" in read, read
