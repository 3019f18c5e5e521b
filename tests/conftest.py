"""Test setup: the core is imported from src/ (no install needed), helpers from tests/;
builds keep their memo in a temporary directory."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
for _p in (_HERE.parent / "src", _HERE):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))


@pytest.fixture(autouse=True, scope="session")
def _isolated_build_cache(tmp_path_factory):
    """Builds in tests keep their memo in a temporary directory, never in ~/.cache."""
    old = os.environ.get("AGENTRC_CACHE_DIR")
    os.environ["AGENTRC_CACHE_DIR"] = str(tmp_path_factory.mktemp("agentrc-cache"))
    yield
    if old is None:
        os.environ.pop("AGENTRC_CACHE_DIR", None)
    else:
        os.environ["AGENTRC_CACHE_DIR"] = old


class Blocked(BaseException):
    """Raised by `no_hang`'s alarm: not an OSError (TimeoutError is one), so no `except
    OSError` or `except Exception` of the code under test can swallow it and go on."""


@pytest.fixture
def no_hang():
    """A read that blocks (a FIFO opened for reading) fails the test within ten seconds
    instead of hanging the suite: the alarm raises `Blocked` every second after the tenth
    (a second blocking open is interrupted too), and a test it fired in fails even if the
    code under test caught it."""
    fired = []

    def alarm(signum, frame):
        fired.append(True)
        raise Blocked("reading blocked")
    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, 10, 1)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert not fired, "a read blocked"
