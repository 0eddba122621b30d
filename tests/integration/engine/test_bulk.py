"""Bulk loading with record_stream (each batch planned while the previous one is written) ends
in exactly the graph that batch-by-batch record() makes, also when the plan ahead cannot hold."""

from __future__ import annotations

import threading

import pytest
import redis

from rescind.bench.generator import Cluster, agent_like
from rescind.core.shapes import Mutation
from rescind.engine import retraction as ret
from rescind.engine.writes import Write, record, record_stream
from rescind.graph.store import TenantGraph, connect


def _load(g: TenantGraph, mode: str, batch: int) -> None:
    clusters = [Cluster(f"v{i}", 60) for i in range(12)]
    g.apply(Mutation(op="source", sources=[{"id": c.source, "kind": "p", "name": c.source,
                                            "domain": c.source} for c in clusters]), g.revision())
    writes = [w for ws in agent_like(g.tenant, clusters) for w in ws]
    batches = [writes[i:i + batch] for i in range(0, len(writes), batch)]
    # A retraction in the middle: later writes resting on v3 are born OUT.
    half = len(batches) // 2
    if mode == "record":
        for b in batches[:half]:
            record(g, b)
    else:
        record_stream(g, batches[:half])
    ret.run(g, ret.Retract("r-v3", "v3", reason="test"))
    if mode == "record":
        for b in batches[half:]:
            record(g, b)
    else:
        record_stream(g, batches[half:])


def _state(g: TenantGraph) -> tuple:
    mems = sorted(g.rows("MATCH (m:Mem)-[st:STATUS]->() RETURN m.id, st.status, st.cause, st.hops"))
    justs = sorted(g.rows("MATCH (p:Mem)-[:PREMISE_OF]->(j:Justification)-[:JUSTIFIES]->(m:Mem) "
                          "RETURN j.id, p.id, m.id"))
    said = sorted(g.rows("MATCH (s:Source)-[e:SAID]->(m:Mem) RETURN e.id, s.id, m.id"))
    return mems, justs, said


def test_record_stream_makes_the_same_graph_as_record(falkordb, tenant_name):
    """Same memories, statuses (causes and hops included), justifications and groundings,
    with batches of 37 writes spanning clusters and a retraction between two loads."""
    a = TenantGraph(connect(falkordb), f"{tenant_name}-a")
    b = TenantGraph(connect(falkordb), f"{tenant_name}-b")
    _load(a, "record", 37)
    _load(b, "stream", 37)
    try:
        sa, sb = _state(a), _state(b)
        assert sa[0] and sa == sb
        assert any(s == "OUT" for _, s, _, _ in sa[0])
    finally:
        a.delete()
        b.delete()


def test_a_revived_memory_and_a_duplicate_event_are_planned_on_the_graph(graph):
    """A batch that brings an OUT memory back IN (a region walk) is not planned ahead; an event
    repeated in the next batch is applied once."""
    graph.apply(Mutation(op="source", sources=[{"id": s, "kind": "p", "name": s, "domain": s}
                                               for s in ("s1", "s2")]), graph.revision())
    record(graph, [Write("o1", "o1", "observation", "one", 1, source="s1"),
                   Write("b1", "b1", "belief", "note", 2, premises=("o1",))])
    ret.run(graph, ret.Retract("r1", "s1", reason="t"))
    first = [Write("o2", "o2", "observation", "two", 3, source="s2")]
    second = [Write("b1-again", "b1", "belief", "note", 4, premises=("o2",)),
              Write("o2", "o2", "observation", "two", 3, source="s2")]
    record_stream(graph, [first, second])
    assert graph.statuses(["b1"])["b1"].status == "IN"
    assert graph.rows("MATCH (:Source)-[e:SAID]->(:Mem {id: 'o2'}) RETURN count(e)") == [[1]]


def test_a_concurrent_writer_makes_the_plan_ahead_stale_and_nothing_is_lost(graph, monkeypatch):
    """Another writer between two batches: the batch planned ahead is refused by its revision
    guard and redone; every write lands exactly once."""
    from rescind.engine import writes as w

    redone = []
    plain = w.record

    def counting(g, writes, moved=None):
        if writes and writes[0].event_id.startswith("o"):
            redone.append(len(writes))
        return plain(g, writes, moved)

    monkeypatch.setattr(w, "record", counting)
    graph.apply(Mutation(op="source", sources=[{"id": "s", "kind": "p", "name": "s",
                                                "domain": "s"}]), graph.revision())
    batches = [[Write(f"o{b}-{i}", f"o{b}-{i}", "observation", f"fact {b} {i}", b * 100 + i,
                      source="s") for i in range(50)] for b in range(20)]
    stop = threading.Event()

    def other() -> None:
        i = 0
        while not stop.is_set():
            record(graph, [Write(f"x{i}", f"x{i}", "observation", f"other {i}", 10_000 + i,
                                 source="s")])
            i += 1

    t = threading.Thread(target=other)
    t.start()
    try:
        record_stream(graph, batches)
    finally:
        stop.set()
        t.join()
    rows = graph.rows("MATCH (:Source)-[e:SAID]->(m:Mem) WHERE m.id STARTS WITH 'o' "
                      "RETURN count(e), count(DISTINCT m)")
    assert rows == [[1000, 1000]]
    assert redone  # the race really happened: at least one batch was redone


def _observations(prefix: str, n: int) -> list[Write]:
    return [Write(f"{prefix}{i}", f"{prefix}{i}", "observation", f"{prefix} fact {i}", i,
                  source="s") for i in range(n)]


def _count(g: TenantGraph, prefix: str) -> int:
    return g.rows("MATCH (m:Mem) WHERE m.id STARTS WITH $p RETURN count(m)", {"p": prefix})[0][0]


