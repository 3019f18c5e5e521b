"""Fields kept on import (issue 31, item 5), on look-alikes of published content written here:
`${VAR:-default}` in MCP servers handled per client or reported, never passed on as text
a client does not expand; `requires-env` inferred from `${VAR}` uses (a default means not
required), so a consumer gets AR209; `plugin:skill` references rewritten or reported; a
command and a skill of one name both arriving under names the report and the summary
print; Copilot-only agent fields kept for Copilot with a word to the others."""

from __future__ import annotations

import json
from pathlib import Path

from agentrc.cli.main import main
from agentrc.importers import document as importer
from agentrc.importers import namespaced
from agentrc.inputs.projectread import read_project
from sourcerepos import Repo, isolated_home

SERVERS = {"mcpServers": {
    "db": {"command": "npx", "args": ["-y", "db-mcp", "--url", "${DB_URL:-postgres://localhost/dev}"],
           "env": {"DB_TOKEN": "${DB_TOKEN}", "DB_SCHEMA": "${DB_SCHEMA:-}"}},
    "docs": {"type": "http", "url": "https://docs.example.com/mcp",
             "headers": {"Authorization": "Bearer ${DOCS_TOKEN}", "X-Region": "${REGION:-eu}"}},
}}
CLIENTS = "claude,copilot,cursor,opencode,gemini,codex"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def imported(tmp_path: Path, monkeypatch, files) -> Path:
    """`agentrc import --from claude` of a project holding `files`; the registry it wrote."""
    for rel, text in files.items():
        write(tmp_path / "project" / rel, text)
    monkeypatch.chdir(tmp_path)
    assert main(["import", "--from", "claude", "project", "--out", "registry"]) == 0
    return tmp_path / "registry"


def outcomes(report: Path, client: str, kind: str, name: str):
    data = json.loads(report.read_text())
    items = data["items"] if isinstance(data, dict) else data
    for entry in items:
        if entry["client"] == client and entry["kind"] == kind and entry["name"] == name:
            return {o["field"]: (o["status"], o.get("detail", "")) for o in entry["fields"]}
    raise AssertionError(f"no report for {client} {kind} {name}")


def test_requires_env_is_inferred_from_variables_without_a_default(tmp_path, monkeypatch, capsys):
    registry = imported(tmp_path, monkeypatch, {".mcp.json": json.dumps(SERVERS)})
    bundle = (registry / "imported.bundle.yaml").read_text()
    db = bundle.split("  db:\n")[1].split("  docs:\n")[0]
    assert "requires-env:\n    - DB_TOKEN\n" in db or "requires-env: [DB_TOKEN]" in db
    assert "DB_URL" not in db.split("requires-env")[1] and "DB_SCHEMA" not in db.split("requires-env")[1]
    docs = bundle.split("  docs:\n")[1]
    assert "DOCS_TOKEN" in docs.split("requires-env")[1] and "REGION" not in docs.split("requires-env")[1]
    assert main(["lint", str(registry)]) == 0


