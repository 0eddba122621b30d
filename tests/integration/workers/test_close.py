"""A broker whose subscribers fail to stop (the server gone) still closes its client: FastStream
raises before it closes it, and the cluster run's CI saw such clients found open, later, by the
garbage collector."""

from __future__ import annotations

import asyncio

import pytest
import redis

from rescind.transport import connection
from rescind.workers.app import WorkerSettings, _close, build


def _clients(url: str, name: str) -> int:
    """Connections of library ``name`` on every master (one server, or each of a cluster's)."""
    conn = connection.connect(url)
    return sum(1 for node in connection.primaries(conn) for c in node.client_list()
               if c.get("lib-name") == name)


def _failing(stop):
    async def stop_then_fail() -> None:
        await stop()
        raise redis.ConnectionError("the server went away")
    return stop_then_fail


@pytest.mark.parametrize("fails", [False, True], ids=["stops", "a-subscriber-fails-to-stop"])
def test_a_stopped_broker_leaves_no_client_open(falkordb, fails):
    async def scenario() -> tuple[int, int]:
        broker, workers = build(WorkerSettings(url=falkordb, worker_id="close"), ("gate",))
        try:
            await broker.start()
            await broker.config.broker_config.connection.client.ping()
            opened = _clients(falkordb, "faststream")

            for sub in broker.subscribers if fails else ():  # each stops, then says it failed
                sub.stop = _failing(sub.stop)
            await _close(broker)
            await asyncio.sleep(0.5)  # a read in flight at stop() used to open it again
            return opened, _clients(falkordb, "faststream")
        finally:
            workers.conn.close()

    before = _clients(falkordb, "faststream")
    opened, after = asyncio.run(scenario())
    assert opened > before
    assert after == before
