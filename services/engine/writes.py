"""Justified writes: observations, memories and actions, in batches, idempotent by event id.

A batch is planned against one graph revision (the reads here, the planning on plain facts in
``rescind.core.planning``) and written in one atomic query guarded by that revision, so a write
that races a retraction is recomputed, never stale.

A write can change statuses too: a memory written on an OUT premise is born OUT, and a new
reason can bring an OUT memory back IN. ``moved``, if given, hears of those changes once the
batch that makes them has landed (the writer worker publishes them for the agents' caches).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from rescind.contract.errors import StalePreview
from rescind.core import planning
from rescind.core.belief import IN, Status
from rescind.core.planning import Ahead, Plan, UnknownPremise, Write
from rescind.core.shapes import Change, WriteBatch
from rescind.engine import collector
from rescind.graph import gate_facts
from rescind.graph import lineage_queries as lq
from rescind.graph import queries as q
from rescind.graph.store import BatchInFlight, TenantGraph, linearised, log_failure
from rescind.runtime.settings import Settings

log = logging.getLogger("rescind.writes")

# Told, once a batch has landed, of the statuses it changed: (graph, the revision the batch was
# planned against, its latest moment in microseconds, memory id -> its new status).
Moved = Callable[[TenantGraph, int, int, dict[str, Change]], None]


def record(graph: TenantGraph, writes: list[Write], moved: Moved | None = None) -> list[Status]:
    """Apply ``writes`` in order; returns the status each written memory has afterwards."""
    landed: list[Plan] = []
    after: list[tuple[list[str], gate_facts.Tags]] = []

    def attempt() -> list[Status]:
        plan = _plan(graph, writes)
        if plan.batch is not None:
            touched = changed_facts(plan.batch)
            token = _touch(graph, touched) if touched else None
            try:
                graph.write_batch(plan.batch, plan.rev)
            finally:
                if token is not None:
                    after.append((touched, _untouched(graph, touched, token)))
            landed.append(plan)
        return plan.statuses

    with collector.paused():
        statuses = linearised(graph, attempt)
    if landed:
        _tell(moved, graph, landed[-1])
        touched, at = after[-1] if after else ([], None)
        settle(graph, writes, touched, at)
    return statuses


def record_stream(graph: TenantGraph, batches: Iterable[list[Write]]) -> int:
    """Bulk load through a ``Pipeline``: each batch is planned while the one before it is
    written, so Python and the server work at the same time. Raises the first error a batch
    met (after the others are done), as ``record`` would. The gate's facts of what it loads
    are not kept as it goes (the gate reads a memory's from the graph, and keeps it, the first
    time it asks): keeping a million of them would halve the load's speed."""
    n, errors = 0, []
    pipeline = Pipeline(keep_facts=False)
    with collector.paused():
        try:
            for writes in batches:
                try:
                    pipeline.record(graph, writes)
                except Exception:
                    pipeline.flush()  # a batch before may have failed first: that is the cause
                    if errors:
                        raise errors[0] from None
                    raise
                pipeline.then(lambda: None, errors.append)
                n += len(writes)
        finally:
            pipeline.close()
    if errors:
        raise errors[0]
    return n


@dataclass
class _Batch:
    graph: TenantGraph
    writes: list[Write]
    plan: Plan
    queued_at: float = 0.0
    landing: Future | None = None  # once sent: True if landed as planned, else False
    touched: list[str] = field(default_factory=list)  # existing memories whose facts it changes
    token: str | None = None  # its touch of their facts (``gate_facts.touch``), until it lands
    done: bool = False
    callbacks: list[tuple[Callable[[], None], Callable[[BaseException], None]]] = field(
        default_factory=list)


