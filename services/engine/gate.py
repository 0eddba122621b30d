"""The payment gate: asked before an action tool runs, and by `gate` lines of a scenario."""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

from rescind.contract.errors import NotFound
from rescind.contract.events import from_micros, to_micros
from rescind.contract.layout import GATE_MIN_DOMAINS, GATE_THRESHOLD
from rescind.core.belief import Node
from rescind.core.evidence import evidence_cone, normalise_account
from rescind.core.fragility import cone_domains, weakest
from rescind.core.shapes import GateDecision
from rescind.graph import queries as q
from rescind.graph.store import TenantGraph


class UnknownAction(NotFound):
    """The gate was asked about an action the graph does not hold."""


def cone(graph: TenantGraph, target: str) -> tuple[dict[str, Node], dict[str, str]]:
    """Everything ``target`` rests on, and the trust domain of every source in it."""
    nodes = graph.nodes(graph.upstream(target))
    sources = {g.source for n in nodes.values() for g in n.groundings}
    return nodes, graph.trust_domains(sources)


def fragility_of(graph: TenantGraph, target: str) -> tuple[int, tuple[str, ...]]:
    """Exact fragility of ``target`` and the trust domains its cone draws on."""
    frag, _witness, domains = weakest_of(graph, target)
    return frag, domains


def weakest_of(graph: TenantGraph, target: str) -> tuple[int, tuple[str, ...], tuple[str, ...]]:
    """Fragility of ``target``, one smallest set of domains that would fake it, and every
    trust domain its cone draws on."""
    nodes, domain_of = cone(graph, target)
    if target not in nodes:
        raise UnknownAction(f"unknown memory {target!r}")
    rules = graph.rules()
    domains = tuple(cone_domains(nodes, domain_of, rules))
    frag, witness = weakest(target, nodes, domain_of, rules)
    return frag, witness, domains


@dataclass(frozen=True)
class GatePolicy:
    """What the gate refuses: a payment above ``threshold`` that fewer than ``min_domains``
    trust domains stand behind. Only sources of ``trusted_kinds`` count (None: every kind but a
    user's or an agent's). The same policy in the workers, the API and replay
    (``RESCIND_GATE_*``)."""

    threshold: float = GATE_THRESHOLD
    min_domains: int = GATE_MIN_DOMAINS
    trusted_kinds: frozenset[str] | None = None
    window_days: float = 30.0  # what was already allowed to the same account or payee counts


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


def judge(graph: TenantGraph, call: GateCall, policy: GatePolicy = GatePolicy()) -> GateDecision:
    """The one gate: the middleware's question, ``POST …/gate`` and a scenario's ``gate`` line
    all come here."""
    if call.amount is not None and (isinstance(call.amount, bool)
                                    or not math.isfinite(call.amount) or call.amount < 0):
        return GateDecision(call.action, False, f"blocked: {call.amount!r} is not an amount", 0)
    if call.premises is None:
        return _judge_stored(graph, call, policy)
    return _judge_new(graph, call, policy)


def _judge_stored(graph: TenantGraph, call: GateCall, p: GatePolicy) -> GateDecision:
    facts = graph.actions_in([call.action])
    if not facts:
        raise UnknownAction(f"unknown action {call.action!r}")
    props = facts[0]
    for field, asked in (("amount", call.amount), ("account", call.account),
                         ("payee", call.payee)):
        stored = props.get(field)
        if asked is not None and not _same(field, asked, stored):
            return GateDecision(call.action, False, f"blocked: the call's {field} {asked!r} is "
                                f"not the proposal's {stored!r}", 0)
    if props.get("failed"):
        return GateDecision(call.action, False, "blocked: the proposal's call failed "
                            f"({props.get('failed_reason') or 'no reason given'}); propose it "
                            "again", 0)
    frag, domains = evidence_fragility(graph, call.action, props.get("account"), p)
    if props.get("status") != "IN":
        reason = f"blocked: the action is OUT (cause {props.get('cause')})"
        return GateDecision(call.action, False, reason, frag, domains)
    already = allowed_before(graph, props.get("account"), props.get("payee"), call.at, p)
    return _by_amount(call.action, props.get("amount"), frag, domains, p, already)


def _judge_new(graph: TenantGraph, call: GateCall, p: GatePolicy) -> GateDecision:
    """An action not yet in the graph: it would rest on every premise together, so it falls
    as soon as any premise falls: its fragility is the smallest among them (0 when one is
    missing or OUT)."""
    premises = list(call.premises or ())
    known = graph.statuses(premises)
    missing = [x for x in premises if x not in known]
    if missing:
        return GateDecision(call.action, False,
                            f"blocked: unknown premise(s) {', '.join(missing)}", 0)
    out = [x for x in premises if not known[x].is_in]
    if out:
        return GateDecision(call.action, False, f"blocked: it rests on OUT memory {out[0]} "
                            f"(cause {known[out[0]].cause})", 0)
    frag, domains = min((evidence_fragility(graph, x, call.account, p) for x in premises),
                        key=lambda fd: fd[0])
    already = allowed_before(graph, call.account, call.payee, call.at, p)
    return _by_amount(call.action, call.amount, frag, domains, p, already)


