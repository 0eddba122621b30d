"""Held writes survive a failure while they are retried: nothing is dropped, nothing stops."""

import time

import redis

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.workers import held, writer
from rescind.workers.roles import Held, Workers, WorkerSettings


class FlakyConn:
    """A Redis connection whose acknowledgements fail ``fails`` times, then succeed."""

    def __init__(self, fails: int) -> None:
        self.fails, self.acked, self.claimed, self.dead = fails, [], [], []

    def xadd(self, stream, fields, **kw):
        self.dead.append((stream, fields))

    def xack(self, stream, group, *ids):
        if self.fails:
            self.fails -= 1
            raise redis.ConnectionError("the server is restarting")
        self.acked.extend(ids)

    def xclaim(self, stream, group, consumer, idle, ids, justid=False):
        self.claimed.extend(ids)


def held_write(workers: Workers, key: str, waited_s: float = 0.0) -> None:
    e = ev.ObservationRecorded(event_id=key, tenant="t", at=ev.from_micros(1), source="s",
                               source_kind="portal", text=f"seen {key}")
    workers.held[(layout.event_stream(0), key)] = Held(layout.event_stream(0), key, e,
                                                       since=time.monotonic() - waited_s)


def test_a_failed_acknowledgement_keeps_the_writes_held_and_the_next_round_acks_them(monkeypatch):
    """The writes land but their ack fails (the server went away): they stay held rather than
    pending with no owner, and the next retry acknowledges them."""
    monkeypatch.setattr(held, "apply_writes", lambda graph, items, pipeline=None, moved=None: [])
    workers = Workers(WorkerSettings(url="redis://127.0.0.1:1"))
    workers.conn = FlakyConn(fails=1)
    workers.known = lambda tenant: True  # tenant "t" was created
    held_write(workers, "1-0")
    held_write(workers, "1-1")
    try:
        workers.retry_held()  # must not raise: the background loop calls it forever
        assert {k for _, k in workers.held} == {"1-0", "1-1"} and workers.conn.acked == []
        workers.retry_held()
        assert workers.held == {} and sorted(workers.conn.acked) == ["1-0", "1-1"]
    finally:
        workers.pipeline.close()


def test_a_write_still_waiting_for_its_premise_stays_held_and_owned(monkeypatch):
    """A write whose premise has not arrived is kept, and re-claimed so the reaper leaves it."""

    class Waiting:
        def __init__(self, key):
            self.key, self.missing = key, ["obs-1"]

    monkeypatch.setattr(held, "apply_writes", lambda graph, items, pipeline=None, moved=None:
                        [Waiting(k) for k, _ in items])
    workers = Workers(WorkerSettings(url="redis://127.0.0.1:1"))
    workers.conn = FlakyConn(fails=0)
    workers.known = lambda tenant: True  # tenant "t" was created
    held_write(workers, "2-0")
    try:
        workers.retry_held()
        s0 = layout.event_stream(0)
        assert set(workers.held) == {(s0, "2-0")} and workers.held[(s0, "2-0")].missing == ["obs-1"]
        assert workers.conn.claimed == ["2-0"] and workers.conn.acked == []
    finally:
        workers.pipeline.close()


def test_a_write_that_waited_past_its_patience_is_dead_lettered_with_the_reason(monkeypatch):
    """Past ``patience_s`` the write goes to the dead-letter stream naming the missing premise,
    and is acknowledged: it is not retried for ever."""

    class Waiting:
        def __init__(self, key):
            self.key, self.missing = key, ["obs-9"]

    monkeypatch.setattr(held, "apply_writes", lambda graph, items, pipeline=None, moved=None:
                        [Waiting(k) for k, _ in items])
    workers = Workers(WorkerSettings(url="redis://127.0.0.1:1", patience_s=5))
    workers.conn = FlakyConn(fails=0)
    workers.known = lambda tenant: True  # tenant "t" was created
    held_write(workers, "3-0", waited_s=6)
    try:
        workers.retry_held()
        assert workers.held == {} and workers.conn.acked == ["3-0"]
        [(stream, fields)] = workers.conn.dead
        assert stream == layout.DEAD and "premise never arrived: obs-9" in fields["reason"]
    finally:
        workers.pipeline.close()


def test_held_writes_of_two_streams_with_the_same_entry_id_are_both_kept(monkeypatch):
    """Entry ids repeat across streams (two partitions, one millisecond): each held write is
    kept and retried, not one overwriting the other."""

    class Waiting:
        def __init__(self, key):
            self.key, self.event, self.missing = key, None, ["obs-1"]

    workers = Workers(WorkerSettings(url="redis://127.0.0.1:1"))
    workers.conn = FlakyConn(fails=0)
    workers.known = lambda tenant: True  # tenant "t" was created
    workers.known = lambda tenant: True  # both tenants were created
    try:
        for p in (0, 1):
            e = ev.MemoryWritten(event_id=f"e{p}", tenant=f"t{p}", at=ev.from_micros(0),
                                 kind="belief", text="x", premises=["obs-1"], agent="a")
            monkeypatch.setattr(writer, "apply_writes", lambda graph, items, pipeline=None,
                                moved=None: [Waiting(k) for k, _ in items])
            workers.write_batch(layout.event_stream(p), [("5-0", e.model_dump_json(by_alias=True))])
        assert set(workers.held) == {(layout.event_stream(0), "5-0"),
                                     (layout.event_stream(1), "5-0")}
    finally:
        workers.pipeline.close()
