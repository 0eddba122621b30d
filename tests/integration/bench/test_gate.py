"""The gate rows of `rescind bench engine`: what is timed is what the gate worker does."""

from __future__ import annotations

from rescind.bench import gate as gate_bench
from rescind.bench.generator import agent_like, plain_clusters
from rescind.core.shapes import Mutation
from rescind.engine.gate import decisions_log
from rescind.engine.writes import record_stream
from rescind.graph import queries as q


def test_every_timed_ask_is_judged_and_recorded_while_the_live_writes_land(graph, falkordb):
    """Both kinds of ask are allowed on two trust domains and each decision is in the graph's
    log (one per ask, quiet and live blocks alike), while the writer process's justified
    writes land in the same graph."""
    clusters = plain_clusters(1_000)
    graph.apply(Mutation(op="source", sources=[
        {"id": c.source, "kind": "portal", "name": c.source, "domain": c.source}
        for c in clusters]), graph.revision())
    record_stream(graph, agent_like(graph.tenant, clusters))
    before = graph.rows(q.MEMORY_TOTAL)[0][0]

    result = gate_bench.measure(falkordb, graph, len(clusters), samples=5, rate=300)

    assert result["all_allowed_on_two_domains"] and result["payments"] == 5
    for key in ("new_live", "new_quiet", "release_live", "release_quiet", "ping_live", "ping_quiet"):
        timed = result[key]
        assert timed["runs"] == 5 and 0 < timed["median_ms"] <= timed["p99_ms"] <= timed["max_ms"]
    asked = 2 * gate_bench.BLOCK * 2  # a quiet and a live block, a new and a release each time
    # (the PINGs beside them record nothing)
    log = decisions_log(graph, limit=10 * asked)
    assert len(log) == asked and all(d["allowed"] and d["fragility"] == 2 for d in log)
    # Seven writes a payment (its support and its stored proposal), then the live load's own.
    assert result["writes_per_s"] > 0
    assert graph.rows(q.MEMORY_TOTAL)[0][0] > before + 7 * 5
