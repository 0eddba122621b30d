"""The payment gate: asked before an action tool runs, and by `gate` lines of a scenario."""

from __future__ import annotations

from rescind.contract.errors import NotFound
from rescind.contract.layout import GATE_MIN_DOMAINS, GATE_THRESHOLD
from rescind.core.belief import Node
from rescind.core.fragility import cone_domains, weakest
from rescind.core.shapes import GateDecision
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


def check(graph: TenantGraph, action: str, threshold: float = GATE_THRESHOLD,
          min_domains: int = GATE_MIN_DOMAINS) -> GateDecision:
    facts = graph.actions_in([action])
    if not facts:
        raise UnknownAction(f"unknown action {action!r}")
    props = facts[0]
    frag, domains = fragility_of(graph, action)
    amount = props.get("amount")
    if props.get("status") != "IN":
        reason = f"blocked: the action is OUT (cause {props.get('cause')})"
        return GateDecision(action, False, reason, frag, domains)
    if amount is not None and amount > threshold and frag < min_domains:
        reason = (f"blocked: {amount:,.2f} is above {threshold:,.0f} and rests on "
                  f"{frag} trust domain(s) that could fake it; {min_domains} needed")
        return GateDecision(action, False, reason, frag, domains)
    return GateDecision(action, True, f"allowed: fragility {frag}", frag, domains)


def check_premises(graph: TenantGraph, action: str, premises: list[str], amount: float | None,
                   threshold: float = GATE_THRESHOLD, min_domains: int = GATE_MIN_DOMAINS
                   ) -> GateDecision:
    """The gate for an action not yet in the graph: it would rest on ``premises`` together.

    Its one justification needs every premise, so it falls as soon as any premise falls:
    its fragility is the smallest fragility among them (0 when one is missing or OUT).
    """
    known = graph.statuses(premises)
    missing = [p for p in premises if p not in known]
    if missing:
        return GateDecision(action, False, f"blocked: unknown premise(s) {', '.join(missing)}", 0)
    out = [p for p in premises if not known[p].is_in]
    if out:
        return GateDecision(action, False, f"blocked: it rests on OUT memory {out[0]} (cause "
                                           f"{known[out[0]].cause})", 0)
    frag, domains = min((fragility_of(graph, p) for p in premises), key=lambda fd: fd[0])
    if amount is not None and amount > threshold and frag < min_domains:
        return GateDecision(action, False, f"blocked: {amount:,.2f} is above {threshold:,.0f} "
                            f"and rests on {frag} trust domain(s) that could fake it; "
                            f"{min_domains} needed", frag, domains)
    return GateDecision(action, True, f"allowed: fragility {frag}", frag, domains)
