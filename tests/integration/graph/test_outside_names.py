"""Names from outside (source names, event ids, store keys) never reach FalkorDB's unique
constraints or its index lookups as they are: each constrained label is kept unique and found by
a digest (rescind.graph.keys), so the spellings that crash FalkorDB 4.16.3 (#1340: a unique
string with a leading or trailing space; #2440: one over 4,096 bytes) are stored, found and
told apart like any other."""

from __future__ import annotations

import time

import pytest
import redis

from rescind.contract.events import memory_id
from rescind.core.planning import Write
from rescind.engine import retraction as ret
from rescind.engine.writes import record
from rescind.graph import queries as q
from rescind.graph.store import TenantGraph, connect
from rescind.runtime.server import EmbeddedFalkorDB

T0 = 1_700_000_000_000_000
# Every spelling a model or an attacker may send: FalkorDB's index strips the white space at the
# ends (so the first four were one key to it), and cannot find the long one at all.
NAMES = ["portal:northwind", "portal:northwind ", " portal:northwind", "portal:northwind\t",
         "portal:northwind\u00a0", "portal:northwind\u200b", "portal:ｎｏｒｔｈｗｉｎｄ",
         "portal:" + "n" * 5000, "portal:" + "n" * 5000 + " "]


def _raw(server: EmbeddedFalkorDB) -> redis.Redis:
    return redis.Redis.from_url(server.url, socket_timeout=10)


def test_falkordb_itself_dies_on_a_unique_name_with_a_trailing_space():
    """The raw reproduction (FalkorDB #1340, no Rescind code): a unique constraint on a
    property holding outside names, and a second name with a trailing space, kill the server.
    When this fails, the FalkorDB in use has fixed it: the digests stay right regardless."""
    with EmbeddedFalkorDB() as server:
        conn = _raw(server)
        conn.execute_command("GRAPH.QUERY", "raw", "CREATE INDEX FOR (s:Source) ON (s.id)")
        conn.execute_command("GRAPH.CONSTRAINT", "CREATE", "raw", "UNIQUE", "NODE", "Source",
                             "PROPERTIES", "1", "id")
        deadline = time.monotonic() + 10
        while conn.execute_command("GRAPH.QUERY", "raw", "CALL db.constraints()")[1][0][-1] \
                != b"OPERATIONAL" and time.monotonic() < deadline:
            time.sleep(0.01)
        conn.execute_command("GRAPH.QUERY", "raw", "CREATE (:Source {id: 'portal:northwind'})")
        with pytest.raises(redis.ConnectionError):
            conn.execute_command("GRAPH.QUERY", "raw",
                                 "CREATE (:Source {id: 'portal:northwind '})")
        server.process.wait(timeout=10)
        assert server.process.returncode != 0
        assert "crashed by signal" in server.log_file.read_text(errors="replace")


def test_rescinds_writes_keep_every_spelling_apart_and_the_server_up():
    """Through Rescind's own write path, every spelling above (spaces at either end, a tab, a
    no-break and a zero-width space, full-width letters, 5,000 bytes) is its own source, found
    again by its exact name, and the server stays up."""
    with EmbeddedFalkorDB() as server:
        graph = TenantGraph(connect(server.url), "names")
        writes = [Write(f"e{i}", memory_id("names", "observation", f"note {i}"), "observation",
                        f"note {i}", T0 + i, source=name) for i, name in enumerate(NAMES)]
        # The same note under every name twice (a second run), and a belief on all of them.
        again = [Write(f"again{i}", memory_id("names", "observation", "same text"),
                       "observation", "same text", T0 + 100 + i, source=name)
                 for i, name in enumerate(NAMES)]
        belief = Write("b", memory_id("names", "belief", "pay"), "belief", "pay", T0 + 200,
                       premises=tuple(w.mem_id for w in writes))
        record(graph, writes + again + [belief])
        record(graph, writes + again + [belief])  # a redelivery: applied once

        assert server.process.poll() is None
        assert graph.rows("MATCH (s:Source) RETURN count(s)") == [[len(NAMES)]]
        assert graph.rows("MATCH (j:Justification) RETURN count(j)") == [[1]]
        for i, name in enumerate(NAMES):
            assert graph.source(name)["id"] == name
            assert set(graph.window_seeds(name, None, None)) == {writes[i].mem_id,
                                                                 again[0].mem_id}

        # A compromise of one spelling takes out what that spelling said, and no other's.
        ret.run(graph, ret.Retract("r1", "portal:northwind ", reason="hacked"))
        st = graph.statuses([w.mem_id for w in writes])
        assert [st[w.mem_id].status for w in writes] == [
            "OUT" if name == "portal:northwind " else "IN" for name in NAMES]
        assert server.process.poll() is None


