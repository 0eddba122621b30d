"""The gate's cone read against the real server: three levels a round trip, it finds exactly
what the hop-by-hop reads find, and the reads riding on its round trips come back in order."""

from __future__ import annotations

import random

from rescind.bench.generator import agent_like, plain_clusters
from rescind.core.shapes import Mutation
from rescind.engine.writes import Write, record, record_stream
from rescind.graph import queries as q
from rescind.graph.cone import ConeRead


def _load(graph) -> None:
    clusters = plain_clusters(500, size=50)
    graph.apply(Mutation(op="source", sources=[
        {"id": c.source, "kind": "portal", "name": c.source, "domain": c.source}
        for c in clusters]), graph.revision())
    record_stream(graph, agent_like(graph.tenant, clusters))
    # A chain deeper than one round trip, with a diamond in it and a withdrawn memory.
    chain = ["vendor0/o0"] + [f"chain{i}" for i in range(8)]
    record(graph, [Write(f"e:{m}", m, "belief", f"step {m}", 10 + i, premises=(chain[i],),
                         agent="ap") for i, m in enumerate(chain[1:])]
           + [Write("e2:chain5", "chain5", "belief", "step chain5", 20,
                    premises=("chain2", "vendor1/o0"), agent="ap")])
    graph.apply(Mutation(op="withdraw", updates=[
        {"id": "chain3", "props": {"withdrawn_by": ["w-test"]}}]), graph.revision())


def test_the_cone_holds_what_the_hop_by_hop_reads_hold(graph):
    """For memories of every kind and depth (up to eight levels, across round trips), the
    same memories, justifications, groundings and withdrawals as ``nodes(upstream(...))``."""
    _load(graph)
    ids = [r[0] for r in graph.rows("MATCH (m:Mem) RETURN m.id ORDER BY m.id")]
    for target in random.Random(3).sample(ids, 60) + ["chain7", "chain5", "vendor3/a0"]:
        cone = ConeRead(graph, [target]).finish()
        old = graph.nodes(graph.upstream(target))
        assert cone.nodes.keys() == old.keys(), target
        for mid, node in old.items():
            new = cone.nodes[mid]
            assert (new.kind, sorted(new.justifications), new.groundings, new.withdrawn_by) == \
                (node.kind, sorted(node.justifications), node.groundings, node.withdrawn_by), mid
        sources = {g.source for n in old.values() for g in n.groundings}
        assert cone.sources == graph.source_facts(sources)
    assert ConeRead(graph, ["chain7"]).finish().nodes["chain3"].withdrawn_by == ["w-test"]


def test_reads_riding_on_the_round_trips_come_back_in_order(graph):
    """Reads sent with the first round trip, and one added once it is back, are answered in
    the order they were given, whatever the depth of the cone."""
    _load(graph)
    read = ConeRead(graph, ["chain7", "no-such-memory"], [(q.REVISION, None),
                                                         (q.STATUSES, {"ids": ["chain7"]})])
    rev, statuses = read.first()
    assert rev == [[graph.revision()]] and statuses[0][0] == "chain7"
    assert "chain7" in read.cone.status and "no-such-memory" not in read.cone.status
    at = read.ride((q.MEMORY_TOTAL, None))
    cone = read.finish()
    assert read.rows[at][0][0] == graph.rows(q.MEMORY_TOTAL)[0][0]
    assert "vendor0/o0" in cone.nodes and "no-such-memory" not in cone.nodes
