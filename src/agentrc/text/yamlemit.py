"""YAML frontmatter emission: the block style a person would write, read back unchanged.

Enters: a mapping (frozen or plain). Leaves: YAML text. Every generated frontmatter goes
through `dump_yaml`; tests round-trip each output through PyYAML.
"""

from __future__ import annotations

import json
from functools import lru_cache

from agentrc.frozen import thaw
from agentrc.patterns import pattern
from agentrc.text.lazy import lazy_module
from agentrc.text.yamlpos import IMPLICIT_WORDS

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Tuple

    import yaml
else:  # imported on first use: a build with nothing to do writes no YAML (docs/architecture.md)
    yaml = lazy_module("yaml")


@lru_cache(maxsize=None)
def _dumper() -> Any:
    return getattr(yaml, "CSafeDumper", None) or yaml.SafeDumper


@lru_cache(maxsize=None)
def _resolver() -> Any:
    return yaml.resolver.Resolver()


def dump_yaml(data: Mapping[str, Any]) -> str:
    """Frontmatter YAML. Strings, numbers, booleans and lists of them (nearly every field)
    are written directly; anything else (nested passthrough maps) goes through PyYAML.
    Both produce the block style a person would write; tests round-trip every output."""
    out = []
    for key, value in data.items():
        if type(value) is not str:  # a string (most values) is its own thawed form
            value = thaw(value)
        if _simple(value):
            out.append(f"{_key(key)}: {_scalar(value)}\n")
        elif isinstance(value, list) and value and all(_simple(v) for v in value):
            out.append(f"{_key(key)}:\n" + "".join(f"  - {_scalar(v)}\n" for v in value))
        elif type(value) is dict and value and _bare(key) and all(type(k) is str and _bare(k) and _bare(v)
                                                                  for k, v in value.items()):
            # A flat map of words (opencode's `permission:` of every agent): what PyYAML
            # writes for it, without importing PyYAML (held equal to it by tests).
            out.append(f"{_key(key)}:\n" + "".join(f"  {k}: {_scalar(v)}\n" for k, v in value.items()))
        else:
            out.append(_dump(key, value))
    return "".join(out)


# What PyYAML wrote for each (key, `_shape` of the value) lately: the same nested values come
# back item after item (opencode's `permission:` map of every agent: 1,000 dumps of a few
# distinct maps at 5,000 items, 50 us each). Emptied when it grows past `_MOST_DUMPED`.
_DUMPED: Dict[Tuple[str, Any], str] = {}
_MOST_DUMPED = 1024


def _dump(key: str, value: Any) -> str:
    shape = _shape(value)
    if shape is not None:
        known = _DUMPED.get((key, shape))
        if known is not None:
            return known
    text: str = yaml.dump({key: value}, Dumper=_dumper(), sort_keys=False, allow_unicode=True,
                          default_flow_style=False, width=10 ** 6, indent=2)
    if shape is not None:
        if len(_DUMPED) >= _MOST_DUMPED:
            _DUMPED.clear()
        _DUMPED[(key, shape)] = text
    return text


def _shape(value: Any) -> Any:
    """A hashable stand-in for `value` that is equal only for values PyYAML writes alike:
    each scalar with its exact type (a float by its repr: 0.0 and -0.0 are equal floats),
    maps and lists in their order; None for anything else (not memoised)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return (kind, value)
    if kind is float:
        return (kind, repr(value))
    if kind is dict:
        items = []
        for k, v in value.items():
            ks, vs = _shape(k), _shape(v)
            if ks is None or vs is None:
                return None
            items.append((ks, vs))
        return (kind, tuple(items))
    if kind is list:
        shapes = tuple(_shape(v) for v in value)
        return None if None in shapes else (kind, shapes)
    return None


_PLAIN_RE = pattern(r"^[A-Za-z_/.(][^\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]*\Z")


def _simple(value: Any) -> bool:
    # Floats go through PyYAML: YAML 1.1 reads '1e-05' (no dot) as a string.
    return value is None or isinstance(value, (str, bool, int))


def _bare(value: Any) -> bool:
    """A value PyYAML writes as `_scalar` does: null, a bool, an int, or an ASCII string
    written unquoted (`_plain`; PyYAML quotes some characters beyond ASCII)."""
    return value is None or type(value) in (bool, int) or (type(value) is str and value.isascii() and _plain(value))


def _plain(text: str) -> bool:
    """Whether `text` can be written unquoted and still read back as this very string. Only
    a text starting with `.` and holding no `/` needs PyYAML's resolver (a float's forms);
    one starting with a letter is a string unless it is a bool or null word
    (`yamlpos.IMPLICIT_WORDS`), with anything else `_PLAIN_RE` admits it is one: a replayed
    edit imports no PyYAML for it."""
    if not (_PLAIN_RE.match(text) and ": " not in text and " #" not in text and not text.endswith((" ", ":"))):
        return False
    if text[0] != ".":
        return text not in IMPLICIT_WORDS
    if "/" in text:
        return True  # no implicit type takes a '/' (`yamlpos._simple_scalar`): `./schemas` is a string
    return bool(_resolver().resolve(yaml.ScalarNode, text, (True, False)) == "tag:yaml.org,2002:str")


@lru_cache(maxsize=1024)
def _key(key: str) -> str:
    """Memoised: a build writes the same few keys (name, description, ...) thousands of times."""
    return key if _plain(key) else _quote(key)


# Strings written lately, as `_scalar` writes them: the clients of a build render an item one
# after the other (output.plan), each writing its name and description. Emptied when it grows
# past `_MOST_SCALARS`.
_SCALARS: Dict[str, str] = {}
_MOST_SCALARS = 4096


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    known = _SCALARS.get(value)
    if known is None:
        if len(_SCALARS) >= _MOST_SCALARS:
            _SCALARS.clear()
        known = _SCALARS[value] = value if _plain(value) else _quote(value)
    return known


# Characters YAML may not hold raw, or would read as line breaks inside a quoted scalar.
_ESCAPE_RE = pattern("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")


def _quote(text: str) -> str:
    """A YAML double-quoted scalar: JSON string syntax (a subset of it), with the characters
    YAML cannot carry raw escaped as \\uXXXX."""
    return _ESCAPE_RE.sub(lambda m: "\\u%04x" % ord(m.group(0)), json.dumps(text, ensure_ascii=False))
