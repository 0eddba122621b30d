"""Drafted bank recalls for executed payments that went OUT; nothing leaves without finance."""

from __future__ import annotations

from dataclasses import replace

from rescind.contract.errors import Conflict, NotFound
from rescind.core.shapes import Mutation, Recall
from rescind.graph.store import TenantGraph, linearised


def recall_list(graph: TenantGraph) -> list[Recall]:
    """Executed actions that are OUT, and those already approved; largest amount first."""
    rows = []
    for a in graph.actions():
        if not a.get("executed"):
            continue
        state = "approved" if a.get("recall_state") == "approved" else "drafted"
        if state == "drafted" and a.get("status") != "OUT":
            continue
        paid = executed(a)
        rows.append((a.get("seq", 0), Recall(
            a["id"], (a.get("names") or [a["id"]])[0], paid["amount"], a.get("payee"),
            paid["account"], state, draft(graph, a), paid["currency"])))
    rows.sort(key=lambda r: (r[1].amount is None, -(r[1].amount or 0), r[0]))
    return [r for _, r in rows]


def find(graph: TenantGraph, action: str) -> Recall:
    """One entry of the recall list; NotFound when the payment is not on it."""
    for r in recall_list(graph):
        if r.action == action:
            return r
    raise NotFound(f"no recall for {action!r}: only executed payments that went OUT have one")


def executed(action: dict) -> dict:
    """What the bank executed, as its receipt says (``paid_*``, from the tool's result), else
    what was proposed last: a recall asks back what left, not what was planned."""
    return {f: action.get(f"paid_{f}", action.get(f)) for f in ("amount", "currency", "account")}


def draft(graph: TenantGraph, action: dict) -> str:
    """The text of a bank recall request: payee, account, amount, date and reference as the
    bank executed them, reason, evidence."""
    cause = action.get("cause")
    why = graph.retraction(cause) if cause else None
    reason = (why or {}).get("reason") or "its justification was retracted"
    paid = executed(action)
    amount, currency = paid["amount"], paid["currency"]
    ours = (action.get("names") or [action["id"]])[0]
    lines = [
        "RECALL REQUEST (draft - not sent until finance approves)",
        f"Payee: {action.get('payee') or 'unknown'}",
        f"Account: {paid['account'] or 'as paid'}",
        (f"Amount: {amount:,.2f}" + (f" {currency}" if currency else ""))
        if amount is not None else "Amount: unknown",
        *([f"Paid on: {action['paid_on']}"] if action.get("paid_on") else []),
        f"Reference: {action.get('paid_reference') or action.get('reference') or ours}"
        + (f" (ours: {ours})" if action.get("paid_reference") else ""),
        *([f"Bank's confirmation: {_one_line(action['receipt'], 300)}"]
          if action.get("receipt") else []),
        f"Reason: {reason} (retraction {cause})" if cause else f"Reason: {reason}",
        "Evidence (what the payment rested on, nearest first):",
        *(f"  - {line}" for line in _chain(graph, action["id"])),
    ]
    return "\n".join(lines)


def _chain(graph: TenantGraph, action: str) -> list[str]:
    """The OUT memories the action rested on, nearest first, down to the retracted source."""
    up = graph.upstream(action) - {action}
    facts = graph.memories(up)
    out = [f for f in facts if f["status"] == "OUT"]
    out.sort(key=lambda f: (-(f.get("hops") or 0), f.get("at") or 0, f["text"]))
    return [f"{f['kind']}: {_one_line(f['text'])}" for f in out[:12]]


def _one_line(text: str, width: int = 160) -> str:
    """A multi-line observation (a whole web page) as one line of the draft."""
    flat = " / ".join(line.strip() for line in text.splitlines() if line.strip())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def approve(graph: TenantGraph, action: str, by: str, at: int) -> Recall:
    """Finance approves a drafted recall: the action is marked, and the recall goes to the outbox."""
    def attempt() -> Recall:
        rev = graph.revision()
        found = [r for r in recall_list(graph) if r.action == action]
        if not found:
            raise Conflict(f"no drafted recall for action {action!r}")
        if found[0].state == "approved":
            raise Conflict(f"the recall of {action!r} is approved already")
        mutation = Mutation(op="approve", at=at, updates=[{"id": action, "props": {
            "recall_state": "approved", "approved_by": by, "approved_at": at}}])
        mutation.outbox.append({"id": f"recall:{action}", "action": action, "by": by, "at": at,
                                "payload": found[0].draft})
        graph.apply(mutation, rev)
        return replace(found[0], state="approved")

    return linearised(graph, attempt, free_tries=0)  # a decision: the writers wait