def test_the_constraints_hold_digests_and_still_refuse_a_duplicate():
    """The unique constraints are on the uids, so a second node of one name is refused
    (the constraint still guards), while the names themselves are ordinary properties."""
    with EmbeddedFalkorDB() as server:
        graph = TenantGraph(connect(server.url), "uniq")
        graph.ensure_schema()
        constraints = graph.rows("CALL db.constraints() YIELD label, properties "
                                 "RETURN label, properties")
        assert sorted((label, tuple(props)) for label, props in constraints) == sorted(
            (label, (prop,)) for label, prop in q.UNIQUE)
        graph.rows("CREATE (:Source {uid: 'x', id: 'a'})", read_only=False)
        with pytest.raises(Exception, match="unique constraint"):
            graph.rows("CREATE (:Source {uid: 'x', id: 'a '})", read_only=False)
        assert server.process.poll() is None


# A graph as layout 2 wrote it: unique constraints on names from outside, no uids.
OLD = """
CREATE (g:Meta {key: 'meta'})-[:REV {n: 1, layout: 2}]->(g)
CREATE (s:Source {id: 'portal:acme', kind: 'portal', name: 'portal:acme', domain: 'portal:acme'})
CREATE (o:Mem {id: 'obs-1', kind: 'observation', text: 'Acme account 1', at: 1, born: 'IN',
               born_rev: 1, grounded: true, names: ['o1']})
CREATE (b:Mem {id: 'bel-1', kind: 'belief', text: 'pay Acme', at: 2, born: 'IN', born_rev: 1,
               names: ['b1']})
CREATE (o)-[:STATUS {status: 'IN'}]->(o)
CREATE (b)-[:STATUS {status: 'IN'}]->(b)
CREATE (s)-[:SAID {id: 'e1', at: 1}]->(o)
CREATE (o)-[:PREMISE_OF]->(:Justification {id: 'e2', at: 2, rule: 'declared'})-[:JUSTIFIES]->(b)
"""


def test_a_graph_with_constraints_on_names_is_migrated(falkordb, tenant_name):
    """A graph written with unique constraints on outside names (layout 2) is moved once when
    opened: its old constraints dropped, every node given its uid, its data unchanged; then a
    name with a trailing space is written beside the old one, and the server stays up."""
    conn = connect(falkordb)
    key = TenantGraph(conn, tenant_name).key
    TenantGraph(conn, tenant_name).delete()  # the tenant's fresh graph: made again the old way
    conn.execute_command("GRAPH.QUERY", key, "CREATE INDEX FOR (m:Mem) ON (m.id, m.kind)")
    conn.execute_command("GRAPH.QUERY", key, "CREATE INDEX FOR (s:Source) ON (s.id)")
    conn.execute_command("GRAPH.QUERY", key, "CREATE INDEX FOR (j:Justification) ON (j.id)")
    for label in ("Mem", "Source", "Justification"):
        conn.execute_command("GRAPH.CONSTRAINT", "CREATE", key, "UNIQUE", "NODE", label,
                             "PROPERTIES", "1", "id")
    conn.execute_command("GRAPH.QUERY", key, OLD)

    graph = TenantGraph(conn, tenant_name)
    graph.ensure_schema()
    assert graph.rows("MATCH ()-[e:REV]->() RETURN e.layout") == [[q.LAYOUT]]
    assert graph.rows("MATCH (n) WHERE (n:Mem OR n:Source OR n:Justification) AND n.uid IS NULL "
                      "RETURN count(n)") == [[0]]
    props = {tuple(p) for _, p in graph.rows("CALL db.constraints() YIELD label, properties "
                                             "RETURN label, properties")}
    assert props == {("uid",)}
    assert graph.source("portal:acme")["domain"] == "portal:acme"

    record(graph, [Write("e3", memory_id(tenant_name, "observation", "Acme account 2"),
                         "observation", "Acme account 2", 3, source="portal:acme "),
                   Write("e1", "obs-1", "observation", "Acme account 1", 1,
                         source="portal:acme")])  # e1: applied already
    assert graph.source("portal:acme ")["id"] == "portal:acme "
    assert graph.rows("MATCH (s:Source) RETURN count(s)") == [[2]]
    assert graph.rows("MATCH ()-[g:SAID]->() RETURN count(g)") == [[2]]

    ret.run(graph, ret.Retract("r1", "portal:acme", reason="hacked"))
    assert graph.statuses(["bel-1"])["bel-1"].status == "OUT"
    graph.delete()
