"""The graph's layout: its indexes and unique constraints, its revision (the guard of every
write) and the migrations of graphs written under an older layout."""

from __future__ import annotations

# Schema: created on first use of a tenant's graph; the unique constraints need the indexes.
# Each label's indexed properties; a constrained or looked-up property that could hold a name
# from outside is a ``uid`` (rescind.graph.keys: FalkorDB crashes on some such values under a
# unique constraint, and its index strips their white space). Mem ids are Rescind's digests
# and stay indexed for the walk; a Source is found by its uid only.
INDEXES = {
    "Mem": ("id", "kind", "uid"),
    "Source": ("uid",),
    "Justification": ("uid",),
    "Outbox": ("id",),
    "Gate": ("account_key", "payee_key", "at"),
    "Ident": ("uid",),  # an identifier observations state (queries.lineage)
}
UNIQUE = [("Mem", "uid"), ("Source", "uid"), ("Justification", "uid")]
# Graphs of layout 2 had these constraints on names from outside: dropped by the migration.
OLD_UNIQUE = [("Mem", "id"), ("Source", "id"), ("Justification", "id")]


def create_index(label: str, props: tuple[str, ...]) -> str:
    """The statement indexing ``props`` of ``label`` (adds to an index the label has)."""
    return f"CREATE INDEX FOR (n:{label}) ON ({', '.join('n.' + p for p in props)})"

# What changes after a write lives on edges, never on nodes: in FalkorDB 4.16 the first SET of
# any node property after any node was created syncs the whole graph (40 to 60 ms at a million
# memories, paid by whichever write comes next: under live writes, every retraction), while
# edge properties are set at no such cost. So the revision and the retraction records are
# edges of one Meta node, and a memory's status, cause, hops and history are on its STATUS
# self-loop (found from the memory by node id or index; a lookup by edge id scans every edge).
LAYOUT = 3  # 2: statuses on STATUS edges (1 is moved once: MIGRATE_STATUS); 3: uids (MIGRATE_UIDS)

INIT_META = """
MERGE (g:Meta {key: 'meta'})
MERGE (g)-[e:REV]->(g) ON CREATE SET e.n = 0, e.layout = $layout
RETURN e.n, e.layout
"""

# A graph of layout 1 had statuses on the memories: each gets its STATUS edge, in pages.
MIGRATE_STATUS = """
MATCH (m:Mem) WHERE NOT (m)-[:STATUS]->()
WITH m LIMIT $page
CREATE (m)-[:STATUS {status: m.status, cause: m.cause, hops: m.hops, history: m.history}]->(m)
SET m.status = null, m.cause = null, m.hops = null, m.history = null
RETURN count(m)
"""

# A graph of layout 2 had no uids: each node of a constrained label gets one, in pages (the
# digests are computed by the caller: Cypher has no hash function).
UIDLESS = "MATCH (n:{label}) WHERE n.uid IS NULL RETURN ID(n), n.id LIMIT $page"
SET_UIDS = "UNWIND $rows AS r MATCH (n) WHERE ID(n) = r[0] SET n.uid = r[1]"

SET_LAYOUT = "MATCH (:Meta {key: 'meta'})-[e:REV]->() SET e.layout = $layout"

REVISION = "MATCH (:Meta {key: 'meta'})-[e:REV]->() RETURN e.n"

# Guard of every mutation: only if the graph is still at the revision it was computed at.
GUARD = """
MATCH (g:Meta {key: 'meta'})-[rev:REV]->() WHERE rev.n = $rev
SET rev.n = rev.n + 1
WITH g"""

