"""Every Cypher statement Rescind runs, named and parameterised. Nothing here formats user data.

FalkorDB 4.16 notes that shape these queries:
- no ``EXISTS {}``/``COUNT {}`` subqueries and no ``datetime()``: times are epoch microseconds;
- a variable-length ``*`` match enumerates paths, so regions are walked one hop at a time;
- an UNWIND over an empty list ends the query's rows, so optional writes use FOREACH.
"""

# Schema: created on first use of a tenant's graph; the unique constraints need the indexes.
INDEXES = {
    "Mem": "CREATE INDEX FOR (m:Mem) ON (m.id, m.kind)",
    "Source": "CREATE INDEX FOR (s:Source) ON (s.id)",
    "Justification": "CREATE INDEX FOR (j:Justification) ON (j.id)",
    "Retraction": "CREATE INDEX FOR (r:Retraction) ON (r.id, r.state)",
    "Change": "CREATE INDEX FOR (c:Change) ON (c.mem)",
}
UNIQUE = [("Mem", "id"), ("Source", "id"), ("Justification", "id"), ("Retraction", "id")]

INIT_META = "MERGE (g:Meta {key: 'meta'}) ON CREATE SET g.rev = 0 RETURN g.rev"

REVISION = "MATCH (g:Meta {key: 'meta'}) RETURN g.rev"

# One atomic mutation, guarded by the revision it was computed at. Every list may be empty,
# hence FOREACH for the optional parts; the status changes come last in an UNWIND.
APPLY = """
MATCH (g:Meta {key: 'meta'}) WHERE g.rev = $rev
SET g.rev = g.rev + 1
WITH g
FOREACH (s IN $sources |
  MERGE (n:Source {id: s.id}) ON CREATE SET n.kind = s.kind, n.name = s.name, n.domain = s.domain)
FOREACH (m IN $mems |
  MERGE (n:Mem {id: m.id}) ON CREATE SET n += m.props
  SET n.names = CASE WHEN m.name IN coalesce(n.names, []) THEN n.names
                     ELSE coalesce(n.names, []) + [m.name] END)
FOREACH (u IN $updates | MERGE (n:Mem {id: u.id}) SET n += u.props)
FOREACH (j IN $justifications |
  CREATE (jn:Justification {id: j.id, agent: j.agent, run: j.run, at: j.at, rule: j.rule})
  MERGE (m:Mem {id: j.mem})
  CREATE (jn)-[:JUSTIFIES]->(m)
  FOREACH (p IN j.premises | MERGE (pm:Mem {id: p}) CREATE (pm)-[:PREMISE_OF]->(jn)))
FOREACH (x IN $groundings |
  MERGE (s:Source {id: x.source}) MERGE (m:Mem {id: x.mem})
  CREATE (s)-[:SAID {id: x.id, at: x.at, via: x.via}]->(m))
FOREACH (r IN $retractions | MERGE (n:Retraction {id: r.id}) SET n += r.props)
FOREACH (x IN $supersedes |
  MERGE (a:Mem {id: x.new}) MERGE (b:Mem {id: x.old}) MERGE (a)-[:SUPERSEDES {by: x.by}]->(b))
FOREACH (o IN $outbox |
  MERGE (n:Outbox {id: o.id}) ON CREATE SET n.action = o.action, n.by = o.by, n.at = o.at,
  n.payload = o.payload, n.sent = false)
WITH g
UNWIND $changes AS c
MATCH (m:Mem {id: c.id})
SET m.status = c.status, m.cause = c.cause, m.hops = c.hops
CREATE (:Change {mem: c.id, status: c.status, cause: c.cause, hops: c.hops,
                 rev: g.rev, op: $op, at: $at})
"""

# Justified writes in bulk, guarded by the revision they were computed at. New memories arrive
# with their status already decided; the rows run in order, so a premise may be created by an
# earlier row of the same batch. (FOREACH cannot MATCH, hence the UNWINDs at the end.)
WRITE_BATCH = """
MATCH (g:Meta {key: 'meta'}) WHERE g.rev = $rev
SET g.rev = g.rev + 1
WITH g
FOREACH (m IN $new | CREATE (n:Mem) SET n = m)
FOREACH (a IN $aliases |
  MERGE (n:Mem {id: a.id})
  SET n.names = CASE WHEN a.name IN n.names THEN n.names ELSE n.names + [a.name] END)
FOREACH (u IN $updates | MERGE (n:Mem {id: u.id}) SET n += u.props)
FOREACH (c IN $changes |
  MERGE (n:Mem {id: c.id}) SET n.status = c.status, n.cause = c.cause, n.hops = c.hops
  CREATE (:Change {mem: c.id, status: c.status, cause: c.cause, hops: c.hops, rev: g.rev,
                   op: 'write', at: $at}))
FOREACH (x IN $groundings |
  MERGE (s:Source {id: x.source}) MERGE (m:Mem {id: x.mem})
  CREATE (s)-[:SAID {id: x.id, at: x.at}]->(m))
WITH g
UNWIND $justifications AS j
MATCH (m:Mem {id: j.mem})
CREATE (jn:Justification {id: j.id, at: j.at, agent: j.agent, run: j.run, rule: j.rule})
CREATE (jn)-[:JUSTIFIES]->(m)
WITH jn, j
UNWIND j.premises AS pid
MATCH (p:Mem {id: pid})
CREATE (p)-[:PREMISE_OF]->(jn)
"""

