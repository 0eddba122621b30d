"""Lineage for identifiers in the graph (``rescind.core.lineage``), read: which observations of
the tenant state an identifier, and the texts of the premises a write names (its statements in
``rescind.graph.queries.lineage``).

FalkorDB cannot index the elements of a list, so each canonical identifier an observation
states is a node, ``(:Ident {uid})``, linked to every observation that states it by a STATES
edge, written in the same guarded batch as the observation (``LINK``, part of
``queries.writes.WRITE_BATCH``). Its ``uid`` is a digest of the identifier's key
(``rescind.graph.keys.uid``): an identifier is a string from outside, never looked up as such.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rescind.core import lineage
from rescind.core.belief import Status
from rescind.graph.keys import uid
from rescind.graph.queries.lineage import IDENT_LABEL as LABEL
from rescind.graph.queries.lineage import LINK, STATING, TEXTS


def ident_uid(key: str) -> str:
    return uid(LABEL, key)


def read(graph, writes: Sequence, kinds: Iterable[str], ahead=None
         ) -> tuple[lineage.Facts, dict[str, Status]]:
    """What lineage needs to plan ``writes`` (planning.Write) on ``graph``, with the statuses of
    the observations found; ``ahead`` (planning.Ahead): a batch still in flight, whose
    observations and texts are not in the graph yet."""
    kinds = tuple(kinds)
    keys, premises = lineage.wanted(writes, kinds)
    facts, statuses = lineage.Facts(kinds), {}
    if not keys:
        return facts, statuses
    by_uid = {ident_uid(k): k for k in keys}
    texts, stating = graph.many((TEXTS, {"ids": sorted(premises)}),
                                (STATING, {"uids": sorted(by_uid)}))
    facts.texts = {mid: text or "" for mid, text in texts}
    for u, mid, status, cause, hops in stating:
        facts.stating.setdefault(by_uid[u], []).append(mid)
        statuses[mid] = Status(status, cause, hops)
    if ahead is not None:
        facts.texts.update({p: ahead.texts[p] for p in premises if p in ahead.texts})
        for k in keys:
            for mid in ahead.idents.get(k, ()):
                if mid not in facts.stating.setdefault(k, []):
                    facts.stating[k].append(mid)
        statuses.update({m: ahead.known[m] for ms in facts.stating.values() for m in ms
                         if m in ahead.known})
    return facts, statuses


__all__ = ["LABEL", "LINK", "STATING", "TEXTS", "ident_uid", "read"]
