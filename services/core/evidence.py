"""Evidence for a payment: which sources vouch for the account it pays, so that only they count.

A payment's fragility is the number of trust domains that would have to fall to fake it. Only
evidence for the account counts: a grounding *counts* when its source is of a trusted kind
(default: any but a user's or an agent's) and the memory it grounds states the account (its
text contains the account's key, ``rescind.core.money.states``). Every other grounding is
*neutral*: a premise that says nothing about the account (the user's "pay INV-5", an invoice
from the ERP), or a user's or an agent's word, neither holds the payment up nor brings it down
(it stands, unless a retraction in force covers it, whatever domains are lost).

The payment stands, with a set of domains lost (every source of theirs retracted for all time),
when it is IN with every neutral grounding standing, and at least one *evidence* memory of its
cone (one that states the account and has a counted grounding) is IN on counted groundings
alone. Its fragility is the least number of domains whose loss leaves it not standing (0 when
it does not stand with none lost: no evidence for the account at all). Pure: the engine reads
the cone and the observations' texts around it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from itertools import combinations

from rescind.core.belief import Grounding, Node, Rules
from rescind.core.fragility import NEUTRAL, UNTRUSTED, UNTRUSTED_KINDS, statuses_without
from rescind.core.money import normalise_account, states

__all__ = ["Evidence", "account_evidence", "evidence_weakest", "normalise_account", "stands",
           "states"]


@dataclass(frozen=True)
class Evidence:
    """A cone as fragility sees it for one account. ``support``: every grounding that does not
    count given to a NEUTRAL source (never lost), to judge whether the payment is IN;
    ``strict``: the same groundings given to an UNTRUSTED source (lost already), to judge
    whether an evidence memory is IN on counted groundings alone; ``memories``: the evidence
    memories; ``domains``: the trust domains of the counted groundings."""

    support: dict[str, Node]
    strict: dict[str, Node]
    domain_of: dict[str, str]
    memories: frozenset[str]
    domains: tuple[str, ...]


def account_evidence(cone: Mapping[str, Node], texts: Mapping[str, str], account: str,
                     domain_of: Mapping[str, str], kind_of: Mapping[str, str], rules: Rules,
                     trusted_kinds: Collection[str] | None = None) -> Evidence:
    """The evidence for ``account`` in ``cone``: a valid grounding counts only if its source is
    of a trusted kind and the memory it grounds states the account (``texts``: what each
    grounded memory was first written with). Retracted groundings stay as they are."""
    key = normalise_account(account)
    domains = dict(domain_of)
    support: dict[str, Node] = {}
    strict: dict[str, Node] = {}
    memories: set[str] = set()
    counted: set[str] = set()
    for mid, node in cone.items():
        if not node.groundings:
            support[mid] = strict[mid] = node
            continue
        stated = states(texts.get(mid, ""), key)
        loose, tight = [], []
        for g in node.groundings:
            kind = kind_of.get(g.source, "")
            trusted = kind not in UNTRUSTED_KINDS if trusted_kinds is None \
                else kind in trusted_kinds
            if rules.grounding_cause(g) is not None:  # retracted: stays retracted
                loose.append(g)
                tight.append(g)
            elif stated and trusted:
                loose.append(g)
                tight.append(g)
                memories.add(mid)
                counted.add(domains.get(g.source, g.source))
            else:
                neutral, lost = f"{NEUTRAL}:{g.source}", f"{UNTRUSTED}:{g.source}"
                domains[neutral], domains[lost] = NEUTRAL, UNTRUSTED
                loose.append(Grounding(neutral, g.at, g.via))
                tight.append(Grounding(lost, g.at, g.via))
        support[mid] = Node(node.id, node.kind, node.justifications, loose, node.withdrawn_by)
        strict[mid] = Node(node.id, node.kind, node.justifications, tight, node.withdrawn_by)
    return Evidence(support, strict, domains, frozenset(memories), tuple(sorted(counted)))


def stands(target: str, e: Evidence, rules: Rules, lost: Collection[str] = ()) -> bool:
    """Whether ``target`` is IN, and some evidence memory IN on counted groundings alone, when
    every source of the ``lost`` domains is retracted for all time."""
    if not statuses_without(e.support, e.domain_of, rules, lost)[target].is_in:
        return False
    strict = statuses_without(e.strict, e.domain_of, rules, lost)
    return any(strict[m].is_in for m in e.memories)


def evidence_weakest(target: str, e: Evidence, rules: Rules
                     ) -> tuple[int, tuple[str, ...]]:
    """Fragility of ``target`` over the evidence for its account, and one smallest set of
    domains (the first in sorted order) whose loss leaves it not standing; 0 and no set when
    it does not stand now."""
    if not stands(target, e, rules):
        return 0, ()
    for k in range(1, len(e.domains) + 1):
        for combo in combinations(e.domains, k):
            if not stands(target, e, rules, combo):
                return k, combo
    return len(e.domains), ()  # every domain lost leaves no evidence: not reached
