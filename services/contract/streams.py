"""The I/O on the stream layout that the services share: groups, dead letters, statuses.

The names and the envelope are in ``rescind.contract.layout``; this module only acts on them.
The agents' side needs none of it (its publisher, gate client and status cache read and write
their streams themselves, through the same layout).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

import redis

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.contract.errors import Invalid


def ensure_groups(conn: redis.Redis, partitions: int = layout.PARTITIONS,
                  groups: Iterable[str] = layout.GROUPS) -> None:
    """Declare every consumer group before anything is published (a new group starts at 0)."""
    for name in layout.event_streams(partitions):
        for group in groups:
            try:
                conn.xgroup_create(name, group, id="0", mkstream=True)
            except redis.ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise


def dead_letter(conn: redis.Redis | redis.client.Pipeline, source: str, entry_id: str,
                raw: object, reason: str, group: str) -> None:
    """Keep what could not be applied, with why, where operators can find and replay it."""
    body = raw if isinstance(raw, str) else json.dumps(raw, default=str)
    conn.xadd(layout.DEAD, {"stream": source, "id": entry_id, "group": group, "reason": reason,
                            "body": body[:layout.MAX_ENTRY_BYTES]})


def publish_status(conn: redis.Redis, tenant: str, op_id: str, rev: int,
                   changed: Mapping[str, tuple[str, str | None, int | None]], at,
                   traceparent: str | None = None) -> None:
    """One StatusChanged per memory that operation ``op_id``, committed at ``rev``, moved
    (memory id -> status, cause, hops), for the agents' caches."""
    pipe = conn.pipeline(transaction=False)
    for mid, (status, why, hops) in changed.items():
        e = ev.StatusChanged(event_id=f"{op_id}:{rev}:{mid}", tenant=tenant,
                             at=at, memory=mid, status=status, cause=why, hops=hops,
                             revision=rev + 1, traceparent=traceparent)
        pipe.xadd(layout.STATUS, layout.encode(e.model_dump_json(by_alias=True)),
                  maxlen=layout.STATUS_MAXLEN, approximate=True)
    pipe.execute()


def forget_status(conn: redis.Redis, tenant: str, chunk: int = 5000) -> int:
    """Delete a tenant's StatusChanged entries (when the tenant starts afresh): agents' caches
    read the stream from the start and would otherwise hide the new run's memories."""
    gone, start = 0, "-"
    while True:
        entries = conn.xrange(layout.STATUS, min=start, max="+", count=chunk)
        if not entries:
            return gone
        ids = [i for i, fields in entries if _tenant_of(fields) == tenant]
        if ids:
            gone += conn.xdel(layout.STATUS, *ids)
        if len(entries) < chunk:
            return gone
        start = "(" + entries[-1][0].decode()


def _tenant_of(fields: dict) -> str | None:
    try:
        return layout.decode(fields).event().get("tenant")
    except Invalid:
        return None
