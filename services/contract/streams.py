"""The stream layout: partitioned event streams, consumer groups, envelopes, dead letters.

Layout (documented in docs/architecture.md):
- ``rescind:events:{p}`` for p in 0..N-1 carries every event of the tenants hashed to p
  (crc32(tenant) mod N), in publish order. One stream per partition keeps the subscribers
  static while tenants come and go; N bounds the parallelism of each consumer group.
- Groups ``rescind-writer`` (justified writes) and ``rescind-retraction`` (security and finance
  decisions) each read every partition; each ignores the other's event types.
- ``rescind:dead`` receives what cannot be applied, with the reason; ``rescind:status`` the
  StatusChanged events the retraction worker emits.

Entries hold one field ``__data__``: a JSON envelope ``{"data": <event JSON>, "headers": {...}}``
that FastStream's parser reads with its headers (so ``traceparent`` continues the trace).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable

import redis

from rescind.contract import events as ev

DATA = "__data__"
WRITER_GROUP = "rescind-writer"
RETRACTION_GROUP = "rescind-retraction"
GROUPS = (WRITER_GROUP, RETRACTION_GROUP)
GATE_GROUP = "rescind-gate"
GATE = "rescind:gate"  # GateAsked requests; answers go to the list each request names
DEAD = "rescind:dead"
STATUS = "rescind:status"
DEFAULT_PARTITIONS = 4
MAX_ENTRY_BYTES = 256 * 1024  # larger entries are dead-lettered unread


def stream(partition: int) -> str:
    return f"rescind:events:{partition}"


def streams(partitions: int = DEFAULT_PARTITIONS) -> list[str]:
    return [stream(p) for p in range(partitions)]


def partition_of(tenant: str, partitions: int = DEFAULT_PARTITIONS) -> int:
    return zlib.crc32(tenant.encode()) % partitions


def envelope(event_json: str, headers: dict[str, str] | None = None) -> dict[str, str]:
    """One stream entry, in the JSON envelope FastStream's parser understands."""
    return {DATA: json.dumps({"data": event_json, "headers": headers or {}})}


def ensure_groups(conn: redis.Redis, partitions: int = DEFAULT_PARTITIONS,
                  groups: Iterable[str] = GROUPS) -> None:
    """Declare every consumer group before anything is published (a new group starts at 0)."""
    for name in streams(partitions):
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
    conn.xadd(DEAD, {"stream": source, "id": entry_id, "group": group, "reason": reason,
                     "body": body[:MAX_ENTRY_BYTES]})


def publish_status(conn: redis.Redis, tenant: str, result: dict, at, traceparent: str | None
                   = None) -> None:
    """One StatusChanged per memory a committed operation moved, for the agents' caches."""
    pipe = conn.pipeline(transaction=False)
    for mid, (status, why, hops) in result.get("changed", {}).items():
        e = ev.StatusChanged(event_id=f"{result['id']}:{result['rev']}:{mid}", tenant=tenant,
                             at=at, memory=mid, status=status, cause=why, hops=hops,
                             revision=result["rev"] + 1, traceparent=traceparent)
        pipe.xadd(STATUS, envelope(e.model_dump_json(by_alias=True)), maxlen=100_000,
                  approximate=True)
    pipe.execute()


def forget_status(conn: redis.Redis, tenant: str, chunk: int = 5000) -> int:
    """Delete a tenant's StatusChanged entries (when the tenant starts afresh): agents' caches
    read the stream from the start and would otherwise hide the new run's memories."""
    gone, start = 0, "-"
    while True:
        entries = conn.xrange(STATUS, min=start, max="+", count=chunk)
        if not entries:
            return gone
        ids = [i for i, fields in entries if _tenant_of(fields) == tenant]
        if ids:
            gone += conn.xdel(STATUS, *ids)
        if len(entries) < chunk:
            return gone
        start = "(" + entries[-1][0].decode()


def _tenant_of(fields: dict) -> str | None:
    try:
        return json.loads(json.loads(fields[DATA.encode()])["data"]).get("tenant")
    except (KeyError, ValueError, TypeError):
        return None
