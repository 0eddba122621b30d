"""What a person reads of an audit entry (``rescind.operator.audit`` writes and reads the log).

``detail`` is a JSON object, stored as one JSON document and read back as an object: never JSON
inside a string. A text (an error's message) becomes ``{"message": …}``. A detail too long for
the log is shortened by its parts (long texts cut, long lists cut with how many were left
out), so that it stays one object.

``summary`` is a sentence: who, through which surface, did what, on what, how it ended, why,
with counts and amounts (``2 payments held: payment:INV-1002 34,500.00 USD``). Times are to the
second (``2026-11-19T09:00:05Z``): the entry's id keeps the millisecond order.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import cache
from typing import Any

MAX_DETAIL = 2000  # characters of the stored JSON
_TEXT_CUT = 300  # a text inside a detail too long as a whole
_LIST_CUT = 10  # items a list keeps in a detail too long as a whole
_SHOWN = 3  # payments a sentence names before "and N more"


@cache
def base_currency() -> str:
    """The currency of an amount that names none: the gate's (RESCIND_GATE_CURRENCY)."""
    from rescind.runtime.settings import Settings

    return Settings().gate_currency


# -- detail: one JSON object ---------------------------------------------------------------------
def as_object(value: Any) -> dict | None:
    """Any detail as an object: a dict as it is, a text as its message, nothing as None."""
    if value is None or value == "" or value == {}:
        return None
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        return {"message": value}
    return {"value": value}


def _dump(value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False, separators=(",", ":"))


def _cut(value: Any, text: int, items: int) -> Any:
    if isinstance(value, str):
        return value if len(value) <= text else value[:text] + "…"
    if isinstance(value, dict):
        return {str(k): _cut(v, text, items) for k, v in value.items()}
    if isinstance(value, list | tuple):
        kept = [_cut(v, text, items) for v in value[:items]]
        return kept + ([f"… {len(value) - items} more"] if len(value) > items else [])
    return value


def stored(value: Any, limit: int = MAX_DETAIL) -> str:
    """The detail as the log keeps it: one JSON object of at most ``limit`` characters (or
    ``""`` for none). Shortened by its parts when too long, never cut mid-document."""
    d = as_object(value)
    if d is None:
        return ""
    text = _dump(d)
    for cut_text, cut_items in ((_TEXT_CUT, _LIST_CUT), (80, 3), (20, 1)):
        if len(text) <= limit:
            return text
        text = _dump(_cut(d, cut_text, cut_items))
    if len(text) <= limit:
        return text
    return _dump({"message": text[: limit - 40] + "…", "shortened": True})


def parsed(raw: str | None) -> dict | None:
    """The detail as read: an object. Entries written before details were objects (a text, or
    JSON inside a string) read the same way."""
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return {"message": raw}
    return as_object(value) if not isinstance(value, str) else {"message": value}


# -- what a decision keeps -----------------------------------------------------------------------
def _payment(item: dict) -> dict:
    out = {"id": item.get("name") or item.get("id"), "amount": item.get("amount")}
    for k in ("currency", "payee"):
        if item.get(k) is not None:
            out[k] = item[k]
    return out


def radius(d: dict) -> dict:
    """What the audit keeps of a blast radius (a retraction, withdrawal or correction, or a
    reinstatement; previewed or committed): which, why, at what revision, how many memories of
    each kind, and the payments it holds, recalls or releases with their amounts."""
    out: dict[str, Any] = {"retraction": d.get("retraction"), "rev": d.get("rev")}
    for key in ("committed", "repeated", "op", "direction", "source", "reason"):
        if d.get(key) not in (None, ""):
            out[key] = d[key]
    out["counts"] = d.get("counts")
    for key, name in (("to_hold", "held"), ("to_recall", "recalled"),
                      ("to_release", "released")):
        if d.get(key):
            out[name] = [_payment(i) for i in d[key]]
    return out


