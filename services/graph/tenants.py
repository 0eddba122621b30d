"""Tenants exist only when created: the registry, and the one function that creates a tenant.

A tenant is created by an admin (``POST /api/v1/tenants``, ``rescind tenant create``, or a
token made for a new tenant), or by a harness for itself (``rescind replay``, the demo, the
benchmarks, the tests), always through ``create``: it registers the name in ``layout.TENANTS``
and creates the graph's schema. The writer applies the events of registered tenants only
(``Known`` remembers the answer); an event of any other tenant is dead-lettered ("unknown
tenant …"), never the start of a graph. Graphs made before tenants had to be created are
registered once, by ``adopt_graphs``, the first time workers or an operator command meet them.
"""

from __future__ import annotations

import json
import logging
import time
from datetime import UTC, datetime

import redis

from rescind.contract import layout
from rescind.contract.errors import NotFound
from rescind.contract.layout import check_tenant
from rescind.graph.store import TenantGraph
from rescind.transport import connection

log = logging.getLogger("rescind.tenants")


class UnknownTenant(NotFound):
    """An event, a request or a command names a tenant that was never created."""

    def __init__(self, tenant: str) -> None:
        super().__init__(f"unknown tenant {tenant!r}: create it first (POST /api/v1/tenants, or "
                         f"`rescind tenant create {tenant}`)")
        self.tenant = tenant


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def create(conn: redis.Redis, name: str, by: str, schema: bool = True) -> bool:
    """Create tenant ``name``: register it (who, when) and, with ``schema``, create its graph's
    indexes now rather than at its first write. False when it existed already; BadTenantName
    for a name that may not reach a key."""
    name = check_tenant(name)
    created = bool(conn.hsetnx(layout.TENANTS, name,
                               json.dumps({"created_at": _now(), "created_by": by})))
    if schema:
        TenantGraph(conn, name).ensure_schema()
    return created


def known(conn: redis.Redis, name: str) -> bool:
    """Whether tenant ``name`` was created."""
    return bool(conn.hexists(layout.TENANTS, name))


def require(conn: redis.Redis, name: str) -> str:
    """``name`` if the tenant was created (graphs older than the registry adopted first);
    UnknownTenant otherwise."""
    adopt_graphs(conn)
    if not known(conn, check_tenant(name)):
        raise UnknownTenant(name)
    return name


def registered(conn: redis.Redis) -> dict[str, dict]:
    """Every tenant, with when and by whom it was created."""
    return {k.decode(): json.loads(v) for k, v in conn.hgetall(layout.TENANTS).items()}


def drop(conn: redis.Redis, name: str) -> None:
    """Remove a tenant a harness created for itself: its graph, status stream and registration
    (a replay that failed half-way, a benchmark's graph once measured). Unregistered first, so
    that a writer asking the registry from now on dead-letters the tenant's late events rather
    than making its graph again."""
    conn.hdel(layout.TENANTS, check_tenant(name))
    TenantGraph(conn, name).delete()
    conn.delete(layout.status_stream(name))


def adopt_graphs(conn: redis.Redis) -> list[str]:
    """Register, once per server, every tenant that holds a graph but no registration: made
    before tenants had to be created, when a first event or command made the graph. Later
    graphs come only from ``create``. Returns the names registered."""
    if not conn.set(layout.TENANTS_ADOPTED, _now(), nx=True):
        return []
    names = [n for n in map(layout.tenant_of_graph, connection.graph_keys(conn)) if n is not None]
    record = json.dumps({"created_at": None, "created_by": "adopted: it had a graph"})
    adopted = [n for n in names if conn.hsetnx(layout.TENANTS, n, record)]
    if adopted:
        log.warning("registered %d tenant(s) that had a graph but no registration (made before "
                    "tenants had to be created): %s", len(adopted), ", ".join(sorted(adopted)))
    return adopted


class Known:
    """Whether a tenant was created, as the writer asks it for every batch: a tenant found is
    remembered for ``ttl_s`` (one HEXISTS per tenant that often); one not found is asked again
    each time, so a tenant created a moment ago is known at once."""

    def __init__(self, conn: redis.Redis, ttl_s: float = 10.0) -> None:
        self.conn, self.ttl_s = conn, ttl_s
        self._seen: dict[str, float] = {}

    def __call__(self, tenant: str) -> bool:
        now = time.monotonic()
        seen = self._seen.get(tenant)
        if seen is not None and now - seen < self.ttl_s:
            return True
        if known(self.conn, tenant):
            self._seen[tenant] = now
            return True
        self._seen.pop(tenant, None)
        return False

    def forget(self, tenant: str) -> None:
        """Ask the registry again next time (a write of the tenant failed: dropped since?)."""
        self._seen.pop(tenant, None)


__all__ = ["Known", "UnknownTenant", "adopt_graphs", "create", "drop", "known", "registered",
           "require"]
