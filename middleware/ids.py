"""Event ids drawn without a system call per event.

``uuid.uuid4()`` reads the kernel's random source for every id; on the agent's own thread, with
the publisher's sender thread awake, each such call was a moment the thread gave up the
interpreter and waited to get it back (`rescind bench fidelity`'s profile: the largest single
cost of a wrapped invoke). An id here is a random prefix drawn once per process (and again in a
forked child) and a counter: 32 hex characters, as unique across processes as a 64-bit random
prefix makes them, and never repeated within one.
"""

from __future__ import annotations

import itertools
import os

_state: list = []


def _reset() -> None:
    _state[:] = [os.urandom(8).hex(), itertools.count(1)]


_reset()
os.register_at_fork(after_in_child=_reset)


def event_id() -> str:
    """A new event id (32 hex characters)."""
    prefix, counter = _state
    return f"{prefix}{next(counter):016x}"


__all__ = ["event_id"]
