"""Every Cypher statement Rescind runs, named and parameterised (the recalls' in recall_queries).
Nothing here formats user data.

FalkorDB 4.16 notes that shape these queries:
- no ``EXISTS {}``/``COUNT {}`` subqueries and no ``datetime()``: times are epoch microseconds;
- a variable-length ``*`` match enumerates paths, so regions are walked one hop at a time;
- an UNWIND over an empty list ends the query's rows, so optional writes use FOREACH;
- FOREACH cannot MATCH, so a write that must find existing nodes MERGEs on their indexed id.
"""

from rescind.graph.cypher import Plain
from rescind.graph.lineage_queries import LINK as _LINK_IDENTS

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
    "Ident": ("uid",),  # an identifier observations state (graph.lineage_queries)
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
_GUARD = """
MATCH (g:Meta {key: 'meta'})-[rev:REV]->() WHERE rev.n = $rev
SET rev.n = rev.n + 1
WITH g"""

# A memory's facts, in the column order Region reads them: its node id first (the walk's
# handle), flags as 1/null and the withdrawals as a count, so that every column is a string,
# an integer or null (see cypher.Plain). ``st`` is the memory's STATUS edge.
_FACTS = ("ID(m), m.id, m.kind, st.status, st.cause, st.hops, size(m.withdrawn_by), "
          "toInteger(m.executed), toInteger(m.grounded)")

# Properties a node may be created with. New nodes get every property inline in CREATE: a SET
# on a node created earlier in the same query costs a sync proportional to the whole graph
# (about 50 ms at a million memories), while inline properties cost nothing extra.
MEM_FIELDS = ("id", "kind", "text", "at", "agent", "run", "names", "born", "born_rev",
              "born_cause", "born_hops", "grounded", "amount", "currency", "payee", "account",
              "reference", "executed", "executed_at", "seq", "key", "withdrawn_by", "trace",
              "replaced", "ungrounded")
MEM_CREATE_FIELDS = (*MEM_FIELDS, "uid")  # the uid is added by the graph layer (keys.keyed)
STATUS_FIELDS = ("status", "cause", "hops")
RETRACTION_FIELDS = ("id", "kind", "state", "order", "reason", "by", "at", "source", "start",
                     "end", "memory", "new_memory", "text", "result")


def _inline(var: str, fields: tuple[str, ...]) -> str:
    return "{" + ", ".join(f"{f}: {var}.{f}" for f in fields) + "}"


# One atomic mutation, guarded by the revision it was computed at. Every list may be empty,
# hence FOREACH for the optional parts; status changes of existing memories come last in an
# UNWIND by node id (grouped by what they set: core.changes.status_changes). Each group's line
# of history (a JSON string) is one :Change node, and each memory it changed gets a CHANGED
# edge to it. Kept as a list on the STATUS edge, the history was copied at every append: a
# 10k-memory commit went from 40 to 80 ms as each memory's history grew to 24 lines, where the
# edges cost the same at any length (a node per memory and change doubled it).
APPLY = _GUARD + f"""
FOREACH (s IN $sources |
  MERGE (:Source {{uid: s.uid, id: s.id, kind: s.kind, name: s.name, domain: s.domain}}))
FOREACH (m IN $mems |
  CREATE (n:Mem {_inline("m", MEM_CREATE_FIELDS)})
  CREATE (n)-[:STATUS {_inline("m", STATUS_FIELDS)}]->(n))
FOREACH (u IN $updates | MERGE (n:Mem {{uid: u.uid, id: u.id}}) SET n += u.props)
FOREACH (x IN $groundings |
  MERGE (s:Source {{uid: x.suid, id: x.source}}) MERGE (m:Mem {{uid: x.muid, id: x.mem}})
  CREATE (s)-[:SAID {{id: x.id, at: x.at, via: x.via}}]->(m))
FOREACH (r IN $retractions | CREATE (g)-[:RETRACTION {_inline("r", RETRACTION_FIELDS)}]->(g))
FOREACH (r IN $retraction_updates |
  MERGE (g)-[n:RETRACTION {{id: r.id}}]->(g) SET n += r.props)
FOREACH (x IN $supersedes |
  MERGE (a:Mem {{uid: x.nuid, id: x.new}}) MERGE (b:Mem {{uid: x.ouid, id: x.old}})
  MERGE (a)-[:SUPERSEDES {{by: x.by}}]->(b))
FOREACH (o IN $outbox |
  CREATE (:Outbox {{id: o.id, action: o.action, by: o.by, at: o.at, payload: o.payload,
                   sent: false}}))
WITH g
UNWIND $changes AS c
CREATE (x:Change {{entry: c.entry}})
WITH c, x
UNWIND c.ids AS i
MATCH (m)-[st:STATUS]->() WHERE ID(m) = i
SET st.status = c.status, st.cause = c.cause, st.hops = c.hops
CREATE (m)-[:CHANGED]->(x)
"""

