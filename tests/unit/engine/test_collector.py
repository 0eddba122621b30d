"""The engine pauses the garbage collector around its big operations."""


def test_the_collector_pause_nests_and_restores_what_was_there():
    """Nested pauses (two engine operations at once) re-enable the collector only when the last
    ends, and never enable a collector that was off before."""
    import gc

    from rescind.engine import collector

    assert gc.isenabled()
    with collector.paused():
        with collector.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector.paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
