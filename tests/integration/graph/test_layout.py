"""Statuses live on each memory's STATUS edge (queries.LAYOUT 2): a graph written before, with
statuses on the memories, is moved once when it is opened, and behaves as if written now."""

from __future__ import annotations

from rescind.engine import retraction as ret
from rescind.graph import queries as q
from rescind.graph.store import TenantGraph, connect

# Layout 1 as earlier versions wrote it: statuses and history on the nodes, no layout mark.
OLD_GRAPH = """
CREATE (g:Meta {key: 'meta'})-[:REV {n: 1}]->(g)
CREATE (s:Source {id: 'portal:acme', kind: 'portal', name: 'portal:acme', domain: 'portal:acme'})
CREATE (o:Mem {id: 'o1', kind: 'observation', text: 'Acme account 1', at: 1, status: 'IN',
               born: 'IN', born_rev: 1, grounded: true, names: ['o1']})
CREATE (b:Mem {id: 'b1', kind: 'belief', text: 'pay Acme to account 1', at: 2, status: 'IN',
               born: 'IN', born_rev: 1, names: ['b1'], history: ['{"rev": 1}']})
CREATE (s)-[:SAID {id: 'o1~g', at: 1}]->(o)
CREATE (o)-[:PREMISE_OF]->(:Justification {id: 'j1', at: 2, rule: 'context'})-[:JUSTIFIES]->(b)
"""


def test_a_graph_with_statuses_on_its_memories_is_moved_once(falkordb, tenant_name):
    conn = connect(falkordb)
    key = TenantGraph(conn, tenant_name).key
    conn.execute_command("GRAPH.QUERY", key, OLD_GRAPH)
    old = conn.execute_command("GRAPH.RO_QUERY", key, "MATCH ()-[e:REV]->() "
                               "OPTIONAL MATCH ()-[st:STATUS]->() RETURN e.layout, count(st)")
    assert old[1] == [[None, 0]]  # the old layout: no mark, no STATUS edge

    graph = TenantGraph(conn, tenant_name)
    assert graph.statuses(["o1", "b1"]) == {m: (s, None, None) for m, s in
                                            (("o1", "IN"), ("b1", "IN"))}
    assert graph.rows("MATCH (m:Mem) WHERE m.status IS NOT NULL RETURN count(m)") == [[0]]
    assert graph.rows("MATCH (:Mem {id: 'b1'})-[st:STATUS]->() RETURN st.history") == [
        [['{"rev": 1}']]]
    assert graph.rows("MATCH ()-[e:REV]->() RETURN e.layout") == [[q.LAYOUT]]

    result = ret.run(graph, ret.Retract("r1", "portal:acme", reason="hacked"))
    assert sum(result.blast_radius.counts.values()) == 2
    assert graph.statuses(["b1"])["b1"].status == "OUT"

    again = TenantGraph(conn, tenant_name)  # opened again: nothing left to move
    assert again.rows("MATCH (m:Mem) WHERE NOT (m)-[:STATUS]->() RETURN count(m)") == [[0]]
    assert again.rows("MATCH ()-[st:STATUS]->() RETURN count(st)") == [[2]]
    graph.delete()