# One hop downstream of a frontier: memories resting on any of ``ids``.
DOWNSTREAM_STEP = """
UNWIND $ids AS id
MATCH (:Mem {id: id})-[:PREMISE_OF]->(:Justification)-[:JUSTIFIES]->(d:Mem)
RETURN DISTINCT d.id
"""

# One hop upstream of a frontier: the premises of any justification of ``ids``.
UPSTREAM_STEP = """
UNWIND $ids AS id
MATCH (p:Mem)-[:PREMISE_OF]->(:Justification)-[:JUSTIFIES]->(:Mem {id: id})
RETURN DISTINCT p.id
"""

MEMORIES = """
UNWIND $ids AS id
MATCH (m:Mem {id: id})
RETURN m.id, m.kind, m.status, m.cause, m.hops, m.withdrawn_by, m.executed
"""

# Each justification of ``ids`` with its premises and their current statuses.
JUSTIFICATIONS_OF = """
UNWIND $ids AS id
MATCH (j:Justification)-[:JUSTIFIES]->(m:Mem {id: id})
MATCH (p:Mem)-[:PREMISE_OF]->(j)
RETURN m.id, j.id, collect([p.id, p.status, p.cause, p.hops])
"""

GROUNDINGS_OF = """
UNWIND $ids AS id
MATCH (s:Source)-[g:SAID]->(m:Mem {id: id})
RETURN m.id, s.id, g.at, g.via
"""

MEMORY_FACTS = """
UNWIND $ids AS id
MATCH (m:Mem {id: id})
RETURN properties(m)
"""

STATUSES = """
UNWIND $ids AS id
MATCH (m:Mem {id: id})
RETURN m.id, m.status, m.cause, m.hops
"""

EXISTING_JUSTIFICATIONS = """
UNWIND $ids AS id
MATCH (j:Justification {id: id})
RETURN j.id
"""

# Found from the memory's side: an edge property lookup would scan every SAID edge.
EXISTING_GROUNDINGS = """
UNWIND $rows AS r
MATCH (:Source)-[g:SAID]->(:Mem {id: r.mem})
WHERE g.id = r.id
RETURN g.id
"""

SOURCES = "MATCH (s:Source) RETURN s.id, s.kind, s.name, s.domain"

SOURCE = "MATCH (s:Source {id: $id}) RETURN s.id, s.kind, s.name, s.domain"

DOMAINS_OF = """
UNWIND $ids AS id
MATCH (s:Source {id: id})
RETURN s.id, s.domain
"""

ACTIVE_RETRACTIONS = """
MATCH (r:Retraction {state: 'committed'})
RETURN r.id, r.kind, r.source, r.start, r.end, r.order
"""

RETRACTION = "MATCH (r:Retraction {id: $id}) RETURN properties(r)"

# Observations a source grounded inside a window (both ends included; null is open).
WINDOW_SEEDS = """
MATCH (:Source {id: $source})-[g:SAID]->(m:Mem)
WHERE ($start IS NULL OR g.at >= $start) AND ($end IS NULL OR g.at <= $end)
RETURN DISTINCT m.id
"""

ACTIONS_IN = """
UNWIND $ids AS id
MATCH (m:Mem {id: id, kind: 'action'})
RETURN properties(m)
"""

ACTIONS = """
MATCH (m:Mem {kind: 'action'})
RETURN properties(m)
"""

# A memory's history: its birth (kept on the node) and every later change.
BIRTH = "MATCH (m:Mem {id: $id}) RETURN m.born_rev, m.born, m.cause, m.hops, m.at"

HISTORY = """
MATCH (c:Change {mem: $id})
RETURN c.rev, c.status, c.cause, c.hops, c.op, c.at
ORDER BY c.rev
"""

COUNT_NODES = "MATCH (n) RETURN count(n)"
