"""The Cypher client against the real server: plain replies arrive decoded, reads sent ahead
are read back in order, and a refused read leaves its connection clean for the next query."""

from __future__ import annotations

import pytest

from rescind.core.shapes import Mutation
from rescind.graph.cypher import CypherError, Plain, query, send_reads, text_client
from rescind.graph.store import connect
from rescind.transport.connection import node_for

AWKWARD = ["it's \"quoted\" \\ back\\slash", "line one\nline two", "Счёт 供应商 مورد 🚀"]


@pytest.fixture
def conn(falkordb, tenant_name):
    c = connect(falkordb)
    key = f"rescind:{tenant_name}"
    query(c, key, "UNWIND range(0, 2) AS i CREATE (:T {i: i, text: $texts[i]})",
          {"texts": AWKWARD})
    yield c, key
    c.execute_command("GRAPH.DELETE", key)


def test_plain_rows_come_back_as_python_values(conn):
    c, key = conn
    rows = query(c, key, Plain("MATCH (t:T) RETURN t.i, t.text, t.missing ORDER BY t.i"),
                 read_only=True).rows
    assert rows == [[i, text, None] for i, text in enumerate(AWKWARD)]
    # The same rows read through the compact reply agree cell for cell.
    compact = query(c, key, "MATCH (t:T) RETURN t.i, t.text, t.missing ORDER BY t.i",
                    read_only=True).rows
    assert compact == rows
    # One decoding twin per client (on a cluster, per master), reused.
    node = node_for(c, key)
    assert text_client(node) is text_client(node)


def test_reads_sent_ahead_come_back_in_order(conn):
    c, key = conn
    first = send_reads(c, key, [(Plain("MATCH (t:T) WHERE t.i = $i RETURN t.text"), {"i": 2}),
                                (Plain("MATCH (t:T) RETURN count(t)"), None)])
    second = send_reads(c, key, [(Plain("MATCH (t:T) WHERE t.i = 0 RETURN t.text"), None)])
    assert second.result().rows == [[AWKWARD[0]]]
    assert [r.rows for r in first.results()] == [[[AWKWARD[2]]], [[3]]]


def test_a_refused_read_is_reported_and_its_connection_stays_usable(conn):
    c, key = conn
    sent = send_reads(c, key, [(Plain("MATCH (t:T) RETURN t.i +"), None),
                               (Plain("RETURN 'second'"), None)])
    with pytest.raises(CypherError, match="in: MATCH"):
        sent.results()
    # The second reply was read too: nothing is left on the connection for the next query.
    assert not sent.connection.can_read()
    assert query(c, key, Plain("MATCH (t:T) RETURN count(t)"), read_only=True).rows == [[3]]


def test_plain_and_compact_reads_are_not_sent_together(conn):
    c, key = conn
    with pytest.raises(ValueError, match="different connections"):
        send_reads(c, key, [(Plain("RETURN 1"), None), ("RETURN 2", None)])


def test_a_walk_that_fails_midway_leaves_no_connection_checked_out(graph, monkeypatch):
    """The region walk keeps reads in flight on connections of their own; when it stops on an
    error, it reads what is pending and gives every connection back."""
    from rescind.engine.writes import Write, record
    from rescind.graph import region

    graph.apply(Mutation(op="source", sources=[
        {"id": "s", "kind": "portal", "name": "s", "domain": "s"}]), graph.revision())
    record(graph, [Write("e0", "o", "observation", "seen", 1, source="s"),
                   Write("e1", "b", "belief", "thought", 2, premises=("o",)),
                   Write("e2", "c", "belief", "concluded", 3, premises=("b",))])
    assert set(graph.region(["o"]).nodes) == {"o", "b", "c"}

    add_facts = region._add_facts

    def fail_on_the_second_hop(reg, rows, depth):
        if depth == 2:
            raise RuntimeError("stopped mid-walk")
        return add_facts(reg, rows, depth)

    monkeypatch.setattr(region, "_add_facts", fail_on_the_second_hop)
    with pytest.raises(RuntimeError, match="mid-walk"):
        graph.region(["o"])
    pool = text_client(graph.conn).connection_pool
    assert not pool._in_use_connections
    assert not any(c.can_read() for c in pool._available_connections)
