"""fmt: golden cases as data files (tests/cases/fmt/*.in.*), idempotency, data safety."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from helpers import compare_golden

from agentrc.pipeline.fmt import format_text as format_source
from agentrc.portable.fmt import reorder
from agentrc.text.yamlpos import load

CASES = Path(__file__).parent / "cases" / "fmt"


def cases():
    return sorted(p for p in CASES.iterdir() if ".in." in p.name)


@pytest.mark.parametrize("case", cases(), ids=lambda p: p.name.split(".")[0])
def test_fmt_golden(case: Path):
    stem = case.name.split(".in.")[0]
    virtual_path = (CASES / f"{stem}.path").read_text().strip()
    result = format_source(virtual_path, case.read_text())
    assert result.error is None
    compare_golden(CASES / case.name.replace(".in.", ".out."), result.text)
    again = format_source(virtual_path, result.text)
    assert not again.changed, "fmt is not idempotent"


def test_fmt_keeps_comments_with_their_keys():
    out = format_source("a/x/AGENT.md", (CASES / "comments-travel.in.md").read_text()).text
    lines = out.splitlines()
    assert lines[1] == "# Owned by platform-security; review quarterly."
    assert lines[lines.index("description: Use when reviewing code for security issues") - 1] == "# Why this agent exists."
    keys = [ln.split(":")[0] for ln in lines[1:lines.index("---", 1)] if ln and ln[0].isalpha()]
    assert keys == ["schema", "name", "description", "model", "tools", "metadata", "unknown-b", "unknown-a"]


KEYS = st.sampled_from(["schema", "name", "description", "tools", "metadata", "zeta", "alpha", "opencode"])
SCALARS = st.one_of(st.integers(-5, 5), st.booleans(), st.text("abc xyz:#'\"", max_size=8))


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(KEYS, st.one_of(SCALARS, st.lists(SCALARS, max_size=3),
                                       st.dictionaries(st.sampled_from(["a", "b"]), SCALARS, max_size=2)),
                       min_size=1),
       st.lists(st.sampled_from(["# note", ""]), max_size=3))
def test_reorder_never_changes_data(data, comments):
    import yaml

    text = "\n".join(comments) + "\n" + yaml.safe_dump(data, sort_keys=False, default_flow_style=False)
    out = reorder(text, ("schema", "name", "description", "tools", "metadata", "opencode"))
    assert load(out).data == load(text).data
    assert reorder(out, ("schema", "name", "description", "tools", "metadata", "opencode")) == out


def test_fmt_check_accepts_the_spec_shaped_bundle_unchanged():
    """Spec 001 §3.7's example bundle groups its keys with blank lines; it is canonical as written."""
    text = (CASES / "spec-bundle-groups.in.yaml").read_text()
    result = format_source("reg/team-defaults.bundle.yaml", text)
    assert result.error is None and not result.changed and result.text == text


def test_fmt_keeps_blank_line_groups_when_reordering():
    text = ("---\n# Maintained by devex.\n\ndescription: Use when releasing\nname: release\n\n"
            "# Claude only.\n\nclaude:\n  effort: high\n\nmetadata:\n  owner: devex\nschema: 1\n---\n\n## Steps\n")
    out = format_source("reg/release/SKILL.md", text).text
    assert out == ("---\n# Maintained by devex.\n\nschema: 1\nname: release\ndescription: Use when releasing\n\n"
                   "metadata:\n  owner: devex\n\n# Claude only.\n\nclaude:\n  effort: high\n---\n\n## Steps\n")
    assert not format_source("reg/release/SKILL.md", out).changed
    in_order = "schema: 1\nname: x\n# Section.\n\ndescription: d\n\n\nmetadata: {}\n# Last.\n"
    assert reorder(in_order, ("schema", "name", "description", "metadata")) == in_order


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["schema", "name", "description", "zeta", "alpha", "metadata"]),
                          st.lists(st.sampled_from(["", "# c"]), max_size=3)),
                min_size=1, max_size=6, unique_by=lambda t: t[0]))
def test_reorder_keeps_data_and_is_idempotent_with_blank_lines(entries):
    text = "".join("".join(x + "\n" for x in above) + f"{key}: 1\n" for key, above in entries)
    order = ("schema", "name", "description", "metadata")
    out = reorder(text, order)
    assert load(out).data == load(text).data
    assert reorder(out, order) == out
    assert [ln for ln in out.splitlines() if ln.startswith("#")] or "# c" not in text
