"""The agents' status cache against the real server: a snapshot of the tenant's graph, then its
own status stream; a fresh snapshot when entries it had not read were trimmed; no Redis at start;
tenants kept apart."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

import pytest
import redis

from rescind.contract import layout
from rescind.middleware.status import StatusCache
from rescind.runtime.server import free_port
from rescind.transport import connection
from rescind.transport import streams as st

AT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def conn(falkordb):
    return connection.connect(falkordb)


@pytest.fixture
def tenant(conn, tenant_name):
    yield tenant_name
    conn.delete(layout.graph_key(tenant_name), layout.status_stream(tenant_name))


def put(conn, tenant: str, **statuses: str) -> None:
    """Memories with these statuses in the tenant's graph (only what the snapshot reads)."""
    for mid, status in statuses.items():
        conn.execute_command("GRAPH.QUERY", layout.graph_key(tenant),
                             f"MERGE (m:Mem {{id: '{mid}'}}) MERGE (m)-[st:STATUS]->(m) "
                             f"SET st.status = '{status}'")


def publish(conn, tenant: str, **statuses: str) -> None:
    st.publish_status(conn, tenant, "op", 1, {m: (s, "r", 0) for m, s in statuses.items()}, AT)


def test_a_cache_starts_from_the_graph_and_follows_the_stream_from_there(conn, falkordb, tenant):
    """The OUT set is read from the graph, not from old stream entries (here an OUT event for a
    memory that came back IN since); later events are followed."""
    publish(conn, tenant, m1="OUT", m2="OUT")
    put(conn, tenant, m1="OUT", m2="IN", m3="IN")
    cache = StatusCache(falkordb, tenant, follow=False)
    assert cache.synced and cache.out == {"m1"}
    publish(conn, tenant, m3="OUT", m1="IN")
    cache.refresh()
    assert cache.out == {"m3"}


def test_a_tenant_with_no_graph_and_no_stream_has_nothing_out(falkordb, tenant):
    cache = StatusCache(falkordb, tenant)
    try:
        assert cache.synced and cache.out == set()
    finally:
        cache.close()


def test_entries_trimmed_before_the_cache_read_them_bring_a_fresh_snapshot(conn, falkordb,
                                                                          tenant):
    """m1 goes OUT while the cache is not reading, and its event is trimmed away (only later
    events of other memories are left): the cache still reports m1 OUT."""
    put(conn, tenant, m1="IN")
    cache = StatusCache(falkordb, tenant, follow=False)
    assert cache.out == set()
    put(conn, tenant, m1="OUT")
    publish(conn, tenant, m1="OUT")
    publish(conn, tenant, **{f"x{i}": "IN" for i in range(5)})
    conn.xtrim(layout.status_stream(tenant), maxlen=2, approximate=False)
    cache.refresh()
    assert cache.is_out("m1") and cache.synced


def test_a_stream_trimmed_to_nothing_brings_a_fresh_snapshot(conn, falkordb, tenant):
    put(conn, tenant, m1="IN")
    cache = StatusCache(falkordb, tenant, follow=False)
    put(conn, tenant, m1="OUT")
    publish(conn, tenant, m1="OUT")
    conn.xtrim(layout.status_stream(tenant), maxlen=0, approximate=False)
    cache.refresh()
    assert cache.is_out("m1")


def test_a_trim_of_entries_already_read_changes_nothing(conn, falkordb, tenant):
    """Only entries the cache had not read count: here m9's OUT event is read, then trimmed,
    and the graph (which says otherwise, on purpose) is not read again."""
    cache = StatusCache(falkordb, tenant, follow=False)
    publish(conn, tenant, m9="OUT")
    cache.refresh()
    publish(conn, tenant, m8="OUT")
    conn.xtrim(layout.status_stream(tenant), maxlen=1, approximate=False)
    cache.refresh()
    assert cache.out == {"m9", "m8"}


def test_a_deleted_stream_brings_a_fresh_snapshot(conn, falkordb, tenant):
    """The tenant starts afresh (graph and stream deleted): what was OUT is forgotten."""
    cache = StatusCache(falkordb, tenant, follow=False)
    put(conn, tenant, m1="OUT")
    publish(conn, tenant, m1="OUT")
    cache.refresh()
    assert cache.out == {"m1"}
    conn.delete(layout.graph_key(tenant))
    st.forget_status(conn, tenant)
    cache.refresh()
    assert cache.out == set()


