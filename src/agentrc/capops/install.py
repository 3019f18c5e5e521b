"""`agentrc cap install | list | remove | trust | update | pack`: acquiring capability packages
into a scope (spec 003), as transactions that leave the scope as it was on any failure.

This module is the entry the rest of agentrc imports; the work is done by one module per job:

- `failure`: `Failure`, `Outcome` and the table of the OAS kernel's `--json` error codes;
- `scope`: the store's paths, the scope's lock (`ScopeLock`), a run's staging directory,
  the recovery of killed runs, the ignore file;
- `package`: a package fetched (a directory, git, the official catalog), loaded and
  validated, its capabilities materialised; `cap pack`;
- `acquire`: `install`, `update` and `remove`, each one journaled transaction (`txn`);
- `restore`: the bare `cap install` (every lock of the scope's chain, as recorded);
- `trust`: approving a capability's commands and hooks at its installed integrity;
- `listing`: `cap list`, each capability's health and trust as the kernel's list reports them.

The names below are those the other modules, the CLI and the tests use; they stay here so
that none of them depends on how the work is divided. Setting one of them here (a test
replacing `_load`, or `os` with a faulty one) sets it where the work is done, as it did
when this module did the work.
"""

from __future__ import annotations

import os  # noqa: F401 - set here (a test's faulty `os`), it is set in every module of the split
import sys
import types

from agentrc.capops import acquire as _acquire
from agentrc.capops import failure as _failure_module
from agentrc.capops import listing as _listing
from agentrc.capops import package as _package
from agentrc.capops import restore as _restore
from agentrc.capops import scope as _scope
from agentrc.capops import trust as _trust
from agentrc.capops.acquire import config_references, install, remove, update
from agentrc.capops.failure import KERNEL_CODES, Failure, Outcome, fail, kernel_code, noted, shown
from agentrc.capops.failure import failure_of as _failure
from agentrc.capops.listing import list_scope
from agentrc.capops.package import BUNDLED_CATALOG, CATALOG_ENV, GIT_TIMEOUT, copy_tree, pack, read_catalog
from agentrc.capops.package import Staged as _Staged
from agentrc.capops.package import fetch_package as _fetch
from agentrc.capops.package import load_package as _load
from agentrc.capops.package import materialize as _materialize
from agentrc.capops.restore import restore
from agentrc.capops.scope import (
    GITIGNORE_LINE,
    GITIGNORE_TEXT,
    STAGING_PREFIX,
    ScopeLock,
    absent_anchors,
    carry_out,
    hash_or_empty,
    held,
    lock_levels,
    misplaced_diags,
    read_lock,
    recover_here,
    recover_leftovers,
    undo_migrations_with,
    write_in,
)
from agentrc.capops.scope import Ignore as _Ignore
from agentrc.capops.scope import Staging as _Staging
from agentrc.capops.scope import check_scope as _check_scope
from agentrc.capops.scope import installed_dir as _installed_dir
from agentrc.capops.scope import locked_at as _locked_at
from agentrc.capops.scope import rmtree as _rmtree
from agentrc.capops.scope import store_dir as _store
from agentrc.capops.trust import trust

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, List, Tuple

__all__ = [
    "BUNDLED_CATALOG", "CATALOG_ENV", "GITIGNORE_LINE", "GITIGNORE_TEXT", "GIT_TIMEOUT", "KERNEL_CODES",
    "STAGING_PREFIX", "Failure", "Outcome", "ScopeLock", "_Ignore", "_Staged", "_Staging", "_check_scope", "_failure",
    "_fetch", "_installed_dir", "_load", "_locked_at", "_materialize", "_rmtree", "_store", "absent_anchors",
    "carry_out", "config_references", "copy_tree", "fail", "hash_or_empty", "held", "install", "kernel_code",
    "list_scope", "lock_levels", "misplaced_diags", "noted", "pack", "read_catalog", "read_lock", "recover_here",
    "recover_leftovers", "remove", "restore", "shown", "trust", "update", "write_in",
]


def _undo_migrations(scope: str) -> List[str]:
    """A killed `cap migrate` rolled back by its own journal, for `scope.recover_leftovers`."""
    from agentrc.capops import migrate as capmigrate  # capmigrate builds on this module

    return capmigrate.recover(scope)


undo_migrations_with(_undo_migrations)


_MODULES = (_failure_module, _scope, _package, _acquire, _restore, _trust, _listing)
# This module's name for a function or class kept under another name where it is defined.
_RENAMED = {"_failure": "failure_of", "_Staged": "Staged", "_fetch": "fetch_package", "_load": "load_package",
            "_materialize": "materialize", "_Ignore": "Ignore", "_Staging": "Staging", "_check_scope": "check_scope",
            "_installed_dir": "installed_dir", "_locked_at": "locked_at", "_rmtree": "rmtree", "_store": "store_dir"}


def _homes(name: str) -> List[Tuple[types.ModuleType, str]]:
    """Where setting `name` on this module must also set it: `os` in every module of the
    split, a re-exported name in each module that holds it (under its name there)."""
    if name == "os":
        return [(m, "os") for m in _MODULES]
    real = _RENAMED.get(name, name)
    return [(m, real) for m in _MODULES if real in vars(m)] if name in __all__ else []


class _Facade(types.ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        for module, real in _homes(name):
            setattr(module, real, value)


sys.modules[__name__].__class__ = _Facade
