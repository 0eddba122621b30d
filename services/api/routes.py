"""The HTTP endpoints. Each names one permission through its Guard (see ``auth.PERMISSIONS``);
``create_app`` copies it into the OpenAPI document as ``x-rescind-permission``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Response

from rescind.api import ops
from rescind.api.auth import Principal
from rescind.api.models import (
    MAX_REV,
    Compromise,
    CompromiseCommit,
    Correction,
    CorrectionCommit,
    EventBatch,
    GateAsk,
    NewTenant,
    NewToken,
    NoticeExport,
    RecallExport,
    RecallNote,
    RecallRejection,
    Reinstatement,
    ReinstatementCommit,
    TenantSettings,
    Withdrawal,
    WithdrawalCommit,
)
from rescind.api.state import Api, Guard, get_api
from rescind.contract import text as tx
from rescind.contract.kinds import AnyKind, StatusName
from rescind.operator import audit_text

router = APIRouter(prefix="/api/v1")

_ID = tx.line(200, min_length=1)  # NUL, control characters: 422 (rescind.contract.text)
Tenant = Annotated[str, Path(pattern=r"^[a-z0-9_-]{1,64}$", description="Tenant name")]
MemoryRef = Annotated[_ID, Path(description="A memory id, or the name its writer gave it")]
Rid = Annotated[_ID, Path(description="A retraction, withdrawal or correction id")]
Kind = AnyKind
Status = StatusName
Skip = Annotated[int, Query(ge=0, le=10**9)]
Limit = Annotated[int, Query(ge=1, le=1000, description="Page size (capped by the server's limit)")]
At = Annotated[tx.line(64) | None, Query(description="ISO 8601 time with zone")]
Rev = Annotated[int | None, Query(ge=0, le=MAX_REV, description="A graph revision")]
Search = Annotated[tx.line(200) | None, Query(description="Case-insensitive text fragment")]
ApiDep = Annotated[Api, Depends(get_api)]

Reader = Annotated[Principal, Depends(Guard("read"))]
Decider = Annotated[Principal, Depends(Guard("decide"))]
Approver = Annotated[Principal, Depends(Guard("approve"))]
Agent = Annotated[Principal, Depends(Guard("send"))]
GateUser = Annotated[Principal, Depends(Guard("gate"))]
Auditor = Annotated[Principal, Depends(Guard("audit"))]
Admin = Annotated[Principal, Depends(Guard("admin"))]
Anyone = Annotated[Principal, Depends(Guard("whoami"))]
T = "/tenants/{tenant}"


def _cap(api: Api, limit: int) -> int:
    return min(limit, api.settings.api_max_list)


def _counts(d: dict) -> dict:
    return audit_text.radius(d)  # which, why, counts, the payments held or recalled


# -- who, tenants, tokens, audit (admin) --------------------------------------------------------
@router.get("/me", tags=["auth"], summary="Who this token is")
def whoami(me: Anyone, api: ApiDep) -> dict:
    """Also where the console finds the trace UI a memory links to (RESCIND_TRACE_URL), the
    currency of an amount that names none (RESCIND_GATE_CURRENCY) and the gate's rule
    (``gate``: threshold, min_domains, currency) that its decisions are told against."""
    s = api.settings
    return {"tenant": me.tenant, "role": me.role, "who": me.who, "token": me.token_id,
            "trace_url": s.trace_url, "currency": s.gate_currency,
            "gate": {"threshold": s.gate_threshold, "min_domains": s.gate_min_domains,
                     "currency": s.gate_currency}}


@router.get("/tenants", tags=["admin"], summary="Every tenant")
def tenants(me: Admin, api: ApiDep) -> list[dict]:
    return api.tokens.tenants()


@router.post("/tenants", tags=["admin"], status_code=201, summary="Create a tenant")
def create_tenant(body: NewTenant, me: Admin, api: ApiDep) -> dict:
    def run() -> dict:
        return {"name": body.name, "created": api.tokens.add_tenant(body.name, me.who)}

    return api.audited(me, body.name, "tenant.create", body.name, run)


@router.get(T + "/settings", tags=["admin"],
            summary="The tenant's settings: what its bank files (camt.056) say of it")
def tenant_settings(tenant: Tenant, me: Admin, api: ApiDep) -> dict:
    """Each setting (null when not set) and ``placeholders``: what a camt.056 would fill with a
    placeholder today (an export refuses while any is left, unless asked)."""
    return ops.tenant_settings(api.conn, tenant)


@router.patch(T + "/settings", tags=["admin"],
              summary="Change the tenant's settings: the fields given (null clears one)")
def set_tenant_settings(tenant: Tenant, body: TenantSettings, me: Admin, api: ApiDep) -> dict:
    changes = {k: getattr(body, k) for k in sorted(body.model_fields_set)}
    return api.audited(me, tenant, "tenant.settings", ", ".join(changes) or "nothing",
                       lambda: ops.set_tenant_settings(api.conn, tenant, changes),
                       lambda r: {"changed": {k: r[k] for k in changes},
                                  "placeholders": r["placeholders"]})


@router.get(T + "/tokens", tags=["admin"], summary="The tenant's tokens (never the secrets)")
def tokens(tenant: Tenant, me: Admin, api: ApiDep) -> list[dict]:
    return api.tokens.tokens(tenant)


@router.post(T + "/tokens", tags=["admin"], status_code=201,
             summary="Create a token; the secret is shown once")
def create_token(tenant: Tenant, body: NewToken, me: Admin, api: ApiDep) -> dict:
    def run() -> dict:
        token, record = api.tokens.create(tenant, body.role, body.who, me.who)
        return {**record, "token": token}

    return api.audited(me, tenant, "token.create", f"{body.role}:{body.who}", run,
                       lambda r: {"id": r["id"], "role": r["role"], "who": r["who"]})


@router.delete(T + "/tokens/{token_id}", tags=["admin"], summary="Revoke a token")
def revoke_token(tenant: Tenant, token_id: Annotated[str, Path(pattern=r"^[0-9a-f]{16}$")],
                 me: Admin, api: ApiDep) -> dict:
    return api.audited(me, tenant, "token.revoke", token_id,
                       lambda: api.tokens.revoke(tenant, token_id))


AuditCursor = Annotated[str | None, Query(
    pattern=r"^[0-9]{1,20}-[0-9]{1,20}$",
    description="The next page: the entries older than this entry id (the X-Next-Before header "
                "of the page before)")]
_AUDIT_PAGING = {"X-Total-Count": {"description": "Entries in the log, live and archived",
                                   "schema": {"type": "integer"}},
                 "X-Next-Before": {"description": "The `before` of the next page (absent on "
                                   "the last page)", "schema": {"type": "string"}}}


def _audit_page(api: Api, scope: str | None, response: Response, limit: int,
                before: str | None) -> list[dict]:
    """One page of a scope's log, newest first; the total and the next page's cursor in the
    headers (the body stays the list of entries)."""
    size = _cap(api, limit)
    page = api.audit.entries(scope, size + 1, before)  # one more: is there a next page?
    response.headers["X-Total-Count"] = str(api.audit.total(scope))
    if len(page) > size:
        page = page[:size]
        response.headers["X-Next-Before"] = page[-1]["id"]
    return page


@router.get(T + "/audit", tags=["admin"], summary="The audit log, newest first, a page at a time",
            responses={200: {"headers": _AUDIT_PAGING}})
def audit_log(tenant: Tenant, me: Auditor, api: ApiDep, response: Response, limit: Limit = 100,
              before: AuditCursor = None) -> list[dict]:
    """Each entry: who (role, via), action, target, result, status, ``detail`` (a JSON object:
    counts, amounts, why) and ``summary`` (the entry as a sentence); times to the second."""
    return _audit_page(api, api.graph(tenant).tenant, response, limit, before)


@router.get("/audit", tags=["admin"],
            summary="The server's audit log (unknown tokens, refusals outside a tenant), newest "
                    "first, a page at a time", responses={200: {"headers": _AUDIT_PAGING}})
def server_audit_log(me: Admin, api: ApiDep, response: Response, limit: Limit = 100,
                     before: AuditCursor = None) -> list[dict]:
    return _audit_page(api, None, response, limit, before)


# -- reading ----------------------------------------------------------------------------------
@router.get(T + "/revision", tags=["read"], summary="The graph revision (poll it for changes)")
def revision(tenant: Tenant, me: Reader, api: ApiDep) -> dict:
    return ops.revision(api.graph(tenant))


@router.get(T + "/overview", tags=["read"],
            summary="Sources → observations → beliefs → plans → actions, with their links")
def overview(tenant: Tenant, me: Reader, api: ApiDep, limit: Limit = 200) -> dict:
    return ops.overview(api.graph(tenant), _cap(api, limit))


@router.get(T + "/sources", tags=["read"], summary="Sources and their trust domains")
def sources(tenant: Tenant, me: Reader, api: ApiDep) -> list[dict]:
    return ops.sources(api.graph(tenant))


@router.get(T + "/memories", tags=["read"], summary="Memories, filtered by kind, status, text")
def memories(tenant: Tenant, me: Reader, api: ApiDep, kind: Kind | None = None,
             status: Status | None = None, q: Search = None, skip: Skip = 0,
             limit: Limit = 100) -> dict:
    return ops.memories(api.graph(tenant), kind, status, q, skip, _cap(api, limit))


@router.get(T + "/memories/{memory}", tags=["read"], summary="One memory and its justification tree")
def memory(tenant: Tenant, memory: MemoryRef, me: Reader, api: ApiDep) -> dict:
    return ops.memory(api.graph(tenant), memory)


@router.get(T + "/memories/{memory}/history", tags=["read"],
            summary="Every status the memory has had, with its cause")
def history(tenant: Tenant, memory: MemoryRef, me: Reader, api: ApiDep) -> dict:
    return ops.history(api.graph(tenant), memory)


@router.get(T + "/memories/{memory}/as-of", tags=["read"],
            summary="The memory's status at a time or revision, and its tree as it stood then")
def memory_as_of(tenant: Tenant, memory: MemoryRef, me: Reader, api: ApiDep, at: At = None,
                 rev: Rev = None) -> dict:
    return ops.memory_as_of(api.graph(tenant), memory, at, rev)


@router.get(T + "/memories/{memory}/fragility", tags=["read"],
            summary="How many trust domains must fall to fake it, and which")
def fragility(tenant: Tenant, memory: MemoryRef, me: Reader, api: ApiDep) -> dict:
    return ops.fragility(api.graph(tenant), memory)


@router.get(T + "/as-of", tags=["read"], summary="What was believed at a time or revision, and why")
def as_of(tenant: Tenant, me: Reader, api: ApiDep, at: At = None, rev: Rev = None,
          kind: Kind | None = None, status: Status | None = None, skip: Skip = 0,
          limit: Limit = 100) -> dict:
    return ops.as_of(api.graph(tenant), at, rev, kind, status, skip, _cap(api, limit))


@router.get(T + "/payments", tags=["read"], summary="Pending payments with their fragility")
def payments(tenant: Tenant, me: Reader, api: ApiDep) -> list[dict]:
    return ops.pending_payments(api.graph(tenant))


@router.get(T + "/audit-order", tags=["read"],
            summary="Sources ranked by the value resting on them alone")
def audit_order(tenant: Tenant, me: Reader, api: ApiDep) -> list[dict]:
    return ops.audit_order(api.graph(tenant))


@router.get(T + "/retractions", tags=["read"],
            summary="Retractions, withdrawals and corrections")
def retractions(tenant: Tenant, me: Reader, api: ApiDep) -> list[dict]:
    return ops.retractions(api.graph(tenant))


@router.get(T + "/retractions/{rid}", tags=["read"], summary="One retraction and its result")
def retraction(tenant: Tenant, rid: Rid, me: Reader, api: ApiDep) -> dict:
    return ops.retraction(api.graph(tenant), rid)


@router.get(T + "/gates", tags=["read"], summary="The payment gate's decisions, newest first")
def gates(tenant: Tenant, me: Reader, api: ApiDep, action: _ID | None = Query(
        None, description="Only this action's (id or name)"),
          limit: int = Query(100, ge=1, le=1000)) -> list[dict]:
    return ops.gates(api.graph(tenant), action, limit)


@router.get(T + "/recalls", tags=["recalls"], summary="Drafted and approved recalls")
def recalls(tenant: Tenant, me: Reader, api: ApiDep) -> list[dict]:
    return ops.recalls(api.graph(tenant))


@router.get(T + "/recalls/{memory}", tags=["recalls"], summary="One recall with its draft")
def recall(tenant: Tenant, memory: MemoryRef, me: Reader, api: ApiDep) -> dict:
    return ops.recall(api.graph(tenant), memory)


# -- deciding (security), approving (finance), agents ------------------------------------------
@router.post(T + "/retractions/preview", tags=["security"],
             summary="Preview a compromise: the blast radius and the revision to commit at")
def preview_compromise(tenant: Tenant, body: Compromise, me: Decider, api: ApiDep,
                       response: Response) -> dict:
    g = api.graph(tenant)
    _deprecation(response, body)
    return api.audited(me, tenant, "retraction.preview", body.source,
                       lambda: ops.compromise_preview(g, body, me.who), _counts)


@router.post(T + "/retractions", tags=["security"],
             summary="Commit a previewed compromise (409 when the graph moved since, or while "
                     "the source is retracted over an overlapping window, unless `force`)")
def commit_compromise(tenant: Tenant, body: CompromiseCommit, me: Decider, api: ApiDep,
                      response: Response) -> dict:
    g = api.graph(tenant)
    _deprecation(response, body)
    return api.audited(me, tenant, "retraction.commit", body.source,
                       lambda: ops.compromise_commit(api.conn, g, body, me.who), _counts)


def _deprecation(response: Response, body: Compromise) -> None:
    """A request that used ``start``/``end`` is answered with a Deprecation header (RFC 9745)
    naming ``from``/``to`` instead."""
    if body.deprecated_names:
        response.headers["Deprecation"] = "true"


@router.post(T + "/retractions/{rid}/reinstate/preview", tags=["security"],
             summary="Preview undoing a retraction, withdrawal or correction: what comes back "
                     "IN, the held payments it releases, the recalls it withdraws or pulls "
                     "(`warnings`), and the revision to commit at")
def preview_reinstate(tenant: Tenant, rid: Rid, me: Decider, api: ApiDep,
                      body: Reinstatement | None = None) -> dict:
    g = api.graph(tenant)
    return api.audited(me, tenant, "retraction.reinstate.preview", rid,
                       lambda: ops.reinstate_preview(g, rid, body, me.who), _reinstated)


@router.post(T + "/retractions/{rid}/reinstate", tags=["security"],
             summary="Commit a previewed reinstatement at its revision (409 when the graph "
                     "moved since): releases held payments, withdraws recalls")
def reinstate(tenant: Tenant, rid: Rid, body: ReinstatementCommit, me: Decider,
              api: ApiDep) -> dict:
    g = api.graph(tenant)
    return api.audited(me, tenant, "retraction.reinstate", rid,
                       lambda: ops.reinstate(api.conn, g, rid, body, me.who), _reinstated)


def _reinstated(d: dict) -> dict:
    return {**_counts(d), "released": [i["id"] for i in d.get("to_release", [])],
            "recalls_withdrawn": [i["action"] for i in d.get("recalls_to_withdraw", [])]}


@router.post(T + "/withdrawals/preview", tags=["security"], summary="Preview withdrawing a memory")
def preview_withdrawal(tenant: Tenant, body: Withdrawal, me: Decider, api: ApiDep) -> dict:
    g = api.graph(tenant)
    return api.audited(me, tenant, "withdrawal.preview", body.memory,
                       lambda: ops.change_preview(g, body, me.who), _counts)


@router.post(T + "/withdrawals", tags=["security"], summary="Withdraw a memory (previewed at rev)")
def withdraw(tenant: Tenant, body: WithdrawalCommit, me: Decider, api: ApiDep) -> dict:
    g = api.graph(tenant)
    return api.audited(me, tenant, "withdrawal.commit", body.memory,
                       lambda: ops.change_commit(api.conn, g, body, me.who), _counts)


@router.post(T + "/corrections/preview", tags=["security"], summary="Preview correcting a memory")
def preview_correction(tenant: Tenant, body: Correction, me: Decider, api: ApiDep) -> dict:
    g = api.graph(tenant)
    return api.audited(me, tenant, "correction.preview", body.memory,
                       lambda: ops.change_preview(g, body, me.who), _counts)


@router.post(T + "/corrections", tags=["security"], summary="Correct a memory (previewed at rev)")
def correct(tenant: Tenant, body: CorrectionCommit, me: Decider, api: ApiDep) -> dict:
    g = api.graph(tenant)
    return api.audited(me, tenant, "correction.commit", body.memory,
                       lambda: ops.change_commit(api.conn, g, body, me.who), _counts)


@router.post(T + "/recalls/{memory}/approve", tags=["recalls"],
             summary="Approve a drafted recall: it goes to the outbox")
def approve(tenant: Tenant, memory: MemoryRef, me: Approver, api: ApiDep) -> dict:
    g = api.graph(tenant)
    return api.audited(me, tenant, "recall.approve", memory, lambda: ops.approve(g, memory, me.who),
                       lambda r: {"action": r["action"], "amount": r["amount"]})


def _recall_summary(r: dict) -> dict:
    return {"action": r["action"], "amount": r["amount"], "state": r["state"]}


@router.post(T + "/recalls/{memory}/reject", tags=["recalls"],
             summary="Reject a drafted recall, saying why: it is never sent (409 once approved)")
def reject(tenant: Tenant, memory: MemoryRef, body: RecallRejection, me: Approver,
           api: ApiDep) -> dict:
    g = api.graph(tenant)
    return api.audited(me, tenant, "recall.reject", memory,
                       lambda: ops.reject(g, memory, body, me.who),
                       lambda r: {**_recall_summary(r), "reason": r["rejected"]["reason"]})


@router.post(T + "/recalls/{memory}/notes", tags=["recalls"],
             summary="Add a note to a recall (any state), signed and dated")
def annotate(tenant: Tenant, memory: MemoryRef, body: RecallNote, me: Approver,
             api: ApiDep) -> dict:
    g = api.graph(tenant)
    return api.audited(me, tenant, "recall.annotate", memory,
                       lambda: ops.annotate(g, memory, body, me.who),
                       lambda r: {**_recall_summary(r), "notes": len(r["notes"])})


_FILES = {"content": {"text/csv": {"schema": {"type": "string"}},
                      "application/xml": {"schema": {"type": "string"}}},
          "description": "The file: CSV, or the camt.056 XML message"}


@router.post(T + "/recalls/{memory}/export", tags=["recalls"], response_class=Response,
             responses={200: _FILES},
             summary="Export an approved recall for the bank, as CSV or an ISO 20022 camt.056 "
                     "message (409 unless approved); the recall is marked exported")
def export(tenant: Tenant, memory: MemoryRef, body: RecallExport, me: Approver,
           api: ApiDep) -> Response:
    """The answer is the file itself (``Content-Disposition`` names it); the recall, marked
    exported by the token's name, is in ``GET /recalls/{memory}``."""
    g = api.graph(tenant)
    d = api.audited(me, tenant, "recall.export", memory,
                    lambda: ops.export(g, memory, body, me.who, api.settings.gate_currency),
                    lambda r: {**_recall_summary(r), "format": body.format})
    file = d["file"]
    return Response(file["content"], media_type=file["media_type"], headers={
        "Content-Disposition": f'attachment; filename="{file["filename"]}"'})