def _by_amount(action: str, amount: float | None, frag: int, domains: tuple[str, ...],
               p: GatePolicy, already: float = 0.0) -> GateDecision:
    """The threshold applies to the amount together with what was already allowed to the same
    account or payee in the window, so that splitting a payment cannot evade it."""
    total = (amount or 0.0) + already
    if amount is not None and total > p.threshold and frag < p.min_domains:
        what = f"{amount:,.2f}" if amount > p.threshold else (
            f"{amount:,.2f} with {already:,.2f} already allowed to the same account or payee "
            f"in {p.window_days:g} days ({total:,.2f})")
        return GateDecision(action, False, f"blocked: {what} is above {p.threshold:,.0f} and "
                            f"rests on {frag} trust domain(s) that could fake it; "
                            f"{p.min_domains} needed", frag, domains, already)
    return GateDecision(action, True, f"allowed: fragility {frag}", frag, domains, already)


def allowed_before(graph: TenantGraph, account: str | None, payee: str | None, at: int | None,
                   p: GatePolicy) -> float:
    """What the gate already allowed to ``account`` or ``payee`` in the window ending at ``at``
    (the action asked about included: a payment allowed once and asked again counts
    already)."""
    if not account and not payee:
        return 0.0
    end = at if at is not None else to_micros(datetime.now(UTC))
    rows = graph.rows(q.GATE_ALLOWED_TO, {
        "since": end - int(p.window_days * 86_400e6),
        "account_key": normalise_account(account) if account else None,
        "payee_key": payee_key(payee)})
    return float(sum(amount or 0.0 for _, amount in rows))


def payee_key(payee: str | None) -> str | None:
    return " ".join(payee.casefold().split()) if payee else None


def record(graph: TenantGraph, call: GateCall, d: GateDecision, name: str | None = None,
           trace: str | None = None) -> None:
    """Keep the decision in the tenant's graph: the log, the payment's history and the next
    call's aggregate read it."""
    graph.ensure_schema()
    graph.rows(q.GATE_RECORD, {
        "id": uuid.uuid4().hex, "action": call.action, "name": name or call.action,
        "at": call.at if call.at is not None else to_micros(datetime.now(UTC)),
        "amount": call.amount, "account": call.account,
        "account_key": normalise_account(call.account) if call.account else None,
        "payee": call.payee, "payee_key": payee_key(call.payee), "allowed": d.allowed,
        "reason": d.reason, "fragility": d.fragility, "domains": list(d.domains),
        "aggregate": d.aggregate, "trace": trace}, read_only=False)


def evidence_fragility(graph: TenantGraph, target: str, account: str | None,
                       p: GatePolicy = GatePolicy()) -> tuple[int, tuple[str, ...]]:
    """How many trust domains that state ``account`` would have to fall to fake ``target``,
    and those domains (see ``rescind.core.evidence``). With no account named, every trust
    domain its cone draws on counts, but a user's or an agent's word never does."""
    nodes, domain_of = cone(graph, target)
    if target not in nodes:
        raise UnknownAction(f"unknown memory {target!r}")
    rules = graph.rules()
    if not account:  # no account named: every domain its cone draws on counts (as before)
        return weakest(target, nodes, domain_of, rules)[0], \
            tuple(cone_domains(nodes, domain_of, rules))
    sources = {g.source for n in nodes.values() for g in n.groundings}
    raw = graph.source_facts(sources)
    grounded = [m for m, n in nodes.items() if n.groundings]
    texts = {f["id"]: f.get("text") or "" for f in graph.memories(grounded)}
    seen, domain_of = evidence_cone(nodes, texts, account, {s: d for s, (d, _) in raw.items()},
                                    {s: k for s, (_, k) in raw.items()}, rules,
                                    p.trusted_kinds)
    frag, _witness = weakest(target, seen, domain_of, rules)
    return frag, tuple(cone_domains(seen, domain_of, rules))


def _same(field: str, asked: object, stored: object) -> bool:
    if field == "amount":
        return stored is not None and abs(float(asked) - float(stored)) < 0.005
    if field == "account":
        return stored is not None and normalise_account(str(asked)) == \
            normalise_account(str(stored))
    return stored is not None and str(asked).strip().casefold() == str(stored).strip().casefold()


# The former entry points, kept as thin names over ``judge`` for their callers.
def check(graph: TenantGraph, action: str, threshold: float = GATE_THRESHOLD,
          min_domains: int = GATE_MIN_DOMAINS) -> GateDecision:
    return judge(graph, GateCall(action), GatePolicy(threshold, min_domains))


def check_premises(graph: TenantGraph, action: str, premises: list[str], amount: float | None,
                   threshold: float = GATE_THRESHOLD, min_domains: int = GATE_MIN_DOMAINS,
                   account: str | None = None) -> GateDecision:
    return judge(graph, GateCall(action, tuple(premises), amount, account),
                 GatePolicy(threshold, min_domains))


_LOG_FIELDS = ("at", "action", "name", "amount", "account", "payee", "allowed", "reason",
               "fragility", "domains", "aggregate", "trace")


def decisions_log(graph: TenantGraph, action: str | None = None, limit: int = 100) -> list[dict]:
    """The gate's decisions, newest first (of one action, by id, when given)."""
    rows = graph.rows(q.GATE_LOG, {"action": action, "limit": limit})
    return [{**dict(zip(_LOG_FIELDS, r, strict=True)), "at": from_micros(r[0]).isoformat()}
            for r in rows]
