"""`yamlpos._load_simple`, the line reader of common frontmatter: whatever it accepts, it
reads exactly as the composer does (`load_careful`: data, types, every key and value
position, their order); everything else it leaves to the composer."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentrc.text import yamlpos


def _same(text: str, off: int = 3) -> bool:
    """True when the line reader took `text` (and agreed with the composer), False when it
    left it to the composer."""
    fast = yamlpos._load_simple(text, off)
    if fast is None:
        return False
    slow = yamlpos.load_careful(text, off)  # must not raise: the reader accepted it
    assert repr(fast.data) == repr(slow.data)
    assert list(fast.key_pos.items()) == list(slow.key_pos.items())
    assert list(fast.value_pos.items()) == list(slow.value_pos.items())
    assert fast.duplicates == slow.duplicates == []
    return True


COMMON = """schema: 1
name: cli-auditor-00999
description: Use when a change needs a cli auditor to check it, and report findings (C#, a:b)
license: proprietary
mode: subagent
model: sonnet
async: true
timeout: 1.5
order: ~
tools:
  - write
  - web-fetch
args: ["-y", "@example/schema-mcp", 'single', plain, 1, true, ~]
empty: []
requires:
  - name: base
    version: ^1.2
  - name: other
matrix:
  - [x, "y"]
tags:
- indentless
- 'single'
scope:
  paths:
    - "src/**/*.ts"
    - lib/x.py
metadata:
  version: "3.6.9"
  author: release-eng
  when: 2020-01-01
  count: 0x1F
  null-ish: null
  yes-ish: yes
"""


def test_common_frontmatter_is_read_without_the_composer():
    assert _same(COMMON)
    assert _same("name: x")  # no final newline
    assert _same("a:\n  b:\n    c:\n      - 1\n      - -x\n  d: e\n".replace("- -x", "- x"))


@pytest.mark.parametrize("text", [
    "",
    "\n",
    "name: x\n\nother: y\n",  # a blank line
    "# comment\nname: x\n",
    "name: x # comment\n",
    "name: x \n",  # a trailing space
    "name:\tx\n",
    "name: caf\u00e9\n",
    "name: x\r\n",
    "name: |\n  block\n",
    "name: >-\n  folded\n",
    "name: {a: b}\n",
    "name: [a, [b]]\n",  # flow sequences: nested, multi-word, trailing comma, indicators, escapes
    "name: [a b]\n",
    "name: [a,]\n",
    "name: [-a]\n",
    "name: [@a]\n",
    "name: [a]]\n",
    "name: [a] # c\n",
    "name: [a:b]\n",
    "name: [{a: b}]\n",
    'name: ["a\\"b"]\n',
    "name: [a,\n  b]\n",
    "- [a, b]\n",
    "name: &a x\nother: *a\n",
    "name: !!str 1\n",
    "name: 'it''s'\n",
    'name: "esc\\"aped"\n',
    "name: \"a\" b\n",
    "name: a: b\n",
    "name: a:\n",
    "name: -1\n",
    "name: @x\n",
    "name: `x`\n",
    "name: %x\n",
    "name:\n",
    "name:\nother: y\n",
    "name: x\nname: y\n",
    "a:\n  b: 1\n  b: 2\n",
    "name: multi\n  line\n",
    "name: multi\n  line: x\n",
    "list:\n  - a\n    more\n",
    "list:\n  - a\n  b: c\n",
    "list:\n  - key: v\n   other: w\n",  # mappings in sequences: a key out of line, nested, two colons
    "list:\n  - key: v\n     other: w\n",
    "list:\n  - key: v\n  - - x\n",
    "list:\n  - a: b: c\n",
    "list:\n  - a: x\n    a: y\n",
    "list:\n  - a:\n",
    "list:\n  - - nested\n",
    "list:\n  -\n",
    "a:\n    b: 1\n  c: 2\n",
    "  indented: x\n",
    "- top\n- level\n",
    "plain scalar\n",
    "---\nname: x\n",
    "<<: x\n",
    '"quoted key": x\n',
    "1: x\n",
    "a:\n" + "".join(" " * (2 * i) + f"k{i}:\n" for i in range(1, 12)) + " " * 24 + "v: 1\n",
])
def test_other_forms_go_to_the_composer(text):
    """Each of these is something the line reader does not read (the composer reads it, or
    reports it): it returns None, and `load` gives the composer's answer."""
    assert yamlpos._load_simple(text, 0) is None
    try:
        expected = yamlpos.load_careful(text, 0)
    except yamlpos.YamlError as exc:
        with pytest.raises(yamlpos.YamlError) as got:
            yamlpos.load(text, 0)
        assert (got.value.message, got.value.pos, got.value.code) == (exc.message, exc.pos, exc.code)
    else:
        got_loc = yamlpos.load(text, 0)
        assert repr(got_loc.data) == repr(expected.data) and got_loc.key_pos == expected.key_pos


KEY = st.sampled_from(["name", "description", "tools", "a", "b-c", "yes", "null", "On", "x_1", "T", "n"])
SCALAR = st.one_of(
    st.sampled_from(["x", "1", "-1", "1.5", "1e3", ".inf", "~", "null", "true", "No", "0x1F", "0o17", "1_000",
                     "1:30", "2020-01-01", "2020-01-01 10:00:00", "=", "<<", "a:b", "C#", "a #b", "a: b", "...",
                     "-", "?x", "'q'", "'it''s'", '"d"', '"a\\"b"', '"a # b"', "'a: b'", "x y", "x:", "Yes"]),
    st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), min_size=1, max_size=8))


