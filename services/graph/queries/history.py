"""A memory's history: its birth (kept on the node) and its later changes (JSON lines on
CHANGED edges), for one memory, a list of them, or a page ("as of")."""

from __future__ import annotations

# A memory's later changes as JSON lines, in no order (their readers sort them by revision):
# those of its CHANGED edges, after those a graph written before them kept in a list on the
# STATUS edge.
_CHANGES = "coalesce(st.history, []) + [(m)-[:CHANGED]->(x:Change) | x.entry]"

# A memory's history: its birth (kept on the node) and every later change.
HISTORY = f"""
MATCH (m:Mem {{id: $id}})-[st:STATUS]->()
RETURN m.born_rev, m.born, m.born_cause, m.born_hops, m.at, {_CHANGES}
"""

# What "as of" reads: each memory's birth and its history of status changes.
HISTORIES = f"""
UNWIND $ids AS id
MATCH (m:Mem {{id: id}})-[st:STATUS]->()
RETURN m.id, m.born_rev, m.born, m.born_cause, m.born_hops, m.at, {_CHANGES}
"""

HISTORY_PAGE = f"""
MATCH (m:Mem)-[st:STATUS]->()
WHERE $kind IS NULL OR m.kind = $kind
RETURN m.id, m.kind, m.text, m.names, m.born_rev, m.born, m.born_cause, m.born_hops, m.at,
       {_CHANGES}, m.amount, m.executed, m.agent, m.payee, m.account, m.currency
ORDER BY m.at, m.id
SKIP $skip LIMIT $limit
"""
