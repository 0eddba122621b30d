"""Bank recalls of executed payments that went OUT; nothing leaves without finance.

A recall is drafted when a retraction takes an executed payment OUT. Finance reads it (what
the bank executed, who the payee is, the whole chain of evidence that fell), annotates it,
then approves it (it goes to the outbox for the bank) or rejects it with a reason (it is never
sent); an approved recall is exported for the bank as CSV or an ISO 20022 camt.056 message
(``rescind.operator.recall_export``). Every decision is a guarded, linearised write of the
tenant's graph, like a retraction: it moves the revision, and two decisions never interleave.

What a decision leaves on the payment's node: ``recall_state`` (approved, rejected, exported),
``approved_by/_at``, ``rejected_by/_at/_reason/_cause``, ``recall_notes`` and
``recall_exports`` (JSON strings, oldest first: a property cannot hold a list of maps).

A recall whose payment comes back IN (a reinstatement, or a new reason to believe it) is
``withdrawn``: read from the payment's own history (who brought it back, when, why), never
approved or exported again. One finance had exported for the bank gets a drafted withdrawal
notice (``notice``: "disregard our request"), which finance approves (``notice_approved_by/_at``,
``notice_for``: the change that brought the payment back) and exports (``notice_exports``).
"""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import replace

from rescind.contract import events as ev
from rescind.contract.errors import Conflict, Invalid, NotFound
from rescind.core.shapes import Mutation, Recall
from rescind.graph.reads import GraphReads
from rescind.graph.store import TenantGraph, linearised

WIDTH = 100  # of the draft's lines; longer texts are wrapped, never cut
SENT = ("approved", "exported")  # states whose recall is in the outbox
FORMATS = ("csv", "camt.056")
NOTICE_FORMATS = ("text", "csv")  # of a withdrawal notice (ISO 20022 has no message for it)

# A line naming a party in a vendor's own documents ("Vendor: Northwind Supplies").
_NAMED = re.compile(r"^\s*(?:vendor|payee|supplier|beneficiary|creditor)(?:\s+name)?\s*:\s*"
                    r"(\S.*?)\s*$", re.IGNORECASE | re.MULTILINE)
MAX_NAME = 140  # a party's name in ISO 20022 (Max140Text)


# -- reading ----------------------------------------------------------------------------------
def recall_list(graph: GraphReads) -> list[Recall]:
    """Executed payments that are OUT, and those whose recall was approved or exported (they
    stay listed whatever happens to the payment: withdrawn once it is IN again); largest
    first."""
    rows = []
    for a in graph.actions():
        if not a.get("executed"):
            continue
        if a.get("recall_state") not in SENT and a.get("status") != "OUT":
            continue
        rows.append((a.get("seq", 0), recall_of(graph, a)))
    rows.sort(key=lambda r: (r[1].amount is None, -(r[1].amount or 0), r[0]))
    return [r for _, r in rows]


def find(graph: GraphReads, action: str) -> Recall:
    """One entry of the recall list; NotFound when the payment is not on it."""
    return recall_of(graph, _listed(graph, action))


def _listed(graph: GraphReads, action: str) -> dict:
    """The payment's facts, if it is on the recall list."""
    a = next(iter(graph.actions_in([action])), None)
    if a is None or not a.get("executed") or (a.get("recall_state") not in SENT
                                              and a.get("status") != "OUT"):
        facts = a or next(iter(graph.memories([action])), {})
        name = (facts.get("names") or [action])[0]
        raise NotFound(f"no recall for {name!r}: only executed payments that went OUT have one")
    return a


def state_of(a: dict) -> str:
    """drafted, approved, rejected, exported or withdrawn. A recall finance approved (or
    exported) is withdrawn while its payment is IN again. A rejection holds for the retraction
    it was made under: should another retraction take the payment OUT later, the recall is a
    draft again (the earlier rejection stays in its notes)."""
    s = a.get("recall_state")
    if s in SENT:
        return "withdrawn" if a.get("executed") and a.get("status") == "IN" else s
    if s == "rejected" and a.get("rejected_cause") == a.get("cause"):
        return "rejected"
    return "drafted"


