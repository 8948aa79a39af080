"""gcpause: the collector paused for one compilation and given back as it was."""

from __future__ import annotations

import gc

from mcugen.gcpause import collector_paused


def test_collector_paused_for_the_block_and_restored() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_paused_collector_stays_paused() -> None:
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_restored_when_the_block_raises() -> None:
    try:
        with collector_paused():
            raise ValueError
    except ValueError:
        pass
    assert gc.isenabled()
