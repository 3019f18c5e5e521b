"""Work that grows with the edit, not the registry: counts of parses, not timings."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from agentrc.cli.main import main
from agentrc.inputs import tree as treeread
from agentrc.output import writer
from agentrc.text import jsonedit


def _registry(root: Path, rules: int) -> Path:
    for i in range(rules):
        d = root / "reg" / "rules" / f"rule-{i:04d}"
        d.mkdir(parents=True)
        (d / "RULE.md").write_text(f"---\ndescription: Rule {i}.\nscope:\n  paths: [\"src/m{i}/**\"]\n---\n\n"
                                   f"Guidance {i}.\n")
    return root / "reg"


def test_one_edit_parses_the_merged_opencode_json_a_constant_number_of_times(tmp_path, monkeypatch):
    """opencode.json's `instructions` lists every rule; an edit of one rule's body leaves the
    list as it was, so merging it must not re-parse the file twice per rule (it did: 2n
    parses of an n-entry file, quadratic)."""
    reg = _registry(tmp_path, 120)
    out = tmp_path / "out"
    argv = ["build", str(reg), "--client", "opencode", "--out", str(out)]
    with contextlib.redirect_stderr(io.StringIO()):
        assert main(argv) == 0
    config = out / "opencode.json"
    config.write_text(config.read_text().replace("{\n", '{\n  "theme": "dark",\n', 1))  # the user's own key
    rule = reg / "rules" / "rule-0007" / "RULE.md"
    rule.write_text(rule.read_text().replace("Guidance 7.", "Guidance 7, edited."))
    calls = []
    real = jsonedit._parse
    monkeypatch.setattr(jsonedit, "_parse", lambda text: calls.append(len(text)) or real(text))
    with contextlib.redirect_stderr(io.StringIO()):
        assert main(argv) == 0
    assert "Guidance 7, edited." in (out / ".agents" / "rules" / "rule-0007" / "RULE.md").read_text()
    assert len(calls) <= 6, f"{len(calls)} parses of opencode.json for a one-rule edit"
    assert '"theme": "dark"' in (out / "opencode.json").read_text()


def _count_parses(monkeypatch):
    calls = []
    real = jsonedit._parse
    monkeypatch.setattr(jsonedit, "_parse", lambda text: calls.append(len(text)) or real(text))
    return calls


def _build_quietly(argv) -> int:
    with contextlib.redirect_stderr(io.StringIO()):
        return main(argv)


def _add_and_remove_parses(tmp_path, monkeypatch, rules: int):
    """Parses of opencode.json (which holds a user's key) when 10 path-scoped rules are added
    to `rules`, and when they are removed again."""
    reg = _registry(tmp_path, rules + 10)
    hold = tmp_path / "held"
    hold.mkdir()
    for i in range(rules, rules + 10):  # the 10 added later: set aside for the first build
        (reg / "rules" / f"rule-{i:04d}").rename(hold / f"rule-{i:04d}")
    out = tmp_path / "out"
    argv = ["build", str(reg), "--client", "opencode", "--out", str(out)]
    assert _build_quietly(argv) == 0
    config = out / "opencode.json"
    config.write_text(config.read_text().replace("{\n", '{\n  "theme": "dark",\n', 1))  # the user's own key
    counts = []
    for step in ("add", "remove"):
        for i in range(rules, rules + 10):
            src, dst = hold / f"rule-{i:04d}", reg / "rules" / f"rule-{i:04d}"
            (src.rename(dst) if step == "add" else dst.rename(src))
        calls = _count_parses(monkeypatch)
        assert _build_quietly(argv) == 0
        monkeypatch.undo()
        counts.append(len(calls))
        listed = jsonedit.loads(config.read_text())["instructions"]
        assert len(listed) == (rules + 10 if step == "add" else rules)
        assert '"theme": "dark"' in config.read_text()
    return counts


def test_adding_and_removing_rules_parses_opencode_json_a_constant_number_of_times(tmp_path, monkeypatch):
    """Adding or removing path-scoped rules takes out agentrc's n entries of `instructions`
    and puts in the new list: one parse for the run of removals and one for the additions
    (it was two parses per entry, quadratic in the number of rules). The count does not
    grow with the registry."""
    small = _add_and_remove_parses(tmp_path / "small", monkeypatch, 20)
    large = _add_and_remove_parses(tmp_path / "large", monkeypatch, 160)
    assert large == small, f"parses for add/remove: {small} at 30 rules, {large} at 170"
    assert max(large) <= 16, large


def _edit_counts(tmp_path, monkeypatch, rules: int, module, names):
    """Calls of module.<name> for each of `names` in a one-rule edit of `rules` path-scoped
    rules built for opencode (opencode.json holding a user's key too)."""
    reg = _registry(tmp_path, rules)
    out = tmp_path / "out"
    argv = ["build", str(reg), "--client", "opencode", "--out", str(out)]
    assert _build_quietly(argv) == 0
    config = out / "opencode.json"
    config.write_text(config.read_text().replace("{\n", '{\n  "theme": "dark",\n', 1))
    rule = reg / "rules" / "rule-0003" / "RULE.md"
    rule.write_text(rule.read_text().replace("Guidance 3.", "Guidance 3, edited."))
    calls = {name: 0 for name in names}
    for name in names:
        real = getattr(module, name)

        def counted(*args, _name=name, _real=real, **kwargs):
            calls[_name] += 1
            return _real(*args, **kwargs)
        monkeypatch.setattr(module, name, counted)
    assert _build_quietly(argv) == 0
    monkeypatch.undo()
    return sum(calls.values())


def test_merging_compares_entries_a_linear_number_of_times(tmp_path, monkeypatch):
    """Whether opencode.json still holds agentrc's n `instructions` (and which the user
    removed) is a count per entry, not a scan of the list per entry (n^2 comparisons)."""
    from agentrc.output import merge
    small = _edit_counts(tmp_path / "small", monkeypatch, 40, merge, ("same", "_canon"))
    large = _edit_counts(tmp_path / "large", monkeypatch, 160, merge, ("same", "_canon"))
    assert large <= 4 * small + 20, f"comparisons: {small} at 40 rules, {large} at 160"


def test_a_build_runs_no_full_garbage_collection(tmp_path):
    """Full collections walk every object a build holds (its items, renderings and plan), and
    they came more often as the registry grew: at 4,000 items they were a third of a
    one-edit build. The build switches the cyclic collector off, and back on after it."""
    import gc

    reg = _registry(tmp_path, 200)
    full = []

    def seen(phase, info):
        if phase == "stop" and info["generation"] == 2:
            full.append(1)

    thresholds = gc.get_threshold()
    gc.callbacks.append(seen)
    gc.set_threshold(100, 2, 2)  # collections far more often than by default: a small build would see some
    try:
        gc.collect()
        full.clear()
        assert _build_quietly(["build", str(reg), "--client", "opencode,claude", "--out", str(tmp_path / "out"),
                               "--jobs", "1"]) == 0
    finally:
        gc.callbacks.remove(seen)
        gc.set_threshold(*thresholds)
    assert full == [] and gc.isenabled()


def test_a_toml_merge_scans_the_file_as_often_as_tables_changed(monkeypatch):
    """Codex's config.toml holds a table per MCP server: re-merging the same tables leaves
    the file as it is after one scan, and one changed table costs a constant number of
    scans (it was a delete and a set per table, each a scan of the whole file: quadratic in
    the number of servers)."""
    from agentrc.output import merge
    from agentrc.text import tomledit

    keys = tuple((("mcp_servers", f"s{i:02d}"), f'{{"command": "s{i}", "args": ["-v"], "env": {{"K": "{i}"}}}}',
                  False) for i in range(30))
    current = merge.render("toml", '# mine\nmodel = "gpt-5"\n', (), keys)
    scans = []
    real = tomledit._Scanner
    monkeypatch.setattr(tomledit, "_Scanner", lambda text: scans.append(1) or real(text))
    assert merge.render("toml", current, keys, keys) == current
    assert len(scans) == 1
    scans.clear()
    changed = keys[:10] + ((keys[10][0], '{"command": "other"}', False),) + keys[11:]
    out = merge.render("toml", current, keys, changed)
    assert len(scans) <= 3, f"{len(scans)} scans for one table of 30 changed"  # read, take out, put in
    servers = tomledit.loads(out)["mcp_servers"]
    assert len(servers) == 30 and servers["s10"] == {"command": "other"}


EVENTS = ("PreToolUse", "PostToolUse", "Stop", "SessionStart")


def _mixed_registry(root: Path, n: int) -> Path:
    """n each of path-scoped rules, skills, agents, commands, hooks and context sections, and
    a bundle of n / 4 MCP servers: every kind of output that is merged or assembled."""
    reg = root / "reg"
    for i in range(n):
        for kind, entry, extra in (
                ("rules", "RULE", f"scope:\n  paths: [\"src/m{i}/**\"]\n"), ("skills", "SKILL", ""),
                ("agents", "AGENT", "tools: [read, grep]\n"), ("commands", "COMMAND", ""),
                ("hooks", "HOOK", f"event: {EVENTS[i % 4]}\nscript: ./run.sh\ntimeout: 10\n"),
                ("context", "CONTEXT", f"order: {i}\n")):
            d = reg / kind / f"{kind[:-1]}-{i:04d}"
            d.mkdir(parents=True)
            body = f"## {kind} {i}\n\nText {i}.\n" if kind == "context" else f"Text {i}.\n"
            (d / f"{entry}.md").write_text(f"---\nschema: 1\ndescription: {kind} {i}\n{extra}---\n\n{body}")
            if kind == "hooks":
                (d / "run.sh").write_text("#!/bin/sh\nexit 0\n")
                (d / "run.sh").chmod(0o755)
    servers = "".join(f"  srv-{i:03d}:\n    local:\n      command: npx\n      args: [\"srv-{i}\"]\n"
                      for i in range(n // 4))
    (reg / "bundles").mkdir()
    (reg / "bundles" / "servers.bundle.yaml").write_text(
        "schema: 1\nname: servers\ndescription: The MCP servers\nitems:\n  rules: [rule-0000]\nmcps:\n" + servers)
    return reg


def _calls_per_function(tmp_path, monkeypatch, n: int):
    """Per scenario (cold, one edit, one hook added, removed again, one MCP server added), how
    many times each function of agentrc ran, for a registry of `_mixed_registry(n)` built
    into an output holding a user's own opencode.json and .claude/settings.json."""
    import cProfile
    import pstats

    monkeypatch.setenv("AGENTRC_CACHE_DIR", str(tmp_path / "cache"))
    # Sources are trusted by their status from the first build on, at both sizes alike (by
    # default a file is read again until it is 3 s older than the build that recorded it,
    # which a slow run reaches at one size and not the other).
    monkeypatch.setattr(treeread, "RACY_NS", 0)
    reg = _mixed_registry(tmp_path, n)
    out = tmp_path / "out"
    (out / ".claude").mkdir(parents=True)
    (out / "opencode.json").write_text('{\n  "theme": "dark"\n}\n')
    (out / ".claude" / "settings.json").write_text('{\n  "model": "opus"\n}\n')
    from agentrc.clients import registry as client_registry

    argv = ["build", str(reg), "--client", ",".join(client_registry.CLIENTS), "--out", str(out), "--jobs", "1"]
    added = reg / "hooks" / "zz-added"
    counts = {}
    for step in ("cold", "edit", "add", "remove", "server"):
        if step == "edit":
            rule = reg / "rules" / "rule-0001" / "RULE.md"
            rule.write_text(rule.read_text() + "More.\n")
        elif step == "add":
            added.mkdir()
            (added / "HOOK.md").write_text("---\nschema: 1\ndescription: Added\nevent: Stop\nscript: ./run.sh\n"
                                           "---\n\nAdded.\n")
            (added / "run.sh").write_text("#!/bin/sh\n")
            (added / "run.sh").chmod(0o755)
        elif step == "remove":
            for f in added.iterdir():
                f.unlink()
            added.rmdir()
        elif step == "server":
            bundle = reg / "bundles" / "servers.bundle.yaml"
            bundle.write_text(bundle.read_text() + "  srv-added:\n    local:\n      command: added\n")
        prof = cProfile.Profile()
        prof.enable()
        code = _build_quietly(argv)
        prof.disable()
        assert code == 0
        stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
        # file:line:name: a module's generator expressions (and lambdas) share a name, and
        # keyed without their line the count of one would stand for all of them, a different
        # one at each size as the profiler's table orders them.
        counts[step] = {f"{k[0].rsplit('/src/', 1)[-1]}:{k[1]}:{k[2]}": v[1] for k, v in stats.items()
                        if "/agentrc/" in k[0]}
    return counts


def test_no_function_runs_more_than_linearly_often_in_the_registry_size(tmp_path, monkeypatch):
    """What bench/scaling.py looks for, as a test: from 12 to 48 of every kind of item
    (path-scoped rules, skills, agents, commands, hooks on four events, context sections, MCP
    servers), built for every client into users' own config files, no function of agentrc
    runs more than 6 times as often in a cold build, a one-rule edit, an added hook, a
    removed one or an added MCP server. A
    quadratic step (two parses of opencode.json per rule, a scan of a list per entry) runs
    16 times as often."""
    # The writer's descriptor cache (at most a quarter of the open-file limit) starts closing
    # and reopening directories once the tree outgrows it: a constant factor per pass over
    # the directories, guarded by test_writer_descriptors.py; unbounded here, so that what
    # this test sees is the algorithm, not this machine's limit.
    monkeypatch.setattr(writer, "_open_dirs_allowed", lambda: 10 ** 6)
    # The memo saved here at both sizes, whatever the machine's load: saved in a forked child
    # (`cache.save_aside` with a CPU spare) its pickling is out of this process's profile, and
    # one size saved aside against the other here read as growth.
    from agentrc.memo import cpus
    monkeypatch.setattr(cpus, "spare", lambda n: False)
    small = _calls_per_function(tmp_path / "small", monkeypatch, 12)
    large = _calls_per_function(tmp_path / "large", monkeypatch, 48)
    grew = {step: {f: (small[step].get(f, 0), n) for f, n in large[step].items()
                   if n >= 60 and n > 6 * max(small[step].get(f, 0), 1)} for step in large}
    assert grew == {"cold": {}, "edit": {}, "add": {}, "remove": {}, "server": {}}, grew


def test_a_merged_file_is_checked_for_emptiness_only_when_agentrc_leaves_it(tmp_path, monkeypatch):
    """Whether a merged file is left empty (to delete it, or give the user's blank file back)
    matters only for a file this build puts no key in: one holding agentrc's keys is never
    empty, and the check parses the whole file (opencode.json's 4,000 instructions at
    10,000 items)."""
    from agentrc.output import merge as managed

    asked = []
    real = managed.is_empty
    monkeypatch.setattr(managed, "is_empty", lambda fmt, text: asked.append(fmt) or real(fmt, text))
    reg = _registry(tmp_path, 3)
    out = tmp_path / "out"
    argv = ["build", str(reg), "--client", "claude,copilot,opencode", "--out", str(out)]
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        assert main(argv) == 0
    assert (out / "opencode.json").exists() and asked == []  # every merged file holds agentrc's keys
    for rule in (reg / "rules").iterdir():  # no rule left: opencode.json loses every key of agentrc's
        (rule / "RULE.md").unlink()
        rule.rmdir()
    (reg / "agents" / "helper").mkdir(parents=True)
    (reg / "agents" / "helper" / "AGENT.md").write_text("---\ndescription: Helps with things.\n---\n\nHelp.\n")
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        assert main(argv) == 0
    assert "json" in asked and not (out / "opencode.json").exists()  # checked, found empty, deleted
