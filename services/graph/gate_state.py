"""Where the payment gate keeps its state: its facts (``rescind.graph.gate_facts``) and its
ledger (``rescind.graph.gate_ledger``).

By default on the graph's own server, beside the graph. FalkorDB holds that server's lock
while it commits a write query, so every command to it waits out the commit in progress: under
a stream of justified writes, each of the gate's round trips met those waits (issue 28, "Gate
latency"; docs/performance.md). With ``RESCIND_GATE_STATE_URL`` set, every process (the
writer, the gate, the API) keeps the gate's state on that server instead: a Redis of its own,
on which no graph is written, so that the gate's reads and records never wait for a commit.

Nothing else changes: the keys are the same (``rescind.contract.layout``), and so are the
scripts and their guards. The never-stale guard holds across the two servers because each
writer waits for the gate server's reply before the graph write it guards (``touch`` before
the batch is sent, ``mutating`` before any other write), and keeps a batch's facts before it
marks its events applied (which the gate waits for before it judges).

That server must be as durable as the graph's (the ledger is the aggregate's truth until
its decisions are copied into the gate log): every process of a deployment names the same one.
"""

from __future__ import annotations

import os
import threading

import redis

from rescind.transport.connection import connect

ENV = "RESCIND_GATE_STATE_URL"

_conns: dict[str, redis.Redis] = {}
_lock = threading.Lock()


def url() -> str | None:
    """The gate state's own server, if one is named (else it is kept on the graph's)."""
    return os.environ.get(ENV) or None


def of(conn):
    """The connection the gate's state is kept through: the gate server's, if one is named;
    else ``conn`` (the graph's server)."""
    where = os.environ.get(ENV)
    if not where:
        return conn
    got = _conns.get(where)
    if got is None:
        with _lock:
            got = _conns.get(where)
            if got is None:
                got = _conns[where] = connect(where)
    return got


__all__ = ["ENV", "of", "url"]
