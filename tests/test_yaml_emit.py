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


WORD = st.one_of(SCALAR, st.sampled_from(["allow", "deny", "ask", "read", "web-fetch", "a_b", "x.y", "./p", "Yes!",
                                          "on", "Off", "nullish", "0", "-1", "1_000", "=", "<<", "a/b"]))


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz-_", min_size=1, max_size=10),
       st.dictionaries(st.one_of(st.text(max_size=6), WORD.filter(lambda w: isinstance(w, str))), WORD,
                       min_size=1, max_size=5))
def test_a_flat_map_of_words_is_written_as_pyyaml_writes_it(key, value):
    """`dump_yaml` writes a flat map of plain words itself (opencode's `permission:`, in
    every agent): byte for byte what PyYAML writes, which any other map still goes through."""
    from agentrc.text import yamlemit

    expected = yaml.dump({key: value}, Dumper=yamlemit._dumper(), sort_keys=False, allow_unicode=True,
                         default_flow_style=False, width=10 ** 6, indent=2)
    assert dump_yaml({key: value}) == expected
