"""A tenant with data moves to another master of a local cluster while the agents write and the
workers apply (``rescind tenant move``): its memories, statuses, indexes and constraints are
the same on the new master, every event published before, during and after the move lands
(none dead-lettered), and a retraction published after the move is applied there."""

from __future__ import annotations

import json
import threading
import time

import pytest
from redis.cluster import key_slot
from typer.testing import CliRunner

from rescind.bench.generator import Cluster, agent_like
from rescind.cli.main import app
from rescind.contract import events as ev
from rescind.contract import layout
from rescind.contract.errors import Invalid
from rescind.core.shapes import Mutation
from rescind.engine import retraction as ret
from rescind.engine.writes import record_stream
from rescind.graph import tenants
from rescind.graph.store import TenantGraph, connect
from rescind.middleware.publisher import Publisher
from rescind.runtime import move
from rescind.runtime.cluster import EmbeddedCluster
from rescind.transport import connection
from rescind.workers.app import WorkerSettings, WorkerThread

AT = ev.from_micros(1_800_000_000_000_000)


def port_of(client) -> int:
    return client.connection_pool.connection_kwargs["port"]


def schema(graph: TenantGraph) -> tuple[list, list]:
    indexes = graph.rows("CALL db.indexes() YIELD label, properties, status "
                         "RETURN label, properties, status")
    constraints = graph.rows("CALL db.constraints()")
    return sorted(map(str, indexes)), sorted(map(str, constraints))


def everything(graph: TenantGraph) -> dict:
    """What must survive a move: memories with their statuses, justifications, the revision."""
    rows = graph.rows("MATCH (m:Mem)-[s:STATUS]->(m) RETURN m.id, s.status, s.cause")
    justifications = graph.rows("MATCH (j:Justification) RETURN count(j)")[0][0]
    return {"statuses": sorted(map(tuple, rows)), "justifications": justifications,
            "revision": graph.revision(), "schema": schema(graph)}


@pytest.fixture(scope="module")
def cluster():
    with EmbeddedCluster(3) as c:
        yield c


def loaded(conn, tenant: str, vendors: int = 20) -> TenantGraph:
    """A tenant with Rescind's real shape: sources, 100 memories a vendor written through the
    engine's batched writes, and a retraction (some memories OUT)."""
    tenants.create(conn, tenant, by="tests")
    graph = TenantGraph(conn, tenant)
    clusters = [Cluster(f"vendor{i}", 100) for i in range(vendors)]
    graph.apply(Mutation(op="source", sources=[{"id": c.source, "kind": "portal", "name": c.source,
                                                 "domain": c.source} for c in clusters]),
                graph.revision())
    record_stream(graph, agent_like(tenant, clusters))
    ret.run(graph, ret.Retract("before-move", "vendor3", reason="tests"))
    return graph


def _until_more_than(graph: TenantGraph, n: int, timeout: float = 60) -> int:
    """Waits until the tenant's graph holds more than ``n`` memories; their number then."""
    deadline = time.monotonic() + timeout
    while (count := graph.rows("MATCH (m:Mem) RETURN count(m)")[0][0]) <= n:
        assert time.monotonic() < deadline, f"{count} memories, never more than {n}"
        time.sleep(0.05)
    return count


