"""Reading the dead-letter stream in tests: what a worker set aside since a point, and why."""

from __future__ import annotations

from rescind.contract import layout


def last_dead_id(conn) -> str:
    """A point to read from: after the newest dead letter (or from the start)."""
    last = conn.xrevrange(layout.DEAD, count=1)
    return "(" + last[0][0].decode() if last else "-"


def dead_since(conn, start: str) -> list[dict]:
    """The dead letters after ``start``, as text fields."""
    return [{k.decode(): v.decode() for k, v in f.items()}
            for _, f in conn.xrange(layout.DEAD, min=start)]