def executed(action: dict) -> dict:
    """What the bank executed, as its receipt says (``paid_*``, from the tool's result), else
    what was proposed last: a recall asks back what left, not what was planned."""
    return {f: action.get(f"paid_{f}", action.get(f)) for f in ("amount", "currency", "account")}


def recall_of(graph: GraphReads, a: dict) -> Recall:
    """The recall of one executed payment, with its draft written from everything else."""
    cause = a.get("cause") if a.get("status") == "OUT" else None
    why = graph.retraction(cause) if cause else None
    paid = executed(a)
    ours = (a.get("names") or [a["id"]])[0]
    evidence, upstream = _evidence(graph, a["id"])
    name, name_from = payee_name(graph, a.get("payee"), upstream)
    state = state_of(a)
    r = Recall(
        action=a["id"], name=ours, amount=paid["amount"], payee=a.get("payee"),
        account=paid["account"], state=state, draft="", currency=paid["currency"],
        payee_name=name, payee_name_from=name_from, paid_on=a.get("paid_on"),
        bank_reference=a.get("paid_reference"), reference=ours,
        reason=(why or {}).get("reason") or ("its justification was retracted" if cause
                                             else None),
        retraction=cause,
        reason_code=("FRAD" if (why or {}).get("kind") == "retract" else "CUST") if cause
        else None,
        approved={"by": a["approved_by"], "at": _iso(a.get("approved_at"))}
        if a.get("approved_by") else None,
        rejected={"by": a["rejected_by"], "at": _iso(a.get("rejected_at")),
                  "reason": a.get("rejected_reason"), "retraction": a.get("rejected_cause")}
        if a.get("rejected_by") else None,
        exports=[_decoded(e) for e in a.get("recall_exports") or []],
        notes=[_decoded(n) for n in a.get("recall_notes") or []],
        evidence=evidence, outbox=f"recall:{a['id']}" if state in SENT else None)
    if state == "withdrawn":
        r = replace(r, withdrawn=withdrawal_of(graph, a))
        if r.exports:
            r = replace(r, notice=notice_of(graph, a, r))
    return replace(r, draft=render(r, a))


def withdrawal_of(graph: GraphReads, a: dict) -> dict:
    """Who brought the payment back IN, when and why, from its history: the last change that
    turned it from OUT to IN. ``retraction`` is what was undone (a reinstatement's)."""
    back, was = None, None
    for e in graph.history(a["id"]):
        if e["status"] == "IN" and was == "OUT":
            back = e
        was = e["status"]
    if back is None:
        return {"by": None, "at": None, "retraction": None, "change": None,
                "why": "the payment is IN again: a recall is no longer needed"}
    change = back.get("by") or back.get("cause")
    if back.get("op") == "reinstate" and change:
        base = change.removesuffix("~reinstated")
        stored = graph.retraction(base) or {}
        who = stored.get("reinstated_by")
        what = (f"the retraction of {stored['source']}" if stored.get("kind") == "retract"
                and stored.get("source") else f"the {stored.get('kind') or 'retraction'}")
        why = (f"{who or 'someone'} reinstated {base} ({what}, made because: "
               f"{stored.get('reason') or 'no reason given'})")
        if stored.get("reinstated_reason"):
            why += f", saying: {stored['reinstated_reason']}"
        return {"by": who, "at": _iso(back.get("at")), "retraction": base, "change": change,
                "why": why + "; the payment is IN again and must not be clawed back"}
    return {"by": back.get("by"), "at": _iso(back.get("at")), "retraction": None,
            "change": change, "why": f"a new reason to believe it ({back.get('op')}) brought the "
                                     "payment back IN; it must not be clawed back"}


