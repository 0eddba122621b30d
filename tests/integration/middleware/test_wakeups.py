"""The recorder's and the publisher's threads wake only when there is work: a batch of
recording steps is sent in one go at its end, an idle sender does not poll, and an idle
recorder's thread stops looking for steps after ``IDLE_S`` (docs/performance.md, "Recording
without the idle wake-ups")."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

from rescind.contract import events as ev
from rescind.middleware.publisher import Publisher
from rescind.middleware.recorder import Later
from rescind.transport import connection
from tests.support.stream_entries import events_of

AT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def _sent(conn, pub: Publisher, tenant: str) -> int:
    return len(events_of(conn, pub.stream_of(tenant), tenant))


def _wait_for(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def _switches(name: str) -> int:
    """Times the thread called ``name`` gave up the CPU of its own accord (each wake-up from
    a wait is one), from /proc."""
    thread = next(t for t in threading.enumerate() if t.name == name)
    with open(f"/proc/self/task/{thread.native_id}/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status
                    if line.startswith("voluntary_ctxt_switches"))


def _event(tenant: str, i: int) -> ev.ObservationRecorded:
    return ev.ObservationRecorded(event_id=f"w{i}", tenant=tenant, at=AT, source="s",
                                  text=f"held {i}")


def test_a_held_batch_is_sent_at_its_end_in_one_send_without_the_linger(falkordb, tenant_name):
    """Events published while a batch of recording steps holds the publisher wait for its end
    (the sender is not woken for the first of them), then leave at once in one pipeline, long
    before the linger (60 s) would have sent them."""
    pub = Publisher(falkordb, tenant=tenant_name, linger_s=60.0)
    conn = connection.connect(falkordb)
    try:
        pub.hold()
        for i in range(3):
            pub.publish(_event(tenant_name, i))
        time.sleep(0.3)  # a negative: the batch has not ended, nothing is sent
        assert _sent(conn, pub, tenant_name) == 0 and pub.stats.spooled == 3
        pub.release()
        assert _wait_for(lambda: _sent(conn, pub, tenant_name) == 3, 10)
        assert _wait_for(lambda: pub.stats.batches >= 1, 10) and pub.stats.batches == 1
    finally:
        pub.close()


def test_an_idle_sender_does_not_wake_to_poll(falkordb, tenant_name):
    """With nothing to send, the sending thread sleeps until what brings work wakes it (or
    the next look for a dead sibling's segments, every ``CLAIM_EVERY_S``): no wake-up in a
    second and a half of idleness (it polled every 0.5 s before)."""
    pub = Publisher(falkordb, tenant=tenant_name)
    try:
        pub.publish(_event(tenant_name, 0))
        assert pub.flush(10)
        time.sleep(0.3)  # the send's own wake-ups are over
        before = _switches("rescind-publisher")
        time.sleep(1.5)
        assert _switches("rescind-publisher") - before <= 1
        pub.publish(_event(tenant_name, 1))  # and work still wakes it
        assert _wait_for(lambda: pub.stats.published == 2, 10)
    finally:
        pub.close()


def test_an_idle_recorder_thread_sleeps_after_a_short_look_and_is_woken_by_the_next_step():
    """Once it has no step, the recorder's thread looks again for ``IDLE_S`` (two lingers),
    not a whole second (as it did), then sleeps without waking; the next step wakes it and
    runs."""
    later = Later(linger_s=0.05)
    ran: list[int] = []
    later(ran.append, 1)
    assert later.drain(10) and ran == [1]
    began = time.monotonic()
    assert _wait_for(lambda: later._asleep, 5)
    assert time.monotonic() - began < 0.8  # a second's looking took 1 s at least
    before = _switches("rescind-recorder")
    time.sleep(0.6)
    assert _switches("rescind-recorder") - before <= 1
    later(ran.append, 2)
    assert _wait_for(lambda: ran == [1, 2], 5)
    later.close()


def test_each_batch_of_steps_is_held_and_released_even_when_a_step_raises():
    """The hooks around a batch (the publisher's hold and release) run once around each batch
    of steps, the release also after a step that raised."""
    log: list[str] = []
    later = Later(linger_s=30, around=(lambda: log.append("hold"),
                                       lambda: log.append("release")))

    def boom() -> None:
        raise ValueError("a faulty step")

    later(log.append, "a")
    later(boom)
    later(log.append, "b")
    assert later.drain(10)
    assert log == ["hold", "a", "b", "release"] and later.failed == 1
    later(log.append, "c")
    assert later.drain(10)
    assert log[4:] == ["hold", "c", "release"]
    later.close()