class Pipeline:
    """Batches written while the next one is read and planned (bulk loads, the writer worker).

    A batch is planned and kept; when the next one arrives, what that one reads is read
    (FalkorDB makes a read wait for a write in flight, so first), then the kept batch is sent,
    and the new one is planned on top of it, guarded by the revision the kept one will leave,
    while the server writes. A batch with no successor is sent by ``flush`` (the worker calls
    it when idle). A thread of its own waits for each reply, redoes a batch that went stale
    (anything else wrote in between), and then runs what was to follow it (the worker's acks),
    in order.
    """

    def __init__(self, moved: Moved | None = None, settle: bool = True,
                 keep_facts: bool = True) -> None:
        self._moved = moved  # told of each landed batch's status changes, before what follows it
        self._settle = settle  # read the relations the gate reads after each batch (``settle``)
        self._keep = keep_facts  # and keep what it read for the gate (not for a bulk load)
        self._lander = ThreadPoolExecutor(1, thread_name_prefix="rescind-landing")
        self._lock = threading.Lock()
        self._queued: _Batch | None = None  # planned, not sent
        self._flight: _Batch | None = None  # sent, perhaps not landed

    def record(self, graph: TenantGraph, writes: list[Write]) -> list[Status]:
        """Plan ``writes`` and keep them; send the batch kept before (UnknownPremise as
        ``record``). Returns the statuses the writes will have."""
        kept, context = self._queued, None
        on_top = kept is not None and kept.graph is graph and kept.plan.ahead is not None
        if on_top and self._flight_ok():
            context = _context(graph, writes, kept.plan.ahead)
        self.send()
        plan = None
        if context is not None and self._flight is kept:  # not if it could not be sent
            plan = _plan(graph, writes, kept.plan.ahead, context, prepared=True)
        if plan is None:
            plan = _plan(graph, writes, prepared=True)
        self._queued = _Batch(graph, writes, plan, queued_at=time.monotonic())
        return plan.statuses

    def kept_for(self) -> float:
        """How long the batch kept for sending has waited (0 if none)."""
        kept = self._queued
        return 0.0 if kept is None else time.monotonic() - kept.queued_at

    def send(self) -> None:
        """Send the kept batch, if any (planned again if the batch before it was redone)."""
        batch, self._queued = self._queued, None
        if batch is None:
            return
        if not self._flight_ok():
            try:
                batch.plan = _plan(batch.graph, batch.writes, prepared=True)
            except Exception as exc:  # noqa: BLE001 - reported to whoever waits on this batch
                self._finish(batch, exc)
                return
        if batch.plan.batch is None:  # every event was applied already
            self._finish(batch, None)
            return
        try:
            batch.graph.wait_for_decisions()
            batch.touched = changed_facts(batch.plan.batch)
            if batch.touched:
                batch.token = _touch(batch.graph, batch.touched)
            sent = batch.graph.send_batch(batch.plan.text, batch.plan.rev)
        except Exception as exc:  # noqa: BLE001 - the server is away: its events are retried
            self._untouch(batch)
            self._finish(batch, exc)
            return
        batch.landing = self._lander.submit(self._land, batch, sent)
        self._flight = batch

    def then(self, landed: Callable[[], None], failed: Callable[[BaseException], None]) -> None:
        """Run ``landed`` once the last batch recorded is in the graph (at once if none is
        waiting), or ``failed`` with the error if it could not be written."""
        with self._lock:
            for batch in (self._queued, self._flight):
                if batch is not None and not batch.done:
                    batch.callbacks.append((landed, failed))
                    return
        landed()

    def flush(self) -> None:
        """Send what is kept and wait until it, and what follows it, is done."""
        self.send()
        self._flight_ok()

    def close(self) -> None:
        self.flush()
        self._lander.shutdown()

    def _flight_ok(self) -> bool:
        """Wait for the batch in flight; True if it landed as it was planned."""
        flight = self._flight
        return flight is None or flight.landing.result()

    def _land(self, batch: _Batch, sent: BatchInFlight) -> bool:
        ok, error = False, None
        with collector.paused():
            try:
                try:
                    ok = _landed(batch.graph, sent, batch.writes, self._moved)
                finally:
                    at = self._untouch(batch)
                if ok:
                    _tell(self._moved, batch.graph, batch.plan)
                if self._settle:
                    settle(batch.graph, batch.writes, batch.touched, at, self._keep)
            except BaseException as exc:  # the server went away mid-write, say: the caller retries
                error = exc
        self._finish(batch, error)
        return ok and error is None

    @staticmethod
    def _untouch(batch: _Batch) -> gate_facts.Tags | None:
        """End the batch's touch of the gate's facts (see ``changed_facts``), if it began one."""
        token, batch.token = batch.token, None
        if token is None:
            return None
        try:
            return _untouched(batch.graph, batch.touched, token)
        except Exception:  # its mark expires, and every fact kept with it: never stale
            log_failure(log, "a write batch's touch of the gate's facts could not end")
            return None

    def _finish(self, batch: _Batch, error: BaseException | None) -> None:
        with self._lock:
            batch.done = True
            callbacks, batch.callbacks = batch.callbacks, []
        for landed, failed in callbacks:
            try:
                landed() if error is None else failed(error)
            except Exception:  # one follower failing must not keep the others from running
                log_failure(log, "what was to follow a write batch failed")