def _notice_state(a: dict, w: dict) -> str:
    """drafted, approved or exported: a notice's decisions hold for the change that withdrew
    the recall (``notice_for``); a later withdrawal drafts a new notice."""
    if not a.get("notice_approved_by") or a.get("notice_for") != w.get("change"):
        return "drafted"
    return "exported" if a.get("notice_exports") else "approved"


def notice_of(graph: GraphReads, a: dict, r: Recall) -> dict:
    """The withdrawal notice of an exported recall: the request the bank holds, and the text
    that asks it to disregard them (every message sent, by its identifiers)."""
    from rescind.operator import recall_export

    w = r.withdrawn or {}
    state = _notice_state(a, w)
    current = state != "drafted"
    sent = [{**json.loads(e), "ids": recall_export.message_ids(
        r.action, json.loads(e)["at"], graph.tenant) if json.loads(e).get("format") ==
        "camt.056" else {}} for e in a.get("recall_exports") or []]
    for e in sent:
        e["at"] = _iso(e["at"])
    n = {"state": state, "disregard": sent,
         "outbox": f"recall-withdrawal:{a['id']}:{a['notice_approved_at']}" if current else None,
         "approved": {"by": a["notice_approved_by"], "at": _iso(a.get("notice_approved_at"))}
         if current else None,
         "exports": [_decoded(e) for e in a.get("notice_exports") or []] if current else []}
    n["text"] = notice_text(r, n)
    return n


def _decoded(entry: str) -> dict:
    d = json.loads(entry)
    return {**d, "at": _iso(d.get("at"))}


def _iso(us: int | None) -> str | None:
    """A decision's time, to the second (ISO 8601, UTC)."""
    t = ev.from_micros(us)
    return None if t is None else t.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _when(iso: str | None) -> str:
    return (iso or "?")[:16].replace("T", " ") + " UTC" if iso else "an unknown time"


def _evidence(graph: GraphReads, action: str) -> tuple[list[dict], list[dict]]:
    """The memories the payment rested on that went OUT, nearest to it first, down to the
    retracted observations, whole; and every memory it rested on (to find the payee's name)."""
    up = graph.upstream(action) - {action}
    facts = graph.memories(up)
    out = [f for f in facts if f["status"] == "OUT"]
    out.sort(key=lambda f: (-(f.get("hops") or 0), f.get("at") or 0, f["text"]))
    said: dict[str, list[str]] = {}
    observed = [f["id"] for f in out if f.get("kind") == "observation"]
    if observed:
        for source, mid in graph.said_by(observed):
            said.setdefault(mid, []).append(source)
    return [{"id": f["id"], "kind": f.get("kind"), "name": (f.get("names") or [None])[0],
             "text": f.get("text") or "", "at": _iso(f.get("at")), "agent": f.get("agent"),
             "sources": sorted(said.get(f["id"], [])), "cause": f.get("cause"),
             "hops": f.get("hops")} for f in out], facts


def payee_name(graph: GraphReads, payee: str | None,
               upstream: list[dict] = ()) -> tuple[str | None, str | None]:
    """The payee's name as people and banks know it, and where it was read.

    A payment often records its payee as a vendor id (``northwind``). The name is the first
    "Vendor: …" (or Payee, Supplier, Beneficiary, Creditor) line found, in this order: what
    the payee's own sources (``portal:northwind``, ``contract:northwind``) say that is still
    IN, newest first; what the payment rested on; what those sources said that is OUT. Else
    the payee as recorded."""
    if not payee:
        return None, None
    said = graph.payee_said(payee)
    tried = [(s["text"], f"as {s['source']} states it") for s in said if s["status"] == "IN"]
    tried += [(f.get("text") or "", "as what the payment rested on states it")
              for f in upstream if f.get("kind") == "observation"]
    tried += [(s["text"], f"as {s['source']} stated it (now OUT)") for s in said
              if s["status"] != "IN"]
    for text, where in tried:
        if m := _NAMED.search(text or ""):
            return m.group(1)[:MAX_NAME], where
    return payee, "as the payment recorded it"


