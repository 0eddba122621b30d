"""The payment gate: asked before an action tool runs, and by `gate` lines of a scenario."""

from __future__ import annotations

import math
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from rescind.contract.errors import Invalid, NotFound
from rescind.contract.events import from_micros, to_micros
from rescind.contract.layout import GATE_MIN_DOMAINS, GATE_THRESHOLD
from rescind.core.belief import Rules
from rescind.core.evidence import evidence_cone, normalise_account
from rescind.core.fragility import cone_domains, trust_domains, weakest
from rescind.core.money import NoRate, checked_rates, convert, currency_code, show
from rescind.core.shapes import GateDecision
from rescind.graph import gate_queries as gq
from rescind.graph import queries as q
from rescind.graph.cone import Cone, ConeRead
from rescind.graph.store import TenantGraph
from rescind.runtime.telemetry import gate_decisions


class UnknownAction(NotFound):
    """The gate was asked about an action the graph does not hold."""


def fragility_of(graph: TenantGraph, target: str) -> tuple[int, tuple[str, ...]]:
    """Exact fragility of ``target`` and the trust domains its cone draws on."""
    frag, _witness, domains = weakest_of(graph, target)
    return frag, domains


def weakest_of(graph: TenantGraph, target: str) -> tuple[int, tuple[str, ...], tuple[str, ...]]:
    """Fragility of ``target``, one smallest set of domains that would fake it, and every
    trust domain its cone draws on."""
    read = ConeRead(graph, [target], [(q.ACTIVE_RETRACTIONS, None)])
    c = read.finish()
    if target not in c.nodes:
        raise UnknownAction(f"unknown memory {target!r}")
    rules, domain_of = graph.rules_from(read.rows[0]), trust_domains(c.sources)
    domains = tuple(cone_domains(c.nodes, domain_of, rules))
    frag, witness = weakest(target, c.nodes, domain_of, rules)
    return frag, witness, domains


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


@dataclass(frozen=True)
class GateCall:
    """The call about to run: a new action resting on ``premises``, or (``premises`` None) a
    stored proposal by id, released by a call whose own values must equal it."""

    action: str
    premises: tuple[str, ...] | None = None
    amount: float | None = None
    account: str | None = None
    payee: str | None = None
    at: int | None = None  # when it is asked (epoch µs): the window of the aggregate ends here
    currency: str | None = None  # ISO 4217; None: the policy's (unless it requires one)


def judge(graph: TenantGraph, call: GateCall, policy: GatePolicy = GatePolicy()) -> GateDecision:
    """The one gate: the middleware's question, ``POST …/gate`` and a scenario's ``gate`` line
    all come here."""
    if call.amount is not None and (isinstance(call.amount, bool)
                                    or not math.isfinite(call.amount) or call.amount < 0):
        return GateDecision(call.action, False, f"blocked: {call.amount!r} is not an amount", 0)
    if call.premises is None:
        return _judge_stored(graph, call, policy)
    return replace(_judge_new(graph, call, policy), amount=call.amount, currency=call.currency,
                   account=call.account, payee=call.payee)


def _judge_stored(graph: TenantGraph, call: GateCall, p: GatePolicy) -> GateDecision:
    """A release: the proposal's stored facts are judged, and kept with the decision (the
    call's own where it named one), so that the aggregate of later calls counts them."""
    # The proposal's facts, the rules, its cone and the aggregate in one round trip. The
    # aggregate is read for the call's own account and payee when it names both: they must
    # equal the proposal's (checked below), which then name the same keys. Otherwise it is read
    # for the proposal's, with the next round trip.
    early = _aggregate(call.account, call.payee, call.at, p) \
        if call.account and call.payee else None
    read = ConeRead(graph, [call.action], [(q.ACTIONS_IN, {"ids": [call.action]}),
                                           (q.ACTIVE_RETRACTIONS, None)] + ([early] if early else []))
    facts = read.first()[0]
    if not facts:
        raise UnknownAction(f"unknown action {call.action!r}")
    props = facts[0][0]
    values = {n: getattr(call, n) if getattr(call, n) is not None else props.get(n)
              for n in ("amount", "currency", "account", "payee")}
    return replace(_judge_proposal(call, props, read, early is not None, graph, p), **values)


