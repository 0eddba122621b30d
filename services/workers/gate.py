"""The gate role: answers each GateAsked on its reply list, judged on the graph once what its
asker published before asking is applied (``rescind.workers.applied``), with the decision kept
in the gate's ledger (``rescind.graph.gate_ledger``) and in the audit log before the answer,
and copied into the gate log after it (``rescind.engine.gate.LogCopier``; what a process that
died left uncopied is copied by the next one, and by any read of the log). A malformed
question is dead-lettered; one the gate cannot judge (the server away) is not answered, and
the agent's wait fails closed.
"""

from __future__ import annotations

import time

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.contract.errors import Invalid
from rescind.core.shapes import GateDecision
from rescind.engine import gate as gate_mod
from rescind.engine.gate import (
    EXPIRED,
    GateCall,
    LogCopier,
    UnknownAction,
    is_expired,
    judge,
    late,
    record,
)
from rescind.graph import gate_facts, gate_ledger, tenants
from rescind.graph.store import TenantGraph
from rescind.operator.audit import ALLOWED, BLOCKED, Actor
from rescind.transport import connection
from rescind.workers.applied import bad_position, wait_applied
from rescind.workers.ingest import decode
from rescind.workers.shared import Role

# Who asks the gate through its stream: the tenant's wrapped agents (their requests carry no
# token; the trace id in the detail leads to the agent's own span).
GATE_ASKER = Actor("agents", "agent", "", "stream")


def gate_detail(d: GateDecision, asked: ev.GateAsked) -> dict:
    """What the audit keeps of a gate decision (the graph's Gate node keeps all of it)."""
    return {"reason": d.reason, "fragility": d.fragility, "amount": d.amount,
            "currency": d.currency, "payee": d.payee, "trace": asked.traceparent}


class Gate(Role):
    """Answers the payment gate's questions (reads only: it takes no lock)."""

    def __init__(self, shared) -> None:
        super().__init__(shared)
        self.copier = LogCopier(self.graph)
        self.swept = False  # whether what earlier processes left uncopied was looked for

    def gate(self, entry_id: str, body: object) -> None:
        """Answer one GateAsked on its reply list; a malformed request is dead-lettered."""
        try:
            asked = decode(body)
            if not isinstance(asked, ev.GateAsked):
                raise Invalid(f"the gate stream carries GateAsked, not {type(asked).__name__}")
        except Invalid as exc:
            self.failures.dead_letter(self.conn, layout.GATE, entry_id, body, str(exc),
                                      layout.GATE_GROUP)
            self._ack(layout.GATE, layout.GATE_GROUP, [entry_id])
            return
        kept = False  # whether the decision is in the tenant's gate ledger
        try:
            if not self.known(asked.tenant):  # refused at once, and never the start of a graph
                raise tenants.UnknownTenant(asked.tenant)
            d, kept = self._judge(self.graph(asked.tenant), asked), True
        except Exception as exc:
            self._redirected(asked.tenant, exc)
            if not isinstance(exc, tenants.UnknownTenant) and not self.dropped(asked.tenant):
                raise  # not answered: the agent's wait runs out, and it refuses (fails closed)
            why = tenants.UnknownTenant(asked.tenant).message
            self.failures.dead_letter(self.conn, layout.GATE, entry_id, body, why,
                                      layout.GATE_GROUP)
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
        if kept:
            self._copy(asked.tenant)

    def _copy(self, tenant: str) -> None:
        """Have the tenant's decisions copied into its gate log, after the answer; the first
        time, those every known tenant's ledger holds uncopied too (a process that died
        between its answer and the copy)."""
        if not self.swept:
            self.swept = True
            try:
                for name in tenants.registered(self.conn):
                    if gate_ledger.uncopied(self.conn, name):
                        self.copier.wake(name)
            except Exception:  # noqa: BLE001 - the next read of a log copies them anyway
                self.swept = False
        self.copier.wake(tenant)

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
                return record(graph, call, d, asked.action, asked.traceparent)
        if asked.proposed:
            while not self._present(graph, [mid], True) and time.monotonic() < deadline:
                time.sleep(0.01)
            try:
                d = judge(graph, call, policy)
            except UnknownAction:
                d = GateDecision(mid, False, f"blocked: no proposal named {asked.action!r}", 0)
        else:
            every = list({p for j in asked.alternatives or [asked.premises] for p in j})
            while not self._present(graph, every, False) and time.monotonic() < deadline:
                time.sleep(0.01)
            d = judge(graph, call, policy)
        d = late(d, asked.expires)  # its asker stopped waiting: expired, never allowed
        # Kept as recorded: an allowed payment whose aggregate moved since it was judged (another
        # to the same account or payee allowed meanwhile) is judged again as it is recorded.
        return record(graph, call, d, asked.action, asked.traceparent)

    def _present(self, graph: TenantGraph, ids: list[str], proposals: bool) -> bool:
        """Whether ``ids`` are in the graph (with their stored proposals, if ``proposals``):
        known from the gate's kept facts when they hold them (one Lua call: a fact is kept
        only from a read of the graph, and valid only while nothing changed it), else asked
        of the graph, whose query threads the writer keeps busy."""
        if gate_mod.KEPT_FACTS and isinstance(
                gate_facts.read(self.conn, graph.tenant, ids, proposals), gate_facts.Hit):
            return True
        if proposals:
            return len(graph.actions_in(ids)) == len(ids)
        return len(graph.statuses(ids)) == len(ids)

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


__all__ = ["GATE_ASKER", "Gate", "gate_detail"]
