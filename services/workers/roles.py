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

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.contract import streams as st
from rescind.contract.errors import Invalid
from rescind.core.shapes import Change, GateDecision, RetractionResult
from rescind.engine.gate import GateCall, GatePolicy, UnknownAction, judge, record
from rescind.engine.writes import Pipeline
from rescind.graph.store import TenantGraph, connect
from rescind.operator.audit import ALLOWED, BLOCKED, Actor, AuditLog
from rescind.runtime import telemetry
from rescind.workers.ingest import apply_control, apply_writes, decode, refused

log = logging.getLogger("rescind.workers")


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
    gate: GatePolicy = field(default_factory=GatePolicy)  # RESCIND_GATE_*, as the API's
    audit_max_live: int = layout.AUDIT_MAXLEN  # RESCIND_AUDIT_MAX_LIVE, as the API's


@dataclass
class Held:
    stream: str
    entry_id: str
    event: ev.Event
    since: float
    missing: list[str] = field(default_factory=list)


class Workers:
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
        self._lost: list[Held] = []  # batches that could not be written, from its thread
        self._lost_lock = threading.Lock()

    def graph(self, tenant: str) -> TenantGraph:
        if tenant not in self.graphs:
            self.graphs[tenant] = TenantGraph(self.conn, tenant)
        return self.graphs[tenant]

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
            try:
                held = apply_writes(self.graph(tenant), items, self.pipeline)
            except Exception as exc:  # held for retry (a restarting server, say): not acked
                log.warning("writes of tenant %s failed (%s); held for retry", tenant, exc)
                now = time.monotonic()
                for k, e in items:
                    self.held.setdefault((stream, k), Held(stream, k, e, now, [f"error: {exc}"]))
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
                               functools.partial(self._not_landed, stream, sent))
        self._ack(stream, layout.WRITER_GROUP, done)
        if len(entries) < self.settings.batch:  # the stream was drained: nothing to wait for
            self.pipeline.flush()

    def _landed(self, stream: str, tenant: str, items: list[tuple[str, ev.Event]]) -> None:
        try:
            self._ack(stream, layout.WRITER_GROUP, [k for k, _ in items])
        except Exception as exc:  # written but not acknowledged: applying again is a no-op
            self._not_landed(stream, items, exc)
            return
        telemetry.events_applied.add(len(items), {"tenant": tenant})

    def _not_landed(self, stream: str, items: list[tuple[str, ev.Event]],
                    exc: BaseException) -> None:
        log.warning("a write batch failed (%s); its %d events are held for retry", exc, len(items))
        now = time.monotonic()
        with self._lost_lock:
            self._lost.extend(Held(stream, k, e, now, [f"error: {exc}"]) for k, e in items)

    def retry_held(self) -> None:
        """Try held writes again; past the patience they go to the dead-letter stream."""
        self.pipeline.flush()
        with self._lost_lock:
            lost, self._lost = self._lost, []
        for h in lost:
            self.held.setdefault((h.stream, h.entry_id), h)
        if not self.held:
            return
        now = time.monotonic()
        by_key = dict(self.held)
        self.held.clear()
        groups: dict[tuple[str, str], list[tuple[str, ev.Event]]] = defaultdict(list)
        for h in by_key.values():
            groups[(h.stream, h.event.tenant)].append((h.entry_id, h.event))
        for (stream, tenant), items in groups.items():
            try:
                self._retry(stream, tenant, items, by_key, now)
            except Exception as exc:  # a restarting server, say: all of them are tried again
                log.warning("held writes of tenant %s failed again (%s); kept", tenant, exc)
                self.held.update({(stream, k): by_key[(stream, k)] for k, _ in items})

    def _retry(self, stream: str, tenant: str, items: list[tuple[str, ev.Event]],
               by_key: dict[tuple[str, str], Held], now: float) -> None:
        """Apply one tenant's held writes; ack what landed or waited too long, keep the rest."""
        still = {p.key: p for p in apply_writes(self.graph(tenant), items, moved=self._moved)}
        done, settled = [], []
        for key, _ in items:
            h = by_key[(stream, key)]
            if key not in still:
                done.append(key)
                settled += h.missing
            elif now - h.since > self.settings.patience_s:
                missing = still[key].missing
                reason = f"premise never arrived: {', '.join(missing)}"
                log.warning("write %s of tenant %s waited %.0fs for premise(s) %s: given up, "
                            "dead-lettered", h.event.event_id, tenant, now - h.since,
                            ", ".join(missing))
                telemetry.premise_never_arrived.add(1, {"tenant": tenant})
                st.dead_letter(self.conn, stream, key, h.event.model_dump(mode="json",
                               by_alias=True), reason, layout.WRITER_GROUP)
                done.append(key)
                settled += missing
            else:
                h.missing = still[key].missing
                self.held[(stream, key)] = h
        self._ack(stream, layout.WRITER_GROUP, done)
        still_waiting = {m for h in self.held.values() if h.event.tenant == tenant
                         for m in h.missing}
        self._waiting(tenant, [m for m in settled if m not in still_waiting], done=True)
        kept = [k for k, _ in items if (stream, k) in self.held]
        if kept:  # we still own them: keep the reaper's hands off
            self.conn.xclaim(stream, layout.WRITER_GROUP, self.consumer("writer"), 0, kept,
                             justid=True)

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
        self.pipeline.flush()  # the writes read before this decision are in the graph
        try:
            event = decode(body)
            if isinstance(event, ev.CONTROL):
                result = apply_control(self.graph(event.tenant), event)
                if result:
                    self._emit_status(event, result)
        except Exception as exc:
            if not refused(exc):  # left pending: the reaper retries, then dead-letters
                log.exception("control entry %s failed; left pending", entry_id)
                return
            st.dead_letter(self.conn, stream, entry_id, body, str(exc), layout.RETRACTION_GROUP)
        self._ack(stream, layout.RETRACTION_GROUP, [entry_id])

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
        graph = self.graph(asked.tenant)
        d = self._judge(graph, asked)
        answer = ev.GateAnswered(event_id=f"{asked.event_id}:answer", tenant=asked.tenant,
                                 at=asked.at, allowed=d.allowed, reason=d.reason,
                                 fragility=d.fragility, traceparent=asked.traceparent)
        pipe = self.conn.pipeline()
        pipe.rpush(asked.reply_to, answer.model_dump_json(by_alias=True))
        pipe.expire(asked.reply_to, 60)
        pipe.xack(layout.GATE, layout.GATE_GROUP, entry_id)
        # The decision's audit entry rides on the answer's round trip.
        self.audit.queue(pipe, asked.tenant, GATE_ASKER, "gate", asked.action,
                         ALLOWED if d.allowed else BLOCKED, 200, gate_detail(d, asked))
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
                        asked.account, asked.payee, ev.to_micros(asked.at), asked.currency)
        if asked.proposed:
            while not graph.actions_in([mid]) and time.monotonic() < deadline:
                time.sleep(0.01)
            try:
                d = judge(graph, call, policy)
            except UnknownAction:
                d = GateDecision(mid, False, f"blocked: no proposal named {asked.action!r}", 0)
        else:
            while len(graph.statuses(asked.premises)) < len(set(asked.premises)) \
                    and time.monotonic() < deadline:
                time.sleep(0.01)
            d = judge(graph, call, policy)
        record(graph, call, d, asked.action, asked.traceparent)
        return d

    # -- reaper ---------------------------------------------------------------------------
    def reap(self, group: str, stream: str, entry_id: str, body: object) -> None:
        """An entry claimed from a dead consumer: dead-letter it if it keeps failing, else redo."""
        info = self.conn.xpending_range(stream, group, min=entry_id, max=entry_id, count=1)
        deliveries = info[0]["times_delivered"] if info else 1
        if deliveries > self.settings.max_deliveries:
            st.dead_letter(self.conn, stream, entry_id, body,
                           f"delivered {deliveries} times without success", group)
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