def test_the_pipeline_keeps_a_batch_until_the_next_and_follows_each_only_once_it_landed(graph):
    """What the writer worker relies on: a planned batch is not sent until the next arrives
    (or a flush); what follows a batch runs after its writes are in the graph, in order."""
    from rescind.engine.writes import Pipeline

    graph.apply(Mutation(op="source", sources=[{"id": "s", "kind": "p", "name": "s",
                                                "domain": "s"}]), graph.revision())
    seen: list[tuple[str, int]] = []
    pipeline = Pipeline()
    try:
        pipeline.record(graph, _observations("a", 300))
        pipeline.then(lambda: seen.append(("a", _count(graph, "a"))), seen.append)
        assert _count(graph, "a") == 0  # kept: nothing follows it yet
        pipeline.record(graph, _observations("b", 300))
        pipeline.then(lambda: seen.append(("b", _count(graph, "b"))), seen.append)
        assert _count(graph, "b") == 0
        pipeline.flush()
    finally:
        pipeline.close()
    assert seen == [("a", 300), ("b", 300)]
    pipeline.then(lambda: seen.append(("nothing in flight", 0)), seen.append)
    assert seen[-1] == ("nothing in flight", 0)


def test_a_batch_the_server_cannot_take_is_reported_to_what_follows_it(tmp_path):
    """The server goes away between planning and sending: the batch's follower is told why
    (the worker then holds its events for retry), nothing is said to have landed, and a bulk
    load raises instead of returning."""
    from rescind.engine.writes import Pipeline
    from rescind.runtime.server import EmbeddedFalkorDB, free_port

    server = EmbeddedFalkorDB(port=free_port()).start()
    g = TenantGraph(connect(server.url), "gone")
    g.apply(Mutation(op="source", sources=[{"id": "s", "kind": "p", "name": "s",
                                            "domain": "s"}]), g.revision())
    landed, failed = [], []
    pipeline = Pipeline()
    pipeline.record(g, _observations("a", 50))
    pipeline.then(lambda: landed.append(True), failed.append)
    server.stop()
    pipeline.close()
    assert landed == [] and len(failed) == 1
    assert isinstance(failed[0], redis.ConnectionError)
    with pytest.raises(redis.ConnectionError):
        record_stream(g, [_observations("b", 10)])


def _observations(prefix: str, n: int) -> list[Write]:
    return [Write(f"{prefix}{i}", f"{prefix}{i}", "observation", f"{prefix} says {i}", i,
                  source="s") for i in range(n)]


def _resting_on(prefix: str, under: str, n: int) -> list[Write]:
    return [Write(f"{prefix}{i}", f"{prefix}{i}", "belief", f"{prefix} from {under}{i}", 10 + i,
                  premises=(f"{under}{i}",)) for i in range(n)]


def test_a_batch_that_could_not_be_sent_is_not_planned_upon(graph, monkeypatch):
    """When sending the kept batch fails, the next one is planned on the graph as it is, not
    on top of the batch that never went out: its writes are refused for their missing
    premises, instead of landing with no premise edges (which a retraction could not reach)."""
    from rescind.engine.writes import Pipeline, UnknownPremise

    graph.apply(Mutation(op="source", sources=[
        {"id": "s", "kind": "p", "name": "s", "domain": "s"}]), graph.revision())
    pipeline, outcomes = Pipeline(), []
    pipeline.record(graph, _observations("a", 3))
    pipeline.then(lambda: outcomes.append("a landed"), lambda e: outcomes.append("a failed"))
    pipeline.record(graph, _observations("b", 3))
    pipeline.then(lambda: outcomes.append("b landed"), lambda e: outcomes.append("b failed"))
    send_batch, calls = graph.send_batch, []

    def away_once(prepared, rev):
        calls.append(rev)
        if len(calls) == 1:
            raise redis.ConnectionError("the server went away while sending")
        return send_batch(prepared, rev)

    monkeypatch.setattr(graph, "send_batch", away_once)
    with pytest.raises(UnknownPremise):  # b0..b2 were never written
        pipeline.record(graph, _resting_on("c", "b", 3))
    pipeline.close()
    assert outcomes == ["a landed", "b failed"]
    assert graph.rows("MATCH (m:Mem) WHERE m.id STARTS WITH 'b' OR m.id STARTS WITH 'c' "
                      "RETURN count(m)") == [[0]]
    # Resent, b lands, and c then rests on it with one premise edge each.
    record(graph, _observations("b", 3))
    record(graph, _resting_on("c", "b", 3))
    assert graph.rows("MATCH (:Mem)-[:PREMISE_OF]->(:Justification)-[:JUSTIFIES]->(m:Mem) "
                      "WHERE m.id STARTS WITH 'c' RETURN count(m)") == [[3]]


def test_a_bulk_load_raises_the_error_of_the_batch_that_failed_first(graph, monkeypatch):
    """A batch that cannot be sent makes the batches resting on it unplannable; the load
    raises the first batch's error, not the consequence."""
    graph.apply(Mutation(op="source", sources=[
        {"id": "s", "kind": "p", "name": "s", "domain": "s"}]), graph.revision())
    send_batch, calls = graph.send_batch, []

    def refuse_first(prepared, rev):
        calls.append(rev)
        if len(calls) == 1:
            raise RuntimeError("the first batch could not be sent")
        return send_batch(prepared, rev)

    monkeypatch.setattr(graph, "send_batch", refuse_first)
    layers = [_observations("a", 3), _resting_on("b", "a", 3), _resting_on("c", "b", 3),
              _resting_on("d", "c", 3)]
    with pytest.raises(RuntimeError, match="first batch could not be sent"):
        record_stream(graph, layers)