def test_a_client_variable_is_never_required(tmp_path, monkeypatch):
    servers = {"mcpServers": {"local": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/server", "args": ["--x"]}}}
    registry = imported(tmp_path, monkeypatch, {".mcp.json": json.dumps(servers)})
    assert "requires-env" not in (registry / "imported.bundle.yaml").read_text()


def test_defaults_are_handled_per_client_and_never_written_as_text_a_client_ignores(tmp_path, monkeypatch):
    registry = imported(tmp_path, monkeypatch, {".mcp.json": json.dumps(SERVERS)})
    report = tmp_path / "report.json"
    assert main(["build", str(registry), "--client", CLIENTS, "--out", "out", "--report", str(report),
                 "--no-cache"]) == 0
    out = tmp_path / "out"
    # Claude Code expands ${VAR:-default} in .mcp.json: kept (and so for the Copilot CLI, which shares the file).
    claude = json.loads((out / ".mcp.json").read_text())["mcpServers"]
    assert claude["db"]["args"][-1] == "${DB_URL:-postgres://localhost/dev}"
    assert claude["docs"]["headers"]["X-Region"] == "${REGION:-eu}"
    assert outcomes(report, "claude", "mcp", "db")["env-defaults"][0] == "emitted"
    # The others: the default in its place, `${VAR:-}` as the client's own reference.
    vscode = json.loads((out / ".vscode" / "mcp.json").read_text())["servers"]
    assert vscode["db"]["args"][-1] == "postgres://localhost/dev"
    assert vscode["db"]["env"] == {"DB_TOKEN": "${env:DB_TOKEN}", "DB_SCHEMA": "${env:DB_SCHEMA}"}
    assert vscode["docs"]["headers"]["X-Region"] == "eu"
    cursor = json.loads((out / ".cursor" / "mcp.json").read_text())["mcpServers"]
    assert cursor["db"]["env"]["DB_SCHEMA"] == "${env:DB_SCHEMA}" and cursor["docs"]["headers"]["X-Region"] == "eu"
    opencode = json.loads((out / "opencode.json").read_text())["mcp"]
    assert opencode["db"]["environment"]["DB_SCHEMA"] == "{env:DB_SCHEMA}"
    assert opencode["db"]["command"][-1] == "postgres://localhost/dev"
    gemini = json.loads((out / ".gemini" / "settings.json").read_text())["mcpServers"]
    assert gemini["db"]["env"]["DB_SCHEMA"] == "${DB_SCHEMA}" and gemini["docs"]["headers"]["X-Region"] == "eu"
    codex = (out / ".codex" / "config.toml").read_text()
    for text in (json.dumps(vscode), json.dumps(cursor), json.dumps(opencode), json.dumps(gemini), codex):
        assert ":-" not in text
    assert 'env_vars = ["DB_SCHEMA", "DB_TOKEN"]' in codex or '"DB_SCHEMA"' in codex
    # Each rewriting is in the report, naming the variable, never its default's value.
    for client in ("copilot", "cursor", "opencode", "gemini", "codex"):
        status, detail = outcomes(report, client, "mcp", "db")["env-defaults"]
        assert status == "degraded" and "DB_URL" in detail and "localhost" not in detail, (client, detail)
    assert "DB_SCHEMA" in outcomes(report, "opencode", "mcp", "db")["env-defaults"][1]
    status, detail = outcomes(report, "copilot", "mcp", "docs")["env-defaults"]
    assert "REGION" in detail and ".mcp.json keeps" in detail


def test_a_server_without_defaults_has_no_defaults_outcome(tmp_path, monkeypatch):
    servers = {"mcpServers": {"plain": {"command": "npx", "env": {"T": "${T}"}}}}
    registry = imported(tmp_path, monkeypatch, {".mcp.json": json.dumps(servers)})
    report = tmp_path / "report.json"
    assert main(["build", str(registry), "--client", CLIENTS, "--out", "out", "--report", str(report),
                 "--no-cache"]) == 0
    for client in CLIENTS.split(","):
        assert "env-defaults" not in outcomes(report, client, "mcp", "plain")


def test_a_published_plugin_server_requires_its_variables_on_add(tmp_path, monkeypatch, capsys):
    isolated_home(monkeypatch, tmp_path)
    monkeypatch.delenv("DOCS_TOKEN", raising=False)
    monkeypatch.delenv("REGION", raising=False)
    repo = Repo(tmp_path, "plugin")
    repo.commit({".claude-plugin/plugin.json": json.dumps({"name": "docs-kit", "description": "Docs tools"}),
                 "skills/lookup/SKILL.md": "---\nname: lookup\ndescription: Looks docs up\n---\n\nLook it up.\n",
                 ".mcp.json": json.dumps({"mcpServers": {"docs": SERVERS["mcpServers"]["docs"]}})}, tag="v1")
    (tmp_path / "p").mkdir()
    monkeypatch.chdir(tmp_path / "p")
    assert main(["add", "--trust", f"{repo.url}@v1", "--bundle", "docs-kit", "--client", "claude"]) == 0
    err = capsys.readouterr().err
    assert "warning[AR209] MCP server docs requires the environment variable DOCS_TOKEN" in err
    assert "REGION" not in err


PLANNER = """---
description: Plans the work
model: GPT-4.1 (copilot)
tools: ['search', 'edit']
mcp-servers:
  tracker:
    type: local
    command: tracker-mcp
    env:
      TRACKER_TOKEN: s3cr3t
---

Plan the work in steps.
"""


def test_copilot_only_agent_fields_stay_for_copilot_with_a_word_to_the_others(tmp_path, monkeypatch, capsys):
    write(tmp_path / "project" / ".github" / "agents" / "planner.agent.md", PLANNER)
    monkeypatch.chdir(tmp_path)
    assert main(["import", "--from", "copilot", "project", "--out", "registry"]) == 0
    err = capsys.readouterr().err
    assert "warning[AR130]" in err and "model \"GPT-4.1 (copilot)\" has no portable name; kept for Copilot" in err
    assert "mcp-servers (tracker) kept for Copilot" in err and "other clients do not get these servers" in err
    assert "s3cr3t" not in err
    agent = (tmp_path / "registry" / "agents" / "planner" / "AGENT.md").read_text()
    block = agent.split("copilot:\n")[1]
    assert "model: GPT-4.1 (copilot)" in block and "mcp-servers:" in block
    assert main(["build", "registry", "--client", "copilot,claude", "--out", "out", "--no-cache"]) == 0
    copilot = (tmp_path / "out" / ".github" / "agents" / "planner.agent.md").read_text()
    assert "model: GPT-4.1 (copilot)" in copilot and "tracker-mcp" in copilot
    claude = (tmp_path / "out" / ".claude" / "agents" / "planner.md").read_text()
    assert "GPT-4.1" not in claude and "tracker" not in claude


def test_a_portable_model_on_a_copilot_agent_is_not_reported(tmp_path, monkeypatch, capsys):
    write(tmp_path / "project" / ".github" / "agents" / "planner.agent.md",
          "---\ndescription: Plans\nmodel: Claude Sonnet 5.5\n---\n\nPlan.\n")
    monkeypatch.chdir(tmp_path)
    assert main(["import", "--from", "copilot", "project", "--out", "registry"]) == 0
    assert "kept for Copilot" not in capsys.readouterr().err
    assert "model: sonnet" in (tmp_path / "registry" / "agents" / "planner" / "AGENT.md").read_text()


def test_a_command_and_a_skill_of_one_name_both_arrive_under_names_printed(tmp_path, monkeypatch, capsys):
    registry = imported(tmp_path, monkeypatch, {
        ".claude/commands/example-command.md": "---\ndescription: Runs the example\n---\n\nRun it on $ARGUMENTS.\n",
        ".claude/skills/example-command/SKILL.md": "---\nname: example-command\ndescription: The example\n---\n\n"
                                                   "Do the example.\n"})
    err = capsys.readouterr().err
    assert "command example-command has the name of a skill" in err
    assert "invoke it as example-command-command, and the skill keeps example-command" in err
    assert "AR090" not in err
    report = tmp_path / "report.json"
    assert main(["build", str(registry), "--client", "claude,codex,copilot", "--out", "out", "--report",
                 str(report), "--no-cache"]) == 0
    out = tmp_path / "out"
    assert "name: example-command\n" in (out / ".claude" / "skills" / "example-command" / "SKILL.md").read_text()
    renamed = (out / ".claude" / "skills" / "example-command-command" / "SKILL.md").read_text()
    assert "name: example-command-command\n" in renamed and "Run it on" in renamed
    assert (out / ".agents" / "skills" / "example-command-command" / "SKILL.md").exists()
    assert (out / ".github" / "prompts" / "example-command.prompt.md").exists()  # Copilot keeps prompts apart
    for client in ("claude", "codex"):
        status, detail = outcomes(report, client, "command", "example-command")["name"]
        assert status == "degraded" and detail.startswith("invoked as example-command-command"), detail
    assert "name" not in outcomes(report, "claude", "skill", "example-command") or \
        outcomes(report, "claude", "skill", "example-command")["name"][0] != "degraded"


def test_the_renamed_name_is_numbered_when_taken(tmp_path, monkeypatch, capsys):
    imported(tmp_path, monkeypatch, {
        ".claude/commands/x.md": "---\ndescription: X\n---\n\nDo x.\n",
        ".claude/commands/x-command.md": "---\ndescription: X command\n---\n\nDo x command.\n",
        ".claude/skills/x/SKILL.md": "---\nname: x\ndescription: The x skill\n---\n\nX.\n"})
    assert "invoke it as x-command-2 (or the next number free)" in capsys.readouterr().err
    assert main(["build", "registry", "--client", "claude", "--out", "out", "--no-cache"]) == 0
    skills = sorted(p.name for p in (tmp_path / "out" / ".claude" / "skills").iterdir())
    assert skills == ["x", "x-command", "x-command-2"]


BRAINSTORM = "---\nname: brainstorming\ndescription: Explores ideas before code\n---\n\nAsk questions first.\n"
PLAN = """---
name: writing-plans
description: Writes the plan
---

Before planning, use the superpowers:brainstorming skill, then run `/superpowers:execute`.
Ask the other-kit:reviewer agent for a review, and see `superpowers:missing-one`.

Times like 10:30, links like https://example.com/a:b and a key:value in prose stay.

```text
superpowers:brainstorming stays as written in an example
```
"""


def plugin_files():
    return {".claude-plugin/plugin.json": json.dumps({"name": "superpowers", "description": "Skills"}),
            "skills/brainstorming/SKILL.md": BRAINSTORM, "skills/writing-plans/SKILL.md": PLAN,
            "commands/execute.md": "---\ndescription: Executes the plan\n---\n\nExecute it.\n"}


def test_namespaced_references_are_rewritten_or_reported(tmp_path, monkeypatch, capsys):
    for rel, text in plugin_files().items():
        write(tmp_path / "superpowers" / rel, text)
    monkeypatch.chdir(tmp_path)
    assert main(["import", "--from", "claude", "superpowers", "--out", "registry"]) == 0
    err = capsys.readouterr().err
    plan = next((tmp_path / "registry").rglob("writing-plans/SKILL.md")).read_text()
    assert "use the brainstorming skill, then run `/execute`." in plan
    assert "superpowers:brainstorming stays as written in an example" in plan  # fenced: an example
    assert "10:30" in plan and "https://example.com/a:b" in plan and "key:value" in plan
    assert "other-kit:reviewer names an item of plugin other-kit that this import does not hold" in err
    assert "superpowers:missing-one names an item of plugin superpowers" in err
    assert "10:30" not in err and "key:value" not in err and "a:b" not in err
    assert main(["lint", str(tmp_path / "registry")]) == 0


def test_a_project_naming_an_installed_plugin_skill_is_told(tmp_path, monkeypatch, capsys):
    imported(tmp_path, monkeypatch, {".claude/commands/design.md": "---\ndescription: Design\n---\n\n"
                                     "Use the superpowers:brainstorming skill on $ARGUMENTS.\n"})
    err = capsys.readouterr().err
    assert "command design: superpowers:brainstorming names an item of plugin superpowers" in err


def test_a_published_plugin_installs_with_its_references_rewritten(tmp_path, monkeypatch, capsys):
    isolated_home(monkeypatch, tmp_path)
    repo = Repo(tmp_path, "superpowers")
    repo.commit(plugin_files(), tag="v1")
    (tmp_path / "p").mkdir()
    monkeypatch.chdir(tmp_path / "p")
    assert main(["add", "--trust", f"{repo.url}@v1", "--bundle", "superpowers", "--client", "claude",
                 "--verbose"]) == 0
    err = capsys.readouterr().err
    plan = (tmp_path / "p" / ".claude" / "skills" / "writing-plans" / "SKILL.md").read_text()
    assert "use the brainstorming skill, then run `/execute`." in plan
    assert "other-kit:reviewer" in err


def test_several_plugins_references_follow_their_installed_names():
    """What a marketplace of several plugins needs (pipeline/published): each plugin's names,
    renamed where two plugins clash, known to every plugin's bodies."""
    doc = {"skills": {"plan": {"content": "Use the sec:guard skill, then `/rev:review` and the rev:gone agent.\n"}},
           "commands": {"go": {"prompt": "Run /sec:audit now.\n"}}}
    names = {"sec": {"guard": "guard", "audit": "sec-audit"}, "rev": {"review": "review"}}
    left = namespaced.rewrite_document(doc, names)
    assert doc["skills"]["plan"]["content"] == "Use the guard skill, then `/review` and the rev:gone agent.\n"
    assert doc["commands"]["go"]["prompt"] == "Run /sec-audit now.\n"
    assert left == [("skills", "plan", "rev:gone")]


def test_hostile_bodies_are_read_in_linear_time_and_kept():
    body = ("a:" * 200_000) + "\n" + "x" * 100_000 + ":" + "y" * 100_000 + "\n```\nunclosed fence sec:guard\n"
    text, done, left = namespaced.rewrite(body, {"sec": {"guard": "guard"}})
    assert text == body and done == [] and left == []


def test_import_project_takes_the_other_plugins_names(tmp_path):
    root = tmp_path / "rev"  # a plugin as the published reader hands it to the Claude importer
    write(root / ".claude" / "skills" / "review" / "SKILL.md", "---\nname: review\ndescription: Reviews\n---\n\n"
          "Run the sec:guard skill and /sec:audit, then the rev:review skill; not the sec:gone skill.\n")
    tree, _ = read_project(str(root), lambda rel: True)
    got = importer.import_project("claude", tree, str(root), source="rev",
                                  namespaces={"sec": {"guard": "guard", "audit": "sec-audit"}})
    body = got.document["skills"]["review"]["content"]
    assert "Run the guard skill and /sec-audit, then the review skill; not the sec:gone skill." in body
    assert [d.message for d in got.diagnostics if "sec:" in d.message] == [
        "skill review: sec:gone names an item of plugin sec that this import does not hold; kept as written "
        "(installed content is named without its plugin: import or install sec too and write the item's own name)"]
