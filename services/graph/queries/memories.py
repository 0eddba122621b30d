"""Memories: their facts (the region's and the gate's columns), statuses, names, and the pages
and counts the operator surfaces list."""

from __future__ import annotations

from rescind.graph.cypher import Plain

# A memory's facts, in the column order Region reads them: its node id first (the walk's
# handle), flags as 1/null and the withdrawals as a count, so that every column is a string,
# an integer or null (see cypher.Plain). ``st`` is the memory's STATUS edge.
FACTS = ("ID(m), m.id, m.kind, st.status, st.cause, st.hops, size(m.withdrawn_by), "
         "toInteger(m.executed), toInteger(m.grounded)")

# Facts of ``ids`` (the seeds of a region).
MEMORIES = Plain(f"""
UNWIND $ids AS id
MATCH (m:Mem {{id: id}})-[st:STATUS]->()
RETURN {FACTS}
""")

# The withdrawals of ``ids`` (facts give only their count: lists cannot be read plain).
WITHDRAWALS_OF = """
UNWIND $ids AS id
MATCH (m:Mem {id: id})
RETURN m.id, m.withdrawn_by
"""

# A memory by the name its writer gave it (a scan: names are for people, not for hot paths).
MEMORY_NAMED = "MATCH (m:Mem) WHERE $name IN m.names RETURN m.id LIMIT 2"

# A memory's properties with its status (the STATUS edge's properties added to the node's).
MEMORY_FACTS = """
UNWIND $ids AS id
MATCH (m:Mem {id: id})-[st:STATUS]->()
RETURN properties(m) + properties(st)
"""

STATUSES = Plain("""
UNWIND $ids AS id
MATCH (m:Mem {id: id})-[st:STATUS]->()
RETURN m.id, st.status, st.cause, st.hops
""")

# A page of memories, filtered by kind, status and a case-insensitive text fragment (null: any).
# A scan with a filter: the console and assistants list pages, not whole graphs.
MEMORY_PAGE = """
MATCH (m:Mem)-[st:STATUS]->()
WHERE ($kind IS NULL OR m.kind = $kind) AND ($status IS NULL OR st.status = $status)
  AND ($text IS NULL OR toLower(m.text) CONTAINS $text)
RETURN m.id, m.kind, m.text, st.status, st.cause, st.hops, m.at, m.names, m.agent, m.amount,
       m.payee, m.account, m.executed, m.currency
ORDER BY m.at, m.id
SKIP $skip LIMIT $limit
"""

MEMORY_COUNTS = "MATCH (m:Mem)-[st:STATUS]->() RETURN m.kind, st.status, count(m)"

MEMORY_TOTAL = "MATCH (m:Mem) RETURN count(m)"

# The latest plan whose text names ``needle`` (an invoice id): the demo's fragility tool. A scan,
# for a demo-sized tenant.
LATEST_PLAN_NAMING = """
MATCH (m:Mem {kind: 'plan'}) WHERE m.text CONTAINS $needle
RETURN m.id ORDER BY m.at DESC LIMIT 1
"""