# -- the text ---------------------------------------------------------------------------------
def _wrapped(text: str, indent: int) -> list[str]:
    """A text as lines of at most WIDTH, each of its own lines wrapped; nothing cut (a word
    longer than a line stays whole)."""
    pad = " " * indent
    lines = []
    for line in (text or "").splitlines():
        if line.strip():
            lines += textwrap.wrap(line.strip(), WIDTH, initial_indent=pad, subsequent_indent=pad,
                                   break_long_words=False, break_on_hyphens=False)
    return lines or [pad + "(empty)"]


def _labelled(label: str, text: str) -> list[str]:
    """``label: text`` wrapped, the text's later lines indented under it; nothing cut."""
    first, *rest = [line for line in (text or "").splitlines() if line.strip()] or [""]
    return [*textwrap.wrap(f"{label}: {first.strip()}", WIDTH, subsequent_indent="    ",
                           break_long_words=False, break_on_hyphens=False),
            *(w for line in rest for w in _wrapped(line, 4))]


def _header(r: Recall) -> list[str]:
    """What state the request is in, first: nobody mistakes a draft for a sent request."""
    if r.state == "withdrawn":
        w = r.withdrawn or {}
        lines = [f"RECALL REQUEST - WITHDRAWN at {_when(w.get('at'))}: not to be sent",
                 *_labelled("Why", w.get("why") or "the payment is IN again")]
        if r.approved:
            lines.append(f"(approved by {r.approved['by']} at {_when(r.approved['at'])}; "
                         "pulled from the outbox)")
        if r.exports:
            n = r.notice or {}
            lines.append(f"It was exported for the bank ({'; '.join(map(_export, r.exports))}):"
                         f" the withdrawal notice asking the bank to disregard it is "
                         f"{n.get('state', 'drafted')}")
        return lines
    if r.state == "rejected":
        rej = r.rejected or {}
        return [f"RECALL REQUEST - REJECTED by {rej.get('by')} at {_when(rej.get('at'))}: "
                "not sent", *_labelled("Rejected because", rej.get("reason") or "")]
    if r.state in SENT:
        ok = r.approved or {}
        head = f"RECALL REQUEST - APPROVED by {ok.get('by')} at {_when(ok.get('at'))}"
        if r.state == "exported" and r.exports:
            last = r.exports[-1]
            return [f"{head}; EXPORTED as {last['format']} by {last['by']} at "
                    f"{_when(last['at'])}",
                    *([f"Exports: {'; '.join(_export(e) for e in r.exports)}"]
                      if len(r.exports) > 1 else [])]
        return [f"{head}: in the outbox for the bank (the recall of {r.name})"]  # any tenant
    lines = ["RECALL REQUEST - DRAFT: not sent until finance approves"]
    if r.rejected:  # rejected under an earlier retraction
        lines.append(f"(rejected by {r.rejected['by']} at {_when(r.rejected['at'])} under "
                     f"{r.rejected.get('retraction')}: {r.rejected.get('reason')})")
    return lines


def _export(e: dict) -> str:
    return f"{e['format']} by {e['by']} at {_when(e['at'])}"