# -- the sentence ----------------------------------------------------------------------------------
_VERBS = {
    "retraction.preview": "previewed declaring {t} compromised",
    "retraction.commit": "declared {t} compromised",
    "retraction.reinstate.preview": "previewed undoing {t}",
    "retraction.reinstate": "undid {t}",
    "withdrawal.preview": "previewed withdrawing {t}",
    "withdrawal.commit": "withdrew {t}",
    "correction.preview": "previewed correcting {t}",
    "correction.commit": "corrected {t}",
    "recall.approve": "approved the recall of {t}",
    "recall.reject": "rejected the recall of {t}",
    "recall.annotate": "added a note to the recall of {t}",
    "recall.export": "exported the recall of {t} for the bank",
    "recall.notice.approve": "approved the withdrawal notice of {t}",
    "recall.notice.export": "exported the withdrawal notice of {t}",
    "gate": "asked the payment gate about {t}",
    "events.send": "sent {t}",
    "tenant.create": "created tenant {t}",
    "tenant.settings": "changed the tenant's settings ({t})",
    "token.create": "created the token {t}",
    "token.revoke": "revoked the token {t}",
    "scenario.replay": "replayed {t}",
}
_KINDS = {"observations": "observation", "beliefs": "belief", "plans": "plan",
          "answers": "answer", "executed_actions": "payment made", "pending_actions":
          "pending payment"}


def moment(ms: int) -> str:
    """An entry's time as people read it, to the second, UTC: ``2026-11-19T09:00:05Z``."""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def money(amount: Any, currency: str | None = None) -> str:
    if not isinstance(amount, int | float):
        return "no amount"
    return f"{amount:,.2f} {currency or base_currency()}"


def plural(n: int, word: str) -> str:
    if n == 1:
        return f"1 {word}"
    if word.endswith("payment made"):
        return f"{n} {word.replace('payment made', 'payments made')}"
    return f"{n} {word}s"


def _payments(items: list, what: str) -> str:
    rows = [i for i in items if isinstance(i, dict)]
    named = [f"{i.get('id')} {money(i.get('amount'), i.get('currency'))}"
             if isinstance(i, dict) else str(i) for i in items[:_SHOWN]]
    more = len(items) - len(named)
    total = sum(i["amount"] for i in rows if isinstance(i.get("amount"), int | float)
                and not i.get("currency"))
    shown = ", ".join(named) + (f" and {more} more" if more > 0 else "")
    sums = f" (total {money(total)})" if len(rows) > 1 and total else ""
    return f"{plural(len(items), 'payment')} {what}: {shown}{sums}"


def _facts(d: dict) -> list[str]:
    """The counts and amounts of a detail, as clauses."""
    out = []
    counts = d.get("counts")
    if isinstance(counts, dict):
        moved = [plural(n, _KINDS.get(k, k)) for k, n in counts.items()
                 if isinstance(n, int) and n]
        way = "back IN" if d.get("direction") == "IN" else "OUT"
        out.append(f"{', '.join(moved)} {way}" if moved else "nothing changes status")
    for key, what in (("held", "held"), ("recalled", "to recall"), ("released", "released")):
        if isinstance(d.get(key), list) and d[key]:
            out.append(_payments(d[key], what))
    if "amount" in d and "held" not in d:
        out.append(money(d["amount"], d.get("currency")))
    for key, label in (("state", "now"), ("format", "as"), ("fragility", "fragility"),
                       ("accepted", "accepted"), ("notes", "notes"), ("gates", "gate decisions"),
                       ("role", "role")):
        if d.get(key) not in (None, ""):
            out.append(f"{label} {d[key]}")
    return out


def sentence(e: dict) -> str:
    """One entry as a sentence a person reads without knowing the log's fields."""
    who = e.get("who") or "someone"
    surface = ", ".join(x for x in (e.get("role"), f"via {e['via']}" if e.get("via") else "")
                        if x)
    target = e.get("target") or "-"
    action = e.get("action") or "?"
    verb = _VERBS.get(action)
    what = verb.format(t=target) if verb else f"{action} on {target}"
    d = e.get("detail") if isinstance(e.get("detail"), dict) else {}
    result, status = e.get("result"), e.get("status")
    if result == "refused":
        n = int(e.get("count") or 1)
        times = "" if n == 1 else f" ({n} times)"
        head = f"{who} ({surface}) was refused{times}: {what} (HTTP {status})"
    elif result == "error":
        head = f"{who} ({surface}) failed: {what} (HTTP {status})"
    elif result in ("allowed", "blocked"):
        head = f"{who} ({surface}) {what}: {result}"
    else:
        head = f"{who} ({surface}) {what}"
    parts = [head]
    if result in ("refused", "error") and d.get("message"):
        parts.append(f"why: {d['message']}")
    else:
        parts += _facts(d)
        if d.get("reason"):
            parts.append(f"why: {d['reason']}")
    if d.get("retraction") and d.get("retraction") not in target:
        parts.append(f"as {d['retraction']}")
    return "; ".join(parts) + "."
