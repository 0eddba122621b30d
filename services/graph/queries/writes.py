"""The guarded writes: one atomic mutation (a decision) and a batch of justified writes, with
the reads that tell which of a batch's events were applied already."""

from __future__ import annotations

from rescind.graph.cypher import Plain
from rescind.graph.queries.layout import GUARD
from rescind.graph.queries.lineage import LINK as _LINK_IDENTS

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
APPLY = GUARD + f"""
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
WRITE_BATCH = GUARD + f"""
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
