"""The agent-side publisher when its server comes and goes."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.contract.errors import Invalid
from rescind.middleware.publisher import Publisher
from rescind.runtime.server import EmbeddedFalkorDB, free_port
from rescind.transport import connection

AT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def test_the_publisher_never_blocks_and_flushes_when_redis_comes_back():
    """With no server, publish returns at once and buffers; when one appears, all is sent."""
    port = free_port()
    pub = Publisher(f"redis://127.0.0.1:{port}", connect_timeout=0.2)
    t0 = time.perf_counter()
    for i in range(100):
        pub.publish(ev.ObservationRecorded(event_id=f"e{i}", tenant="offline", at=AT,
                                           source="s", text=f"t{i}"))
    assert time.perf_counter() - t0 < 0.5
    assert _wait_for(lambda: pub.stats.failures >= 1, 10)  # it tried, and found no server
    assert pub.backlog == 100 and pub.stats.failures >= 1 and pub.stats.published == 0
    with EmbeddedFalkorDB(port=port) as server:
        assert pub.flush(timeout=20)
        assert pub.stats.published == 100
        conn = connection.connect(server.url)
        assert conn.xlen(pub.stream_of("offline")) == 100
        pub.close()


def _sent(conn, pub: Publisher, tenant: str) -> int:
    """Entries of ``tenant``'s events in its stream (a partition other tenants share)."""
    return sum(_tenant_of(fields) == tenant for _, fields in conn.xrange(pub.stream_of(tenant)))


def _tenant_of(fields) -> str | None:
    """The tenant of an entry; None for one that is not an event (another test's poison entry
    in the shared partition, left there on whichever server ran that test before this one)."""
    try:
        return layout.decode(fields).event().get("tenant")
    except Invalid:
        return None


def _wait_for(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def test_a_burst_of_events_is_sent_once_it_has_gathered_in_one_batch(falkordb, tenant_name):
    """Events published in a burst wait out the linger, then go in one pipeline, not one by one."""
    pub = Publisher(falkordb, tenant=tenant_name, linger_s=1.0)
    conn = connection.connect(falkordb)
    try:
        for i in range(20):
            pub.publish(ev.ObservationRecorded(event_id=f"b{i}", tenant=tenant_name, at=AT,
                                               source="s", text=f"burst {i}"))
        assert _sent(conn, pub, tenant_name) == 0 and pub.stats.batches == 0  # gathering, on disk only
        assert pub.stats.spooled == 20
        assert _wait_for(lambda: _sent(conn, pub, tenant_name) == 20, 10)
        # the stream may show them a moment before the publisher has counted its batch
        assert _wait_for(lambda: pub.stats.published == 20 and pub.stats.batches >= 1, 10)
        assert pub.stats.batches == 1
        # the next burst gathers and goes in a batch of its own
        for i in range(20, 25):
            pub.publish(ev.ObservationRecorded(event_id=f"b{i}", tenant=tenant_name, at=AT,
                                               source="s", text=f"burst {i}"))
        assert _sent(conn, pub, tenant_name) == 20
        assert _wait_for(lambda: _sent(conn, pub, tenant_name) == 25, 10)
        assert _wait_for(lambda: pub.stats.published == 25 and pub.stats.batches >= 2, 10)
        assert pub.stats.batches == 2
    finally:
        pub.close()


def test_a_flush_sends_at_once_without_waiting_out_the_linger(falkordb, tenant_name):
    """A flush (the gate's, close's) does not wait for a burst to gather: it is sent at once."""
    pub = Publisher(falkordb, tenant=tenant_name, linger_s=60.0)
    conn = connection.connect(falkordb)
    try:
        for i in range(3):
            pub.publish(ev.ObservationRecorded(event_id=f"f{i}", tenant=tenant_name, at=AT,
                                               source="s", text=f"flushed {i}"))
        assert pub.flush(timeout=5)  # well before the linger's 60 s
        assert _sent(conn, pub, tenant_name) == 3
        # and what is published after the flush gathers again, then is flushed at once too
        pub.publish(ev.ObservationRecorded(event_id="f3", tenant=tenant_name, at=AT,
                                           source="s", text="after"))
        time.sleep(0.3)  # a negative: given time to be sent, it is not (the linger is 60 s)
        assert _sent(conn, pub, tenant_name) == 3
        assert pub.flush(timeout=5) and _sent(conn, pub, tenant_name) == 4
    finally:
        pub.close()
