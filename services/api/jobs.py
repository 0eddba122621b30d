"""Every job of the API, declared once: its route, permission, input, answer and audit, one row
of ``JOBS``. The HTTP routes (``rescind.api.routes``) and the MCP tools
(``rescind.api.mcp_tools``) are made from the table; neither writes a job again. What a row
holds, and how a job is done: ``rescind.api.job``. See docs/architecture.md, "How to add a
tenant job".
"""

from __future__ import annotations

from collections.abc import Callable

from rescind.api import answers as a
from rescind.api import models as m
from rescind.api import ops
from rescind.api.auth import PERMISSIONS
from rescind.api.job import (
    AT,
    BEFORE,
    ID,
    KIND,
    LIMIT,
    MEMORY,
    PAGING,
    REV,
    RID,
    SKIP,
    STATUS,
    TOKEN_ID,
    Audit,
    Call,
    Job,
    Param,
    T,
    audit_page,
    decision,
    perform,
)
from rescind.contract import text as tx
from rescind.contract.errors import Invalid
from rescind.operator import audit_text


# -- what some jobs do beyond one ops call ----------------------------------------------------
def _whoami(c: Call) -> dict:
    s = c.api.settings
    return {"tenant": c.me.tenant, "role": c.me.role, "who": c.me.who, "token": c.me.token_id,
            "trace_url": s.trace_url, "currency": s.gate_currency,
            "gate": {"threshold": s.gate_threshold, "min_domains": s.gate_min_domains,
                     "currency": s.gate_currency}}


def _search(c: Call) -> list[dict]:
    if c["include_out"] and c["status"] is not None:
        raise Invalid("give status or include_out, not both")
    wanted = c["status"] if c["status"] is not None else (None if c["include_out"] else "IN")
    return ops.memories(c.graph, c["kind"], wanted, c["query"] or None, c["skip"],
                        c.cap(c["limit"]))["items"]


def _payments(c: Call) -> list[dict]:
    rows = ops.pending_payments(c.graph)
    return rows if c["held"] is None else [r for r in rows if r["held"] is c["held"]]


def _create_token(c: Call) -> dict:
    token, record = c.api.tokens.create(c.tenant, c.body.role, c.body.who, c.me.who)
    return {**record, "token": token}


def _settings_changes(c: Call) -> dict:
    return {k: getattr(c.body, k) for k in sorted(c.body.model_fields_set)}


def _radius(c: Call, d: dict) -> dict:
    return audit_text.radius(d)  # which, why, counts, the payments held, recalled, released


def _reinstated(c: Call, d: dict) -> dict:
    return {**audit_text.radius(d),
            "recalls_withdrawn": [i["action"] for i in d.get("recalls_to_withdraw", [])]}


def _recall(c: Call, r: dict) -> dict:
    out = {"action": r["action"], "amount": r["amount"], "state": r["state"]}
    if c.body is not None and "format" in type(c.body).model_fields:
        out["format"] = c.body.format
    return out


def _decision(*args, summary: Callable = _radius, **kw) -> tuple[Job, Job]:
    """A preview and its commit (``job.decision``): the blast radius answered."""
    return decision(*args, answer=a.BlastRadius, summary=summary, **kw)