def _judge_proposal(call: GateCall, props: dict, read: ConeRead, early: bool,
                    graph: TenantGraph, p: GatePolicy) -> GateDecision:
    for name, asked in (("amount", call.amount), ("currency", call.currency),
                        ("account", call.account), ("payee", call.payee)):
        stored = props.get(name)
        if name == "currency" and stored is None and not p.require_currency:
            stored = p.currency  # a proposal without a currency is in the threshold's
        if asked is not None and not _same(name, asked, stored):
            return GateDecision(call.action, False, f"blocked: the call's {name} {asked!r} is "
                                f"not the proposal's {stored!r}", 0)
    if props.get("failed"):
        return GateDecision(call.action, False, "blocked: the proposal's call failed "
                            f"({props.get('failed_reason') or 'no reason given'}); propose it "
                            "again", 0)
    riding = 2 if early else None  # where the aggregate's rows are in read.rows
    if not early and (late := _aggregate(props.get("account"), props.get("payee"), call.at, p)):
        riding = read.ride(late)
    c = read.finish()
    if call.action not in c.nodes:
        raise UnknownAction(f"unknown memory {call.action!r}")
    frag, fall, domains = _evidence(c, call.action, props.get("account"),
                                    graph.rules_from(read.rows[1]), p)
    if props.get("status") != "IN":
        reason = f"blocked: the action is OUT (cause {props.get('cause')})"
        return GateDecision(call.action, False, reason, frag, domains, would_fall=fall)
    already = _allowed(read.rows[riding]) if riding is not None else 0.0
    return replace(_by_amount(call.action, props.get("amount"), props.get("currency"), frag,
                              domains, p, already), would_fall=fall)


def _judge_new(graph: TenantGraph, call: GateCall, p: GatePolicy) -> GateDecision:
    """An action not yet in the graph: it would rest on every premise together, so it falls
    as soon as any premise falls: its fragility is the smallest among them (0 when one is
    missing or OUT)."""
    premises = list(call.premises or ())
    # The premises' facts (the cone's first levels), the rules and the aggregate: one round trip.
    aggregate = _aggregate(call.account, call.payee, call.at, p)
    read = ConeRead(graph, premises, [(q.ACTIVE_RETRACTIONS, None)] + (
        [aggregate] if aggregate else []))
    read.first()
    known = read.cone.status
    missing = [x for x in premises if x not in known]
    if missing:
        return GateDecision(call.action, False,
                            f"blocked: unknown premise(s) {', '.join(missing)}", 0)
    out = [x for x in premises if not known[x].is_in]
    if out:
        return GateDecision(call.action, False, f"blocked: it rests on OUT memory {out[0]} "
                            f"(cause {known[out[0]].cause})", 0)
    c, rules = read.finish(), graph.rules_from(read.rows[0])
    frag, fall, domains = min((_evidence(c, x, call.account, rules, p) for x in premises),
                              key=lambda fd: fd[0])
    already = _allowed(read.rows[1]) if aggregate else 0.0
    return replace(_by_amount(call.action, call.amount, call.currency, frag, domains, p,
                              already), would_fall=fall)


def _by_amount(action: str, amount: float | None, currency: str | None, frag: int,
               domains: tuple[str, ...], p: GatePolicy, already: float = 0.0) -> GateDecision:
    """The threshold applies to the amount, in the threshold's currency, together with what was
    already allowed to the same account or payee in the window, so that splitting a payment
    cannot evade it. An amount that cannot be converted is refused."""
    if amount is None:
        return GateDecision(action, True, f"allowed: fragility {frag}", frag, domains, already)
    try:
        base = p.in_base(amount, currency)
    except (NoRate, ValueError) as exc:
        return GateDecision(action, False, f"blocked: {exc}; the gate cannot judge it", frag,
                            domains, already)
    total = base + already
    said = show(amount, currency, p.currency)
    if base != amount or said != f"{amount:,.2f}":
        said = f"{said} ({p.currency} {base:,.2f})"
    if total > p.threshold and frag < p.min_domains:
        what = said if base > p.threshold else (
            f"{said} with {already:,.2f} already allowed to the same account or payee "
            f"in {p.window_days:g} days ({total:,.2f})")
        return GateDecision(action, False, f"blocked: {what} is above {p.threshold:,.0f} and "
                            f"rests on {frag} trust domain(s) that could fake it; "
                            f"{p.min_domains} needed", frag, domains, already, base)
    return GateDecision(action, True, f"allowed: fragility {frag}", frag, domains, already, base)


def allowed_before(graph: TenantGraph, account: str | None, payee: str | None, at: int | None,
                   p: GatePolicy) -> float:
    """What the gate already allowed to ``account`` or ``payee`` in the window ending at ``at``
    (the action asked about included: a payment allowed once and asked again counts
    already)."""
    aggregate = _aggregate(account, payee, at, p)
    return _allowed(graph.rows(*aggregate)) if aggregate else 0.0


