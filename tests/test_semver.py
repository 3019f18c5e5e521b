"""Version constraints of bundle requires (agentrc.portable.semver)."""

from __future__ import annotations

import pytest

from agentrc.portable.semver import parse_version, satisfies


@pytest.mark.parametrize("version,constraint,ok", [
    ("1.2.3", "^1.0.0", True), ("2.0.0", "^1.0.0", False), ("2.0.0-rc.1", "^1.0.0", False),
    ("0.2.5", "^0.2.1", True), ("0.3.0", "^0.2.1", False), ("0.0.3", "^0.0.3", True), ("0.0.4", "^0.0.3", False),
    ("1.9.9", "~1.9.0", True), ("1.10.0", "~1.9.0", False),
    ("1.5.0", ">=1.0.0 <2.0.0", True), ("2.0.0", ">=1.0.0 <2.0.0", False), ("1.2.0", ">= 1.2.0", True),
    ("1.2.3", "1.2.3", True), ("1.2.4", "=1.2.3", False), ("v1.2.3", "1.2.3", True),
    ("1.4.0", "1.x", True), ("2.0.0", "1.x", False), ("1.2.7", "1.2.*", True), ("3.0.0", "*", True), ("3.0.0", "", True),
    ("1.0.0", "<1.0.0 || >=3.0.0", False), ("3.1.0", "<1.0.0 || >=3.0.0", True),
    ("1.5.0", "1.0.0 - 1.5.0", True), ("1.5.1", "1.0.0 - 1.5.0", False),
    ("1.0.0-rc.1", "<1.0.0", True), ("1.0.0-rc.2", ">1.0.0-rc.1", True), ("1.0.0-rc.10", ">1.0.0-rc.9", True),
    ("1.2.0", "^1.2", True), ("1.1.0", "^1.2", False), ("1.2.0", ">1.2", False), ("1.3.0", ">1.2", True),
    ("1.2.9", "<=1.2", True), ("1.3.0", "<=1.2", False), ("1.0.0+build.5", "1.0.0", True),
])
def test_constraints(version, constraint, ok):
    assert satisfies(version, constraint) is ok


@pytest.mark.parametrize("constraint", ["abc", "^", "1.2.3.4", ">=", "1.0.0 foo!", "^^1", "x" * 300])
def test_invalid_constraints(constraint):
    with pytest.raises(ValueError):
        satisfies("1.0.0", constraint)


@pytest.mark.parametrize("version", ["1", "1.2", "01.2.3", "1.2.3-", "one", ""])
def test_invalid_versions(version):
    with pytest.raises(ValueError):
        parse_version(version)
