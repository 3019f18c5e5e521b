"""The cyclic collector's pause (agentrc.pipeline.nogc): counted across callers and
threads, and never leaves the collector other than it found it."""

from __future__ import annotations

import gc
import threading

from agentrc.pipeline import nogc


def test_a_pause_turns_the_collector_off_and_back_on():
    assert gc.isenabled()
    with nogc.paused():
        assert not gc.isenabled()
        with nogc.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still runs
    assert gc.isenabled()


def test_a_pause_leaves_a_collector_that_was_off_off():
    gc.disable()
    try:
        with nogc.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_failure_inside_a_pause_still_ends_it():
    try:
        with nogc.paused():
            raise ValueError("boom")
    except ValueError:
        pass
    assert gc.isenabled()


def test_overlapping_pauses_on_two_threads_end_with_the_last():
    """As Pants runs rules: the first thread out must not turn the collector on under the
    second, nor the second leave it off."""
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen = []

    def first():
        with nogc.paused():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second():
        first_in.wait(5)
        with nogc.paused():
            second_in.set()
            first_out.wait(5)
            seen.append(gc.isenabled())

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == [False]
    assert gc.isenabled()