# Justified writes in bulk, guarded by the revision they were computed at. New memories arrive
# with their status decided; the justification rows run in order after the memories exist.
WRITE_BATCH = _GUARD + f"""
FOREACH (u IN $updates | MERGE (n:Mem {{uid: u.uid, id: u.id}}) SET n += u.props)
FOREACH (c IN $changes | CREATE (x:Change {{entry: c.entry}}) FOREACH (id IN c.ids |
  MERGE (n:Mem {{id: id}}) MERGE (n)-[st:STATUS]->(n)
  SET st.status = c.status, st.cause = c.cause, st.hops = c.hops
  CREATE (n)-[:CHANGED]->(x)))
FOREACH (m IN $new |
  CREATE (n:Mem {_inline("m", MEM_CREATE_FIELDS)})
  CREATE (n)-[:STATUS {_inline("m", STATUS_FIELDS)}]->(n))
FOREACH (x IN $groundings |
  MERGE (s:Source {{uid: x.suid, id: x.source}}) MERGE (m:Mem {{uid: x.muid, id: x.mem}})
  CREATE (s)-[:SAID {{id: x.id, at: x.at}}]->(m)){_LINK_IDENTS}
WITH g
UNWIND $justifications AS j
MATCH (m:Mem {{id: j.mem}})
CREATE (jn:Justification {{uid: j.uid, id: j.id, at: j.at, agent: j.agent, run: j.run,
                          rule: j.rule}})
CREATE (jn)-[:JUSTIFIES]->(m)
WITH jn, j
UNWIND j.premises AS pid
MATCH (p:Mem {{id: pid}})
CREATE (p)-[:PREMISE_OF]->(jn)
"""

# Facts of ``ids`` (the seeds of a region).
MEMORIES = Plain(f"""
UNWIND $ids AS id
MATCH (m:Mem {{id: id}})-[st:STATUS]->()
RETURN {_FACTS}
""")

# The withdrawals of ``ids`` (facts give only their count: lists cannot be read plain).
WITHDRAWALS_OF = """
UNWIND $ids AS id
MATCH (m:Mem {id: id})
RETURN m.id, m.withdrawn_by
"""

# The region walk goes by node id (a seek: half the cost of an index lookup by ``id``).
# Its patterns leave the middle and far nodes unlabelled: the edge types already fix them,
# and a label check per row cost a quarter of the query.

# One hop downstream of a frontier, with the facts of every memory found.
DOWNSTREAM_BY_NODE = Plain(f"""
UNWIND $ids AS i
MATCH (f) WHERE ID(f) = i
MATCH (f)-[:PREMISE_OF]->()-[:JUSTIFIES]->(m)
WITH DISTINCT m
MATCH (m)-[st:STATUS]->()
RETURN {_FACTS}
""")

# Every justification of the memories ``ids``: one row per premise, all node ids.
PREMISES_BY_NODE = Plain("""
UNWIND $ids AS i
MATCH (m) WHERE ID(m) = i
MATCH (p)-[:PREMISE_OF]->(j)-[:JUSTIFIES]->(m)
RETURN i, ID(j), ID(p)
""")

GROUNDINGS_BY_NODE = Plain("""
UNWIND $ids AS i
MATCH (m) WHERE ID(m) = i
MATCH (s:Source)-[g:SAID]->(m)
RETURN i, s.id, g.at, g.via
""")

STATUSES_BY_NODE = Plain("""
UNWIND $ids AS i
MATCH (m)-[st:STATUS]->() WHERE ID(m) = i
RETURN i, m.id, st.status, st.cause, st.hops
""")

# Every justification of ``ids`` by memory id: one row per premise (ID(j) groups them).
JUSTIFICATIONS_OF = """
UNWIND $ids AS id
MATCH (p:Mem)-[:PREMISE_OF]->(j:Justification)-[:JUSTIFIES]->(:Mem {id: id})
RETURN id, ID(j), p.id
"""

# How each justification of ``ids`` was chosen (its rule), with its premises: explain shows it.
# One row per justification (grouped by ``j``, not by its rule: two alternatives chosen by the
# same rule are two rows).
JUSTIFICATION_RULES = """
UNWIND $ids AS id
MATCH (p:Mem)-[:PREMISE_OF]->(j:Justification)-[:JUSTIFIES]->(:Mem {id: id})
WITH id, j, collect(p.id) AS premises
RETURN id, j.rule, premises
"""