def test_a_tenant_moves_with_its_graph_while_the_workers_apply_its_events(cluster, tmp_path):
    conn = connect(cluster.url)
    # Its graph and its events stream on different masters; the target holds neither.
    t = next(f"mv-{i}" for i in range(1000)
             if port_of(connection.node_for(conn, layout.graph_key(f"mv-{i}")))
             != port_of(connection.node_for(conn, layout.tenant_stream(f"mv-{i}"))))
    graph = loaded(conn, t)
    before = everything(graph)
    assert len(before["statuses"]) == 2_000 and any(s == "OUT" for _, s, _ in before["statuses"])
    source = port_of(graph.conn)
    target = next(n.port for n in cluster.nodes if n.port != source)
    pub = Publisher(cluster.url, spool_dir=tmp_path / "spool", tenant=t)
    published, stop = [], threading.Event()

    def agent() -> None:
        i = 0
        while not stop.is_set():
            text = f"reading {i}"
            pub.publish(ev.ObservationRecorded(event_id=f"o{i}", tenant=t, at=AT, source="feed",
                                               text=text))
            pub.publish(ev.MemoryWritten(event_id=f"b{i}", tenant=t, at=AT, kind="belief",
                                         text=f"note on {i}", agent="ap",
                                         premises=[ev.memory_id(t, "observation", text)]))
            published.append(i)
            i += 1
            time.sleep(0.01)

    writer = threading.Thread(target=agent, daemon=True)
    settings = WorkerSettings(url=cluster.url, worker_id="move", reaper_idle_ms=2_000)
    try:
        with WorkerThread(settings, ("writer", "retraction", "reaper")):
            writer.start()
            landed = _until_more_than(graph, 2_000 + 20)  # writes land on the source master
            result = CliRunner().invoke(app, ["tenant", "move", t, "--to", f"127.0.0.1:{target}",
                                              "--url", cluster.url, "--by", "tests", "--json"])
            assert result.exit_code == 0, result.output
            report = json.loads(result.output)
            assert report["source"].endswith(f":{source}")
            assert report["graphs"] == [layout.graph_key(t)]
            _until_more_than(TenantGraph(connect(cluster.url), t), landed + 20)  # and on the
            # target, through the writer's new client
            stop.set()
            writer.join()
            pub.publish(ev.SourceCompromised(event_id="after", tenant=t, at=AT,
                                             retraction="after", source="feed", by="tests"))
            moved = TenantGraph(connect(cluster.url), t)
            expected = 2_000 + 2 * len(published)
            deadline, memories, out = time.monotonic() + 60, -1, -1
            while time.monotonic() < deadline and (memories, out) != (expected, 2 * len(published)):
                memories = moved.rows("MATCH (m:Mem) RETURN count(m)")[0][0]
                out = moved.rows("MATCH (m:Mem)-[s:STATUS]->(m) WHERE s.cause = 'after' "
                                 "RETURN count(m)")[0][0]
                time.sleep(0.2)
    finally:
        stop.set()
        pub.close()
    assert port_of(moved.conn) == target
    slot = key_slot(graph.key.encode())
    assert move.keys_in(graph.conn, slot, 10) == []  # nothing of the tenant left on the source
    assert memories == expected, f"{expected - memories} of {expected} memories missing"
    assert out == 2 * len(published)  # the retraction worker applied a decision on the target
    assert conn.xlen(layout.DEAD) == 0
    after = everything(moved)
    old = {m: (s, c) for m, s, c in before["statuses"]}
    now = {m: (s, c) for m, s, c in after["statuses"]}
    assert {m: now[m] for m in old} == old  # every memory there, with its status and cause
    assert after["schema"] == before["schema"]
    assert after["justifications"] >= before["justifications"] + len(published)
    # Rescind's own reads and decisions work on the new master.
    undone = ret.run(moved, ret.Retract("after-move", "vendor5", reason="tests"))
    assert sum(undone.blast_radius.counts.values()) > 0
    assert moved.statuses(["vendor5/o0"])["vendor5/o0"].status == "OUT"


def test_a_move_that_would_block_too_long_is_refused_and_changes_nothing(cluster):
    conn = connect(cluster.url)
    graph = loaded(conn, "too-big", vendors=5)
    source = port_of(graph.conn)
    target = next(n.port for n in cluster.nodes if n.port != source)
    with pytest.raises(move.TooBig, match="500 memories"):
        move.move_tenant(conn, "too-big", f"127.0.0.1:{target}", max_pause_s=0.001)
    assert port_of(connection.node_for(connect(cluster.url), graph.key)) == source
    # The slot is not left migrating: a new key of the tenant is made on the source, not
    # answered ASK.
    assert graph.conn.set(layout.lock_key("too-big", "probe"), "1", px=1000)
    assert graph.revision() > 0


def test_a_move_names_a_master_other_than_the_tenants(cluster):
    conn = connect(cluster.url)
    tenants.create(conn, "nowhere", by="tests")
    here = port_of(TenantGraph(conn, "nowhere").conn)
    with pytest.raises(Invalid, match="already"):
        move.move_tenant(conn, "nowhere", f"127.0.0.1:{here}")
    with pytest.raises(Invalid, match="not a master"):
        move.move_tenant(conn, "nowhere", "127.0.0.1:1")


def test_the_api_follows_a_tenant_to_its_new_master(cluster):
    """The API keeps a tenant's graph client between requests. After the tenant's slot moved,
    the first request may answer 503 (try again), never 500, and the next ones answer from the
    new master with the same memories; a decision made there lands there."""
    from tests.support.api import forget, make_story

    conn = connect(cluster.url)
    story = make_story(cluster.url, "api-moves")
    try:
        path = f"{story.base}/memories"
        before = story.client.get(path, headers=story.as_("viewer"))
        assert before.status_code == 200
        here = port_of(connection.node_for(conn, layout.graph_key(story.tenant)))
        target = next(n.port for n in cluster.nodes if n.port != here)
        move.move_tenant(conn, story.tenant, f"127.0.0.1:{target}")
        answers = [story.client.get(path, headers=story.as_("viewer")) for _ in range(3)]
        codes = [a.status_code for a in answers]
        assert codes in ([200, 200, 200], [503, 200, 200]), [a.text for a in answers]
        assert answers[-1].json() == before.json()
        preview = story.client.post(f"{story.base}/retractions/preview",
                                    json={"source": "portal:acme", "reason": "hacked"},
                                    headers=story.as_("security"))
        assert preview.status_code == 200, preview.text
        assert port_of(connection.node_for(connect(cluster.url),
                                           layout.graph_key(story.tenant))) == target
    finally:
        forget(cluster.url, story.tenant)