def render(r: Recall, a: dict) -> str:
    """The text of the request: its state, the payee, account, amount, date and references as
    the bank executed them, the reason, the whole evidence chain, and finance's notes."""
    amount = (f"Amount: {r.amount:,.2f}" + (f" {r.currency}" if r.currency else "")
              if r.amount is not None else "Amount: unknown")
    payee = r.payee_name or "unknown"
    if r.payee and r.payee_name and r.payee != r.payee_name:
        payee += f" (vendor id {r.payee}; the name {r.payee_name_from})"
    paid_on = (f"Paid on: {r.paid_on}" if r.paid_on else
               f"Paid on: not in the bank's receipt (executed at "
               f"{_when(_iso(a.get('executed_at')))})")
    lines = [
        *_header(r),
        f"Payee: {payee}",
        f"Account: {r.account or 'as paid'}",
        amount,
        paid_on,
        f"Bank reference: {r.bank_reference or 'none in the bank receipt'}",
        f"Our reference: {r.reference}",
    ]
    if a.get("receipt"):
        lines += _labelled("Bank's confirmation", a["receipt"])
    if r.reason:
        lines += _labelled("Reason", r.reason + (f" (retraction {r.retraction})"
                                                 if r.retraction else ""))
    lines.append(f"Evidence: what the payment rested on that went OUT, nearest first "
                 f"({len(r.evidence)}):")
    for i, e in enumerate(r.evidence, 1):
        if e["kind"] == "observation":
            by = f"from {', '.join(e['sources']) or 'an unknown source'}, read at {_when(e['at'])}"
        else:
            by = f"written by {e.get('agent') or 'an unknown agent'} at {_when(e['at'])}"
        lines += [f"  {i}. {e['kind']}, {by}:", *_wrapped(e["text"], 7)]
    if r.notes:
        lines.append(f"Notes ({len(r.notes)}):")
        for n in r.notes:
            lines += [f"  - {n['by']} at {_when(n['at'])}:", *_wrapped(n["text"], 7)]
    return "\n".join(lines)


def notice_text(r: Recall, n: dict) -> str:
    """The withdrawal notice: a letter to the bank's payment investigations asking it to
    disregard our recall request(s) for a payment, naming each message by its identifiers."""
    head = {"drafted": "WITHDRAWAL OF RECALL REQUEST - DRAFT: not sent until finance approves",
            "approved": "WITHDRAWAL OF RECALL REQUEST - APPROVED by {by} at {at}: export it "
                        "for the bank",
            "exported": "WITHDRAWAL OF RECALL REQUEST - APPROVED by {by} at {at}; EXPORTED"}
    ok = n.get("approved") or {}
    amount = (f"{r.amount:,.2f}" + (f" {r.currency}" if r.currency else "")
              if r.amount is not None else "unknown")
    lines = [head[n["state"]].format(by=ok.get("by"), at=_when(ok.get("at"))),
             "To: our bank, payment investigations",
             "Please disregard our request to recall (cancel) the payment below and take no "
             "further action on it. The payment is legitimate and stands.",
             f"Payee: {r.payee_name or r.payee or 'unknown'}",
             f"Account: {r.account or 'as paid'}",
             f"Amount: {amount}",
             f"Paid on: {r.paid_on or 'not in the bank receipt'}",
             f"Bank reference: {r.bank_reference or 'none in the bank receipt'}",
             f"Our reference: {r.reference}",
             f"Our request(s) to disregard ({len(n['disregard'])}):"]
    for e in n["disregard"]:
        ids = e.get("ids") or {}
        line = f"  - {e['format']} exported by {e['by']} at {_when(e['at'])}"
        if ids:
            line += (f": message {ids['message']}, case {ids['case']}, cancellation "
                     f"{ids['cancellation']}")
        lines.append(line)
    lines += _labelled("Why", (r.withdrawn or {}).get("why") or "the payment is IN again")
    return "\n".join(lines)


# -- deciding (finance) -----------------------------------------------------------------------
def _decide(graph: TenantGraph, action: str, at: int, check, props) -> tuple[Recall, dict]:
    """One recall decision: read the payment at the graph's revision, ``check`` its recall
    (raise to refuse), write ``props(facts, recall)`` guarded by that revision, under the
    tenant's lock (``free_tries=0``), as approvals and retractions are."""
    def attempt() -> tuple[Recall, dict]:
        rev = graph.revision()
        a = _listed(graph, action)
        r = recall_of(graph, a)
        check(r)
        changes, outbox = props(a, r)
        mutation = Mutation(op="recall", at=at, updates=[{"id": action, "props": changes}],
                            outbox=outbox)
        graph.apply(mutation, rev)
        after = {**a, **changes}
        return recall_of(graph, after), after

    return linearised(graph, attempt, free_tries=0)  # a decision: the writers wait


