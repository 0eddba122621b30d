"""The gate rows of `rescind bench engine` with the writer's (and the graph server's) CPU lowered."""

from __future__ import annotations

import os

import redis

from rescind.bench import gate as gate_bench
from rescind.bench.generator import agent_like, plain_clusters
from rescind.core.shapes import Mutation
from rescind.engine.writes import record_stream
from rescind.runtime import priority
from rescind.runtime.server import EmbeddedFalkorDB


def test_the_writer_and_the_graph_server_run_lowered_and_the_server_is_put_back(graph,
                                                                                falkordb):
    """Measured with ``writer_nice`` and ``server_nice``, the writer process runs at the one and
    the graph's server at the other while the asks are timed; the server has its niceness back
    afterwards, and the gate (this process) was never lowered."""
    clusters = plain_clusters(1_000)
    graph.apply(Mutation(op="source", sources=[
        {"id": c.source, "kind": "portal", "name": c.source, "domain": c.source}
        for c in clusters]), graph.revision())
    record_stream(graph, agent_like(graph.tenant, clusters))
    server = redis.Redis.from_url(falkordb).info("server")["process_id"]
    before, ours = priority.nice_of(server), os.getpriority(os.PRIO_PROCESS, 0)
    with EmbeddedFalkorDB() as side:
        result = gate_bench.measure(falkordb, graph, len(clusters), samples=5, rate=300,
                                    state_url=side.url, writer_nice=7, server_nice=5)

    assert result["writer_nice_seen"] == 7 and result["graph_server_nice_seen"] == 5
    assert result["all_allowed_on_two_domains"] and result["writes_per_s"] > 0
    assert {priority.nice_of(t) for t in priority.threads(server)} == {before}
    assert os.getpriority(os.PRIO_PROCESS, 0) == ours
