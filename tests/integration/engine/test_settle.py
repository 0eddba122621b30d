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


def test_a_bulk_load_reads_once_a_batch_keeps_nothing_and_the_gate_reads_the_graph(graph):
    """``record_stream`` (a bulk load) reads one memory after each batch, to set FalkorDB's
    merges going, and keeps no fact for the gate; the gate then reads those memories from the
    graph, judges them as it would, and keeps what it read."""
    from rescind.engine import gate
    from rescind.engine.writes import record_stream

    graph.apply(Mutation(op="source", sources=[
        {"id": "portal", "kind": "portal", "name": "portal", "domain": "portal"}]),
        graph.revision())
    says = "to GB82 WEST 1234 5698 7654 32"
    batches = [[Write(f"e:b{b}/o{i}", f"b{b}/o{i}", "observation", f"pay {b}.{i} {says}",
                      b * 10 + i + 1, source="portal") for i in range(4)] for b in range(3)]
    from rescind.graph import queries as gq

    asked, rows = [], graph.rows
    graph.rows = lambda q, params=None, **kw: (  # noqa: E731 (a spy on the reads of FACTS)
        asked.append(params["ids"]) if q == gq.GATE_FACTS else None, rows(q, params, **kw))[1]
    assert record_stream(graph, iter(batches)) == 12
    assert asked == [["b0/o3"], ["b1/o3"], ["b2/o3"]]
    del graph.rows
    ids = [w.mem_id for ws in batches for w in ws]
    assert not isinstance(gate_facts.read(graph.conn, graph.tenant, ids), gate_facts.Hit)
    d = gate.judge(graph, gate.GateCall("pay", premises=("b2/o3",), amount=50.0,
                                   account="GB82WEST12345698765432"))
    assert d.allowed and d.fragility == 1
    assert isinstance(gate_facts.read(graph.conn, graph.tenant, ["b2/o3"]), gate_facts.Hit)
