"""Workers outlive their server: it is stopped and started again on the same port (with its
data, as `rescind up` restarts it; or empty), and the workers come back by themselves, saying
so once per outage, not once per subscriber and attempt."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

import pytest

from rescind.contract import events as ev
from rescind.graph import tenants
from rescind.graph.store import TenantGraph, connect
from rescind.middleware.publisher import Publisher
from rescind.runtime.server import EmbeddedFalkorDB
from rescind.workers.app import WorkerSettings, WorkerThread
from rescind.workers.link import Link

AT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def seen(tenant: str, i: int) -> ev.ObservationRecorded:
    return ev.ObservationRecorded(event_id=f"o{i}", tenant=tenant, at=AT, source="portal:acme",
                                  text=f"Acme account {i}")


def count(url: str, tenant: str) -> int:
    g = TenantGraph(connect(url), tenant)
    return g.rows("MATCH (m:Mem) RETURN count(m)")[0][0] if g.exists() else 0


def pauses_while_down(monkeypatch) -> list[float]:
    """The pauses the workers' link chooses before each probe while the server is away."""
    chosen: list[float] = []
    pause = Link.pause

    def counted(self: Link) -> float:
        down, seconds = not self.up, pause(self)
        if down:
            chosen.append(seconds)
        return seconds

    monkeypatch.setattr(Link, "pause", counted)
    return chosen


def until(check, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.mark.parametrize("keeps_data", [True, False], ids=["with-its-data", "empty"])
def test_workers_come_back_when_the_server_does_and_say_it_once(tmp_path, caplog, keeps_data,
                                                                monkeypatch):
    """Stopped, then started on the same port after several failed probes (each pause longer
    than the last): the workers take the next event within a pause, and say once that they lost
    the server and once that it answers again, with no traceback."""
    t = "reconnect"
    probes = pauses_while_down(monkeypatch)
    server = EmbeddedFalkorDB(tmp_path / "data" if keeps_data else None).start()
    port = server.port
    tenants.create(connect(server.url), t, by="tests")
    pub = Publisher(server.url, spool_dir=str(tmp_path / "spool"))
    settings = WorkerSettings(url=server.url, worker_id="reconnect", reaper_idle_ms=2_000)
    try:
        with caplog.at_level(logging.INFO, logger="rescind.workers"), \
                WorkerThread(settings, ("writer", "retraction", "reaper", "gate")):
            pub.publish(seen(t, 1))
            pub.flush()
            until(lambda: count(server.url, t) == 1, 10, "the first event never landed")
            server.stop()
            # several probes, each pause longer than the last (0.1 s, 0.2, 0.4, 0.8 s)
            until(lambda: len(probes) >= 4, 20, "the workers did not look for the server")
            assert probes[:4] == sorted(set(probes[:4]))
            server = EmbeddedFalkorDB(tmp_path / "data" if keeps_data else None, port=port)
            server.start()
            if not keeps_data:  # an empty server: the tenant is created again
                tenants.create(connect(server.url), t, by="tests")
            back = time.monotonic()
            pub.publish(seen(t, 2))
            pub.flush(10)
            until(lambda: count(server.url, t) == (2 if keeps_data else 1), 10,
                  "the workers did not come back")
            assert time.monotonic() - back < 5  # at most one pause (2 s) after it is back
    finally:
        pub.close()
        server.stop()
    # Rescind's own lines: on a cluster, redis-py may say meanwhile that an async client of
    # an earlier test was never closed, when the garbage collector finds it.
    said = [r.getMessage() for r in caplog.records
            if r.levelno >= logging.WARNING and r.name.startswith("rescind")]
    assert len([m for m in said if m.startswith("lost FalkorDB")]) == 1, said
    assert len([m for m in said if m.startswith("FalkorDB answers again")]) == 1, said
    assert [r for r in caplog.records if r.exc_info] == []  # no traceback at all
    assert len(said) == 2, said


def test_workers_started_while_the_server_is_away_wait_for_it(tmp_path, caplog):
    """As when `rescind up` restarts a killed server while its workers start: no traceback,
    one line, and the events published once it is back land."""
    t = "late"
    server = EmbeddedFalkorDB(tmp_path / "data").start()
    tenants.create(connect(server.url), t, by="tests")
    server.process.kill()  # SIGKILL; the AOF keeps the tenant
    server.process.wait()
    settings = WorkerSettings(url=server.url, worker_id="late", reaper_idle_ms=2_000)
    pub = None
    try:
        with caplog.at_level(logging.INFO, logger="rescind.workers"), \
                WorkerThread(settings, ("writer", "retraction", "reaper", "gate")):
            until(lambda: any(r.getMessage().startswith("lost FalkorDB")
                              for r in caplog.records), 10, "the workers never found it away")
            server.restart()  # same port and data, as `rescind up` does
            pub = Publisher(server.url, spool_dir=str(tmp_path / "spool"))
            pub.publish(seen(t, 1))
            pub.flush(10)
            until(lambda: count(server.url, t) == 1, 15, "the workers never began")
    finally:
        if pub is not None:
            pub.close()
        server.stop()
    # Rescind's own lines: on a cluster, redis-py may say meanwhile that an async client of
    # an earlier test was never closed, when the garbage collector finds it.
    said = [r.getMessage() for r in caplog.records
            if r.levelno >= logging.WARNING and r.name.startswith("rescind")]
    assert len([m for m in said if m.startswith("lost FalkorDB")]) == 1, said
    assert [r for r in caplog.records if r.exc_info] == []