def _aggregate(account: str | None, payee: str | None, at: int | None,
               p: GatePolicy) -> tuple[str, dict] | None:
    """The read behind ``allowed_before`` (None: nothing to add up)."""
    if not account and not payee:
        return None
    end = at if at is not None else to_micros(datetime.now(UTC))
    return gq.GATE_ALLOWED_TO, {
        "since": end - int(p.window_days * 86_400e6),
        "account_key": normalise_account(account) if account else None,
        "payee_key": payee_key(payee)}


def _allowed(rows: list[list]) -> float:
    """Each action allowed once, at the largest amount it was allowed with (in the threshold's
    currency)."""
    largest: dict[str, float] = {}
    for action, amount in rows:
        largest[action] = max(largest.get(action, 0.0), amount or 0.0)
    return float(sum(largest.values()))


def payee_key(payee: str | None) -> str | None:
    return " ".join(payee.casefold().split()) if payee else None


def record(graph: TenantGraph, call: GateCall, d: GateDecision, name: str | None = None,
           trace: str | None = None) -> None:
    """Keep the decision in the tenant's graph: the log, the payment's history and the next
    call's aggregate read it."""
    graph.ensure_schema()
    graph.rows(gq.GATE_RECORD, {
        "id": uuid.uuid4().hex, "action": call.action, "name": name or call.action,
        "at": call.at if call.at is not None else to_micros(datetime.now(UTC)),
        "amount": d.amount, "currency": d.currency, "base_amount": d.base_amount,
        "account": d.account, "account_key": normalise_account(d.account) if d.account else None,
        "payee": d.payee, "payee_key": payee_key(d.payee), "allowed": d.allowed,
        "reason": d.reason, "fragility": d.fragility, "domains": list(d.domains),
        "would_fall": list(d.would_fall),
        "aggregate": d.aggregate, "trace": trace}, read_only=False)
    gate_decisions.add(1, {"tenant": graph.tenant, "decision": "allowed" if d.allowed else "blocked"})


def evidence_fragility(graph: TenantGraph, target: str, account: str | None,
                       p: GatePolicy = GatePolicy()
                       ) -> tuple[int, tuple[str, ...], tuple[str, ...]]:
    """How many trust domains that state ``account`` would have to fall to fake ``target``,
    one smallest set of them, and every domain that counts (see ``rescind.core.evidence``).
    With no account named, every trust domain its cone draws on counts, but a user's or an
    agent's word never does."""
    read = ConeRead(graph, [target], [(q.ACTIVE_RETRACTIONS, None)])
    c = read.finish()
    if target not in c.nodes:
        raise UnknownAction(f"unknown memory {target!r}")
    return _evidence(c, target, account, graph.rules_from(read.rows[0]), p)


def _evidence(c: Cone, target: str, account: str | None, rules: Rules,
              p: GatePolicy) -> tuple[int, tuple[str, ...], tuple[str, ...]]:
    """``evidence_fragility`` on a cone already read (``c`` may hold more than ``target``'s)."""
    nodes = c.of(target)
    sources = {g.source: c.sources[g.source] for n in nodes.values() for g in n.groundings}
    if not account:  # no account named: every domain its cone draws on counts (as before)
        domain_of = trust_domains(sources)
        frag, witness = weakest(target, nodes, domain_of, rules)
        return frag, tuple(witness), tuple(cone_domains(nodes, domain_of, rules))
    seen, domain_of = evidence_cone(nodes, c.texts, account,
                                    {s: d for s, (d, _) in sources.items()},
                                    {s: k for s, (_, k) in sources.items()}, rules,
                                    p.trusted_kinds)
    frag, witness = weakest(target, seen, domain_of, rules)
    return frag, tuple(witness), tuple(cone_domains(seen, domain_of, rules))


def _same(field: str, asked: object, stored: object) -> bool:
    if field == "amount":
        return stored is not None and abs(float(asked) - float(stored)) < 0.005
    if field == "currency":
        return stored is not None and str(asked).strip().upper() == str(stored).strip().upper()
    if field == "account":
        return stored is not None and normalise_account(str(asked)) == \
            normalise_account(str(stored))
    return stored is not None and payee_key(str(asked)) == payee_key(str(stored))


_LOG_FIELDS = ("at", "action", "name", "amount", "currency", "base_amount", "account", "payee",
               "allowed", "reason", "fragility", "domains", "would_fall", "aggregate", "trace")


def decisions_log(graph: TenantGraph, action: str | None = None, limit: int = 100) -> list[dict]:
    """The gate's decisions, newest first (of one action, by id, when given)."""
    rows = graph.rows(gq.GATE_LOG, {"action": action, "limit": limit})
    return [{**dict(zip(_LOG_FIELDS, r, strict=True)), "at": from_micros(r[0]).isoformat()}
            for r in rows]