# -- the table --------------------------------------------------------------------------------
JOBS: tuple[Job, ...] = (
    # who
    Job("whoami", "GET", "/me", "whoami", a.Me, _whoami, "Who this token is", tag="auth",
        doc="Who this token is: its tenant, role and name (what it acts with); the trace UI a "
            "memory's ``trace`` links to (RESCIND_TRACE_URL), the currency of an amount that "
            "names none (RESCIND_GATE_CURRENCY) and the gate's rule (``gate``: threshold, "
            "min_domains, currency) that its decisions are told against."),
    # the admin's: tenants, settings, tokens, the server's audit log (no MCP tools: the tools
    # act on one tenant)
    Job("tenants", "GET", "/tenants", "admin", list[a.Tenant],
        lambda c: c.api.tokens.tenants(), "Every tenant", tag="admin", tool=False),
    Job("create_tenant", "POST", "/tenants", "admin", a.TenantCreated,
        lambda c: {"name": c.body.name, "created": c.api.tokens.add_tenant(c.body.name,
                                                                          c.me.who)},
        "Create a tenant", tag="admin", tool=False, body=m.NewTenant, status=201,
        audit=Audit("tenant.create", lambda c: c.body.name, scope=lambda c: c.body.name)),
    Job("tenant_settings", "GET", T + "/settings", "admin", a.BankFile,
        lambda c: ops.tenant_settings(c.api.conn, c.tenant),
        "The tenant's settings: what its bank files (camt.056) say of it", tag="admin",
        tool=False, doc="Each setting (null when not set) and ``placeholders``: what a camt.056 "
        "would fill with a placeholder today (an export refuses while any is left, unless "
        "asked)."),
    Job("set_tenant_settings", "PATCH", T + "/settings", "admin", a.BankFile,
        lambda c: ops.set_tenant_settings(c.api.conn, c.tenant, _settings_changes(c)),
        "Change the tenant's settings: the fields given (null clears one)", tag="admin",
        tool=False, body=m.TenantSettings,
        audit=Audit("tenant.settings", lambda c: ", ".join(_settings_changes(c)) or "nothing",
                    lambda c, r: {"changed": {k: r[k] for k in _settings_changes(c)},
                                  "placeholders": r["placeholders"]})),
    Job("tokens", "GET", T + "/tokens", "admin", list[a.Token],
        lambda c: c.api.tokens.tokens(c.tenant), "The tenant's tokens (never the secrets)",
        tag="admin", tool=False),
    Job("create_token", "POST", T + "/tokens", "admin", a.NewToken, _create_token,
        "Create a token; the secret is shown once", tag="admin", tool=False, body=m.NewToken,
        status=201, audit=Audit("token.create", lambda c: f"{c.body.role}:{c.body.who}",
                                lambda c, r: {"id": r["id"], "role": r["role"],
                                              "who": r["who"]})),
    Job("revoke_token", "DELETE", T + "/tokens/{token_id}", "admin", a.Revoked,
        lambda c: c.api.tokens.revoke(c.tenant, c["token_id"]), "Revoke a token", tag="admin",
        tool=False, params=(TOKEN_ID,), audit=Audit("token.revoke", lambda c: c["token_id"])),
    Job("server_audit_log", "GET", "/audit", "admin", list[a.AuditEntry],
        lambda c: audit_page(c, None), "The server's audit log (unknown tokens, refusals "
        "outside a tenant), newest first, a page at a time", tag="admin", tool=False,
        params=(LIMIT, BEFORE), responses=PAGING),
    Job("audit_log", "GET", T + "/audit", "audit", list[a.AuditEntry],
        lambda c: audit_page(c, c.graph.tenant),
        "The audit log, newest first, a page at a time", tag="admin", params=(LIMIT, BEFORE),
        responses=PAGING,
        doc="Security: the tenant's audit log, newest first, a page at a time: every decision, "
            "gate decision and refusal, from every surface; each entry with who (role, via), "
            "action, target, result, status, ``summary`` (a sentence: who, what, why, counts, "
            "amounts) and ``detail`` (an object); times to the second."),
    # reading (viewer, security, finance)
    Job("revision", "GET", T + "/revision", "read", a.Revision,
        lambda c: ops.revision(c.graph), "The graph revision (poll it for changes)",
        doc="The tenant's graph revision: it moves with every write and decision."),
    Job("overview", "GET", T + "/overview", "read", a.Overview,
        lambda c: ops.overview(c.graph, c.cap(c["limit"])),
        "Sources → observations → beliefs → plans → actions, with their links", tool=False,
        params=(Param("limit", int, 200, LIMIT.description, limits=LIMIT.limits),)),
    Job("list_sources", "GET", T + "/sources", "read", list[a.Source],
        lambda c: ops.sources(c.graph), "Sources and their trust domains",
        doc="Every source (vendor portal, contract, inbox, reviewer) with its trust domain, "
            "when it was read and the retractions of it in force."),
    Job("memories", "GET", T + "/memories", "read", a.MemoryPage,
        lambda c: ops.memories(c.graph, c["kind"], c["status"], c["q"], c["skip"],
                               c.cap(c["limit"])),
        "Memories, filtered by kind, status, text", tool=False,
        params=(KIND, STATUS, Param("q", tx.line(200) | None, None,
                                    "Case-insensitive text fragment"), SKIP, LIMIT)),
    Job("search_memories", "GET", T + "/memories", "read", list[a.Memory], _search,
        "Search memories", http=False,
        params=(Param("query", tx.line(200), "", "Case-insensitive text fragment"), KIND,
                Param("include_out", bool, False, "Also the memories that are OUT"), STATUS,
                SKIP, Param("limit", int, 20, LIMIT.description, limits={"ge": 1, "le": 200})),
        doc="Memories whose text contains ``query`` (case-insensitive; every memory when left "
            "out), newest first. Memories that are OUT (retracted, withdrawn, or resting on "
            "something that is) are left out unless ``include_out`` is true; ``status`` IN or "
            "OUT gives only those. Page with ``skip``."),
    Job("explain", "GET", T + "/memories/{memory}", "read", a.Explanation,
        lambda c: ops.memory(c.graph, c["memory"]), "One memory and its justification tree",
        params=(MEMORY,),
        doc="The justification tree of a memory (id or name, e.g. a payment's name) down to "
            "the sources that said it, with every status on the way."),
    Job("memory_history", "GET", T + "/memories/{memory}/history", "read", a.History,
        lambda c: ops.history(c.graph, c["memory"]),
        "Every status the memory has had, with its cause", params=(MEMORY,),
        doc="Every status the memory has had, oldest first, each with its cause (the "
            "retraction, withdrawal or correction), who decided and the graph revision; for a "
            "payment, also every time the gate was asked about it, and its timeline."),
    Job("memory_as_of", "GET", T + "/memories/{memory}/as-of", "read", a.MemoryAsOf,
        lambda c: ops.memory_as_of(c.graph, c["memory"], c["at"], c["rev"]),
        "The memory's status at a time or revision, and its tree as it stood then",
        params=(MEMORY, AT, REV),
        doc="The memory's status at a past time (``at``) or graph revision (``rev``), why, and "
            "its justification tree with each status as it stood then."),
    Job("fragility", "GET", T + "/memories/{memory}/fragility", "read", a.Fragility,
        lambda c: ops.fragility(c.graph, c["memory"]),
        "How many trust domains must fall to fake it, and which", params=(MEMORY,),
        doc="How many independent trust domains an attacker must control to fake this memory "
            "or payment, and one smallest set of domains that would do it."),
    Job("as_of", "GET", T + "/as-of", "read", a.AsOf,
        lambda c: ops.as_of(c.graph, c["at"], c["rev"], c["kind"], c["status"], c["skip"],
                            c.cap(c["limit"])),
        "What was believed at a time or revision, and why",
        params=(AT, REV, KIND, STATUS, SKIP, LIMIT),
        doc="What was believed at a past time (``at``) or graph revision (``rev``): each "
            "memory that existed then with its status then and why."),
    Job("pending_payments", "GET", T + "/payments", "read", list[a.Payment], _payments,
        "Pending payments with their fragility",
        params=(Param("held", bool | None, None, "true: only the held ones; false: only those "
                      "not held"),),
        doc="Payments not executed yet, largest first, each with its fragility and whether it "
            "is held (OUT: it rests on something retracted, and the gate will refuse it)."),
    Job("audit_order", "GET", T + "/audit-order", "read", list[a.AuditOrderRow],
        lambda c: ops.audit_order(c.graph),
        "Sources ranked by the value resting on them alone",
        doc="Sources ranked by the value of what rests on them alone: audit these first."),
    Job("retraction_list", "GET", T + "/retractions", "read", list[a.Retraction],
        lambda c: ops.retractions(c.graph), "Retractions, withdrawals and corrections",
        doc="Retractions of sources, withdrawals and corrections of memories: each with its "
            "state (committed or reinstated), source and window (``from``/``to``) or memory, "
            "reason, who decided and when."),
    Job("retraction", "GET", T + "/retractions/{rid}", "read", a.Retraction,
        lambda c: ops.retraction(c.graph, c["rid"]), "One retraction and its result",
        params=(RID,),
        doc="One retraction, withdrawal or correction by its id, with what it took OUT (and, "
            "once reinstated, what came back)."),
    Job("gate_log", "GET", T + "/gates", "read", list[a.GateDecision],
        lambda c: ops.gates(c.graph, c["action"], c["limit"]),
        "The payment gate's decisions, newest first",
        params=(Param("action", ID | None, None, "Only this action's (id or name)"),
                Param("limit", int, 100, limits={"ge": 1, "le": 1000})),
        doc="The payment gate's decisions, newest first (only ``action``'s when given): "
            "amount, account, allowed or refused, why, fragility, and what was already allowed "
            "to the same account or payee."),
    Job("recall_list", "GET", T + "/recalls", "read", list[a.Recall],
        lambda c: ops.recalls(c.graph), "Drafted and approved recalls", tag="recalls",
        doc="Executed payments that went OUT, with their drafted bank recalls, largest "
            "first."),
    Job("recall", "GET", T + "/recalls/{memory}", "read", a.Recall,
        lambda c: ops.recall(c.graph, c["memory"]), "One recall with its draft",
        tag="recalls", params=(MEMORY,),
        doc="One payment's recall (by the payment's id or name) with its draft."),
    # deciding (security): each a preview and its commit
    *_decision(
        "preview_retraction", "commit_retraction", T + "/retractions",
        ("retraction.preview", "retraction.commit"), m.Compromise, m.CompromiseCommit,
        lambda c: c.body.source,
        (lambda c: ops.compromise_preview(c.graph, c.body, c.me.who),
         lambda c: ops.compromise_commit(c.api.conn, c.graph, c.body, c.me.who)),
        ("Preview a compromise: the blast radius and the revision to commit at",
         "Commit a previewed compromise (409 when the graph moved since, or while the source "
         "is retracted over an overlapping window, unless `force`)"),
        ("Security: what would go OUT if ``source`` is declared compromised between ``from`` "
         "and ``to`` (ISO 8601 with zone; open when left out), and what it reaches but leaves "
         "IN, with what still holds it (``kept``). Changes nothing; returns the graph revision "
         "to commit at, and names any retraction of the source in force over an overlapping "
         "window (``duplicates``).",
         "Security: commit the retraction previewed at revision ``rev`` (refused if the graph "
         "changed since: preview again). Holds pending payments, drafts recalls. Refused, "
         "naming it, while a retraction of the source over an overlapping window is in force, "
         "unless ``force``.")),
    *_decision(
        "preview_reinstatement", "reinstate", T + "/retractions/{rid}/reinstate",
        ("retraction.reinstate.preview", "retraction.reinstate"), m.Reinstatement,
        m.ReinstatementCommit, lambda c: c["rid"],
        (lambda c: ops.reinstate_preview(c.graph, c["rid"], c.body, c.me.who),
         lambda c: ops.reinstate(c.api.conn, c.graph, c["rid"], c.body, c.me.who)),
        ("Preview undoing a retraction, withdrawal or correction: what comes back IN, the held "
         "payments it releases, the recalls it withdraws or pulls (`warnings`), and the "
         "revision to commit at",
         "Commit a previewed reinstatement at its revision (409 when the graph moved since): "
         "releases held payments, withdraws recalls"),
        ("Security: what undoing a retraction, withdrawal or correction (by its id) would do: "
         "what comes back IN, the held payments it would release (``to_release``), the "
         "recalls it would withdraw (``recalls_to_withdraw``) or pull from the outbox "
         "(``recalls_to_pull``), each in words in ``warnings``. Changes nothing; returns the "
         "revision to commit at with ``reinstate``.",
         "Security: undo a retraction, withdrawal or correction as previewed at revision "
         "``rev`` (refused if the graph changed since: preview again). Releases the held "
         "payments and withdraws the recalls the preview listed; the answer's ``warnings`` "
         "say what to tell finance and the bank."),
        params=(RID,), body_optional=True, summary=_reinstated),
    *_decision(
        "preview_withdrawal", "commit_withdrawal", T + "/withdrawals",
        ("withdrawal.preview", "withdrawal.commit"), m.Withdrawal, m.WithdrawalCommit,
        lambda c: c.body.memory,
        (lambda c: ops.change_preview(c.graph, c.body, c.me.who),
         lambda c: ops.change_commit(c.api.conn, c.graph, c.body, c.me.who)),
        ("Preview withdrawing a memory", "Withdraw a memory (previewed at rev)"),
        ("Security: what would go OUT if this one memory is withdrawn (it was wrong, whatever "
         "its sources said), and the revision to commit at. Changes nothing.",
         "Security: withdraw the memory as previewed at revision ``rev`` (refused if the graph "
         "changed since). Undo it with ``reinstate`` and the returned id.")),
    *_decision(
        "preview_correction", "commit_correction", T + "/corrections",
        ("correction.preview", "correction.commit"), m.Correction, m.CorrectionCommit,
        lambda c: c.body.memory,
        (lambda c: ops.change_preview(c.graph, c.body, c.me.who),
         lambda c: ops.change_commit(c.api.conn, c.graph, c.body, c.me.who)),
        ("Preview correcting a memory", "Correct a memory (previewed at rev)"),
        ("Security: what would change if the memory is replaced by ``text`` (vouched for by "
         "``reviewer``, default the token's name): the old one goes OUT with what rests on it "
         "alone. Changes nothing; returns the revision to commit at.",
         "Security: correct the memory as previewed at revision ``rev`` (refused if the graph "
         "changed since). Undo it with ``reinstate`` and the returned id.")),
    # approving (finance)
    Job("approve_recall", "POST", T + "/recalls/{memory}/approve", "approve", a.Recall,
        lambda c: ops.approve(c.graph, c["memory"], c.me.who),
        "Approve a drafted recall: it goes to the outbox", tag="recalls", params=(MEMORY,),
        audit=Audit("recall.approve", lambda c: c["memory"],
                    lambda c, r: {"action": r["action"], "amount": r["amount"]}),
        doc="Finance: approve the drafted recall of an executed payment (by its id or name): "
            "it goes to the outbox for the bank. Only a drafted recall can be approved (not a "
            "rejected one)."),
    Job("reject_recall", "POST", T + "/recalls/{memory}/reject", "approve", a.Recall,
        lambda c: ops.reject(c.graph, c["memory"], c.body, c.me.who),
        "Reject a drafted recall, saying why: it is never sent (409 once approved)",
        tag="recalls", params=(MEMORY,), body=m.RecallRejection,
        audit=Audit("recall.reject", lambda c: c["memory"],
                    lambda c, r: {**_recall(c, r), "reason": r["rejected"]["reason"]}),
        doc="Finance: reject the drafted recall of a payment (by its id or name), saying why: "
            "it is never sent. An approved recall cannot be rejected (it is in the outbox)."),
    Job("annotate_recall", "POST", T + "/recalls/{memory}/notes", "approve", a.Recall,
        lambda c: ops.annotate(c.graph, c["memory"], c.body, c.me.who),
        "Add a note to a recall (any state), signed and dated", tag="recalls",
        params=(MEMORY,), body=m.RecallNote,
        audit=Audit("recall.annotate", lambda c: c["memory"],
                    lambda c, r: {**_recall(c, r), "notes": len(r["notes"])}),
        doc="Finance: add a note to a payment's recall (any state), signed with the token's "
            "name and dated; the notes are shown with the recall's text."),
    Job("export_recall", "POST", T + "/recalls/{memory}/export", "approve", a.ExportedRecall,
        lambda c: ops.export(c.graph, c["memory"], c.body, c.me.who,
                             c.api.settings.gate_currency),
        "Export an approved recall for the bank, as CSV or an ISO 20022 camt.056 message (409 "
        "unless approved); the recall is marked exported", tag="recalls", params=(MEMORY,),
        body=m.RecallExport, files={"text/csv": "CSV", "application/xml": "the camt.056 XML "
                                  "message"},
        audit=Audit("recall.export", lambda c: c["memory"], _recall),
        doc="Finance: export an approved recall for the bank; the recall is marked exported "
            "(see it in ``recall``). Over HTTP the answer is the file itself "
            "(``Content-Disposition`` names it); a tool answers the recall and ``file`` "
            "(``content``, ``media_type``, ``filename``). A camt.056 is refused while the "
            "tenant's bank settings are not set (an admin sets them), unless "
            "``allow_placeholders``."),
    Job("approve_withdrawal_notice", "POST", T + "/recalls/{memory}/notice/approve",
        "approve", a.Recall, lambda c: ops.approve_notice(c.graph, c["memory"], c.me.who),
        "Approve the withdrawal notice of an exported recall whose payment is IN again: it "
        "goes to the outbox (409 unless the recall is withdrawn)", tag="recalls",
        params=(MEMORY,), audit=Audit("recall.notice.approve", lambda c: c["memory"], _recall),
        doc="Finance: approve the withdrawal notice of a payment (by its id or name) whose "
            "recall was exported for the bank and is withdrawn (the payment is IN again): the "
            "letter asking the bank to disregard the request goes to the outbox, to be "
            "exported."),
    Job("export_withdrawal_notice", "POST", T + "/recalls/{memory}/notice/export", "approve",
        a.ExportedRecall, lambda c: ops.export_notice(c.graph, c["memory"], c.body, c.me.who),
        "Export an approved withdrawal notice for the bank, as a letter (text) or CSV (409 "
        "unless approved)", tag="recalls", params=(MEMORY,), body=m.NoticeExport,
        files={"text/plain": "the letter", "text/csv": "CSV"},
        audit=Audit("recall.notice.export", lambda c: c["memory"], _recall),
        doc="Finance: export an approved withdrawal notice for the bank; it is marked "
            "exported. Over HTTP the answer is the file itself; a tool answers the recall and "
            "``file`` (``content``, ``media_type``, ``filename``)."),
    # agents
    Job("send_events", "POST", T + "/events", "send", a.Accepted,
        lambda c: ops.ingest(c.api.conn, c.graph.tenant, c.body, c.api.settings.partitions),
        "Send agents' events (writes) to the tenant's stream", tag="agents", body=m.EventBatch,
        audit=Audit("events.send", lambda c: f"{len(c.body.events)} event(s)",
                    lambda c, r: {"accepted": r["accepted"]}),
        doc="Agent: send agents' events (sources, observations, memories written, actions "
            "proposed and executed) to the tenant's stream, where the writers apply them in "
            "order. Every event must name this token's tenant."),
    Job("ask_gate", "POST", T + "/gate", "gate", a.GateAnswer,
        lambda c: ops.gate(c.graph, c.body, c.api.gate), "Ask the payment gate about an action",
        tag="agents", body=m.GateAsk,
        audit=Audit("gate", lambda c: c.body.action,
                    lambda c, d: {"action": d["action"], "reason": d["reason"],
                                  "fragility": d["fragility"]},
                    lambda d: "allowed" if d["allowed"] else "blocked"),
        doc="Agent: ask the payment gate about a payment before making it: a stored proposal "
            "by id or name (with the call's amount, account, payee), or a new one with "
            "``premises`` and ``amount``. The decision is recorded like the agents' own."),
)

BY_NAME = {j.name: j for j in JOBS}
assert len(BY_NAME) == len(JOBS) and all(j.permission in PERMISSIONS for j in JOBS)

__all__ = ["BY_NAME", "JOBS", "Audit", "Call", "Job", "Param", "perform"]
