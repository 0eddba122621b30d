"""The writer role: justified writes in batches, each tenant's share in one guarded query,
acknowledged once it has landed (and, with replicas, once one has it); the statuses a write
changed are published before its events are acknowledged. What it holds back and tries again
is ``rescind.workers.held``.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections import defaultdict

import redis

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.contract.errors import Invalid
from rescind.core.shapes import Change
from rescind.engine.writes import Pipeline
from rescind.graph import tenants
from rescind.graph.store import TenantGraph, log_failure
from rescind.runtime import telemetry
from rescind.transport import connection
from rescind.transport import streams as st
from rescind.workers.held import HeldWrites
from rescind.workers.ingest import apply_writes, decode
from rescind.workers.shared import Shared
from rescind.workers.state import Held, Trouble

log = logging.getLogger("rescind.workers")


class Unreplicated(redis.ConnectionError):
    """Written on a master, but no replica confirmed it in time: held like a lost connection
    (tried again; applying again is a no-op)."""


class Writer(HeldWrites):
    """The writer: its pipeline, the writes it holds back, and each tenant's trouble."""

    def __init__(self, shared: Shared) -> None:
        super().__init__(shared)
        # A batch is written while the next is read and planned; once it lands, the statuses it
        # changed are published before its events are acknowledged.
        self.pipeline = Pipeline(moved=self._moved)
        self.held: dict[tuple[str, str], Held] = {}  # by (stream, entry id): ids repeat across streams
        self._lost_batches: list[tuple[str, str, list, BaseException, float]] = []  # the lander's
        self._lost_lock = threading.Lock()
        self.trouble: dict[tuple[str, str], Trouble] = {}  # by (stream, tenant)
        self._unknown: set[str] = set()  # tenants whose events were dead-lettered (logged once)

    def write_batch(self, stream: str, entries: list[tuple[str, object]]) -> None:
        """Decode, dead-letter what cannot be applied, apply the rest, ack all but held ones."""
        telemetry.batch_size.record(len(entries))
        by_tenant: dict[str, list[tuple[str, ev.Event]]] = defaultdict(list)
        done: list[str] = []
        for entry_id, body in entries:
            try:
                event = decode(body)
            except Invalid as exc:
                self.failures.dead_letter(self.conn, stream, entry_id, body, str(exc),
                                          layout.WRITER_GROUP)
                done.append(entry_id)
                continue
            if isinstance(event, ev.WRITES):
                by_tenant[event.tenant].append((entry_id, event))
            else:
                done.append(entry_id)  # the retraction group's business
        for tenant, items in by_tenant.items():
            if not self.known(tenant):  # never the start of a graph
                self._dead_tenant(stream, layout.WRITER_GROUP, tenant, items)
                done += [k for k, _ in items]
                continue
            try:
                held = apply_writes(self.graph(tenant), items, self.pipeline)
            except Exception as exc:  # held for retry (a restarting server, say): not acked
                if self.dropped(tenant):
                    self._dead_tenant(stream, layout.WRITER_GROUP, tenant, items)
                    done += [k for k, _ in items]
                else:
                    self._failed(stream, tenant, items, exc, time.monotonic())
                continue
            kept = {p.key for p in held}
            now = time.monotonic()
            for p in held:
                self.held.setdefault((stream, p.key),
                                     Held(stream, p.key, p.event, now, p.missing))
            self._waiting(tenant, [m for p in held for m in p.missing])
            sent = [(k, e) for k, e in items if k not in kept]
            # Acknowledged once the batch is in the graph; if it cannot be written, held.
            self.pipeline.then(functools.partial(self._landed, stream, tenant, sent),
                               functools.partial(self._not_landed, stream, tenant, sent))
        self._ack(stream, layout.WRITER_GROUP, done)
        if len(entries) < self.settings.batch:  # the stream was drained: nothing to wait for
            self.pipeline.flush()

    def _dead_tenant(self, stream: str, group: str, tenant: str,
                     items: list[tuple[str, ev.Event]]) -> None:
        """Events of a tenant that was never created: dead-lettered, logged once a tenant."""
        why = tenants.UnknownTenant(tenant).message
        for k, e in items:
            self.failures.dead_letter(self.conn, stream, k, e, why, group)
        if tenant not in self._unknown:
            if len(self._unknown) < 10_000:
                self._unknown.add(tenant)
            log.warning("%d event(s) of tenant %s dead-lettered: the tenant was never created, or "
                        "was dropped "
                        "(said once a tenant)", len(items), tenant)

    def _landed(self, stream: str, tenant: str, items: list[tuple[str, ev.Event]]) -> None:
        try:
            # With replicas, acknowledged only once one has the batch: a failover then loses
            # no acknowledged write (the events of one not yet replicated are applied again).
            if not connection.replicated(self.conn, layout.graph_key(tenant)):
                raise Unreplicated(f"no replica of {tenant}'s master had its writes in time")
            self._ack(stream, layout.WRITER_GROUP, [k for k, _ in items])
        except Exception as exc:  # written but not acknowledged: applying again is a no-op
            self._not_landed(stream, tenant, items, exc)
            return
        telemetry.events_applied.add(len(items), {"tenant": tenant})

    def _not_landed(self, stream: str, tenant: str, items: list[tuple[str, ev.Event]],
                    exc: BaseException) -> None:
        """A batch the pipeline could not write (its thread): held at the next round."""
        with self._lost_lock:
            self._lost_batches.append((stream, tenant, items, exc, time.monotonic()))

    def _moved(self, graph: TenantGraph, rev: int, at: int, changed: dict[str, Change]) -> None:
        """A write batch landed that took memories OUT (born on an OUT premise) or brought
        them back IN: the tenant's agents' caches hear of it, as of a retraction."""
        st.publish_status(self.conn, graph.tenant, "write", rev, changed, ev.from_micros(at))

    def _waiting(self, tenant: str, premises: list[str], done: bool = False) -> None:
        """Tell health which premises writes wait for (since when), or no longer wait for."""
        fields = sorted({f"{tenant} {m}" for m in premises if not m.startswith("error:")})
        if not fields:
            return
        try:
            if done:
                self.conn.hdel(layout.WAITING, *fields)
            else:
                pipe = self.conn.pipeline(transaction=False)
                for f in fields:
                    pipe.hsetnx(layout.WAITING, f, int(time.time()))
                pipe.execute()
        except Exception:  # health is told on a best-effort basis; the writes go on
            log_failure(log, "could not record which premises writes wait for")


__all__ = ["Unreplicated", "Writer"]
