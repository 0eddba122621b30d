"""The payment gate's rule, on plain values: what it refuses, and what it adds up.

``rescind.engine.gate`` reads the graph (the call, the proposal, the cone, the earlier
decisions) and keeps the decision; everything it decides with is here:

- ``GatePolicy``: the threshold, the domains needed above it, the window, the currency;
- ``decide``: the decision on an amount, the fragility and what was already allowed;
- ``already_allowed``: the aggregate, per account key and, separately, per payee key, each
  execution once;
- ``execution_key``: what one execution is, so that a re-ask never counts twice and every
  execution counts once.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from rescind.contract.errors import Invalid
from rescind.contract.layout import GATE_MIN_DOMAINS, GATE_THRESHOLD
from rescind.core.money import (
    NoRate,
    checked_rates,
    convert,
    currency_code,
    normalise_account,
    normalise_payee,
    show,
)
from rescind.core.shapes import GateDecision

EXPIRED = "expired"  # the first word of a late question's reason: its asker stopped waiting


@dataclass(frozen=True)
class GatePolicy:
    """What the gate refuses: a payment above ``threshold`` (in ``currency``) that fewer than
    ``min_domains`` trust domains stand behind. Only sources of ``trusted_kinds`` count (None:
    every kind but a user's or an agent's). Amounts in another currency are converted with
    ``rates`` (one unit's worth in ``currency``); an amount with no currency is in ``currency``
    unless ``require_currency``. The same policy in the workers, the API and replay
    (``RESCIND_GATE_*``, read by ``from_settings``)."""

    threshold: float = GATE_THRESHOLD
    min_domains: int = GATE_MIN_DOMAINS
    trusted_kinds: frozenset[str] | None = None
    window_days: float = 30.0  # what was already allowed to the same account or payee counts
    currency: str = "USD"
    rates: Mapping[str, float] = field(default_factory=dict)
    require_currency: bool = False

    def __post_init__(self) -> None:  # a bad table is found at startup, not at a payment
        object.__setattr__(self, "currency", currency_code(self.currency))
        object.__setattr__(self, "rates", checked_rates(self.rates))

    @classmethod
    def from_settings(cls, s: Any) -> GatePolicy:
        """The policy of ``rescind.runtime.settings.Settings`` (or anything with its gate_*)."""
        try:
            return cls(s.gate_threshold, s.gate_min_domains,
                       frozenset(s.gate_trusted_kinds) if s.gate_trusted_kinds else None,
                       s.gate_window_days, s.gate_currency, s.gate_rates, s.gate_require_currency)
        except ValueError as exc:  # told as a refusal (exit 2, 422), not as a traceback
            raise Invalid(f"RESCIND_GATE_CURRENCY or RESCIND_GATE_RATES: {exc}") from None

    def in_base(self, amount: float, currency: str | None) -> float:
        """``amount`` in the threshold's currency; NoRate when it cannot be judged."""
        if currency is None:
            if self.require_currency:
                raise NoRate(f"{amount:,.2f} has no currency, and the gate requires one")
            return amount
        return convert(amount, currency_code(currency), self.currency, self.rates)

    def window_us(self) -> int:
        """The aggregate's window, in microseconds."""
        return int(self.window_days * 86_400e6)


def account_key(account: str | None) -> str | None:
    """The key the aggregate keeps an account's total under (``normalise_account``)."""
    return normalise_account(account) or None if account else None


def payee_key(payee: str | None) -> str | None:
    """The key the aggregate keeps a payee's total under (``normalise_payee``)."""
    return normalise_payee(payee) or None if payee else None


def execution_key(action: str, proposal: object | None = None, ask: str | None = None) -> str:
    """What one execution is. A stored proposal released is one execution however often it is
    asked about (``action#proposal``, the proposal's sequence number: proposed again under the
    same name, it is another execution); a new action is one execution per question
    (``action@ask``): every allowed question about it lets the tool run once more."""
    if proposal is not None:
        return f"{action}#{proposal}"
    return f"{action}@{ask}" if ask else action


def not_an_amount(amount: object) -> bool:
    """Whether ``amount`` (given) cannot be an amount: a bool, not finite, or negative."""
    return isinstance(amount, bool) or not isinstance(amount, int | float) \
        or not math.isfinite(amount) or amount < 0


@dataclass(frozen=True)
class Allowed:
    """What an earlier allowed decision adds to the aggregate: under which key it matched
    (``"account"`` or ``"payee"``), its execution, its amount in the threshold's currency."""

    by: str
    execution: str
    amount: float | None


def already_allowed(rows: Iterable[Allowed], itself: str | None = None) -> tuple[float, float]:
    """What was already allowed to the same account, and to the same payee: each execution
    once (at the largest amount it was allowed with), ``itself`` (the execution asked about)
    not at all, since its own amount is added by ``decide``."""
    largest: dict[tuple[str, str], float] = {}
    for r in rows:
        if r.execution == itself:
            continue
        k = (r.by, r.execution)
        largest[k] = max(largest.get(k, 0.0), r.amount or 0.0)
    return (float(sum(v for (by, _), v in largest.items() if by == "account")),
            float(sum(v for (by, _), v in largest.items() if by == "payee")))


def decide(action: str, amount: float | None, currency: str | None, frag: int,
           domains: tuple[str, ...], p: GatePolicy, already: tuple[float, float] = (0.0, 0.0),
           amount_free: bool = False) -> GateDecision:
    """The decision on an action that is IN and whose call matches it. No amount: refused,
    unless the operator declared the action amount-free. Otherwise the amount, in the
    threshold's currency, is added to what was already allowed to the same account and,
    separately, to the same payee; above the threshold on either, fewer than ``min_domains``
    is refused. An amount that cannot be converted is refused. The decision's ``aggregate``
    is the larger of the two already allowed."""
    prior = max(already)
    if amount is None:
        if amount_free:
            return GateDecision(action, True, f"allowed: fragility {frag} (declared "
                                "amount-free)", frag, domains, prior)
        return GateDecision(action, False, "blocked: the call has no amount, and the action "
                            "is not declared amount-free; the gate cannot judge it", frag,
                            domains, prior)
    try:
        base = p.in_base(amount, currency)
    except (NoRate, ValueError) as exc:
        return GateDecision(action, False, f"blocked: {exc}; the gate cannot judge it", frag,
                            domains, prior)
    total = base + prior
    said = show(amount, currency, p.currency)
    if base != amount or said != f"{amount:,.2f}":
        said = f"{said} ({p.currency} {base:,.2f})"
    if total > p.threshold and frag < p.min_domains:
        to = "account" if already[0] >= already[1] else "payee"
        what = said if base > p.threshold else (
            f"{said} with {prior:,.2f} already allowed to the same {to} in "
            f"{p.window_days:g} days ({total:,.2f})")
        return GateDecision(action, False, f"blocked: {what} is above {p.threshold:,.0f} and "
                            f"rests on {frag} trust domain(s) that could fake it; "
                            f"{p.min_domains} needed", frag, domains, prior, base)
    return GateDecision(action, True, f"allowed: fragility {frag}", frag, domains, prior, base)


def expired(d: GateDecision, waited_s: float) -> GateDecision:
    """``d`` judged after its asker stopped waiting: never allowed, kept as expired."""
    return replace(d, allowed=False, reason=f"{EXPIRED}: judged {waited_s:.1f}s after its "
                   f"asker stopped waiting, so never run (it would have been {d.reason})")


def same(name: str, asked: object, stored: object) -> bool:
    """Whether a call's value equals the proposal's: an amount to the cent, a currency by code,
    an account by its key, a payee by its key."""
    if stored is None:
        return False
    if name == "amount":
        return abs(float(asked) - float(stored)) < 0.005
    if name == "currency":
        return str(asked).strip().upper() == str(stored).strip().upper()
    if name == "account":
        return account_key(str(asked)) == account_key(str(stored))
    return payee_key(str(asked)) == payee_key(str(stored))