# A memory's cone as the gate reads it (rescind.graph.cone), five levels upstream of ``ids`` in
# one statement (a payment's cone in one round trip): each level is collected DISTINCT before
# the next is matched (a variable-length match enumerates paths), and an empty level stands as
# [null] so that the row, and the levels found, survive. One statement, not one per level:
# under a stream of writes, each statement that traverses pays again for the pending additions
# of every matrix it reads (about 1 ms at a million memories). For each memory: its facts,
# withdrawals and (where a source grounds it) its text; its premises as [justification node id,
# premise id]; its groundings as [source, at, via, the source's trust domain and kind]. A list
# holding nulls stands for no premise or no grounding. Premises and justifications go
# unlabelled, as in the region walk: a label check on the premise cost 0.7 ms a query there.
def _cone(depth: int) -> str:
    steps, kept = ["UNWIND $ids AS id MATCH (x0:Mem {id: id}) WITH collect(DISTINCT x0) AS l0"], "l0"
    for k in range(1, depth):
        steps.append(f"UNWIND CASE WHEN size(l{k - 1}) = 0 THEN [null] ELSE l{k - 1} END AS a{k} "
                     f"OPTIONAL MATCH (x{k})-[:PREMISE_OF]->()-[:JUSTIFIES]->(a{k}) "
                     f"WITH {kept}, collect(DISTINCT x{k}) AS l{k}")
        kept += f", l{k}"
    return "\n".join(steps) + f"""
UNWIND {kept.replace(", ", " + ")} AS x
WITH DISTINCT x
MATCH (x)-[st:STATUS]->()
OPTIONAL MATCH (p)-[:PREMISE_OF]->(j)-[:JUSTIFIES]->(x)
WITH x, st, collect([ID(j), p.id]) AS premises
OPTIONAL MATCH (s:Source)-[g:SAID]->(x) WHERE x.grounded
RETURN x.id, x.kind, st.status, st.cause, st.hops, x.withdrawn_by,
       CASE WHEN x.grounded THEN x.text END, premises,
       collect([s.id, g.at, g.via, s.domain, s.kind])
"""


CONE = _cone(5)

# One hop upstream of a frontier: the premises of any justification of ``ids``.
UPSTREAM_STEP = Plain("""
UNWIND $ids AS id
MATCH (p:Mem)-[:PREMISE_OF]->(:Justification)-[:JUSTIFIES]->(:Mem {id: id})
RETURN DISTINCT p.id
""")

# A memory by the name its writer gave it (a scan: names are for people, not for hot paths).
MEMORY_NAMED = "MATCH (m:Mem) WHERE $name IN m.names RETURN m.id LIMIT 2"
# A store key's current version: the one not superseded, else the latest (a scan, as above).
MEMORY_KEYED = """
MATCH (m:Mem) WHERE m.key = $key
RETURN m.id ORDER BY CASE WHEN 'superseded' IN coalesce(m.withdrawn_by, []) THEN 1 ELSE 0 END,
       m.born_rev DESC LIMIT 1"""

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

EXISTING_JUSTIFICATIONS = Plain("""
UNWIND $uids AS u
MATCH (j:Justification {uid: u})
RETURN j.id
""")

# Found from the memory's side: an edge property lookup would scan every SAID edge.
EXISTING_GROUNDINGS = Plain("""
UNWIND $rows AS r
MATCH (:Source)-[g:SAID]->(:Mem {id: r.mem})
WHERE g.id = r.id
RETURN g.id
""")

SOURCES = "MATCH (s:Source) RETURN s.id, s.kind, s.name, s.domain ORDER BY s.id"

SOURCE = "MATCH (s:Source {uid: $uid}) RETURN s.id, s.kind, s.name, s.domain"

# When each source was read: its first and last observation times (SAID edges) and how many
# memories it said. A scan of the sources' SAID edges, for the console's source list.
SOURCE_READS = """
MATCH (s:Source)-[r:SAID]->(m:Mem)
RETURN s.id, min(r.at), max(r.at), count(DISTINCT m)
"""

DOMAINS_OF = """
UNWIND $uids AS u
MATCH (s:Source {uid: u})
RETURN s.id, s.domain, s.kind
"""

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
RETURN {_FACTS}
""")

ACTIONS_IN = """
UNWIND $ids AS id
MATCH (m:Mem {id: id, kind: 'action'})-[st:STATUS]->()
RETURN properties(m) + properties(st)
"""

ACTIONS = """
MATCH (m:Mem {kind: 'action'})-[st:STATUS]->()
RETURN properties(m) + properties(st)
"""

# A memory's later changes as JSON lines, in no order (their readers sort them by revision):
# those of its CHANGED edges, after those a graph written before them kept in a list on the
# STATUS edge.
_CHANGES = "coalesce(st.history, []) + [(m)-[:CHANGED]->(x:Change) | x.entry]"

# A memory's history: its birth (kept on the node) and every later change.
HISTORY = f"""
MATCH (m:Mem {{id: $id}})-[st:STATUS]->()
RETURN m.born_rev, m.born, m.born_cause, m.born_hops, m.at, {_CHANGES}
"""

# -- the operator surfaces (services/api, services/mcp_server) ---------------------------------
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

# Every grounding of a page of memories: which source said each (the product view's links).
SOURCES_OF = """
UNWIND $ids AS id
MATCH (s:Source)-[:SAID]->(:Mem {id: id})
RETURN DISTINCT s.id, id
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

# Every retraction record, without the stored result (which may be large).
RETRACTIONS = """
MATCH (:Meta {key: 'meta'})-[r:RETRACTION]->()
RETURN r.id, r.kind, r.state, r.source, r.start, r.end, r.memory, r.new_memory, r.reason, r.by,
       r.at, r.reinstated_by, r.reinstated_at, r.order
ORDER BY r.order
"""
