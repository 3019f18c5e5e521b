"""The agentrc Pants backend (targets, rules, goals arrive with the Pants backend issue).

Registered now so `./pants` starts with the backend enabled and the plugin's import path
(the core under src/) is exercised from the first commit.
"""

from __future__ import annotations


def target_types():
    return []


def rules():
    return []
