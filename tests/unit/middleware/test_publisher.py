"""The agent-side publisher with no server to reach: it never blocks and its buffer is bounded."""

from __future__ import annotations

from datetime import UTC, datetime

from rescind.contract import events as ev
from rescind.middleware.publisher import Publisher
from rescind.runtime.server import free_port

AT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def test_the_publisher_buffer_is_bounded_and_counts_what_it_drops():
    """Past its capacity the buffer drops the oldest events and says how many."""
    pub = Publisher(f"redis://127.0.0.1:{free_port()}", capacity=10, connect_timeout=0.2)
    for i in range(25):
        pub.publish(ev.ObservationRecorded(event_id=f"e{i}", tenant="offline", at=AT,
                                           source="s", text=f"t{i}"))
    assert pub.backlog == 10 and pub.stats.dropped == 15