# The inside of a one-line flow sequence: items the line reader takes, and some it leaves.
FLOW = st.tuples(
    st.lists(st.one_of(SCALAR, st.sampled_from(["a b", "[x]", "{a: b}", "x,", " x ", "a:b", '"x, y"', "'[z]'"])),
             max_size=3),
    st.sampled_from([", ", ",", " , ", " ,"])).map(lambda t: t[1].join(t[0]))


@st.composite
def documents(draw, depth: int = 0, indent: int = 0) -> str:
    """Frontmatter-like documents, mostly of the shape the line reader takes, some not."""
    out = []
    for key in draw(st.lists(KEY, min_size=1, max_size=4)):
        pad = " " * indent
        form = draw(st.integers(0, 5 if depth < 3 else 1))
        if form <= 1:
            out.append(f"{pad}{key}: {draw(SCALAR)}")
        elif form == 2:
            out.append(f"{pad}{key}:" if draw(st.booleans()) else f"{pad}{key}: [{draw(FLOW)}]")
        elif form in (3, 4):
            at = indent + draw(st.sampled_from([0, 2, 4])) if form == 3 else indent
            out.append(f"{pad}{key}:")
            for v in draw(st.lists(SCALAR, min_size=1, max_size=3)):
                if draw(st.integers(0, 3)) == 0:  # a mapping in the sequence, its keys after the '-'
                    gap = draw(st.sampled_from([" ", "  "]))
                    inner = " " * (at + 1 + len(gap) + draw(st.sampled_from([0, 0, 0, 1])))
                    keys = draw(st.lists(KEY, min_size=1, max_size=3))
                    out.append(f"{' ' * at}-{gap}{keys[0]}: {v}")
                    out.extend(f"{inner}{k}: {draw(SCALAR)}" for k in keys[1:])
                else:
                    out.append(f"{' ' * at}- {v}")
        else:
            out.append(f"{pad}{key}:")
            out.append(draw(documents(depth + 1, indent + draw(st.sampled_from([1, 2, 4])))))
    return "\n".join(out)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), st.integers(0, 5))
def test_generated_documents_read_alike(text, off):
    _same(text + "\n", off)
    _same(text, off)


def test_mutated_frontmatter_reads_alike():
    """Random edits of the common frontmatter (characters YAML gives a meaning to, deleted
    characters, repeated lines): whatever the line reader still takes, it reads alike."""
    rng = random.Random(13)
    alphabet = list(" :-#'\"[]{}&*!|>%@\t\n,?=`~\\") + ["\n  ", "\n- ", ": ", " #", "\n  - ", "- ", "yes", "1",
                                                        "~", "''", "...", "  "]
    taken = 0
    for _ in range(3000):
        t = COMMON
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(t) + 1)
            r = rng.random()
            if r < 0.6:
                t = t[:i] + rng.choice(alphabet) + t[i:]
            elif r < 0.8:
                t = t[:i] + t[i + rng.randint(1, 4):]
            else:
                lines = t.split("\n")
                lines.insert(rng.randrange(len(lines) + 1), rng.choice(lines))
                t = "\n".join(lines)
        taken += _same(t)
    assert taken > 300  # the comparison is not vacuous


