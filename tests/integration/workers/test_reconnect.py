"""Workers whose FalkorDB is killed and started again: they carry on once it is back, and the
outage is told in one line and its end in another, not once per subscriber per attempt."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

from rescind.contract import events as ev
from rescind.graph.store import TenantGraph, connect
from rescind.middleware.publisher import Publisher
from rescind.runtime.server import EmbeddedFalkorDB
from rescind.workers.app import WorkerSettings, WorkerThread

AT = datetime(2026, 11, 2, tzinfo=UTC)


def _publish(url: str, first: int, n: int) -> None:
    pub = Publisher(url, connect_timeout=0.2)
    for i in range(first, first + n):
        pub.publish(ev.ObservationRecorded(event_id=f"e{i}", tenant="rc", at=AT, source="feed",
                                           text=f"reading {i}"))
    pub.close(timeout=60)


def _count(url: str) -> int:
    graph = TenantGraph(connect(url), "rc")
    return graph.rows("MATCH (m:Mem) RETURN count(m)")[0][0] if graph.exists() else 0


def _until(what: str, check, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def test_workers_reconnect_after_a_killed_server_comes_back_and_say_so_once(tmp_path, caplog):
    server = EmbeddedFalkorDB(data_dir=tmp_path).start()
    workers = WorkerThread(WorkerSettings(url=server.url, worker_id="reconnect",
                                          reaper_idle_ms=2_000), ("writer", "reaper"))
    try:
        with caplog.at_level(logging.WARNING, logger="rescind.workers"):
            workers.start()
            _publish(server.url, 0, 100)
            _until("the first events", lambda: _count(server.url) == 100)
            server.process.kill()  # SIGKILL; the AOF keeps what was written
            server.process.wait()
            time.sleep(3)  # the workers' subscribers fail meanwhile, some of them twice
            server.restart()
            _publish(server.url, 100, 100)
            _until("the events published after the restart", lambda: _count(server.url) == 200)
            # The subscribers may resume before the watch's next look (its pause is up to 5 s).
            _until("the outage's end in the log",
                   lambda: any("answers again" in r.getMessage() for r in caplog.records))
    finally:
        workers.stop()
        server.stop()
    said = [r.getMessage() for r in caplog.records if r.name.startswith("rescind.workers")]
    assert sum("lost FalkorDB" in m for m in said) == 1, said
    assert sum("answers again" in m for m in said) == 1, said
    assert not [m for m in said if "fetch error" in m.lower()], said
