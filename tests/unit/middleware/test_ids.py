"""Event ids: unique within a process and across a fork, 32 hex characters, no kernel call each."""

from __future__ import annotations

import os
import re

from rescind.middleware.ids import event_id


def test_ids_are_hex_and_never_repeat_in_a_process():
    """100,000 ids: all distinct, each 32 lowercase hex characters."""
    ids = [event_id() for _ in range(100_000)]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids[:100])


def test_a_forked_child_draws_ids_of_its_own():
    """A child forked after ids were drawn does not repeat the parent's next ones."""
    event_id()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next id, to the parent
        os.write(write, event_id().encode())
        os._exit(0)
    os.close(write)
    child = os.read(read, 64).decode()
    os.waitpid(pid, 0)
    parent = event_id()
    assert child != parent and child[:16] != parent[:16]
