"""Crash quarantine against the real embedded server: FalkorDB is made to die (SIGSEGV, its own
bug #1340) whenever one chosen entry is in the writer's batch. The server is supervised as
`rescind up` supervises it, the workers and the API run, and the entry is found by halves,
dead-lettered with its reason and tenant, the rest lands, and health says what happened."""

from __future__ import annotations

import json
import logging
import re
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime

import pytest
import redis

from rescind.api.serve import api_thread
from rescind.contract import events as ev
from rescind.contract import layout
from rescind.graph import tenants
from rescind.graph.store import TenantGraph, connect
from rescind.middleware.publisher import Publisher
from rescind.runtime.server import EmbeddedFalkorDB, free_port
from rescind.runtime.settings import Settings
from rescind.runtime.supervisor import RestartPolicy, Supervisor
from rescind.workers import held, quarantine, roles
from rescind.workers.app import WorkerSettings, WorkerThread

AT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
MARK = "the entry FalkorDB dies under"
PROBE = "crash-probe"  # a graph of the test's own, where FalkorDB's bug is set up


def seen(tenant: str, i: int, text: str | None = None) -> ev.ObservationRecorded:
    return ev.ObservationRecorded(event_id=f"{tenant}-o{i}", tenant=tenant, at=AT,
                                  source="portal:acme", text=text or f"Acme reading {i}")


def count(url: str, tenant: str) -> int:
    g = TenantGraph(connect(url), tenant)
    return g.rows("MATCH (m:Mem) RETURN count(m)")[0][0] if g.exists() else 0


def until(what: str, check, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            found = check()
        except redis.ConnectionError:  # the server is being restarted
            found = None
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def health(base: str) -> dict:
    try:
        with urllib.request.urlopen(f"{base}/api/health", timeout=5) as r:
            return json.load(r)
    except urllib.error.HTTPError as exc:
        return json.load(exc)


def arm(url: str) -> None:
    """FalkorDB issue #1340 on a graph of its own: a UNIQUE constraint on T.id and a node 'a';
    creating 'a ' (a trailing space) then kills 4.16.3 with SIGSEGV in EnforceUniqueEntity."""
    conn = redis.Redis.from_url(url)
    conn.execute_command("GRAPH.QUERY", PROBE, "CREATE INDEX FOR (t:T) ON (t.id)")
    conn.execute_command("GRAPH.CONSTRAINT", "CREATE", PROBE, "UNIQUE", "NODE", "T",
                         "PROPERTIES", "1", "id")
    conn.execute_command("GRAPH.QUERY", PROBE, "CREATE (:T {id: 'a'})")
    conn.close()


@pytest.fixture
def fault(monkeypatch):
    """Wherever the writer applies a batch (its pipeline, its retries, its quarantine): if the
    marked entry is in it, the server is sent the crashing statement first, so that it dies
    with the batch in flight. Counts the batches it killed the server under, by size."""
    killed: list[int] = []
    for module in (roles, held, quarantine):
        real = module.apply_writes

        def apply(graph, items, *args, _real=real, **kwargs):
            if any(MARK in getattr(e, "text", "") for _, e in items):
                killed.append(len(items))
                graph.conn.execute_command("GRAPH.QUERY", PROBE, "CREATE (:T {id: 'a '})")
            return _real(graph, items, *args, **kwargs)

        monkeypatch.setattr(module, "apply_writes", apply)
    return killed


def test_a_batch_the_server_dies_under_is_bisected_and_its_culprit_dead_lettered(
        tmp_path, fault, caplog):
    """The server dies twice under a batch of eight writes, then under the half, the quarter
    and the entry with the marked one: that entry alone is dead-lettered ('the server died
    applying this', its tenant named), the seven others and later writes land, the workers and
    the API stay up, and health reports the crash loop with the server's crash line."""
    t, other = "crashq", "crashq-other"
    server = EmbeddedFalkorDB(tmp_path / "data").start()
    url = server.url
    conn = connect(url)
    for name in (t, other):
        tenants.create(conn, name, by="tests")
    arm(url)
    policy = RestartPolicy(backoff_s=0.2, backoff_max_s=1.0, loop_after=3)
    pub = Publisher(url, spool_dir=str(tmp_path / "spool"))
    # Published before the workers start: they read the eight in one batch.
    for i in range(8):
        pub.publish(seen(t, i, f"Acme {MARK}" if i == 5 else None))
    assert pub.flush(30) is not False
    settings = WorkerSettings(url=url, worker_id="crashq", reaper_idle_ms=2_000)
    api = Settings(admin_token="x" * 32)
    try:
        with caplog.at_level(logging.WARNING, logger="rescind.workers"), \
                Supervisor(server, policy) as supervisor, \
                api_thread(url, "127.0.0.1", free_port(), api,
                           server_status=supervisor.status) as base, \
                WorkerThread(settings, ("writer", "retraction", "reaper", "gate")) as workers:
            until("the seven other writes", lambda: count(url, t) == 7, 240)
            dead = until("the dead letter", lambda: conn.xrange(layout.DEAD))
            # Later writes of both tenants land: the workers are up, the server too.
            pub.publish(seen(t, 100))
            pub.publish(seen(other, 1))
            assert pub.flush(30) is not False
            until("the later writes", lambda: count(url, t) == 8 and count(url, other) == 1)
            said = health(base)
            assert workers.error is None
    finally:
        pub.close()
        server.stop()

    # Bisected: two deaths under the eight, then under four, two and one of them.
    assert fault == [8, 8, 4, 2, 1], fault
    assert supervisor.restarts == 5 and supervisor.failure is None
    [(_, entry)] = dead
    fields = {k.decode(): v.decode() for k, v in entry.items()}
    assert fields["reason"].startswith(f"the server died applying this (tenant {t})"), fields
    assert fields["group"] == layout.WRITER_GROUP
    assert json.loads(fields["body"])["event_id"] == f"{t}-o5"

    assert said["ok"] is True and said["crash_loop"] is True, said
    restarts = said["server"]["restarts"]
    assert restarts["total"] == 5 and restarts["recent"] == 5, restarts
    assert "crashed by signal: 11" in restarts["last_crash"], restarts
    assert "EnforceUniqueEntity" in restarts["last_crash"], restarts
    assert "crash loop" in said["detail"], said

    logged = [r.getMessage() for r in caplog.records if r.name == "rescind.workers"]
    halves = [m for m in logged if "tried in halves" in m]
    assert [re.search(r"in halves \((.*?)\)", m)[1] for m in halves] == [
        "4 and 4", "2 and 2", "1 and 1"], halves
    assert any("dead-lettered: the server died applying this" in m for m in logged), logged
    crashes = (tmp_path / "data" / "falkordb.log").read_text(errors="replace")
    assert crashes.count("crashed by signal") == 5
