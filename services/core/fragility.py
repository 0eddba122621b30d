"""Fragility: the least number of trust domains whose fall would leave a memory OUT.

Exact, by trying sets of domains in order of size over the memory's cone (everything it rests
on, up to the sources). Payment cones are small; the gate only needs sizes 0 and 1 to decide
"fewer than two", which is one fixpoint per domain.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations

from rescind.core.belief import Node, Rules, Status, Window, settle

# The trust domain of what a user types or an agent asserts on its own: not independent
# evidence, since whoever talks to the agent controls it. Fragility counts it as fallen already.
UNTRUSTED = "~untrusted"
UNTRUSTED_KINDS = ("user", "agent")
# The trust domain of a grounding that is no evidence for a payment's account (see
# ``rescind.core.evidence``): never lost, and never counted.
NEUTRAL = "~neutral"


def trust_domains(facts: Mapping[str, tuple[str, str]]) -> dict[str, str]:
    """Each source's trust domain as fragility counts it, from its (domain, kind): a user's or
    an agent's is UNTRUSTED (not independent evidence)."""
    return {s: UNTRUSTED if kind in UNTRUSTED_KINDS else d for s, (d, kind) in facts.items()}


def cone_domains(cone: Mapping[str, Node], domain_of: Mapping[str, str], rules: Rules) -> list[str]:
    """Trust domains of the sources whose groundings still count somewhere in the cone."""
    found = {
        domain_of.get(g.source, g.source)
        for node in cone.values()
        for g in node.groundings
        if rules.grounding_cause(g) is None
    }
    return sorted(found - {UNTRUSTED, NEUTRAL})


def falls_with(
    target: str, cone: Mapping[str, Node], domain_of: Mapping[str, str], rules: Rules, domains
) -> bool:
    """Would ``target`` be OUT if every source in ``domains`` were retracted for all time?"""
    return not statuses_without(cone, domain_of, rules, domains)[target].is_in


def statuses_without(cone: Mapping[str, Node], domain_of: Mapping[str, str], rules: Rules,
                     domains) -> dict[str, Status]:
    """The cone's statuses if every source in ``domains`` (and every UNTRUSTED one) were
    retracted for all time."""
    fallen = set(domains) | {UNTRUSTED}
    sources = {g.source for node in cone.values() for g in node.groundings}
    extra = [
        Window(id=f"~{s}", source=s, order=1 << 30)
        for s in sorted(sources)
        if domain_of.get(s, s) in fallen
    ]
    trial = Rules(windows=rules.windows + extra, corrections=rules.corrections,
                  withdrawal_order=rules.withdrawal_order)
    return settle(cone, {}, trial)


def fragility(
    target: str,
    cone: Mapping[str, Node],
    domain_of: Mapping[str, str],
    rules: Rules,
    at_most: int | None = None,
) -> int:
    """Exact fragility; with ``at_most`` the search stops there and returns ``at_most``.

    ``cone`` must hold ``target`` and everything upstream of it (closed under premises).
    """
    return weakest(target, cone, domain_of, rules, at_most)[0]


def weakest(
    target: str,
    cone: Mapping[str, Node],
    domain_of: Mapping[str, str],
    rules: Rules,
    at_most: int | None = None,
) -> tuple[int, tuple[str, ...]]:
    """Fragility and one smallest set of trust domains that would fake ``target`` (the first
    in sorted order); an empty set when it is OUT already."""
    if falls_with(target, cone, domain_of, rules, ()):
        return 0, ()
    domains = cone_domains(cone, domain_of, rules)
    limit = len(domains) if at_most is None else min(at_most, len(domains))
    for k in range(1, limit + 1):
        for combo in combinations(domains, k):
            if falls_with(target, cone, domain_of, rules, combo):
                return k, combo
    return limit, ()  # with every domain fallen nothing can stand, so only ``at_most`` gets here