@router.post(T + "/recalls/{memory}/notice/approve", tags=["recalls"],
             summary="Approve the withdrawal notice of an exported recall whose payment is IN "
                     "again: it goes to the outbox (409 unless the recall is withdrawn)")
def approve_notice(tenant: Tenant, memory: MemoryRef, me: Approver, api: ApiDep) -> dict:
    g = api.graph(tenant)
    return api.audited(me, tenant, "recall.notice.approve", memory,
                       lambda: ops.approve_notice(g, memory, me.who), _recall_summary)


@router.post(T + "/recalls/{memory}/notice/export", tags=["recalls"], response_class=Response,
             responses={200: {"content": {"text/plain": {"schema": {"type": "string"}},
                                          "text/csv": {"schema": {"type": "string"}}},
                              "description": "The notice: a letter, or CSV"}},
             summary="Export an approved withdrawal notice for the bank, as a letter (text) or "
                     "CSV (409 unless approved)")
def export_notice(tenant: Tenant, memory: MemoryRef, body: NoticeExport, me: Approver,
                  api: ApiDep) -> Response:
    g = api.graph(tenant)
    d = api.audited(me, tenant, "recall.notice.export", memory,
                    lambda: ops.export_notice(g, memory, body, me.who),
                    lambda r: {**_recall_summary(r), "format": body.format})
    file = d["file"]
    return Response(file["content"], media_type=file["media_type"], headers={
        "Content-Disposition": f'attachment; filename="{file["filename"]}"'})


@router.post(T + "/events", tags=["agents"],
             summary="Send agents' events (writes) to the tenant's stream")
def events(tenant: Tenant, body: EventBatch, me: Agent, api: ApiDep) -> dict:
    return api.audited(me, tenant, "events.send", f"{len(body.events)} event(s)",
                       lambda: ops.ingest(api.conn, api.graph(tenant).tenant, body,
                                          api.settings.partitions),
                       lambda r: {"accepted": r["accepted"]})


@router.post(T + "/gate", tags=["agents"], summary="Ask the payment gate about an action")
def gate(tenant: Tenant, body: GateAsk, me: GateUser, api: ApiDep) -> dict:
    return api.audited(me, tenant, "gate", body.action,
                       lambda: ops.gate(api.graph(tenant), body, api.gate), _gate_summary,
                       outcome=lambda d: "allowed" if d["allowed"] else "blocked")


def _gate_summary(d: dict) -> dict:
    return {"action": d["action"], "reason": d["reason"], "fragility": d["fragility"]}
