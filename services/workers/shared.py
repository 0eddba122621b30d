"""What the worker roles share: their settings, one connection, the tenants' graphs, whether
the server answers, which tenants exist, and how entries last failed (``Shared``); and each
role's view of it (``Role``). The roles themselves are ``rescind.workers.writer``,
``retraction``, ``gate`` and ``reaper``, put together in ``rescind.workers.roles``.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from rescind.contract import layout
from rescind.engine.gate import GatePolicy
from rescind.engine.versions import migrate_store_marks
from rescind.graph import tenants
from rescind.graph.store import TenantGraph, connect
from rescind.operator.audit import AuditLog
from rescind.transport import connection
from rescind.workers.link import Link
from rescind.workers.policy import Failures, lost_connection

log = logging.getLogger("rescind.workers")


@dataclass
class WorkerSettings:
    url: str
    worker_id: str = "0"
    partitions: int = layout.PARTITIONS
    batch: int = 500
    polling_ms: int = 50
    reaper_idle_ms: int = 30_000
    max_deliveries: int = 5
    patience_s: float = 300.0  # how long a write may wait for its premise
    # Writes that failed are tried again at the next round (``retry_s`` apart), then with a
    # pause that doubles up to ``retry_max_s``; a batch that fails twice the same way is split.
    retry_s: float = 0.2
    retry_max_s: float = 10.0
    applied_wait_s: float = 3.0  # how long the gate waits for what an asker published
    gate: GatePolicy = field(default_factory=GatePolicy)  # RESCIND_GATE_*, as the API's
    audit_max_live: int = layout.AUDIT_MAXLEN  # RESCIND_AUDIT_MAX_LIVE, as the API's


class Shared:
    """The state the roles share: connections, graphs by tenant, the link to the server, the
    tenant registry's cache and the failures remembered per entry."""

    def __init__(self, settings: WorkerSettings) -> None:
        self.settings = settings
        self.conn = connect(settings.url)
        self.audit = AuditLog(self.conn, settings.audit_max_live)
        self.graphs: dict[str, TenantGraph] = {}
        self.lock = asyncio.Lock()  # one batch at a time per process keeps the graph linear
        self.link = Link()  # whether the server answers (rescind.workers.app watches it)
        self.known = tenants.Known(self.conn)  # tenants exist only when created
        self.failures = Failures()  # how each entry last failed, for the reaper's dead letter

    def graph(self, tenant: str) -> TenantGraph:
        if tenant not in self.graphs:
            graph = TenantGraph(self.conn, tenant)
            self._migrate(graph)
            self.graphs[tenant] = graph
        return self.graphs[tenant]

    @staticmethod
    def _migrate(graph: TenantGraph) -> None:
        """Once per process and tenant, before its first event: store versions marked under the
        old rule (an update or delete as a withdrawal) become merely not current, and what the
        marks held OUT is settled (rescind.engine.versions; one read when there is none)."""
        try:
            if not graph.exists():
                return
            done = migrate_store_marks(graph)
        except Exception as exc:  # the events are applied either way; the next process retries
            log.warning("%s: could not move old store marks (%s)", graph.tenant, exc)
            return
        if done["versions"]:
            log.info("%s: %d store version(s) marked under the old rule are now not current; "
                     "%d memories changed status", graph.tenant, done["versions"], done["moved"])

    def dropped(self, tenant: str) -> bool:
        """After a tenant's write or decision failed: whether the tenant is gone from the
        registry (dropped while the writer remembered it as known; its graph with it). What was
        remembered of it is forgotten either way, so a tenant made again starts afresh."""
        self.known.forget(tenant)
        self.graphs.pop(tenant, None)
        try:
            return not tenants.known(self.conn, tenant)
        except Exception:  # noqa: BLE001 - the server away: the failure is handled as such
            return False

    def redirected(self, tenant: str, exc: BaseException) -> None:
        """The tenant's slot is moving or moved to another master (``rescind.runtime.move``):
        its graph is made again, on the master that owns the slot now."""
        if connection.redirected(self.conn, exc):
            self.graphs.pop(tenant, None)

    def consumer(self, role: str) -> str:
        return f"{role}-{self.settings.worker_id}"

    def ack(self, stream: str, group: str, ids: list[str]) -> None:
        if ids:
            self.conn.xack(stream, group, *ids)


class Role:
    """One role's view of what the roles share (read through, so that what is swapped on the
    ``Shared`` object, a connection say, is what every role sees)."""

    def __init__(self, shared: Shared) -> None:
        self.shared = shared

    conn = property(lambda self: self.shared.conn)
    settings = property(lambda self: self.shared.settings)
    link = property(lambda self: self.shared.link)
    known = property(lambda self: self.shared.known)
    audit = property(lambda self: self.shared.audit)
    failures = property(lambda self: self.shared.failures)

    def graph(self, tenant: str) -> TenantGraph:
        return self.shared.graph(tenant)

    def dropped(self, tenant: str) -> bool:
        return self.shared.dropped(tenant)

    def consumer(self, role: str) -> str:
        return self.shared.consumer(role)

    def _ack(self, stream: str, group: str, ids: list[str]) -> None:
        self.shared.ack(stream, group, ids)

    def _redirected(self, tenant: str, exc: BaseException) -> None:
        self.shared.redirected(tenant, exc)

    def _lost(self, exc: BaseException) -> bool:
        """A lost connection is the Link's to say (True); any other failure is the caller's."""
        if lost_connection(exc):
            self.link.lost(exc)
            return True
        return False


__all__ = ["Role", "Shared", "WorkerSettings"]