def _landed(graph: TenantGraph, write: BatchInFlight, writes: list[Write],
            moved: Moved | None) -> bool:
    """Wait for a write in flight; if it went stale, redo its batch plainly (False)."""
    try:
        write.result()
        return True
    except StalePreview:
        record(graph, writes, moved)
        return False


def changed_facts(batch: WriteBatch | None) -> list[str]:
    """The existing memories whose facts, as the gate keeps them (``rescind.graph.
    gate_facts``), ``batch`` changes: a new reason or grounding, a status, a proposal's values
    or any other property. A batch that only adds memories changes none: the memories they
    rest on stay as they were (a cone looks upstream)."""
    if batch is None:
        return []
    new = {m["id"] for m in batch.new}
    out = [u["id"] for u in batch.updates] + [i for g in batch.changes for i in g["ids"]]
    out += [x["mem"] for x in (*batch.groundings, *batch.justifications) if x["mem"] not in new]
    return list(dict.fromkeys(out))


def _touch(graph: TenantGraph, ids: list[str]) -> str:
    """Before a write that changes the facts of ``ids``: ``gate_facts.touch``; its token."""
    return gate_facts.touch(graph.conn, graph.tenant, ids)[0]


def _untouched(graph: TenantGraph, ids: list[str], token: str) -> gate_facts.Tags:
    """After it (landed or not): the touch ends; the tags to keep what is read next under."""
    return gate_facts.touch(graph.conn, graph.tenant, ids, token)[1]


def settle(graph: TenantGraph, writes: list[Write], touched: list[str] = (),
           at: gate_facts.Tags | None = None, keep: bool = True) -> None:
    """Once a batch has landed, read what the gate reads of each memory it wrote or changed
    (``touched``), and keep it for the gate (``rescind.graph.gate_facts``), under the tags
    ``at`` (taken after the batch's touch ended; else now, before the read). The read also
    touches every relation the gate's cone reads: FalkorDB assembles a relation's pending
    additions, and merges them once 10,000 have gathered, on the first read after a write, so
    the writer pays for that here, not a payment's question (docs/performance.md, "The
    payment gate under live writes"). A failure is logged: the batch is in the graph whatever
    happens to the read, and a fact not kept is read from the graph."""
    ids = list(dict.fromkeys([w.mem_id for w in writes] + list(touched)))
    if not ids:
        return
    if not keep:  # a bulk load: one memory's read sets the merges going; the gate reads the rest
        try:
            graph.rows(q.GATE_FACTS, {"ids": ids[-1:]})
        except Exception:
            log_failure(log, "a write batch landed, but the read after it failed")
        return
    try:
        now, rules_kept = gate_facts.tags(graph.conn, graph.tenant)
        at = at or now
        reads = [(q.GATE_FACTS, {"ids": ids})] + ([] if rules_kept else [(q.ACTIVE_RETRACTIONS, None)])
        rows, *rules = graph.many(*reads)
        gate_facts.fill(graph.conn, graph.tenant, at, [r[:9] for r in rows],
                        {r[0]: r[9] for r in rows if r[9] is not None},
                        rules[0] if rules else None)
    except Exception:
        log_failure(log, "a write batch landed, but the read after it failed")


def _tell(moved: Moved | None, graph: TenantGraph, plan: Plan) -> None:
    """Tell ``moved`` what the landed ``plan`` changed; its failure is logged, not raised: the
    batch is in the graph whatever happens to the news."""
    if moved is None or plan.batch is None:
        return
    changed = planning.moved(plan.batch)
    if not changed:
        return
    try:
        moved(graph, plan.rev, plan.batch.at, changed)
    except Exception:
        log_failure(log, "a write batch landed, but telling of its %d status changes failed",
                      len(changed))