def _not_withdrawn(r: Recall, verb: str) -> None:
    """A withdrawn recall is not decided on any more (409), saying why and what to do."""
    if r.state != "withdrawn":
        return
    w = r.withdrawn or {}
    text = (f"the recall of {r.name!r} was withdrawn at {w.get('at') or 'an unknown time'} "
            f"({w.get('why')}): it cannot be {verb}, and nothing was changed")
    if r.exports and verb != "rejected":
        text += ("; it had been exported for the bank: approve and export its withdrawal "
                 "notice instead (recalls/{id}/notice)").replace("{id}", r.name)
    raise Conflict(text)


def approve(graph: TenantGraph, action: str, by: str, at: int) -> Recall:
    """Finance approves a drafted recall: the payment is marked, and the recall goes to the
    outbox, once. A rejected recall is not approved (409): it was decided against."""
    def check(r: Recall) -> None:
        _not_withdrawn(r, "approved")
        if r.state in SENT:
            raise Conflict(f"the recall of {r.name!r} is approved already "
                           f"(by {r.approved['by']} at {r.approved['at']})")
        if r.state == "rejected":
            raise Conflict(f"the recall of {r.name!r} was rejected by {r.rejected['by']} at "
                           f"{r.rejected['at']} ({r.rejected['reason']}); a rejected recall "
                           "is never sent")

    def props(a: dict, r: Recall):
        changes = {"recall_state": "approved", "approved_by": by, "approved_at": at}
        approved = recall_of(graph, {**a, **changes})
        return changes, [{"id": f"recall:{action}", "action": action, "by": by, "at": at,
                          "payload": approved.draft}]

    return _decide(graph, action, at, check, props)[0]


def reject(graph: TenantGraph, action: str, by: str, at: int, reason: str) -> Recall:
    """Finance rejects a drafted recall, saying why: it is never sent, and stays on the list
    as rejected. An approved (or exported) recall cannot be rejected: it is in the outbox."""
    if not reason.strip():
        raise Invalid("say why the recall is rejected (reason)")

    def check(r: Recall) -> None:
        _not_withdrawn(r, "rejected")
        if r.state in SENT:
            raise Conflict(f"the recall of {r.name!r} was approved by {r.approved['by']} at "
                           f"{r.approved['at']} and is in the outbox ({r.outbox}); it cannot "
                           "be rejected now")
        if r.state == "rejected":
            raise Conflict(f"the recall of {r.name!r} is rejected already (by "
                           f"{r.rejected['by']} at {r.rejected['at']})")

    def props(a: dict, r: Recall):
        return {"recall_state": "rejected", "rejected_by": by, "rejected_at": at,
                "rejected_reason": reason.strip(), "rejected_cause": a.get("cause")}, []

    return _decide(graph, action, at, check, props)[0]


def annotate(graph: TenantGraph, action: str, by: str, at: int, text: str) -> Recall:
    """A free note on a recall, in any state, signed and dated; notes are kept in order."""
    if not text.strip():
        raise Invalid("the note is empty (text)")

    def props(a: dict, r: Recall):
        note = json.dumps({"by": by, "at": at, "text": text.strip()})
        return {"recall_notes": [*(a.get("recall_notes") or []), note]}, []

    return _decide(graph, action, at, lambda r: None, props)[0]


