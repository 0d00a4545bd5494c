"""collection_paused: no cyclic collection inside a bulk pass, and the collector as it was afterwards."""

from __future__ import annotations

import gc

import pytest

from bench.contracts.files import collection_paused


def test_pauses_and_restores_the_collector() -> None:
    assert gc.isenabled()
    with collection_paused():
        assert not gc.isenabled()
        with collection_paused():  # nested: the outer block decides when it resumes
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_restores_it_when_the_block_raises() -> None:
    with pytest.raises(ValueError), collection_paused():
        raise ValueError("broken")
    assert gc.isenabled()


def test_leaves_a_paused_collector_paused() -> None:
    gc.disable()
    try:
        with collection_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
