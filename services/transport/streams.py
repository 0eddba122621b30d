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
    (memory id -> status, cause, hops), on the tenant's status stream, for its agents' caches."""
    if not changed:
        return
    name = layout.status_stream(tenant)
    pipe = conn.pipeline(transaction=False)
    for mid, (status, why, hops) in changed.items():
        e = ev.StatusChanged(event_id=f"{op_id}:{rev}:{mid}", tenant=tenant,
                             at=at, memory=mid, status=status, cause=why, hops=hops,
                             revision=rev + 1, traceparent=traceparent)
        pipe.xadd(name, layout.encode(e.model_dump_json(by_alias=True)),
                  maxlen=layout.STATUS_MAXLEN, approximate=True)
    pipe.execute()


def forget_status(conn: redis.Redis, tenant: str) -> int:
    """Delete the tenant's status stream (when the tenant starts afresh); 1 if there was one."""
    return conn.delete(layout.status_stream(tenant))
