"""A write whose premise never arrives: health says what is awaited and for how long while it
waits, and when the worker gives up it says so (log, metric-counted, dead letter naming the
premise), and health forgets it."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

from fastapi.testclient import TestClient

from rescind.api import create_app
from rescind.contract import events as ev
from rescind.contract import layout
from rescind.middleware.publisher import Publisher
from rescind.runtime.settings import Settings
from rescind.transport import connection
from rescind.transport import streams as st
from rescind.workers.app import WorkerThread
from rescind.workers.roles import WorkerSettings


def test_a_premise_that_never_arrives_is_shown_in_health_then_given_up_loudly(
        falkordb, tenant_name, caplog):
    conn = connection.connect(falkordb)
    st.ensure_groups(conn)
    health = TestClient(create_app(Settings(url=falkordb, admin_token="x" * 32)))
    before = health.get("/api/health").json()["premises_awaited"]
    pub = Publisher(falkordb)
    pub.publish(ev.MemoryWritten(event_id=f"{tenant_name}-w", tenant=tenant_name,
                                 at=datetime.now(UTC), kind="belief", text="rests on nothing",
                                 premises=["obs-never"], agent="ap"))
    pub.close()
    settings = WorkerSettings(url=falkordb, worker_id=f"wait-{tenant_name}", patience_s=2.0)
    dead_before = conn.xlen(layout.DEAD) if conn.exists(layout.DEAD) else 0
    with caplog.at_level(logging.WARNING, logger="rescind.workers"), \
            WorkerThread(settings, ("writer",)):
        deadline = time.monotonic() + 10
        while f"{tenant_name} obs-never".encode() not in conn.hkeys(layout.WAITING):
            assert time.monotonic() < deadline, "the held write was never shown as waiting"
            time.sleep(0.05)
        shown = health.get("/api/health").json()
        assert shown["premises_awaited"] == before + 1 and shown["longest_wait_s"] >= 0
        while f"{tenant_name} obs-never".encode() in conn.hkeys(layout.WAITING):
            assert time.monotonic() < deadline + 10, "the write was never given up"
            time.sleep(0.1)
    assert health.get("/api/health").json()["premises_awaited"] == before
    dead = [f for _, f in conn.xrange(layout.DEAD)][dead_before:]
    assert any(f[b"reason"] == b"premise never arrived: obs-never"
               and tenant_name.encode() in f[b"body"] for f in dead)
    assert any("obs-never" in r.getMessage() and "given up" in r.getMessage()
               for r in caplog.records)
