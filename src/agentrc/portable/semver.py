"""Semantic versions and the constraints a bundle's `requires` may put on them (spec 001 §3.7).

A version is `MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]` (semver.org). A constraint is one or
more ranges joined by `||`; a range is comparators joined by spaces, all of which must hold:
`1.2.3` or `=1.2.3` (exactly), `>`, `>=`, `<`, `<=`, `^1.2.3` (the same major version, or
for 0.x the same minor), `~1.2.3` (the same minor), `1.x` / `1.2.*` / `*` (any in place
of the wildcard), and `A - B` (inclusive). A pre-release (`1.0.0-rc.1`) sorts before its
release. Pure; `ValueError` for text that is not a version or a constraint.
"""

from __future__ import annotations

import re

from agentrc.patterns import pattern

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import List, Optional, Tuple

_VERSION = pattern(r"v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
                   r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?")
_PARTIAL = pattern(r"v?(\*|x|X|0|[1-9][0-9]*)(?:\.(\*|x|X|0|[1-9][0-9]*))?(?:\.(\*|x|X|0|[1-9][0-9]*))?"
                   r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?")
MAX_CONSTRAINT = 256

if TYPE_CHECKING:
    Key = Tuple[int, int, int, Tuple[Tuple[int, object], ...]]


def parse_version(text: str) -> Key:
    m = _VERSION.fullmatch(text.strip()) if isinstance(text, str) else None
    if m is None:
        raise ValueError(f"{text!r} is not a semantic version (MAJOR.MINOR.PATCH)")
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)), _pre(m.group(4)))


def _pre(text: Optional[str]) -> Tuple[Tuple[int, object], ...]:
    if not text:
        return ((2, ""),)  # a release sorts after every pre-release of it
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in text.split("."))


def satisfies(version: str, constraint: str) -> bool:
    """Whether `version` meets `constraint`; ValueError when either cannot be parsed."""
    v = parse_version(version)
    return any(all(_holds(v, op, bound) for op, bound in rng) for rng in parse_constraint(constraint))


def parse_constraint(text: str) -> List[List[Tuple[str, Key]]]:
    if not isinstance(text, str) or len(text) > MAX_CONSTRAINT:
        raise ValueError("a version constraint is a string of at most 256 characters")
    out = []
    for alternative in text.split("||"):
        alternative = alternative.strip()
        hyphen = re.fullmatch(r"(\S+)\s+-\s+(\S+)", alternative)
        if hyphen:
            out.append(_expand(">=", hyphen.group(1)) + _expand("<=", hyphen.group(2)))
            continue
        if not alternative:
            out.append([])  # empty: any version
            continue
        comparators: List[Tuple[str, Key]] = []
        tokens = re.findall(r"(?:\^|~|>=|<=|>|<|=)?\s*[^\s^~<>=]+", alternative)
        if "".join(t.replace(" ", "") for t in tokens) != alternative.replace(" ", ""):
            raise ValueError(f"{text!r} is not a version constraint")
        for token in tokens:
            token = token.replace(" ", "")
            op = re.match(r"\^|~|>=|<=|>|<|=", token)
            comparators += _expand(op.group(0) if op else "=", token[op.end():] if op else token)
        out.append(comparators)
    return out


def _expand(op: str, text: str) -> List[Tuple[str, Key]]:
    m = _PARTIAL.fullmatch(text)
    if m is None:
        raise ValueError(f"{text!r} is not a version in a constraint")
    wild = [p is None or p in ("*", "x", "X") for p in m.group(1, 2, 3)]
    nums = [0 if w else int(p) for w, p in zip(wild, m.group(1, 2, 3))]
    pre = _pre(m.group(4)) if not any(wild) else _pre(None)
    lo: Key = (nums[0], nums[1], nums[2], pre if m.group(4) else _pre("0"))
    exact: Key = (nums[0], nums[1], nums[2], pre)
    if wild[0]:
        return [] if op in ("=", "^", "~", ">=", "<=") else [("<", (0, 0, 0, _pre("0")))]
    if wild[1] or wild[2]:
        hi = (nums[0] + 1, 0, 0, _pre("0")) if wild[1] else (nums[0], nums[1] + 1, 0, _pre("0"))
        if op in ("=", "^", "~"):
            if op == "^" and not wild[1]:
                hi = (nums[0] + 1, 0, 0, _pre("0")) if nums[0] else (0, nums[1] + 1, 0, _pre("0"))
            return [(">=", lo), ("<", hi)]
        return {">=": [(">=", lo)], ">": [(">=", hi)], "<": [("<", lo)], "<=": [("<", hi)]}[op]
    if op == "^":
        if nums[0]:
            hi = (nums[0] + 1, 0, 0, _pre("0"))
        elif nums[1]:
            hi = (0, nums[1] + 1, 0, _pre("0"))
        else:
            hi = (0, 0, nums[2] + 1, _pre("0"))
        return [(">=", exact), ("<", hi)]
    if op == "~":
        return [(">=", exact), ("<", (nums[0], nums[1] + 1, 0, _pre("0")))]
    return [(op, exact)]


def _holds(v: Key, op: str, bound: Key) -> bool:
    if op == "=":
        return v == bound
    if op == ">":
        return v > bound
    if op == ">=":
        return v >= bound
    if op == "<":
        return v < bound
    return v <= bound