def test_the_first_characters_of_implicit_types_are_the_loaders():
    """`_RESOLVER_FIRST` stands for the loader's table, so that scalars starting with
    anything else are read without importing PyYAML: the two must agree (a scalar starting
    with an indicator, `-`, `!`, `&`, `*`, never gets that far: it goes to the composer)."""
    indicators = yamlpos._INDICATORS
    assert yamlpos._RESOLVER_FIRST - indicators == set(yamlpos._resolvers()) - {""} - indicators


def test_common_frontmatter_is_read_without_importing_pyyaml():
    import subprocess
    import sys

    from helpers import ROOT

    code = ("import sys; from agentrc.text import yamlpos; "
            "loc = yamlpos.load('schema: 1\\nname: android-checklist\\ndescription: Use when \"x\"\\n"
            "metadata:\\n  version: \"3.9.4\"\\n  count: 12\\n', 1); "
            "print(loc.data, 'yaml.reader' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"})
    assert done.stdout.split("} ")[-1].strip() == "False", done.stdout
    assert "'count': 12" in done.stdout and "'schema': 1" in done.stdout
    assert "'description': 'Use when \"x\"'" in done.stdout
    # A bool word is known without it; a scalar that may be a float asks the loader.
    for value, read, imported in (("true", "True", "False"), (".5", "0.5", "True")):
        done = subprocess.run([sys.executable, "-c", code.replace("android-checklist", value)], capture_output=True,
                              text=True, check=True, env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"})
        assert done.stdout.split("} ")[-1].strip() == imported and f"'name': {read}" in done.stdout, done.stdout


_NEAR_MISSES = ["y", "Y", "n", "N", "t", "T", "f", "F", "o", "O", "yES", "nO", "tRUE", "oN", "nULL", "Nope",
                "yes please", "onward", "offset", "nullable", "Truely", "FALSEHOOD", "no-op", "on_call", "null_x",
                "None", "none", "Off-by-one", "true.", "yes!", "NULLs"]


@pytest.mark.parametrize("word", sorted(yamlpos.IMPLICIT_WORDS) + _NEAR_MISSES)
def test_a_word_starting_with_a_letter_reads_as_the_loader_reads_it(word):
    """`IMPLICIT_WORDS` (read without PyYAML) against the composer: the bool and null words
    with their values, and every other letter-first scalar a string."""
    slow = yamlpos.load_careful(f"k: {word}\n", 0).data["k"]
    assert type(slow) is type(yamlpos.IMPLICIT_WORDS.get(word, word)) and slow == yamlpos.IMPLICIT_WORDS.get(word, word)
    assert _same(f"name: x\nk: {word}\nlist:\n  - {word}\n")
    from agentrc.text import yamlemit

    assert yamlemit._plain(word) == (word not in yamlpos.IMPLICIT_WORDS)
    assert yamlemit._plain(word) == (yamlemit._resolver().resolve(
        yamlemit.yaml.ScalarNode, word, (True, False)) == "tag:yaml.org,2002:str")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="./-+0123456789eE_:aTtZ~<=nNfFiI", max_size=6), st.text(alphabet="./0123456789eE_:", max_size=6))
def test_a_scalar_holding_a_slash_is_a_string_for_the_loader_too(head, tail):
    """No implicit type of YAML 1.1 takes a '/', which is why `_simple_scalar` and
    `yamlemit._plain` answer "a string" for a plain scalar holding one without asking the
    resolver (a path such as `./schemas` reads and writes without PyYAML)."""
    from agentrc.text import yamlemit

    text = f"{head}/{tail}"
    assert yamlemit._resolver().resolve(yamlemit.yaml.ScalarNode, text, (True, False)) == "tag:yaml.org,2002:str"
    assert yamlemit._plain(text) == bool(yamlemit._PLAIN_RE.match(text) and not text.endswith(":")
                                         and ": " not in text)
    if yamlpos._load_simple(f"k: {text}\n", 0) is not None:
        assert _same(f"k: {text}\n")