def _context(graph: TenantGraph, writes: list[Write], ahead: Ahead | None = None):
    """What planning ``writes`` reads (see TenantGraph.write_context), less what ``ahead``
    already knows."""
    ids = planning.named(writes)
    return graph.write_context(
        [w.event_id for w in writes if w.source is None],
        [{"id": w.event_id, "mem": w.mem_id} for w in writes if w.source is not None],
        ids - (ahead.known.keys() if ahead else set()))


def _plan(graph: TenantGraph, writes: list[Write], ahead: Ahead | None = None,
          context: tuple | None = None, prepared: bool = False) -> Plan | None:
    """The batch to write and the revision it is planned against. With ``ahead``, on top of a
    batch still in flight; None when that is not possible (it would need a region walk).
    ``context`` is what ``_context`` read for it, if read already; ``prepared`` also builds
    the batch's query text."""
    plan = _planned(graph, writes, ahead, context)
    if prepared and plan is not None and plan.batch is not None:
        plan.text = graph.prepare_batch(plan.batch, plan.rev)
    return plan


def _planned(graph: TenantGraph, writes: list[Write], ahead: Ahead | None,
             context: tuple | None) -> Plan | None:
    """Read what planning needs beyond ``context`` (a revived memory's region and the premises
    around it), then plan on plain facts (``rescind.core.planning``)."""
    rev, seen, known, rules = context or _context(graph, writes, ahead)
    if ahead is not None:
        ids = planning.named(writes)
        rev, rules = ahead.rev, ahead.rules
        seen |= {w.event_id for w in writes} & ahead.seen
        known.update({i: ahead.known[i] for i in ids if i in ahead.known})
    planning.check_premises(writes, known)
    new_writes = planning.fresh(writes, seen)
    if not new_writes:
        return Plan(rev, None, [known.get(w.mem_id, Status("OUT")) for w in writes])
    # Existing memories that were OUT may come IN with a new reason; their dependents with them.
    revived = planning.revived(new_writes, known)
    if revived and ahead is not None:
        return None  # their region may be changing under the batch in flight
    region = graph.region(revived).nodes if revived else {}
    if unread := planning.outside(region, known):  # premises of their other justifications
        known.update(graph.statuses(unread))
    # Lineage: the texts of premises and the observations stating an identifier a write states.
    facts, stating = lq.read(graph, new_writes, lineage_kinds(), ahead)
    known.update(stating)
    return planning.plan_batch(writes, new_writes, rev, known, rules, region, facts)


@functools.cache
def lineage_kinds() -> tuple[str, ...]:
    """The identifier kinds the operator marks as high-value (``RESCIND_LINEAGE_KINDS``)."""
    return tuple(Settings().lineage_kinds)


def execute(graph: TenantGraph, action: str, at: int, paid: dict | None = None) -> None:
    """Record that a proposed action was carried out, with what the bank says it executed
    (``paid_amount``, ``paid_account``, ``paid_reference``, ``paid_on``, ``receipt``...)."""
    batch = WriteBatch(at, updates=[{"id": action, "props": {"executed": True, "executed_at": at,
                                                              **(paid or {})}}])
    _update(graph, batch)


def fail(graph: TenantGraph, action: str, at: int, reason: str) -> None:
    """Record that a proposal's call failed: it did not happen, and is never released (a new
    proposal of the same action clears the mark)."""
    batch = WriteBatch(at, updates=[{"id": action, "props": {"failed": True, "failed_at": at,
                                                              "failed_reason": reason}}])
    _update(graph, batch)


def _update(graph: TenantGraph, batch: WriteBatch) -> None:
    """Write ``batch`` (updates of existing memories), touching their facts before and after."""
    touched = changed_facts(batch)
    token = _touch(graph, touched)
    try:
        linearised(graph, lambda: graph.write_batch(batch, graph.revision()))
    finally:
        _untouched(graph, touched, token)


__all__ = ["IN", "Moved", "Pipeline", "UnknownPremise", "Write", "execute", "fail",
           "record", "record_stream"]
