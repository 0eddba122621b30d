"""A real tenant graph copied into an ``InMemoryGraph``, by plain Cypher over its nodes and
edges: tests/integration/graph/test_reads.py asks both the same named reads."""

from __future__ import annotations

from rescind.graph.in_memory import InMemoryGraph
from rescind.graph.store import TenantGraph

MEMS = """
MATCH (m:Mem)-[st:STATUS]->()
RETURN properties(m) + properties(st), [(m)-[:CHANGED]->(x:Change) | x.entry]
"""
SOURCES = "MATCH (s:Source) RETURN s.id, s.kind, s.name, s.domain"
SAID = "MATCH (s:Source)-[g:SAID]->(m:Mem) RETURN s.id, m.id, g.at, g.via"
JUSTIFICATIONS = """
MATCH (j:Justification)-[:JUSTIFIES]->(m:Mem)
OPTIONAL MATCH (p:Mem)-[:PREMISE_OF]->(j)
RETURN j.id, j.rule, m.id, collect(p.id)
"""
RETRACTIONS = "MATCH (:Meta {key: 'meta'})-[r:RETRACTION]->() RETURN properties(r)"
OUTBOX = "MATCH (o:Outbox) RETURN o.id, o.action, o.by, o.at, o.sent"


def snapshot(graph: TenantGraph) -> InMemoryGraph:
    """Everything the named reads read of ``graph``, in memory."""
    mem = InMemoryGraph(tenant=graph.tenant, rev=graph.revision())
    for props, lines in graph.rows(MEMS):
        old = props.get("history") or []  # a graph written before CHANGED edges kept a list
        mem.mems[props["id"]] = props
        mem.lines[props["id"]] = [*old, *lines]
    for sid, kind, name, domain in graph.rows(SOURCES):
        mem.source_nodes[sid] = {"id": sid, "kind": kind, "name": name, "domain": domain}
    mem.said = [{"source": s, "mem": m, "at": at, "via": via}
                for s, m, at, via in graph.rows(SAID)]
    for jid, rule, m, premises in graph.rows(JUSTIFICATIONS):
        mem.justify(m, premises, rule)
        mem.justifications[-1].id = jid
    mem.retractions = {r["id"]: r for [r] in graph.rows(RETRACTIONS)}
    mem.outbox_entries = {o: {"id": o, "action": a, "by": by, "at": at, "sent": sent}
                          for o, a, by, at, sent in graph.rows(OUTBOX)}
    return mem
