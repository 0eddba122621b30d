"""The gate rows of `rescind bench engine` with the gate's state on a server of its own."""

from __future__ import annotations

import os

import redis

from rescind.bench import gate as gate_bench
from rescind.bench.generator import agent_like, plain_clusters
from rescind.contract import layout
from rescind.core.shapes import Mutation
from rescind.engine.writes import record_stream
from rescind.graph import gate_state
from rescind.runtime.server import EmbeddedFalkorDB


def _gate_keys(url: str, tenant: str) -> set[str]:
    return {k.decode().rsplit(":gate:", 1)[1] for k in redis.Redis.from_url(url).scan_iter(
        match=f"*{{{tenant}}}:gate:*")} - {"ready"}  # the gate log's mark: with the log


def _epoch(url: str, tenant: str) -> dict:
    return redis.Redis.from_url(url).hgetall(layout.gate_facts_epoch_key(tenant))


def test_with_a_state_url_the_timed_gate_keeps_its_state_there_and_nowhere_else(graph,
                                                                                 falkordb):
    """Measured with ``state_url``, the asks and the writer process keep the gate's facts and
    ledger on that server (none on the graph's), every ask is allowed on two domains, the
    result says where the state was, and the setting is as it was afterwards."""
    clusters = plain_clusters(1_000)
    graph.apply(Mutation(op="source", sources=[
        {"id": c.source, "kind": "portal", "name": c.source, "domain": c.source}
        for c in clusters]), graph.revision())
    record_stream(graph, agent_like(graph.tenant, clusters))
    before = os.environ.get(gate_state.ENV)
    beside = (_gate_keys(falkordb, graph.tenant), _epoch(falkordb, graph.tenant))
    with EmbeddedFalkorDB() as side:
        result = gate_bench.measure(falkordb, graph, len(clusters), samples=5, rate=300,
                                    state_url=side.url)
        there = _gate_keys(side.url, graph.tenant)

    assert result["gate_state"] == "own server" and result["all_allowed_on_two_domains"]
    assert result["cones_read_from_kept_facts"] > 0 and result["writes_per_s"] > 0
    assert {"facts", "epoch", "allowed"} <= there
    # what the graph's server held of the gate before (the sources' write) is all it holds
    assert (_gate_keys(falkordb, graph.tenant), _epoch(falkordb, graph.tenant)) == beside
    assert os.environ.get(gate_state.ENV) == before
