"""Positions-aware YAML loading: what it keeps and how often it asks PyYAML's resolver."""

from __future__ import annotations

import yaml

from agentrc.text import yamlpos


def test_loading_keeps_no_node_after_it_returns():
    """Booleans, ints, floats and nulls are built by PyYAML's constructor, which memoises every
    node it builds; one constructor serves the process, so in pantsd it held each such node
    of every document ever loaded."""
    for i in range(50):
        located = yamlpos.load(f"a: {i}\nb: true\nc: [1, 2.5, ~]\nd: text")
        assert located.data == {"a": i, "b": True, "c": [1, 2.5, None], "d": "text"}
    assert len(yamlpos._scalar_constructor().constructed_objects) == 0


def test_strings_no_implicit_form_can_claim_are_tagged_without_the_pattern_walk(monkeypatch):
    """The composer asks for every node's tag; quoted scalars and plain ones whose first
    character starts no bool/int/float/null/timestamp form get the string tag at once."""
    base = (getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader)
    asked = []
    real = base.resolve
    monkeypatch.setattr(base, "resolve", lambda self, *a: asked.append(a[1]) or real(self, *a))
    yamlpos._loader.cache_clear()
    try:
        doc = "description: 'quoted'\nscope: [\"src/**\", lib/x]\nname: abc\nmode: 1\nextra: yes\n"
        data = yamlpos.load_careful(doc).data  # the composer: `load` reads this one without it
    finally:
        yamlpos._loader.cache_clear()
    assert data == {"description": "quoted", "scope": ["src/**", "lib/x"], "name": "abc", "mode": 1, "extra": True}
    # The pattern walk runs for the collections and for the plain scalars that start like a
    # bool/null/int ('n'ame, 'm'ode's value 1, 'y'es, 'e'xtra has no form: not asked).
    assert sorted(v for v in asked if v is not None) == ["1", "name", "yes"]


def test_errors_keep_their_messages_and_positions():
    """The same messages and positions as before the loader was specialised (recorded)."""
    for doc, message, pos in (("a: [1, 2", "did not find expected ',' or ']' (while parsing a flow sequence)", (4, 1)),
                              ("a: &x [*x]\n", "recursive alias", (3, 4)),
                              ("<<: {a: 1}", "merge keys ('<<') are not supported", (3, 1))):
        try:
            yamlpos.load(doc, 2)
        except yamlpos.YamlError as exc:
            assert (exc.message, exc.pos) == (message, pos)
        else:
            raise AssertionError(doc)
