"""Lineage through the writer's pipeline (rescind.engine.writes.Pipeline): a note planned on
top of a batch still waiting to be sent finds the observations of that batch that state its
identifier, and later notes find them through the graph's identifier index."""

from __future__ import annotations

from rescind.contract.events import memory_id
from rescind.core.shapes import Mutation
from rescind.engine.writes import Pipeline, Write
from rescind.graph import queries as q

ATTACKER = "DE89 3704 0044 0532 0130 00"


def _rules(graph, mid: str) -> list[tuple[str, list[str]]]:
    return sorted((r, sorted(p)) for _, r, p in graph.rows(q.JUSTIFICATION_RULES, {"ids": [mid]}))


def test_a_note_planned_on_a_batch_in_flight_rests_on_its_observation(graph):
    """The portal's observation is in one batch, the laundered note in the next, planned while
    the first is being sent: the note rests on the message and the portal (rule lineage); a
    third batch's note finds the portal through the index."""
    t = graph.tenant
    graph.apply(Mutation(op="source", sources=[
        {"id": s, "kind": "tool", "name": s, "domain": s} for s in ("portal", "user")]),
        graph.revision())
    portal = memory_id(t, "observation", f"Bank account: {ATTACKER}")
    said = memory_id(t, "observation", "Pay INV-7")
    pipeline = Pipeline()
    try:
        pipeline.record(graph, [Write("o1", portal, "observation", f"Bank account: {ATTACKER}",
                                      1, source="portal"),
                                Write("o2", said, "observation", "Pay INV-7", 2,
                                      source="user")])
        pipeline.record(graph, [Write("w1", "n1", "belief", f"Acme at {ATTACKER}", 3,
                                      premises=(said,), rule="turn-context")])
        pipeline.flush()
        pipeline.record(graph, [Write("w2", "n2", "answer", f"Acme banks at {ATTACKER}", 4,
                                      premises=(said,), rule="matched")])
    finally:
        pipeline.close()
    assert _rules(graph, "n1") == [("lineage", sorted([portal, said]))]
    assert _rules(graph, "n2") == [("lineage", sorted([portal, said]))]
