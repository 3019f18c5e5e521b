"""Names: what a valid item name is, how a foreign name becomes one, and how bundle
files are named. One definition shared by the loader, the importers, the canonical
front door and the Pants backend.
"""

from __future__ import annotations

import posixpath
import re

from agentrc.patterns import pattern

# Spec 001 §3.1: lowercase letters, digits and hyphens, no leading or trailing hyphen.
NAME_RE = pattern(r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$")
MAX_NAME_LENGTH = 64

# Bundle manifests are found by this suffix (spec 001 §2.2); the stem is the bundle's name.
BUNDLE_SUFFIX = ".bundle.yaml"


def valid_name(name: str, single_hyphens: bool = False) -> bool:
    """Whether `name` matches the name pattern; `single_hyphens` also refuses `--`, which
    Agent Skills names may not hold (and so no name meant for every kind may)."""
    return bool(NAME_RE.match(name)) and not (single_hyphens and "--" in name)


def slug(text: str) -> str:
    """`text` as lowercase words joined by single hyphens (camelCase split): the name an
    imported or canonical entry gets when its own is not valid. May be empty."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", text)
    return re.sub(r"[^a-z0-9]+", "-", spaced.lower()).strip("-")


# A registry root (issue 10 point 14): the directory holding this file is one source
# registry, its own namespace of item and bundle names (docs/format.md, "Registries").
REGISTRY_MARKER = "agentrc-registry.yaml"


def is_registry_marker(path: str) -> bool:
    return posixpath.basename(path) == REGISTRY_MARKER


def is_bundle_file(path: str) -> bool:
    return path.endswith(BUNDLE_SUFFIX)


def bundle_stem(path: str) -> str:
    """The name a bundle file's name gives (`core.bundle.yaml` -> `core`)."""
    return posixpath.basename(path)[: -len(BUNDLE_SUFFIX)]
