"""`agentrc-sync`: writes the trees into the workspace, `--check` reports drift (RuleRunner)."""

from __future__ import annotations

import json
import os

from agentrc.cli.main import main
from agentrc_pants.sync import AgentrcSyncGoal
from agentrc_pants.testutil import REGISTRY, make_rule_runner


def test_sync_writes_then_check_is_clean_and_reports_stale_files():
    runner = make_rule_runner()
    runner.write_files(REGISTRY)
    root = runner.build_root
    check = runner.run_goal_rule(AgentrcSyncGoal, args=["--check", "--root=ws", "reg::"])
    assert check.exit_code == 1 and "missing: ws/.claude/agents/helper.md" in check.stdout
    done = runner.run_goal_rule(AgentrcSyncGoal, args=["--root=ws", "reg::"])
    assert done.exit_code == 0, done.stderr
    assert os.path.isfile(os.path.join(root, "ws", ".claude", "skills", "fix", "SKILL.md"))
    assert os.path.isfile(os.path.join(root, "ws", ".agentrc", "manifest.json"))
    assert runner.run_goal_rule(AgentrcSyncGoal, args=["--check", "--root=ws", "reg::"]).exit_code == 0
    # A file the user owns at an output path is never overwritten: the goal fails, nothing written.
    os.remove(os.path.join(root, "ws", ".claude", "agents", "helper.md"))
    with open(os.path.join(root, "ws", ".claude", "agents", "helper.md"), "w") as fh:
        fh.write("mine\n")
    with open(os.path.join(root, "ws", ".agentrc", "manifest.json")) as fh:
        manifest = fh.read()
    with open(os.path.join(root, "ws", ".agentrc", "manifest.json"), "w") as fh:
        fh.write(manifest.replace('".claude/agents/helper.md"', '".claude/agents/helper-old.md"'))
    refused = runner.run_goal_rule(AgentrcSyncGoal, args=["--root=ws", "reg::"])
    assert refused.exit_code == 1 and "AR091" in refused.stderr
    with open(os.path.join(root, "ws", ".claude", "agents", "helper.md")) as fh:
        assert fh.read() == "mine\n"


def test_sync_without_agentrc_targets_says_so():
    runner = make_rule_runner()
    runner.write_files({"other/BUILD": "", "other/x.txt": "x"})
    result = runner.run_goal_rule(AgentrcSyncGoal, args=["other::"])
    assert result.exit_code == 0 and "no agentrc targets" in result.stderr


SECRET = "sk-SYNC-SECRET-7373"
MERGING = {
    "mreg/hooks/guard/HOOK.md": ("---\nschema: 1\ndescription: Guard shell commands\nevent: PreToolUse\n"
                                 "tools:\n  - bash\nscript: ./guard.sh\ntimeout: 10\n---\n\nGuards.\n"),
    "mreg/hooks/guard/guard.sh": "#!/bin/sh\nexit 0\n",
    "mreg/hooks/guard/BUILD": "agentrc_items()\n",
    "mreg/hooks/audit/HOOK.md": ("---\nschema: 1\ndescription: Audit edits\nevent: PreToolUse\n"
                                 "tools:\n  - edit\nscript: ./audit.sh\n---\n\nAudits.\n"),
    "mreg/hooks/audit/audit.sh": "#!/bin/sh\nexit 0\n",
    "mreg/hooks/audit/BUILD": "agentrc_items()\n",
    "mreg/hooks/fmt/HOOK.md": ("---\nschema: 1\ndescription: Format after edits\nevent: PostToolUse\n"
                               "tools:\n  - edit\nscript: ./fmt.sh --quiet\n---\n\nFormats.\n"),
    "mreg/hooks/fmt/fmt.sh": "#!/bin/sh\nexit 0\n",
    "mreg/hooks/fmt/BUILD": "agentrc_items()\n",
    "mreg/tools.bundle.yaml": (
        "schema: 1\nname: tools\ndescription: Tools\nitems:\n  hooks: [guard, audit, fmt]\nmcps:\n"
        "  local-one:\n    local:\n      command: npx\n      args: [\"-y\", \"x\"]\n"
        f"      env:\n        API_KEY: {SECRET}\n"
        "  remote-one:\n    remote:\n      type: http\n      url: https://mcp.example.com/mcp\n"
        f"      headers:\n        Authorization: \"Bearer {SECRET}\"\n"),
    "mreg/BUILD": "agentrc_bundle(name='tools', source='tools.bundle.yaml')\n",
}
USER = {  # the user's own config files, each with keys of their own around agentrc's
    ".claude/settings.json": ('{\n  // mine\n  "model": "opus",\n  "hooks": {\n    "PreToolUse": [\n'
                              '      {"matcher": "Read", "hooks": [{"type": "command", "command": "mine.sh"}]}\n'
                              '    ]\n  }\n}\n'),
    ".mcp.json": '{\n  "mcpServers": {\n    "mine": {"command": "mine"}\n  }\n}\n',
    ".codex/config.toml": '# my settings\nmodel = "o3"\n\n[mcp_servers.mine]\ncommand = "mine"\n',
    ".codex/hooks.json": ('{\n  "hooks": {\n    "PreToolUse": [{"hooks": [{"type": "command", "command": "m"}]}]\n'
                          '  }\n}\n'),
}


