"""Work that grows with the edit, not the registry: counts of parses, not timings."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from agentrc.cli.main import main
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


def test_an_unchanged_toml_merge_scans_the_file_once(monkeypatch):
    """Codex's config.toml holds a table per MCP server: re-merging the same tables leaves
    the file as it is after one scan (it was a delete and a set per table, each a scan of
    the whole file: quadratic in the number of servers)."""
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
    changed = keys[:29] + ((keys[29][0], '{"command": "other"}', False),)
    assert 'command = "other"' in merge.render("toml", current, keys, changed)
