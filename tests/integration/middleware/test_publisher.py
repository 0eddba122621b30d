"""The agent-side publisher when its server comes and goes."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from rescind.contract import events as ev
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
    time.sleep(0.5)
    assert pub.backlog == 100 and pub.stats.failures >= 1 and pub.stats.published == 0
    with EmbeddedFalkorDB(port=port) as server:
        assert pub.flush(timeout=20)
        assert pub.stats.published == 100
        conn = connection.connect(server.url)
        assert conn.xlen(pub.stream_of("offline")) == 100
        pub.close()
