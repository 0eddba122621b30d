"""Why the gate decided as it did, in words, for the CLI: built from a decision's typed fields
(allowed, expired, fragility, amount, base_amount, aggregate) and the gate's rule, not from its
recorded reason ("allowed: fragility 1"), which is kept for the audit. The console says the
same sentences (``gateWhy`` in services/api/static/labels.js); a test holds the two together.
What the fields cannot explain (a call that did not match its proposal, an amount with no rate)
is told by the recorded reason, without its ``allowed:``/``blocked:`` prefix.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rescind.core.gate_rule import GatePolicy


def _round(x: float) -> str:
    """A threshold as people write it: 10,000 or 10,000.5 (up to two decimals, none trailing)."""
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.2f}".rstrip("0").rstrip(".")


def _amount(x: float, currency: str) -> str:
    return f"{x:,.2f} {currency}"


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def confirmed(n: int | None) -> str:
    """How many independent sources (trust domains) stand behind a payment."""
    return f"confirmed by {_plural(n, 'independent source')}" if n else \
        "confirmed by no independent source"


def attacker_needs(domains: list[str] | None) -> str:
    """The trust domains an attacker would have to take over together, or why none would do."""
    names = [d for d in domains or [] if d]
    if not names:
        return "none: no independent source stands behind it"
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def why(d: Mapping[str, Any], policy: GatePolicy) -> str:
    """The gate's decision ``d`` (a row of the gate log) as a sentence under ``policy``."""
    recorded = re.sub(r"^(allowed|blocked):\s*", "", str(d.get("reason") or ""))
    fallback = f"{'Allowed' if d.get('allowed') else 'Refused'}: {recorded}"
    if d.get("expired"):
        return ("Refused: the gate answered after the agent had stopped waiting, so the payment "
                "never ran.")
    frag = d.get("fragility")
    if frag is None:
        return fallback
    base = policy.currency
    rule = f"{policy.min_domains} needed above {_round(policy.threshold)} {base}"
    amount, base_amount = d.get("amount"), d.get("base_amount")
    aggregate = float(d.get("aggregate") or 0)
    total = float(base_amount) + aggregate if base_amount is not None else None
    said = _amount(float(amount), d.get("currency") or base) if amount is not None else ""
    in_base = (f" ({_amount(float(base_amount), base)})"
               if base_amount is not None and (d.get("currency") or base) != base else "")
    prior = (f", with {_amount(aggregate, base)} already allowed to the same payee or account "
             f"({_amount(total, base)} in all),"
             if aggregate > 0 and total is not None and float(base_amount) <= policy.threshold
             else "")
    if d.get("allowed"):
        if amount is None:
            return f"Allowed: {confirmed(frag)}; the action is declared amount-free."
        if frag >= policy.min_domains:
            return f"Allowed: {confirmed(frag)}; {rule}."
        if total is not None and total <= policy.threshold:
            return f"Allowed: {confirmed(frag)}; {rule}, and {said}{in_base}{prior} is not above it."
        return fallback
    if total is not None and total > policy.threshold and frag < policy.min_domains:
        only = confirmed(frag).replace("by ", "by only " if frag else "by ", 1)
        return (f"Refused: {said}{in_base}{prior} is above {_round(policy.threshold)} {base} and "
                f"{only}; {policy.min_domains} needed.")
    return fallback
