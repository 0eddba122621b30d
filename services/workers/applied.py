"""Whether the writer has applied what an agent published before it asked the gate.

The gate judges a payment by the graph. An agent that read an ERP record and a portal and then
asked at once was judged before the writer had applied its reads (refused on one domain, allowed
seconds later). So a question carries, per events stream, the id of the last entry its asker
sent (``GateAsked.seen``), and the gate waits, bounded, until the writer's group has read past
it and holds none of it pending (the writer acknowledges an entry once its write has landed).
"""

from __future__ import annotations

import time

import redis

from rescind.contract import layout


def _id(entry: str | bytes) -> tuple[int, int]:
    text = entry.decode() if isinstance(entry, bytes) else str(entry)
    ms, _, seq = text.partition("-")
    return int(ms), int(seq or 0)


def bad_position(seen: dict[str, str], partitions: int) -> str | None:
    """Why ``seen`` cannot be waited for (a stream that is not an events stream, an entry id
    that is not one); None when it can."""
    streams = set(layout.event_streams(partitions))
    for stream, entry in seen.items():
        if stream not in streams:
            return f"{stream!r} is not an events stream"
        try:
            _id(entry)
        except ValueError:
            return f"{entry!r} is not a stream entry id"
    return None


def applied_through(conn: redis.Redis, seen: dict[str, str],
                    group: str = layout.WRITER_GROUP) -> bool:
    """True once ``group`` has read every stream in ``seen`` up to its entry and acknowledged
    everything up to it."""
    for stream, entry in seen.items():
        try:
            groups = {g["name"].decode() if isinstance(g["name"], bytes) else g["name"]: g
                      for g in conn.xinfo_groups(stream)}
        except redis.ResponseError:  # no such stream yet
            return False
        g = groups.get(group)
        if g is None or _id(g["last-delivered-id"]) < _id(entry):
            return False
        if conn.xpending_range(stream, group, min="-", max=entry, count=1):
            return False
    return True


def wait_applied(conn: redis.Redis, seen: dict[str, str], timeout_s: float) -> bool:
    """``applied_through`` within ``timeout_s`` (polled)."""
    deadline, pause = time.monotonic() + timeout_s, 0.002
    while not applied_through(conn, seen):
        if time.monotonic() > deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
    return True


__all__ = ["applied_through", "bad_position", "wait_applied"]
