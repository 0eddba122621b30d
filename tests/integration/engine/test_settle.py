"""The writer reads what the gate reads after each batch it lands (``writes.settle``), so that
FalkorDB merges a relation's pending additions on the writer's time, not on the gate's, and
keeps it for the gate (``rescind.graph.gate_facts``)."""

from __future__ import annotations

from rescind.core.shapes import Mutation
from rescind.engine.writes import Pipeline, Write
from rescind.graph import gate_facts


def _reads(graph) -> int:
    """GRAPH.RO_QUERY commands the server has run so far."""
    stats = graph.conn.info("commandstats")
    return next((v["calls"] for k, v in stats.items() if k.lower() == "cmdstat_graph.ro_query"), 0)


def test_the_writer_reads_once_after_each_batch_it_lands(graph):
    """Three batches through a Pipeline that settles cost exactly three reads more than the
    same batches through one that does not (and one of the rules, changed by the source added
    before them), both land every write, and only the settled ones are kept for the gate."""
    graph.apply(Mutation(op="source", sources=[
        {"id": "portal", "kind": "portal", "name": "portal", "domain": "portal"}]),
        graph.revision())
    spent = {}
    for settle in (False, True):
        pipeline, before = Pipeline(settle=settle), _reads(graph)
        for i in range(3):
            mid = f"{settle}/o{i}"
            statuses = pipeline.record(graph, [Write(f"e:{mid}", mid, "observation",
                                                     f"fact {i} ({settle})", i + 1,
                                                     source="portal")])
            pipeline.flush()
            assert [s.status for s in statuses] == ["IN"]
        pipeline.close()
        spent[settle] = _reads(graph) - before
    assert spent[True] == spent[False] + 3 + 1
    assert len(graph.statuses([f"{s}/o{i}" for s in (False, True) for i in range(3)])) == 6
    for settle in (False, True):
        got = gate_facts.read(graph.conn, graph.tenant, [f"{settle}/o{i}" for i in range(3)])
        assert isinstance(got, gate_facts.Hit) is settle
