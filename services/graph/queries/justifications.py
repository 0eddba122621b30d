"""Justifications and what they connect: the region walk downstream of some seeds, one hop at a
time by node id, and the cone upstream of a memory, five levels a statement."""

from __future__ import annotations

from rescind.graph.cypher import Plain
from rescind.graph.queries.memories import FACTS

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
RETURN {FACTS}
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
