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
from rescind.transport import streams as st
from rescind.workers import held, quarantine, writer
from rescind.workers.app import WorkerSettings, WorkerThread
from rescind.workers.roles import Workers

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


class Fault:
    """Kills the server under the batches that hold the marked entry (``times`` at most);
    ``killed``: the size of each such batch."""

    def __init__(self) -> None:
        self.killed: list[int] = []
        self.times: int | None = None

    def __call__(self, graph, items) -> None:
        if any(MARK in getattr(e, "text", "") for _, e in items) and \
                (self.times is None or len(self.killed) < self.times):
            self.killed.append(len(items))
            graph.conn.execute_command("GRAPH.QUERY", PROBE, "CREATE (:T {id: 'a '})")


@pytest.fixture
def fault(monkeypatch) -> Fault:
    """Wherever the writer applies a batch (its pipeline, its retries, its quarantine): if the
    marked entry is in it, the server is sent the crashing statement first, so that it dies
    with the batch in flight."""
    kill = Fault()
    for module in (writer, held, quarantine):
        real = module.apply_writes

        def apply(graph, items, *args, _real=real, **kwargs):
            kill(graph, items)
            return _real(graph, items, *args, **kwargs)

        monkeypatch.setattr(module, "apply_writes", apply)
    return kill


def _start(tmp_path, events: list[ev.Event]) -> tuple[EmbeddedFalkorDB, Publisher]:
    """A server with the tenants and the bug armed, and ``events`` published before the
    workers start (so that they read them in one batch)."""
    server = EmbeddedFalkorDB(tmp_path / "data").start()
    conn = connect(server.url)
    for name in sorted({e.tenant for e in events}):
        tenants.create(conn, name, by="tests")
    arm(server.url)
    pub = Publisher(server.url, spool_dir=str(tmp_path / "spool"))
    for e in events:
        pub.publish(e)
    assert pub.flush(30) is not False
    return server, pub


def test_a_batch_the_server_dies_under_is_bisected_and_its_culprit_dead_lettered(
        tmp_path, fault, caplog):
    """The server dies twice under a batch of eight writes, then once under the half, the
    quarter and the marked entry alone each: that entry is dead-lettered at its first death
    alone ('the server died applying this', its tenant named) and never sent again, the seven
    others and later writes land, the workers and the API stay up, and health reports the
    crash loop with the server's crash line."""
    t, other = "crashq", "crashq-other"
    server, pub = _start(tmp_path, [seen(t, i, f"Acme {MARK}" if i == 5 else None)
                                    for i in range(8)] + [seen(other, 0)])
    url, conn = server.url, connect(server.url)
    policy = RestartPolicy(backoff_s=0.2, backoff_max_s=1.0, loop_after=3)
    settings = WorkerSettings(url=url, worker_id="crashq", reaper_idle_ms=2_000)
    api = Settings(admin_token="x" * 32)
    try:
        with caplog.at_level(logging.WARNING, logger="rescind.workers"), \
                Supervisor(server, policy) as supervisor, \
                api_thread(url, "127.0.0.1", free_port(), api,
                           server_status=supervisor.status) as base, \
                WorkerThread(settings, ("writer", "retraction", "reaper", "gate")) as workers:
            until("the seven other writes", lambda: count(url, t) == 7, 240)
            until("the dead letter", lambda: conn.xrange(layout.DEAD))
            # Later writes of both tenants land at once: the dead-lettered entry never reaches
            # the server again (the reaper leaves an entry acknowledged since its claim), so
            # the server is up, out of its crash loop, and the publisher's flush is prompt.
            pub.publish(seen(t, 100))
            pub.publish(seen(other, 1))
            assert pub.flush(30) is not False
            until("the later writes", lambda: count(url, t) == 8 and count(url, other) == 2)
            # Every entry acknowledged, the dead-lettered one too: none left to the reaper.
            until("every entry acknowledged", lambda: all(
                conn.xpending(s, layout.WRITER_GROUP)["pending"] == 0
                for s in layout.event_streams(settings.partitions)), 30)
            said = health(base)
            dead = conn.xrange(layout.DEAD)
            assert workers.error is None
    finally:
        pub.close()
        server.stop()

    # Bisected: two deaths under the eight (the first is taken for chance), then one under
    # each half that holds the entry, four, two, and the entry alone, once: 2 + log2(8).
    # Never again after its dead letter (before the reaper's fix, a claim the reaper took
    # before the dead letter redid it: [8, 8, 4, 2, 1, 1, 1], and a second dead letter).
    assert fault.killed == [8, 8, 4, 2, 1], fault.killed
    deaths = 5
    assert supervisor.restarts == deaths and supervisor.failure is None
    [(_, entry)] = dead
    fields = {k.decode(): v.decode() for k, v in entry.items()}
    assert fields["reason"].startswith(f"the server died applying this (tenant {t})"), fields
    assert fields["group"] == layout.WRITER_GROUP
    assert json.loads(fields["body"])["event_id"] == f"{t}-o5"

    assert said["ok"] is True and said["crash_loop"] is True, said
    restarts = said["server"]["restarts"]
    assert restarts["total"] == deaths and restarts["recent"] == deaths, restarts
    assert "crashed by signal: 11" in restarts["last_crash"], restarts
    assert "EnforceUniqueEntity" in restarts["last_crash"], restarts
    assert "crash loop" in said["detail"], said

    logged = [r.getMessage() for r in caplog.records if r.name == "rescind.workers"]
    halves = [m for m in logged if "tried in halves" in m]
    assert [re.search(r"in halves \((.*?)\)", m)[1] for m in halves] == [
        "4 and 4", "2 and 2", "1 and 1"], halves
    assert any("dead-lettered: the server died applying this" in m for m in logged), logged
    assert [m for m in logged if f"of tenant {t} in flight" in m][:2] == [
        "FalkorDB died with 8 write(s) of tenant crashq in flight; they are tried again whole, "
        "and in halves if it dies again",
        "FalkorDB died again with 8 write(s) of tenant crashq in flight; they are tried in "
        "halves (4 and 4), one half a round"], logged
    assert any(f"FalkorDB died {deaths} times with it in flight" in m for m in logged), logged
    crashes = (tmp_path / "data" / "falkordb.log").read_text(errors="replace")
    assert crashes.count("crashed by signal") == deaths