def export(graph: TenantGraph, action: str, by: str, at: int, fmt: str,
           default_currency: str = "USD", allow_placeholders: bool = False
           ) -> tuple[Recall, dict]:
    """Write out an approved recall for the bank (``fmt`` csv or camt.056): the recall is
    marked exported, with who, when and how (each export is kept). A draft or a rejected
    recall is not exported: only what finance approved leaves. Returns the recall and the
    file (``recall_export.document``); an amount without a currency is in
    ``default_currency`` (the gate's). A camt.056 is refused (nothing marked) while the
    tenant's settings leave placeholders in it, unless ``allow_placeholders``."""
    from rescind.graph.tenant_settings import bank_file
    from rescind.operator import recall_export

    if fmt not in FORMATS:
        raise Invalid(f"unknown export format {fmt!r}; choose from {', '.join(FORMATS)}")
    bank = bank_file(graph.server, graph.tenant)
    if fmt == "camt.056" and (missing := bank.placeholders()) and not allow_placeholders:
        raise Conflict(
            f"the camt.056 for tenant {graph.tenant} would hold placeholders for "
            f"{' and '.join(missing)}; a bank's portal refuses it or files it under a name it "
            f"does not know. An admin sets them: `rescind tenant settings {graph.tenant} "
            "--organisation-name NAME --bank-bic BIC` (or PUT /api/v1/tenants/"
            f"{graph.tenant}/settings). To export it with placeholders anyway: "
            '--allow-placeholders (in the API, "allow_placeholders": true)')

    def check(r: Recall) -> None:
        _not_withdrawn(r, "exported")
        if r.state not in SENT:
            raise Conflict(f"the recall of {r.name!r} is {r.state}: only an approved recall "
                           "is exported")

    made: dict = {}

    def props(a: dict, r: Recall):
        entry = json.dumps({"by": by, "at": at, "format": fmt})
        changes = {"recall_state": "exported",
                   "recall_exports": [*(a.get("recall_exports") or []), entry]}
        # The file first: one that cannot be made (a camt.056 without an amount) marks nothing.
        made["file"] = recall_export.document(recall_of(graph, {**a, **changes}), fmt, at,
                                              graph.tenant, default_currency, bank)
        return changes, []

    r, _ = _decide(graph, action, at, check, props)
    return r, made["file"]


# -- the withdrawal notice of an exported recall (finance) ------------------------------------
def _notice_check(r: Recall, verb: str) -> dict:
    if r.state != "withdrawn" or r.notice is None:
        raise Conflict(f"the recall of {r.name!r} is {r.state}: only a withdrawn recall that "
                       f"was exported for the bank has a withdrawal notice to be {verb}")
    return r.notice


def approve_notice(graph: TenantGraph, action: str, by: str, at: int) -> Recall:
    """Finance approves the drafted withdrawal notice of an exported recall whose payment is
    IN again: it goes to the outbox (``recall-withdrawal:<action>``), once, to be exported."""
    def check(r: Recall) -> None:
        n = _notice_check(r, "approved")
        if n["state"] != "drafted":
            raise Conflict(f"the withdrawal notice of {r.name!r} is approved already (by "
                           f"{n['approved']['by']} at {n['approved']['at']})")

    def props(a: dict, r: Recall):
        changes = {"notice_approved_by": by, "notice_approved_at": at,
                   "notice_for": r.withdrawn["change"], "notice_exports": []}
        after = recall_of(graph, {**a, **changes})
        return changes, [{"id": f"recall-withdrawal:{action}:{at}", "action": action, "by": by,
                          "at": at, "payload": after.notice["text"]}]

    return _decide(graph, action, at, check, props)[0]


def export_notice(graph: TenantGraph, action: str, by: str, at: int,
                  fmt: str = "text") -> tuple[Recall, dict]:
    """Write out an approved withdrawal notice for the bank (``fmt`` text or csv): marked
    exported, with who, when and how. A draft is not exported: finance approves it first."""
    from rescind.operator import recall_export

    if fmt not in NOTICE_FORMATS:
        raise Invalid(f"unknown notice format {fmt!r}; choose from {', '.join(NOTICE_FORMATS)}")

    def check(r: Recall) -> None:
        n = _notice_check(r, "exported")
        if n["state"] == "drafted":
            raise Conflict(f"the withdrawal notice of {r.name!r} is a draft: finance approves "
                           "it before it is exported")

    made: dict = {}

    def props(a: dict, r: Recall):
        entry = json.dumps({"by": by, "at": at, "format": fmt})
        changes = {"notice_exports": [*(a.get("notice_exports") or []), entry]}
        made["file"] = recall_export.notice_document(recall_of(graph, {**a, **changes}), fmt)
        return changes, []

    r, _ = _decide(graph, action, at, check, props)
    return r, made["file"]


