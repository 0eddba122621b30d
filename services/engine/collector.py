"""Pause Python's cyclic garbage collector around one engine operation.

A large retraction or a bulk load allocates tens of thousands of small objects (statuses,
nodes, rows). Each allocation burst can trigger a full collection that walks the whole heap,
which in a long-lived worker is large; none of these objects form cycles, so reference
counting frees them anyway. So the collector is paused for the operation (what it saves:
docs/performance.md); it runs again as soon as the last paused operation ends.
"""

from __future__ import annotations

import contextlib
import gc
import threading

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextlib.contextmanager
def paused():
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
