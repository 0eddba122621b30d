"""Evidence for a payment: which sources state the account it pays, so that only they count.

A payment's fragility is the number of trust domains that would have to fall to fake it. A
domain only holds a payment up if one of its sources states the payment's account in what it
said: an observation that does not contain the account (a contract naming another bank), and
anything a user or an agent says, can be faked for free, so they are counted as fallen already.
Pure: the engine reads the cone and the observations' texts around it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from schwifty import IBAN
from schwifty.exceptions import SchwiftyException

from rescind.core.belief import Grounding, Node, Rules
from rescind.core.fragility import UNTRUSTED, UNTRUSTED_KINDS


def normalise_account(account: str) -> str:
    """An IBAN in its compact form (checked by schwifty, the maintained IBAN library); any
    other account number as its letters and digits, upper-cased."""
    try:
        return IBAN(account).compact
    except (SchwiftyException, ValueError):
        return "".join(ch for ch in account.upper() if ch.isalnum())


def states(text: str, account: str) -> bool:
    """Whether ``text`` states ``account`` (both compared by their letters and digits)."""
    return bool(account) and account in "".join(ch for ch in text.upper() if ch.isalnum())


def evidence_cone(cone: Mapping[str, Node], texts: Mapping[str, str], account: str | None,
                  domain_of: Mapping[str, str], kind_of: Mapping[str, str], rules: Rules,
                  trusted_kinds: Collection[str] | None = None
                  ) -> tuple[dict[str, Node], dict[str, str]]:
    """The cone and domains that fragility should see: a valid grounding counts only if its
    source is of a trusted kind (default: any but a user's or an agent's) and the memory it
    grounds states ``account``; any other valid grounding is given to an UNTRUSTED source
    (fallen before anything is retracted). Retracted groundings stay as they are."""
    key = normalise_account(account) if account else ""
    domains = dict(domain_of)
    out: dict[str, Node] = {}
    for mid, node in cone.items():
        if not node.groundings:
            out[mid] = node
            continue
        stated = states(texts.get(mid, ""), key)
        grounds = []
        for g in node.groundings:
            kind = kind_of.get(g.source, "")
            trusted = kind not in UNTRUSTED_KINDS if trusted_kinds is None \
                else kind in trusted_kinds
            if (stated and trusted) or rules.grounding_cause(g) is not None:
                grounds.append(g)
            else:
                fake = f"~untrusted:{g.source}"
                domains[fake] = UNTRUSTED
                grounds.append(Grounding(fake, g.at, g.via))
        out[mid] = Node(node.id, node.kind, node.justifications, grounds, node.withdrawn_by)
    return out, domains