# -- reinstating a payment whose recall is in the outbox ---------------------------------------
def withdrawals(graph: GraphReads, actions: list[str]) -> list[dict]:
    """Of ``actions`` (executed payments a reinstatement brings back IN, still OUT), the
    recalls it withdraws: each with its state now and what becomes of it."""
    found = []
    for a in graph.actions_in(list(actions)):
        if not a.get("executed"):
            continue
        state = state_of(a)
        paid = executed(a)
        then = {"drafted": "withdrawn: finance no longer sees it to decide",
                "rejected": "withdrawn (it was rejected: never sent)",
                "approved": "withdrawn and pulled from the outbox (it was never exported)",
                "exported": "withdrawn; the bank holds the exported request: a withdrawal "
                            "notice is drafted for finance to approve and send"}.get(state, state)
        found.append({"action": a["id"], "name": (a.get("names") or [a["id"]])[0],
                      "amount": paid["amount"], "currency": paid["currency"],
                      "payee": a.get("payee"), "state": state, "becomes": then,
                      "exported": bool(a.get("recall_exports"))})
    return sorted(found, key=lambda f: f["name"])


def _money(amount, currency) -> str:
    return "an unknown amount" if amount is None else \
        f"{amount:,.2f}" + (f" {currency}" if currency else "")


def release_warning(item: dict, committed: bool) -> str:
    """A held payment a reinstatement releases: the gate may let it run again."""
    what = f"{item.get('name') or item['id']} ({_money(item.get('amount'), item.get('currency'))}" \
           f" to {item.get('payee') or 'an unknown payee'})"
    return (f"{what} {'was' if committed else 'would be'} released: it is no longer held, "
            "and the gate judges it again when the agent asks to pay it")


def withdraw_warning(item: dict, committed: bool) -> str:
    """A recall a reinstatement withdraws, and what becomes of it."""
    return (f"the recall of {item['name']} ({_money(item['amount'], item['currency'])}) "
            f"{'is' if committed else 'would be'} {item['becomes']}")


def in_the_outbox(graph: GraphReads, actions: list[str]) -> list[dict]:
    """Of ``actions`` (payments a reinstatement brings back IN), those whose recall was
    approved: their outbox entries, which should be pulled before the bank acts on them."""
    facts = {a["id"]: a for a in graph.actions_in(list(actions))
             if a.get("recall_state") in SENT}
    if not facts:
        return []
    found = []
    for o in graph.outbox([f"recall:{a}" for a in facts]):
        oid, act, by, at, sent = o["id"], o["action"], o["by"], o["at"], o["sent"]
        a = facts[act]
        exports = [_decoded(e) for e in a.get("recall_exports") or []]
        found.append({"outbox": oid, "action": act, "name": (a.get("names") or [act])[0],
                      "amount": executed(a)["amount"], "currency": executed(a)["currency"],
                      "approved_by": by, "approved_at": _iso(at), "sent": bool(sent),
                      "exported": exports})
    return sorted(found, key=lambda f: f["name"])


def outbox_warning(item: dict) -> str:
    """What to tell the person who reinstated: which outbox entry to pull, and whether the
    request was already exported for the bank."""
    text = (f"{item['name']} is IN again, but its recall was approved by "
            f"{item['approved_by']} at {item['approved_at']}: pull {item['outbox']} from the "
            "outbox before it reaches the bank")
    if item["exported"]:
        last = item["exported"][-1]
        text += (f"; it was exported as {last['format']} by {last['by']} at {last['at']}: "
                 "tell the bank to disregard that request (finance approves and exports the "
                 "drafted withdrawal notice)")
    return text
