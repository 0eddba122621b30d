"""Retractions: the records kept as RETRACTION edges of the Meta node (the rules in force are
the committed ones) and what a window of a source covers."""

from __future__ import annotations

from rescind.graph.cypher import Plain
from rescind.graph.queries.memories import FACTS

ACTIVE_RETRACTIONS = """
MATCH (:Meta {key: 'meta'})-[r:RETRACTION]->()
WHERE r.state = 'committed'
RETURN r.id, r.kind, r.source, r.start, r.end, r.order
"""

RETRACTION = "MATCH (:Meta {key: 'meta'})-[r:RETRACTION]->() WHERE r.id = $id RETURN properties(r)"

# Memories a source grounded inside a window (both ends included; null is open), with facts.
WINDOW_SEEDS = Plain(f"""
MATCH (:Source {{uid: $source_uid}})-[g:SAID]->(m:Mem)
WHERE ($start IS NULL OR g.at >= $start) AND ($end IS NULL OR g.at <= $end)
WITH DISTINCT m
MATCH (m)-[st:STATUS]->()
RETURN {FACTS}
""")

# Every retraction record, without the stored result (which may be large).
RETRACTIONS = """
MATCH (:Meta {key: 'meta'})-[r:RETRACTION]->()
RETURN r.id, r.kind, r.state, r.source, r.start, r.end, r.memory, r.new_memory, r.reason, r.by,
       r.at, r.reinstated_by, r.reinstated_at, r.order
ORDER BY r.order
"""