def test_one_death_under_a_batch_is_taken_for_chance(tmp_path, fault, caplog):
    """The server dies once under a batch and not when it is tried again: the death is counted
    once, the batch is tried again whole, every write lands, nothing is dead-lettered, and one
    restart is no crash loop."""
    t = "crashonce"
    fault.times = 1
    server, pub = _start(tmp_path, [seen(t, i, f"Acme {MARK}" if i == 2 else None)
                                    for i in range(4)])
    url, conn = server.url, connect(server.url)
    settings = WorkerSettings(url=url, worker_id="crashonce", reaper_idle_ms=2_000)
    policy = RestartPolicy(backoff_s=0.2, backoff_max_s=1.0, loop_after=3)
    try:
        with caplog.at_level(logging.WARNING, logger="rescind.workers"), \
                Supervisor(server, policy) as supervisor, \
                api_thread(url, "127.0.0.1", free_port(), Settings(admin_token="x" * 32),
                           server_status=supervisor.status) as base, \
                WorkerThread(settings, ("writer", "retraction", "reaper", "gate")):
            until("the four writes", lambda: count(url, t) == 4, 120)
            said = health(base)
            assert conn.xlen(layout.DEAD) == 0
    finally:
        pub.close()
        server.stop()
    assert fault.killed == [4] and supervisor.restarts == 1
    assert said["ok"] is True and said["crash_loop"] is False, said
    assert said["server"]["restarts"]["total"] == 1
    logged = [r.getMessage() for r in caplog.records if r.name == "rescind.workers"]
    # The one death counted once, against the four writes in flight, and no split.
    assert [m for m in logged if f"of tenant {t} in flight" in m] == [
        f"FalkorDB died with 4 write(s) of tenant {t} in flight; they are tried again whole, "
        "and in halves if it dies again"], logged
    assert not any("in halves (" in m for m in logged), logged


def test_a_culprit_acknowledged_after_the_reaper_claimed_it_is_not_sent_again(tmp_path, fault):
    """An entry the reaper claimed, then acknowledged by the writer (dead-lettered as what the
    server died applying) before the reaper's turn, is left alone: it never reaches the server."""
    t = "crashreap"
    server, pub = _start(tmp_path, [seen(t, 0, f"Acme {MARK}")])
    workers = None
    try:
        conn = connect(server.url)
        st.ensure_groups(conn)
        workers = Workers(WorkerSettings(url=server.url, worker_id="crashreap"))
        stream = layout.tenant_stream(t)
        group = layout.WRITER_GROUP
        # The writer is handed the entry; the reaper claims it (idle long enough) and waits
        # for the lock, while the writer dead-letters and acknowledges it.
        conn.xreadgroup(group, workers.consumer("writer"), {stream: ">"})
        _, [(entry_id, fields)], _ = conn.xautoclaim(stream, group, workers.consumer("reaper"),
                                                     0, "0-0")
        body = layout.decode(fields).data
        st.dead_letter(conn, stream, entry_id.decode(), body, quarantine.DIED, group)
        conn.xack(stream, group, entry_id)
        workers.reap(group, stream, entry_id.decode(), body)
        workers.pipeline.flush()
        assert fault.killed == [] and conn.ping()
        assert server.process.poll() is None
        assert count(server.url, t) == 0
        assert conn.xpending(stream, group)["pending"] == 0 and conn.xlen(layout.DEAD) == 1
        assert workers.held == {} and workers.trouble == {}
    finally:
        if workers is not None:
            workers.pipeline.close()
            workers.conn.close()
        pub.close()
        server.stop()
