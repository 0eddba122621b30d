"""SIGTERM stops `rescind up` even when its interrupt is lost. Raised while Python runs a
finalizer, the KeyboardInterrupt is printed as "Exception ignored" and dropped; CI saw `up`
serve on for minutes after the SIGTERM that should have ended it."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from rescind.cli.common import TERMINATING, sigterm_as_interrupt
from rescind.cli.run import _serve


class _Finalized:
    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.2)  # the handler runs here, inside the finalizer: its interrupt is dropped


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the lost one
def test_a_sigterm_whose_interrupt_was_lost_still_stops_the_workers(falkordb):
    # Without the fix the workers would serve until this watchdog's SIGTERM, 20 s later.
    watchdog = threading.Timer(20, os.kill, (os.getpid(), signal.SIGTERM))
    try:
        with sigterm_as_interrupt():
            _Finalized()  # collected at once: the SIGTERM arrives inside its __del__
            assert TERMINATING.is_set()
            watchdog.start()
            started = time.monotonic()
            _serve(falkordb, ("gate",), "lost-sigterm", None)
            assert time.monotonic() - started < 15
    finally:
        watchdog.cancel()
        TERMINATING.clear()
