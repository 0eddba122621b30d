"""The MCP tools and resources: what each does, once ``rescind.api.mcp`` has checked that the
caller may (see there). Each tool does the job of one API route, through ``rescind.api.ops``,
and names that route and the permission it needs."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field

from rescind.api import answers, ops
from rescind.api.auth import Principal
from rescind.api.models import (
    MAX_EVENTS,
    MAX_PREMISES,
    AgentEvent,
    Compromise,
    CompromiseCommit,
    Correction,
    CorrectionCommit,
    EventBatch,
    GateAsk,
    Ident,
    NoticeExport,
    RecallExport,
    RecallNote,
    RecallRejection,
    Reinstatement,
    ReinstatementCommit,
    Text,
    Withdrawal,
    WithdrawalCommit,
)
from rescind.api.state import Api
from rescind.contract import text as tx
from rescind.contract.errors import Invalid
from rescind.contract.kinds import AnyKind, StatusName
from rescind.graph.store import TenantGraph
from rescind.operator import audit_text

SCHEME = "rescind"  # resources: rescind://{tenant}/…

# The window, named as everywhere else (`from`, `to`); `start` and `end` are the names it had
# before, accepted for one more release.
From = Annotated[str | None, Field(alias="from", description="Window start, ISO 8601 with zone "
                                   "(open when left out)")]
To = Annotated[str | None, Field(description="Window end, included (open when left out)")]
Start = Annotated[str | None, Field(description="Deprecated: use `from`",
                                    json_schema_extra={"deprecated": True})]
End = Annotated[str | None, Field(description="Deprecated: use `to`",
                                  json_schema_extra={"deprecated": True})]
Memory = Annotated[Ident, Field(description="A memory id, or the name its writer gave it (e.g. "
                                "a payment's name)")]
Rid = Annotated[Ident, Field(description="A retraction, withdrawal or correction id")]
Rev = Annotated[int, Field(ge=0, le=2**53, description="The graph revision the preview returned; "
                           "the commit is refused if the graph moved since")]
At = Annotated[tx.line(64) | None, Field(description="A time, ISO 8601 with zone (give `at` or "
                                         "`rev`)")]
AtRev = Annotated[int | None, Field(ge=0, le=2**53, description="A graph revision (give `at` or "
                                    "`rev`)")]
Skip = Annotated[int, Field(ge=0, le=10**9, description="How many to skip (paging)")]
Limit = Annotated[int, Field(ge=1, le=1000, description="Page size (capped by the server's "
                             "limit)")]
Reason = Annotated[tx.text(2000, min_length=1), Field(description="Why: kept with the decision "
                                                      "and in the audit log")]


@dataclass(frozen=True)
class Caller:
    """Who calls a tool (a token allowed the tool's permission), the tenant graph it acts on,
    and the transport it came through (the audit's ``via``)."""

    me: Principal
    graph: TenantGraph
    via: str
    api: Api

    def audited(self, action: str, target: str | None, run: Callable[[], Any],
                summary: Callable[[Any], Any] | None = None,
                outcome: Callable[[Any], str] | None = None) -> Any:
        return self.api.audited(self.me, self.me.tenant, action, target, run, summary,
                                via=self.via, outcome=outcome)

    def cap(self, limit: int) -> int:
        return min(limit, self.api.settings.api_max_list)



def register(tool: Callable, resource: Callable) -> None:
    """Define every tool with ``tool(permission, route)`` and every resource with
    ``resource(uri, name, description)``: decorators that check the caller first."""

    def _counts(d: dict) -> dict:
        return audit_text.radius(d)  # which, why, counts, the payments held or recalled

    T = "/api/v1/tenants/{tenant}"

    # -- who ------------------------------------------------------------------------------
    @tool("whoami", "GET /api/v1/me")
    def whoami(c: Caller) -> answers.Me:
        """Who this token is: its tenant, role and name (what the tools act with), and the
        trace UI a memory's ``trace`` links to, when one is configured, and the currency of an
        amount that names none."""
        return {"tenant": c.me.tenant, "role": c.me.role, "who": c.me.who,
                "token": c.me.token_id, "trace_url": c.api.settings.trace_url,
                "currency": c.api.settings.gate_currency}

    # -- reading (viewer, security, finance) ----------------------------------------------
    @tool("read", f"GET {T}/revision")
    def revision(c: Caller) -> answers.Revision:
        """The tenant's graph revision: it moves with every write and decision."""
        return ops.revision(c.graph)

    @tool("read", f"GET {T}/sources")
    def list_sources(c: Caller) -> list[answers.Source]:
        """Every source (vendor portal, contract, inbox, reviewer) with its trust domain."""
        return ops.sources(c.graph)

    @tool("read", f"GET {T}/memories")
    def search_memories(c: Caller, query: tx.line(200) = "", kind: AnyKind | None = None,
                        include_out: bool = False, status: StatusName | None = None,
                        skip: Skip = 0, limit: Annotated[int, Field(ge=1, le=200)] = 20
                        ) -> list[answers.Memory]:
        """Memories whose text contains ``query`` (case-insensitive; every memory when left
        out), newest first. Memories that are OUT (retracted, withdrawn, or resting on something
        that is) are left out unless ``include_out`` is true; ``status`` IN or OUT gives only
        those. Page with ``skip``."""
        if include_out and status is not None:
            raise Invalid("give status or include_out, not both")
        wanted = status if status is not None else (None if include_out else "IN")
        return ops.memories(c.graph, kind, wanted, query or None, skip, c.cap(limit))["items"]

    @tool("read", f"GET {T}/memories/{{memory}}")
    def explain(c: Caller, memory: Memory) -> answers.Explanation:
        """The justification tree of a memory (id or name, e.g. a payment's name) down to the
        sources that said it, with every status on the way."""
        return ops.memory(c.graph, memory)

    @tool("read", f"GET {T}/memories/{{memory}}/history")
    def memory_history(c: Caller, memory: Memory) -> answers.History:
        """Every status the memory has had, oldest first, each with its cause (the retraction,
        withdrawal or correction), who decided and the graph revision; for a payment, also
        every time the gate was asked about it."""
        return ops.history(c.graph, memory)

    @tool("read", f"GET {T}/memories/{{memory}}/as-of")
    def memory_as_of(c: Caller, memory: Memory, at: At = None, rev: AtRev = None) -> answers.MemoryAsOf:
        """The memory's status at a past time (``at``) or graph revision (``rev``), why, and its
        justification tree with each status as it stood then."""
        return ops.memory_as_of(c.graph, memory, at, rev)

    @tool("read", f"GET {T}/as-of")
    def as_of(c: Caller, at: At = None, rev: AtRev = None, kind: AnyKind | None = None,
              status: StatusName | None = None, skip: Skip = 0, limit: Limit = 100) -> answers.AsOf:
        """What was believed at a past time (``at``) or graph revision (``rev``): each memory
        that existed then with its status then and why."""
        return ops.as_of(c.graph, at, rev, kind, status, skip, c.cap(limit))

    @tool("read", f"GET {T}/memories/{{memory}}/fragility")
    def fragility(c: Caller, memory: Memory) -> answers.Fragility:
        """How many independent trust domains an attacker must control to fake this memory or
        payment, and one smallest set of domains that would do it."""
        return ops.fragility(c.graph, memory)

    @tool("read", f"GET {T}/payments")
    def pending_payments(c: Caller, held: bool | None = None) -> list[answers.Payment]:
        """Payments not executed yet, largest first, each with its fragility and whether it is
        held (OUT: it rests on something retracted, and the gate will refuse it). ``held``
        true: only the held ones; false: only those not held."""
        rows = ops.pending_payments(c.graph)
        return rows if held is None else [r for r in rows if r["held"] is held]

    @tool("read", f"GET {T}/audit-order")
    def audit_order(c: Caller) -> list[answers.AuditOrderRow]:
        """Sources ranked by the value of what rests on them alone: audit these first."""
        return ops.audit_order(c.graph)

    @tool("read", f"GET {T}/retractions")
    def retraction_list(c: Caller) -> list[answers.Retraction]:
        """Retractions of sources, withdrawals and corrections of memories: each with its
        state (committed or reinstated), source and window (``from``/``to``) or memory, reason,
        who decided and when."""
        return ops.retractions(c.graph)

    @tool("read", f"GET {T}/retractions/{{rid}}")
    def retraction(c: Caller, retraction: Rid) -> answers.Retraction:
        """One retraction, withdrawal or correction by its id, with what it took OUT (and, once
        reinstated, what came back)."""
        return ops.retraction(c.graph, retraction)

    @tool("read", f"GET {T}/gates")
    def gate_log(c: Caller, action: Memory | None = None, limit: Limit = 100) -> list[answers.GateDecision]:
        """The payment gate's decisions, newest first (only ``action``'s when given): amount,
        account, allowed or refused, why, fragility, and what was already allowed to the same
        account or payee."""
        return ops.gates(c.graph, action, limit)

    @tool("read", f"GET {T}/recalls")
    def recall_list(c: Caller) -> list[answers.Recall]:
        """Executed payments that went OUT, with their drafted bank recalls, largest first."""
        return ops.recalls(c.graph)

    @tool("read", f"GET {T}/recalls/{{memory}}")
    def recall(c: Caller, memory: Memory) -> answers.Recall:
        """One payment's recall (by the payment's id or name) with its draft."""
        return ops.recall(c.graph, memory)

    @tool("audit", f"GET {T}/audit")
    def audit_log(c: Caller, limit: Limit = 100, before: Annotated[
            str | None, Field(pattern=r"^[0-9]{1,20}-[0-9]{1,20}$", description="The next "
                              "page: the entries older than this entry id (the last one "
                              "of the page before)")] = None) -> list[answers.AuditEntry]:
        """Security: the tenant's audit log, newest first, a page at a time: every decision,
        gate decision and refusal, from every surface; each entry with ``summary`` (a
        sentence: who, what, why, counts, amounts) and ``detail`` (an object)."""
        return c.api.audit.entries(c.graph.tenant, c.cap(limit), before)

    # -- deciding (security) --------------------------------------------------------------
    @tool("decide", f"POST {T}/retractions/preview")
    def preview_retraction(c: Caller, source: Ident, reason: Reason, from_: From = None,
                           to: To = None, start: Start = None, end: End = None) -> answers.BlastRadius:
        """Security: what would go OUT if ``source`` is declared compromised between ``from``
        and ``to`` (ISO 8601 with zone; open when left out), and what it reaches but leaves
        IN, with what still holds it (``kept``). Changes nothing; returns the graph revision
        to commit at, and names any retraction of the source in force over an overlapping
        window (``duplicates``)."""
        body = Compromise(source=source, reason=reason, from_=from_, to=to, start=start, end=end)
        return _brief(c.audited("retraction.preview", source,
                                lambda: ops.compromise_preview(c.graph, body, c.me.who), _counts))

    @tool("decide", f"POST {T}/retractions")
    def commit_retraction(c: Caller, source: Ident, reason: Reason, rev: Rev,
                          from_: From = None, to: To = None, id: Ident | None = None,
                          force: bool = False, start: Start = None, end: End = None) -> answers.BlastRadius:
        """Security: commit the retraction previewed at revision ``rev`` (refused if the graph
        changed since: preview again). Holds pending payments, drafts recalls. Refused, naming
        it, while a retraction of the source over an overlapping window is in force, unless
        ``force``."""
        body = CompromiseCommit(source=source, reason=reason, from_=from_, to=to, start=start,
                                end=end, rev=rev, id=id, force=force)
        return _brief(c.audited("retraction.commit", source,
                                lambda: ops.compromise_commit(c.api.conn, c.graph, body, c.me.who),
                                _counts))

    @tool("decide", f"POST {T}/retractions/{{rid}}/reinstate/preview")
    def preview_reinstatement(c: Caller, retraction: Rid, reason: Reason | None = None
                              ) -> answers.BlastRadius:
        """Security: what undoing a retraction, withdrawal or correction (by its id) would do:
        what comes back IN, the held payments it would release (``to_release``), the recalls
        it would withdraw (``recalls_to_withdraw``) or pull from the outbox
        (``recalls_to_pull``), each in words in ``warnings``. Changes nothing; returns the
        revision to commit at with ``reinstate``."""
        body = Reinstatement(reason=reason)
        return _brief(c.audited("retraction.reinstate.preview", retraction,
                                lambda: ops.reinstate_preview(c.graph, retraction, body,
                                                              c.me.who), _counts))

    @tool("decide", f"POST {T}/retractions/{{rid}}/reinstate")
    def reinstate(c: Caller, retraction: Rid, rev: Rev, reason: Reason | None = None) -> answers.BlastRadius:
        """Security: undo a retraction, withdrawal or correction as previewed at revision
        ``rev`` with ``preview_reinstatement`` (refused if the graph changed since: preview
        again). Releases the held payments and withdraws the recalls the preview listed; the
        answer's ``warnings`` say what to tell finance and the bank."""
        body = ReinstatementCommit(reason=reason, rev=rev)
        return _brief(c.audited("retraction.reinstate", retraction,
                                lambda: ops.reinstate(c.api.conn, c.graph, retraction, body,
                                                      c.me.who), _counts))

    @tool("decide", f"POST {T}/withdrawals/preview")
    def preview_withdrawal(c: Caller, memory: Memory, reason: Reason) -> answers.BlastRadius:
        """Security: what would go OUT if this one memory is withdrawn (it was wrong, whatever
        its sources said), and the revision to commit at. Changes nothing."""
        body = Withdrawal(memory=memory, reason=reason)
        return _brief(c.audited("withdrawal.preview", memory,
                                lambda: ops.change_preview(c.graph, body, c.me.who), _counts))

    @tool("decide", f"POST {T}/withdrawals")
    def commit_withdrawal(c: Caller, memory: Memory, reason: Reason, rev: Rev,
                          id: Ident | None = None) -> answers.BlastRadius:
        """Security: withdraw the memory as previewed at revision ``rev`` (refused if the graph
        changed since). Undo it with ``reinstate`` and the returned id."""
        body = WithdrawalCommit(memory=memory, reason=reason, rev=rev, id=id)
        return _brief(c.audited("withdrawal.commit", memory,
                                lambda: ops.change_commit(c.api.conn, c.graph, body, c.me.who),
                                _counts))

    @tool("decide", f"POST {T}/corrections/preview")
    def preview_correction(c: Caller, memory: Memory, text: Text,
                           reason: Reason, reviewer: Ident | None = None,
                           name: Ident | None = None) -> answers.BlastRadius:
        """Security: what would change if the memory is replaced by ``text`` (vouched for by
        ``reviewer``, default the token's name): the old one goes OUT with what rests on it
        alone. Changes nothing; returns the revision to commit at."""
        body = Correction(memory=memory, text=text, reason=reason, reviewer=reviewer, name=name)
        return _brief(c.audited("correction.preview", memory,
                                lambda: ops.change_preview(c.graph, body, c.me.who), _counts))

    @tool("decide", f"POST {T}/corrections")
    def commit_correction(c: Caller, memory: Memory, text: Text,
                          reason: Reason, rev: Rev, reviewer: Ident | None = None,
                          name: Ident | None = None, id: Ident | None = None) -> answers.BlastRadius:
        """Security: correct the memory as previewed at revision ``rev`` (refused if the graph
        changed since). Undo it with ``reinstate`` and the returned id."""
        body = CorrectionCommit(memory=memory, text=text, reason=reason, reviewer=reviewer,
                                name=name, id=id, rev=rev)
        return _brief(c.audited("correction.commit", memory,
                                lambda: ops.change_commit(c.api.conn, c.graph, body, c.me.who),
                                _counts))

    # -- approving (finance) --------------------------------------------------------------
    @tool("approve", f"POST {T}/recalls/{{memory}}/approve")
    def approve_recall(c: Caller, memory: Memory) -> answers.Recall:
        """Finance: approve the drafted recall of an executed payment (by its id or name): it
        goes to the outbox for the bank. Only a drafted recall can be approved (not a rejected
        one)."""
        return c.audited("recall.approve", memory,
                         lambda: ops.approve(c.graph, memory, c.me.who),
                         lambda r: {"action": r["action"], "amount": r["amount"]})

    @tool("approve", f"POST {T}/recalls/{{memory}}/reject")
    def reject_recall(c: Caller, memory: Memory, reason: Reason) -> answers.Recall:
        """Finance: reject the drafted recall of a payment (by its id or name), saying why: it
        is never sent. An approved recall cannot be rejected (it is in the outbox)."""
        body = RecallRejection(reason=reason)
        return c.audited("recall.reject", memory,
                         lambda: ops.reject(c.graph, memory, body, c.me.who),
                         lambda r: {"action": r["action"], "amount": r["amount"],
                                    "state": r["state"], "reason": r["rejected"]["reason"]})

    @tool("approve", f"POST {T}/recalls/{{memory}}/notes")
    def annotate_recall(c: Caller, memory: Memory, text: Annotated[
            tx.text(2000, min_length=1), Field(description="The note")]) -> answers.Recall:
        """Finance: add a note to a payment's recall (any state), signed with the token's name
        and dated; the notes are shown with the recall's text."""
        body = RecallNote(text=text)
        return c.audited("recall.annotate", memory,
                         lambda: ops.annotate(c.graph, memory, body, c.me.who),
                         lambda r: {"action": r["action"], "amount": r["amount"],
                                    "state": r["state"], "notes": len(r["notes"])})

    @tool("approve", f"POST {T}/recalls/{{memory}}/notice/approve")
    def approve_withdrawal_notice(c: Caller, memory: Memory) -> answers.Recall:
        """Finance: approve the withdrawal notice of a payment (by its id or name) whose recall
        was exported for the bank and is withdrawn (the payment is IN again): the letter
        asking the bank to disregard the request goes to the outbox, to be exported."""
        return c.audited("recall.notice.approve", memory,
                         lambda: ops.approve_notice(c.graph, memory, c.me.who),
                         lambda r: {"action": r["action"], "amount": r["amount"],
                                    "state": r["state"]})

    @tool("approve", f"POST {T}/recalls/{{memory}}/notice/export")
    def export_withdrawal_notice(c: Caller, memory: Memory, format: Annotated[
            Literal["text", "csv"], Field(description="text (the letter) or csv (one row per "
                                          "request the bank holds)")] = "text") -> answers.ExportedRecall:
        """Finance: export an approved withdrawal notice for the bank; it is marked exported.
        Returns the recall and ``file`` (``content``, ``media_type``, ``filename``)."""
        body = NoticeExport(format=format)
        return c.audited("recall.notice.export", memory,
                         lambda: ops.export_notice(c.graph, memory, body, c.me.who),
                         lambda r: {"action": r["action"], "amount": r["amount"],
                                    "state": r["state"], "format": body.format})

    @tool("approve", f"POST {T}/recalls/{{memory}}/export")
    def export_recall(c: Caller, memory: Memory, format: Annotated[
            Literal["csv", "camt.056"], Field(description="csv, or camt.056 (an ISO 20022 "
                       "FIToFIPaymentCancellationRequest, version 001.12)")] = "camt.056",
                      allow_placeholders: Annotated[bool, Field(description="Export a camt.056 "
                          "even while the tenant's settings leave placeholders in it (the "
                          "tenant's id as the organisation, NOTPROVIDED as the bank)")] = False
                      ) -> answers.ExportedRecall:
        """Finance: export an approved recall for the bank; the recall is marked exported.
        Returns the recall and ``file`` (``content``, ``media_type``, ``filename``). A camt.056
        is refused while the tenant's bank settings are not set (an admin sets them), unless
        ``allow_placeholders``."""
        body = RecallExport(format=format, allow_placeholders=allow_placeholders)
        return c.audited("recall.export", memory,
                         lambda: ops.export(c.graph, memory, body, c.me.who,
                                            c.api.settings.gate_currency),
                         lambda r: {"action": r["action"], "amount": r["amount"],
                                    "state": r["state"], "format": body.format})

    # -- agents ---------------------------------------------------------------------------
    @tool("gate", f"POST {T}/gate")
    def ask_gate(c: Caller, action: Memory,
                 premises: Annotated[list[Ident] | None, Field(
                     min_length=1, max_length=MAX_PREMISES, description="For a payment not "
                     "stored yet: the memories it rests on")] = None,
                 amount: float | None = None, account: Ident | None = None,
                 payee: Ident | None = None, currency: str | None = None) -> answers.GateAnswer:
        """Agent: ask the payment gate about a payment before making it: a stored proposal by
        id or name (with the call's amount, account, payee), or a new one with ``premises`` and
        ``amount``. The decision is recorded like the agents' own."""
        body = GateAsk(action=action, premises=premises, amount=amount, account=account,
                       payee=payee, currency=currency)
        return c.audited("gate", action, lambda: ops.gate(c.graph, body, c.api.gate),
                         lambda d: {"action": d["action"], "reason": d["reason"],
                                    "fragility": d["fragility"]},
                         lambda d: "allowed" if d["allowed"] else "blocked")

    @tool("send", f"POST {T}/events")
    def send_events(c: Caller, events: Annotated[list[AgentEvent], Field(
            min_length=1, max_length=MAX_EVENTS)]) -> answers.Accepted:
        """Agent: send agents' events (sources, observations, memories written, actions
        proposed and executed) to the tenant's stream, where the writers apply them in order.
        Every event must name this token's tenant."""
        batch = EventBatch(events=events)
        return c.audited("events.send", f"{len(events)} event(s)",
                         lambda: ops.ingest(c.api.conn, c.graph.tenant, batch,
                                          c.api.settings.partitions),
                         lambda r: {"accepted": r["accepted"]})

    # -- resources: the tenant's recalls and payments -------------------------------------
    @resource(f"{SCHEME}://{{tenant}}/recalls", "recalls", "The tenant's recalls: executed "
              "payments that went OUT, each with its drafted (or approved) bank recall")
    def recalls_resource(c: Caller) -> list[dict]:
        return ops.recalls(c.graph)

    @resource(f"{SCHEME}://{{tenant}}/recalls/{{memory}}", "recall", "One payment's recall "
              "(the payment's id or name, percent-encoded)")
    def recall_resource(c: Caller, memory: str) -> dict:
        return ops.recall(c.graph, memory)

    @resource(f"{SCHEME}://{{tenant}}/payments/held", "held_payments", "The tenant's held "
              "payments: pending payments that rest on something OUT (the gate refuses them)")
    def held_resource(c: Caller) -> list[dict]:
        return [p for p in ops.pending_payments(c.graph) if p["held"]]

    @resource(f"{SCHEME}://{{tenant}}/payments/pending", "pending_payments", "The tenant's "
              "pending payments, each with its fragility and whether it is held")
    def pending_resource(c: Caller) -> list[dict]:
        return ops.pending_payments(c.graph)


def _brief(d: dict) -> dict:
    """A blast radius without the drawing data (the console's graph) an assistant does not need."""
    return {k: v for k, v in d.items() if k != "graph"}

