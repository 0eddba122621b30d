"""What each worker role does with the entries it is handed, apart from how FastStream hands
them over (``rescind.workers.app``): the writer batches justified writes (and tells the agents
of the statuses a write changed), the retraction role applies decisions and tells the agents,
the gate answers, the reaper retries or dead-letters.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field

import redis

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.contract.errors import Invalid
from rescind.core.shapes import Change, GateDecision, RetractionResult
from rescind.engine.gate import (
    EXPIRED,
    GateCall,
    GatePolicy,
    UnknownAction,
    is_expired,
    judge,
    late,
    record,
)
from rescind.engine.versions import migrate_store_marks
from rescind.engine.writes import Pipeline
from rescind.graph import tenants
from rescind.graph.store import TenantGraph, connect
from rescind.operator.audit import ALLOWED, BLOCKED, Actor, AuditLog
from rescind.runtime import telemetry
from rescind.transport import connection
from rescind.transport import streams as st
from rescind.workers.applied import bad_position, wait_applied
from rescind.workers.held import Held, HeldWrites, Trouble
from rescind.workers.ingest import apply_control, apply_writes, decode, refused
from rescind.workers.link import Link
from rescind.workers.poison import (
    Refused,
    lost_connection,
    reason,
    signature,
    transient,
    words,
)

log = logging.getLogger("rescind.workers")


class Unreplicated(redis.ConnectionError):
    """Written on a master, but no replica confirmed it in time: held like a lost connection
    (tried again; applying again is a no-op)."""


# Who asks the gate through its stream: the tenant's wrapped agents (their requests carry no
# token; the trace id in the detail leads to the agent's own span).
GATE_ASKER = Actor("agents", "agent", "", "stream")


def gate_detail(d: GateDecision, asked: ev.GateAsked) -> dict:
    """What the audit keeps of a gate decision (the graph's Gate node keeps all of it)."""
    return {"reason": d.reason, "fragility": d.fragility, "amount": d.amount,
            "currency": d.currency, "payee": d.payee, "trace": asked.traceparent}


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


class Workers(HeldWrites):
    """The state the handlers share: connections, graphs by tenant, and held writes."""

    def __init__(self, settings: WorkerSettings) -> None:
        self.settings = settings
        self.conn = connect(settings.url)
        self.audit = AuditLog(self.conn, settings.audit_max_live)
        self.graphs: dict[str, TenantGraph] = {}
        self.held: dict[tuple[str, str], Held] = {}  # by (stream, entry id): ids repeat across streams
        self.lock = asyncio.Lock()  # one batch at a time per process keeps the graph linear
        # A batch is written while the next is read and planned; once it lands, the statuses it
        # changed are published before its events are acknowledged.
        self.pipeline = Pipeline(moved=self._moved)
        self._lost: list[tuple[str, str, list, BaseException, float]] = []  # the lander's
        self._lost_lock = threading.Lock()
        self.trouble: dict[tuple[str, str], Trouble] = {}  # by (stream, tenant)
        self.link = Link()  # whether the server answers (rescind.workers.app watches it)
        self.known = tenants.Known(self.conn)  # tenants exist only when created
        self._errors: dict[tuple[str, str], str] = {}  # (stream, entry id) -> how it last failed
        self._unknown: set[str] = set()  # tenants whose events were dead-lettered (logged once)

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

    # -- writer ---------------------------------------------------------------------------
    def write_batch(self, stream: str, entries: list[tuple[str, object]]) -> None:
        """Decode, dead-letter what cannot be applied, apply the rest, ack all but held ones."""
        telemetry.batch_size.record(len(entries))
        by_tenant: dict[str, list[tuple[str, ev.Event]]] = defaultdict(list)
        done: list[str] = []
        for entry_id, body in entries:
            try:
                event = decode(body)
            except Invalid as exc:
                st.dead_letter(self.conn, stream, entry_id, body, str(exc), layout.WRITER_GROUP)
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

    def _dead_tenant(self, stream: str, group: str, tenant: str,
                     items: list[tuple[str, ev.Event]]) -> None:
        """Events of a tenant that was never created: dead-lettered, logged once a tenant."""
        why = tenants.UnknownTenant(tenant).message
        for k, e in items:
            st.dead_letter(self.conn, stream, k, e.model_dump(mode="json", by_alias=True), why,
                           group)
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
            self._lost.append((stream, tenant, items, exc, time.monotonic()))

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
            log.exception("could not record which premises writes wait for")

    # -- retraction -----------------------------------------------------------------------
    def control(self, stream: str, entry_id: str, body: object) -> None:
        """Apply one decision. One the engine refuses, of a tenant never created, or that the
        server refuses twice the same way is dead-lettered with why; one that fails otherwise
        (the server away) is left pending for the reaper, and logged once."""
        self.pipeline.flush()  # the writes read before this decision are in the graph
        event = None
        try:
            event = decode(body)
            if isinstance(event, ev.CONTROL):
                if not self.known(event.tenant):
                    raise tenants.UnknownTenant(event.tenant)
                result = self._decide(event)
                if result:
                    self._emit_status(event, result)
        except Exception as exc:
            if event is not None:
                self._redirected(event.tenant, exc)
            if event is not None and not refused(exc) and self.dropped(event.tenant):
                exc = tenants.UnknownTenant(event.tenant)  # dropped while remembered as known
            if not refused(exc):  # left pending: the reaper retries, then dead-letters
                if lost_connection(exc):
                    self.link.lost(exc)
                elif (stream, entry_id) not in self._errors:
                    log.warning("control entry %s failed (%s: %s); left pending for the reaper",
                                entry_id, type(exc).__name__, words(exc))
                self._note(stream, entry_id, exc)
                return
            if isinstance(exc, Refused):
                log.warning("control entry %s dead-lettered: %s", entry_id, exc)
            st.dead_letter(self.conn, stream, entry_id, body, str(exc), layout.RETRACTION_GROUP)
            self._errors.pop((stream, entry_id), None)
        self._ack(stream, layout.RETRACTION_GROUP, [entry_id])

    def _decide(self, event: ev.Event) -> RetractionResult | None:
        """``apply_control``, tried a second time when the server refuses it; Refused (with
        the server's words) when it fails the same way again."""
        first: BaseException | None = None
        while True:
            try:
                return apply_control(self.graph(event.tenant), event)
            except Exception as exc:
                if refused(exc) or transient(exc):
                    raise
                if first is not None:
                    if signature(exc) == signature(first):
                        raise Refused(reason(exc)) from exc
                    raise
                first = exc

    def _emit_status(self, cause: ev.Event, result: RetractionResult) -> None:
        st.publish_status(self.conn, cause.tenant, result.id, result.rev, result.changed,
                          cause.at, cause.traceparent)

    # -- gate -----------------------------------------------------------------------------
    def gate(self, entry_id: str, body: object) -> None:
        """Answer one GateAsked on its reply list; a malformed request is dead-lettered."""
        try:
            asked = decode(body)
            if not isinstance(asked, ev.GateAsked):
                raise Invalid(f"the gate stream carries GateAsked, not {type(asked).__name__}")
        except Invalid as exc:
            st.dead_letter(self.conn, layout.GATE, entry_id, body, str(exc), layout.GATE_GROUP)
            self._ack(layout.GATE, layout.GATE_GROUP, [entry_id])
            return
        try:
            if not self.known(asked.tenant):  # refused at once, and never the start of a graph
                raise tenants.UnknownTenant(asked.tenant)
            d = self._judge(self.graph(asked.tenant), asked)
        except Exception as exc:
            self._redirected(asked.tenant, exc)
            if not isinstance(exc, tenants.UnknownTenant) and not self.dropped(asked.tenant):
                raise  # not answered: the agent's wait runs out, and it refuses (fails closed)
            why = tenants.UnknownTenant(asked.tenant).message
            st.dead_letter(self.conn, layout.GATE, entry_id, body, why, layout.GATE_GROUP)
            d = GateDecision(ev.action_id(asked.tenant, asked.action), False, f"blocked: {why}", 0)
        answer = ev.GateAnswered(event_id=f"{asked.event_id}:answer", tenant=asked.tenant,
                                 at=asked.at, allowed=d.allowed, reason=d.reason,
                                 fragility=d.fragility, traceparent=asked.traceparent)
        # One transaction on one server; on a cluster the keys are on several slots: the answer
        # goes first, the ack after it (an answer given twice is harmless, none is not).
        pipe = connection.pipeline(self.conn, asked.reply_to, layout.GATE,
                                   layout.audit_key(asked.tenant))
        pipe.rpush(asked.reply_to, answer.model_dump_json(by_alias=True))
        pipe.expire(asked.reply_to, 60)
        pipe.xack(layout.GATE, layout.GATE_GROUP, entry_id)
        # The decision's audit entry rides on the answer's round trip.
        self.audit.queue(pipe, asked.tenant, GATE_ASKER, "gate", asked.action,
                         ALLOWED if d.allowed else EXPIRED if is_expired(d) else BLOCKED, 200,
                         gate_detail(d, asked))
        *_, audit_length = pipe.execute()
        self.audit.settle(asked.tenant, audit_length)

    def _judge(self, graph: TenantGraph, asked: ev.GateAsked) -> GateDecision:
        """An earlier proposal by its stored facts; a new one by the premises it would rest on.
        Either may have been published just before the question: wait for it a moment. The
        decision is kept in the graph (the log, and the next call's aggregate)."""
        policy = self.settings.gate
        mid = ev.action_id(asked.tenant, asked.action)
        deadline = time.monotonic() + 2.0
        call = GateCall(mid, None if asked.proposed else tuple(asked.premises), asked.amount,
                        asked.account, asked.payee, ev.to_micros(asked.at), asked.currency,
                        asked.amount_free, asked.event_id,
                        tuple(map(tuple, asked.alternatives)) if asked.alternatives else None)
        if asked.seen is not None:  # judge what the agent saw, once the writer has applied it
            refused = self._unapplied(asked)
            if refused is not None:
                d = GateDecision(mid, False, f"blocked: {refused}", 0)
                record(graph, call, d, asked.action, asked.traceparent)
                return d
        if asked.proposed:
            while not graph.actions_in([mid]) and time.monotonic() < deadline:
                time.sleep(0.01)
            try:
                d = judge(graph, call, policy)
            except UnknownAction:
                d = GateDecision(mid, False, f"blocked: no proposal named {asked.action!r}", 0)
        else:
            every = {p for j in asked.alternatives or [asked.premises] for p in j}
            while len(graph.statuses(list(every))) < len(every) \
                    and time.monotonic() < deadline:
                time.sleep(0.01)
            d = judge(graph, call, policy)
        d = late(d, asked.expires)  # its asker stopped waiting: expired, never allowed
        record(graph, call, d, asked.action, asked.traceparent)
        return d

    def _unapplied(self, asked: ev.GateAsked) -> str | None:
        """Why the question cannot be judged yet (what its asker published is not applied in
        ``applied_wait_s``); None once it is."""
        why = bad_position(asked.seen, self.settings.partitions)
        if why is not None:
            return f"the question names what its asker published wrongly: {why}"
        if wait_applied(self.conn, asked.seen, self.settings.applied_wait_s):
            return None
        where = ", ".join(f"{e} on {s}" for s, e in asked.seen.items())
        return (f"what the agent published before asking ({where}) is not applied yet after "
                f"{self.settings.applied_wait_s:g}s; the gate judges only what the agent saw: "
                f"ask again")

    # -- reaper ---------------------------------------------------------------------------
    def reap(self, group: str, stream: str, entry_id: str, body: object) -> None:
        """An entry claimed from a dead consumer: dead-letter it if it keeps failing, else redo."""
        if group == layout.WRITER_GROUP and (stream, entry_id) in self.held:
            return  # held here (waiting, or in crash quarantine): retried by retry_held
        info = self.conn.xpending_range(stream, group, min=entry_id, max=entry_id, count=1)
        deliveries = info[0]["times_delivered"] if info else 1
        if deliveries > self.settings.max_deliveries:
            last = self._errors.pop((stream, entry_id), None)
            st.dead_letter(self.conn, stream, entry_id, body,
                           f"delivered {deliveries} times without success"
                           + (f"; last error: {last}" if last else ""), group)
            self._ack(stream, group, [entry_id])
        elif group == layout.WRITER_GROUP:
            self.write_batch(stream, [(entry_id, body)])
        else:
            self.control(stream, entry_id, body)

    # -- plumbing -------------------------------------------------------------------------
    def consumer(self, role: str) -> str:
        return f"{role}-{self.settings.worker_id}"

    def _ack(self, stream: str, group: str, ids: list[str]) -> None:
        if ids:
            self.conn.xack(stream, group, *ids)
