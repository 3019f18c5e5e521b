"""The runtime an instance would be launched in (spec 003, runtimes): the model it records and
the command line the OAS kernel records in instance.json and runs in the instance's tmux
window. agentrc records the command and runs nothing: it stops where the kernel starts tmux.
"""

from __future__ import annotations

import os
import re
import shutil

from agentrc.capops import reqs as capreqs
from agentrc.capops.hooks import shq

RUNTIMES = ("pi", "claude")
TMUX_SESSION = os.environ.get("PI_AGENTS_TMUX_SESSION") or "pi-agents"


def model_preference(model: str, runtime: str) -> str:
    """The model recorded for a runtime from a comma list of preferences, as the kernel picks
    it: for claude the first alias or bare id (an `anthropic/` entry without its provider and
    `:thinking`; other providers' entries dropped), else the first entry. (The kernel asks
    `pi --list-models` to pick among several pi entries; agentrc takes the first.)"""
    prefs = [p.strip() for p in model.split(",") if p.strip()]
    if runtime == "claude":
        for pref in prefs:
            bare = re.sub(r":[a-zA-Z]+$", "", pref)
            if "/" not in bare:
                return bare
            provider, _sep, rest = bare.partition("/")
            if provider == "anthropic" and rest:
                return rest
        return ""
    return prefs[0] if prefs else ""


def launch_command(runtime: str, instance: str, home: str, model: str, context: str, hook_args: str = "") -> str:
    """The command line the kernel records in instance.json (`command`) and would run in the
    instance's tmux window, with the arguments the spawn hooks' `launch` asked for this
    runtime (`hook_args`, as the hooks wrote them: they are flags for the runtime). agentrc
    records it and runs nothing; a runtime executable that is not on PATH is recorded by its
    name."""
    name = capreqs.claude_binary(context) if runtime == "claude" else "pi"
    exe = shutil.which(name) or name
    with_model = (f" --model {shq(model)}" if model else "") + (f" {hook_args}" if hook_args else "")
    if runtime == "claude":
        line = f'{shq(exe)}{with_model} -- "$(cat TASK.md)"'
    else:
        line = (f"{shq(exe)} --no-skills --skill {shq(os.path.join(home, '.agents', 'skills'))} --no-context-files "
                f"--no-prompt-templates --append-system-prompt {shq(os.path.join(home, 'AGENTS.md'))} --approve "
                f"--name {shq(instance)}{with_model} {shq('@TASK.md')}")
    return (f"OAS_INSTANCE={shq(instance)} OAS_INSTANCE_HOME={shq(home)} PI_AGENT_INSTANCE={shq(instance)} "
            f"PI_AGENT_HOME={shq(home)} {line}")
