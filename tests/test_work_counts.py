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