def _tree(root):
    return {os.path.relpath(os.path.join(d, n), root): open(os.path.join(d, n), "rb").read()
            for d, _, names in os.walk(root) for n in names if ".agentrc" not in os.path.relpath(d, root).split(os.sep)}


def test_sync_merges_into_users_config_files_as_the_cli_does():
    """The package report names agentrc's keys without their values (no secret in it); the
    sync reads the values from the packaged files, and the workspace ends up byte for byte as
    `agentrc build` leaves the same directory: hook entries appended in order, TOML tables
    spliced, the user's keys, comments and entries kept."""
    runner = make_rule_runner()
    runner.write_files({**MERGING, **{f"ws/{p}": t for p, t in USER.items()},
                        **{f"cli/{p}": t for p, t in USER.items()}})
    root = runner.build_root
    args = ["--clients=['claude', 'codex']", "--root=ws", "mreg::"]
    done = runner.run_goal_rule(AgentrcSyncGoal, args=args)
    assert done.exit_code == 0, done.stderr
    assert SECRET not in done.stdout + done.stderr
    assert main(["build", os.path.join(root, "mreg"), "--client", "claude,codex", "--out", os.path.join(root, "cli"),
                 "--no-cache", "--report", os.path.join(root, "report.json")]) == 0
    with open(os.path.join(root, "report.json")) as fh:
        report = fh.read()
    assert SECRET not in report and '"merged"' in report
    synced, built = _tree(os.path.join(root, "ws")), _tree(os.path.join(root, "cli"))
    assert synced == built
    settings = json.loads(synced[".claude/settings.json"].decode().replace("  // mine\n", ""))
    assert [h["matcher"] for h in settings["hooks"]["PreToolUse"]] == ["Read", "Edit", "Bash"]
    assert SECRET in synced[".mcp.json"].decode() and "mine" in json.loads(synced[".mcp.json"])["mcpServers"]
    config = synced[".codex/config.toml"].decode()
    assert config.startswith(USER[".codex/config.toml"]) and "[mcp_servers.local-one]" in config
    # The manifests agree too, so the CLI and the sync can take turns on one directory.
    manifests = []
    for d in ("ws", "cli"):
        with open(os.path.join(root, d, ".agentrc", "manifest.json")) as fh:
            manifests.append(json.load(fh)["merged"])
    assert manifests[0] == manifests[1]
    assert runner.run_goal_rule(AgentrcSyncGoal, args=["--check", *args]).exit_code == 0
