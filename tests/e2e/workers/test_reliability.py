"""Reliability against the real server: a writer SIGKILLed mid-stream loses and doubles nothing;
a FalkorDB restart (persistence on) mid-load loses nothing."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from datetime import UTC, datetime

import redis

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.graph import tenants
from rescind.graph.store import TenantGraph, connect
from rescind.middleware.publisher import Publisher
from rescind.runtime.server import EmbeddedFalkorDB, free_port
from rescind.scenario.via_streams import wait_idle
from rescind.transport import streams as st
from rescind.workers.app import WorkerSettings, WorkerThread
from tests.support.paths import ROOT

AT = datetime(2026, 11, 2, tzinfo=UTC)


def worker(url: str, wid: str, *roles: str, extra: tuple[str, ...] = ()) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "rescind.cli", "worker", *roles, "--url", url,
                             "--id", wid, *extra], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def observations(tenant: str, n: int) -> list[ev.ObservationRecorded]:
    return [ev.ObservationRecorded(event_id=f"e{i}", tenant=tenant, at=AT, source="feed",
                                   text=f"reading {i}") for i in range(n)]


def counts(url: str, tenant: str) -> tuple[int, int]:
    g = TenantGraph(connect(url), tenant)
    if not g.exists():
        return 0, 0
    mems = g.rows("MATCH (m:Mem) RETURN count(m)")[0][0]
    said = g.rows("MATCH ()-[s:SAID]->() RETURN count(s)")[0][0]
    return mems, said


def test_sigkill_a_writer_mid_stream_then_start_another(falkordb, tenant_name):
    """10,000 events; the first writer is killed part way; a second writer and a reaper finish:
    exactly 10,000 writes applied, none twice."""
    conn = redis.Redis.from_url(falkordb)
    st.ensure_groups(conn)
    first = worker(falkordb, "doomed", "writer", extra=("--batch", "100"))
    pub = Publisher(falkordb)
    for e in observations(tenant_name, 10_000):
        pub.publish(e)
    pub.close(timeout=60)
    deadline = time.monotonic() + 60
    while counts(falkordb, tenant_name)[0] < 1_000 and time.monotonic() < deadline:
        time.sleep(0.01)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    applied_at_kill = counts(falkordb, tenant_name)[0]
    assert 0 < applied_at_kill < 10_000
    second = worker(falkordb, "heir", "writer", "reaper",
                    extra=("--reaper-idle-ms", "1000", "--batch", "500"))
    try:
        wait_idle(conn, layout.tenant_stream(tenant_name), timeout=180,
                  only=(layout.WRITER_GROUP,))
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=30)
    # The retraction group was not running: let later tests start it past these 10,000 entries.
    conn.xgroup_setid(layout.tenant_stream(tenant_name), layout.RETRACTION_GROUP, "$")
    assert counts(falkordb, tenant_name) == (10_000, 10_000)


def test_a_falkordb_restart_mid_load_loses_nothing(tmp_path, tenant_name):
    """The server stops and comes back on its data directory while 3,000 events flow; the
    publisher buffers, the workers reconnect, and every event is applied exactly once.

    A batch the server handed out as it stopped may never reach the writer (FastStream's fetch
    fails with the connection): it stays pending on the writer's name, and the reaper, which
    every deployment runs beside the writers, claims it back."""
    port = free_port()
    url = f"redis://127.0.0.1:{port}"
    server = EmbeddedFalkorDB(data_dir=tmp_path, port=port).start()
    tenants.create(connect(url), tenant_name, by="tests")  # on this server: the AOF keeps it
    events = observations(tenant_name, 3_000)
    pub = Publisher(url, connect_timeout=0.2)
    workers = WorkerThread(WorkerSettings(url=url, worker_id="restart", batch=200,
                                          reaper_idle_ms=2_000), ("writer", "reaper")).start()
    try:
        for e in events[:1_500]:
            pub.publish(e)
        pub.flush(timeout=30)
        server.stop()  # graceful: the AOF is flushed
        for e in events[1_500:]:
            pub.publish(e)  # buffered while the server is away
        deadline = time.monotonic() + 30
        while pub.stats.failures == 0:  # until it has tried, and found the server away
            assert time.monotonic() < deadline, "the publisher never tried to send"
            time.sleep(0.01)
        server = EmbeddedFalkorDB(data_dir=tmp_path, port=port).start()
        assert pub.flush(timeout=60)
        deadline = time.monotonic() + 120
        while counts(url, tenant_name)[0] < 3_000 and time.monotonic() < deadline:
            time.sleep(0.1)
        wait_idle(redis.Redis.from_url(url), layout.tenant_stream(tenant_name),
                  timeout=120, only=(layout.WRITER_GROUP,))
        assert counts(url, tenant_name) == (3_000, 3_000)
    finally:
        workers.stop()
        pub.close(timeout=5)
        server.stop()