def test_without_redis_the_cache_starts_empty_at_once_and_not_synced():
    port = free_port()
    t0 = time.monotonic()
    cache = StatusCache(f"redis://127.0.0.1:{port}", "offline")
    try:
        assert time.monotonic() - t0 < 1.5
        assert not cache.synced and cache.out == set() and not cache.is_out("m1")
    finally:
        cache.close()
    with pytest.raises(redis.ConnectionError):
        cache.refresh()  # asked explicitly, it says why it cannot


def test_the_background_thread_syncs_and_follows(conn, falkordb, tenant):
    put(conn, tenant, m1="OUT")
    cache = StatusCache(falkordb, tenant)
    try:
        assert cache.synced and cache.out == {"m1"}
        publish(conn, tenant, m2="OUT")
        deadline = time.monotonic() + 5
        while "m2" not in cache.out and time.monotonic() < deadline:
            time.sleep(0.01)
        assert cache.out == {"m1", "m2"}
    finally:
        cache.close()


def test_tenants_have_their_own_streams_and_a_flood_of_one_leaves_the_other_alone(
        conn, falkordb, tenant, monkeypatch):
    """Statuses of tenant A never reach B's cache; A's stream trimmed past its cap leaves B's
    stream and cache as they were, and A's cache still right."""
    a, b = tenant, tenant + "-b"
    try:
        cache_a = StatusCache(falkordb, a, follow=False)
        cache_b = StatusCache(falkordb, b, follow=False)
        publish(conn, b, kept="OUT")
        put(conn, a, hit="OUT")
        publish(conn, a, hit="OUT", shared="OUT")
        cache_a.refresh()
        cache_b.refresh()
        assert cache_a.out == {"hit", "shared"} and cache_b.out == {"kept"}
        monkeypatch.setattr(layout, "STATUS_MAXLEN", 100)
        for n in range(10):
            publish(conn, a, **{f"f{n}-{i}": "IN" for i in range(100)})
        assert conn.xlen(layout.status_stream(a)) < 1000  # capped (approximately)
        assert conn.xlen(layout.status_stream(b)) == 1
        cache_a.refresh()
        cache_b.refresh()
        assert cache_b.out == {"kept"}
        assert cache_a.out == {"hit"}  # a fresh snapshot: "shared" was OUT only on the stream
    finally:
        conn.delete(layout.graph_key(b), layout.status_stream(b))


def test_instrument_returns_when_redis_is_down():
    """An agent starts while Redis is away: wrapping it neither raises nor waits."""
    from tests.support.agent import agent

    t0 = time.monotonic()
    wrapped = agent([], f"redis://127.0.0.1:{free_port()}", "offline")
    try:
        assert time.monotonic() - t0 < 1.5 and not wrapped.rescind.status.synced
    finally:
        wrapped.rescind.close()


def test_an_agent_wrapped_for_a_tenant_never_created_is_told_once(falkordb, tenant_name, caplog):
    """Its events would be dead-lettered: the cache says so when it starts, once."""
    with caplog.at_level(logging.WARNING, logger="rescind.status"):
        cache = StatusCache(falkordb, f"{tenant_name}-ghost", follow=False)
        cache.refresh()
        StatusCache(falkordb, tenant_name, follow=False)  # created: nothing said
    said = [r.getMessage() for r in caplog.records if r.name == "rescind.status"]
    assert said == [f"tenant '{tenant_name}-ghost' was never created: Rescind's workers "
                    f"dead-letter its events until it is (`rescind tenant create "
                    f"{tenant_name}-ghost`, or the admin's POST /api/v1/tenants)"]


def test_an_idle_cache_only_waits_and_still_sees_a_status_at_once(conn, falkordb, tenant):
    """Idle, the following thread only blocks on the stream (no catch-up transaction every
    half second, as it ran before: 1.4 ms of CPU a second per wrapped agent), and a status
    published while it waits is applied within a moment, not at the next idle round."""
    cache = StatusCache(falkordb, tenant)
    steps = []
    step = cache._step
    cache._step = lambda: steps.append(time.monotonic()) or step()
    try:
        time.sleep(0.3)  # the first round's catch-up is over
        steps.clear()
        time.sleep(2.5)
        assert steps == []
        publish(conn, tenant, m9="OUT")
        deadline = time.monotonic() + 2.0
        while "m9" not in cache.out:
            assert time.monotonic() < deadline, "the status published was not applied"
            time.sleep(0.02)
    finally:
        cache.close()
