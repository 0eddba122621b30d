"""A payment's life in steps a person reads: proposed, each gate decision, executed, held or
recall drafted, released or recall withdrawn (who undid what, and why), recall approved or
rejected, each export for the bank. Built from facts already read (the payment, its status
history, its gate log, the retractions), so it is plain data in and out."""

from __future__ import annotations

import json
from datetime import datetime

from rescind.contract import events as ev


def steps(f: dict, raw: list[dict], gate_log: list[dict], whys: dict[str, dict]) -> list[dict]:
    """Oldest first. Each step has ``at`` (µs), ``step``, ``text`` (what happened, in words)
    and, where there is one, who (``by``), the gate's verdict (``allowed``), the bank's
    ``reference``, the ``retraction`` that caused it with its ``source`` and ``reason``.
    Held or recall drafted: the payment went OUT before or after it was paid."""
    paid_at = f.get("executed_at") if f.get("executed") else None
    out: list[tuple[int, int, dict]] = []

    def add(at: int | None, rank: int, step: str, text: str, **more) -> None:
        out.append((at or 0, rank, {"at": at, "step": step, "text": text,
                                    **{k: v for k, v in more.items() if v is not None}}))

    born = raw[0] if raw else {"status": "IN", "at": f.get("at")}
    add(born.get("at"), 0, "proposed", f"proposed by {f.get('agent') or 'an agent'}",
        by=f.get("agent"))
    for d in gate_log:
        add(ev.to_micros(datetime.fromisoformat(d["at"])), 1, "gate",
            d.get("reason") or ("allowed" if d.get("allowed") else "refused"),
            allowed=bool(d.get("allowed")))
    if paid_at is not None:
        bank = f.get("paid_reference")
        add(paid_at, 2, "executed", "executed" + (f", bank reference {bank}" if bank else ""),
            reference=bank)
    was = born.get("status") or "IN"
    for e in raw[1:]:
        now, rid = e["status"], e.get("by") or e.get("cause")
        paid = paid_at is not None and (e.get("at") is None or e["at"] >= paid_at)
        if now == "OUT" and was != "OUT":
            step, text = (("recall drafted", "went OUT after it was paid: a recall is drafted "
                           "for finance") if paid else
                          ("held", "went OUT before it was paid: held"))
        elif now == "IN" and was == "OUT":
            undone = _undone(rid, whys)
            step, text = ("recall withdrawn", "back IN after it was paid: the recall is "
                          "withdrawn, " + undone) if paid else (
                "released", "released (back IN, no longer held), " + undone +
                "; the gate judges it again when the agent asks to pay it")
        else:
            was = now
            continue
        was = now
        why = whys.get(rid or "", {})
        if rid and rid.endswith("~reinstated"):
            base = whys.get(rid.removesuffix("~reinstated"), {})
            why = {"source": base.get("source"), "reason": base.get("reinstated_reason")
                   or base.get("reason"), "by": base.get("reinstated_by")}
        add(e.get("at"), 3, step, text, retraction=rid, source=why.get("source"),
            reason=why.get("reason"), by=why.get("by"))
    if f.get("recall_state") in ("approved", "exported"):
        who = f.get("approved_by")
        add(f.get("approved_at"), 4, "recall approved", f"recall approved by {who or '?'}",
            by=who)
    if f.get("rejected_by"):  # kept when a later retraction drafts the recall again
        who, reason = f["rejected_by"], f.get("rejected_reason")
        add(f.get("rejected_at"), 4, "recall rejected", f"recall rejected by {who}"
            + (f": {reason}" if reason else ""), by=who, reason=reason,
            retraction=f.get("rejected_cause"))
    for entry in f.get("recall_exports") or ():
        e = json.loads(entry)
        add(e.get("at"), 5, "recall exported", f"recall exported for the bank as "
            f"{e.get('format')} by {e.get('by') or '?'}", by=e.get("by"))
    out.sort(key=lambda s: (s[0], s[1]))
    return [s[2] for s in out]


def _undone(change: str | None, whys: dict[str, dict]) -> str:
    """Why a payment came back IN, in words: who reinstated what, made for what reason, and
    what they said; or the new reason to believe it."""
    if not change or not change.endswith("~reinstated"):
        return "because a new reason to believe it arrived" + (f" ({change})" if change else "")
    rid = change.removesuffix("~reinstated")
    r = whys.get(rid, {})
    what = (f"the retraction of {r['source']}" if r.get("kind") == "retract" and r.get("source")
            else f"the {r.get('kind') or 'retraction'}")
    text = (f"because {r.get('reinstated_by') or 'someone'} reinstated {rid} ({what}, made "
            f"because: {r.get('reason') or 'no reason given'})")
    if r.get("reinstated_reason"):
        text += f", saying: {r['reinstated_reason']}"
    return text


__all__ = ["steps"]
