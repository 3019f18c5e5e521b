"""The frontmatter emitter writes YAML that reads back as exactly the data given."""

from __future__ import annotations

import yaml
from hypothesis import given, settings, strategies as st

from agentrc.text.yamlemit import dump_yaml

SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                   st.text(), st.sampled_from(["yes", "No", "null", "~", "1.0", "0x1f", "a: b", "a #b", "- x",
                                               "*alias", "&anchor", "!tag", "'q'", '"q"', "@at", "`tick`",
                                               "%pct", "trailing ", "colon:", "?q", "|pipe", ">fold", "{a}",
                                               "[a]", "src/**/*.ts", "Claude Sonnet 5.5", "2024-01-01", "."]))
VALUE = st.one_of(SCALAR, st.lists(SCALAR, max_size=4),
                  st.dictionaries(st.text(max_size=5), SCALAR, max_size=3))


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=12), VALUE, max_size=6))
def test_dump_yaml_round_trips(data):
    text = dump_yaml(data)
    assert (yaml.safe_load(text) or {}) == data
