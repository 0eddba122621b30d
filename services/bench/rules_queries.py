"""The Cypher of `rescind bench rules`: the simpler retraction rules as graph procedures.

Named and parameterised like ``services.graph.queries``; nothing here formats user data. The
rules mark what they take out of service with a property of their own (``out_r1`` .. ``out_r4``),
so all five rules run on one graph and the engine's ``status`` (rule 5) is left alone.
"""

# The memories a source grounded inside a window (both ends included; null is open), with text.
SEEDS = """
MATCH (:Source {id: $source})-[g:SAID]->(m:Mem)
WHERE ($start IS NULL OR g.at >= $start) AND ($end IS NULL OR g.at <= $end)
RETURN DISTINCT m.id, m.text
"""

# One hop downstream of a frontier. Regions are walked hop by hop with a DISTINCT frontier: a
# variable-length match in FalkorDB 4.16 enumerates every path.
NEXT_HOP = """
UNWIND $ids AS id
MATCH (:Mem {id: id})-[:PREMISE_OF]->(:Justification)-[:JUSTIFIES]->(m:Mem)
RETURN DISTINCT m.id
"""

# Take memories out of service under one rule; ``props`` is {"out_rN": true}. A map parameter,
# because a property name cannot be a parameter.
MARK = """
UNWIND $ids AS id
MATCH (m:Mem {id: id})
SET m += $props
"""

# What every rule holds for every memory (read at checkpoints, and by the tests).
STATES = """
MATCH (m:Mem)-[st:STATUS]->()
RETURN m.id, st.status, m.born, m.out_r1, m.out_r2, m.out_r3, m.out_r4
"""

# The graph of the demo week, read back as plain data when security is about to act.
DEMO_MEMORIES = """
MATCH (m:Mem)
RETURN m.id, m.kind, m.text, m.at, m.names, m.executed, m.amount, m.payee
"""
DEMO_GROUNDINGS = "MATCH (s:Source)-[g:SAID]->(m:Mem) RETURN g.id, s.id, m.id, g.at"
DEMO_JUSTIFICATIONS = """
MATCH (j:Justification)-[:JUSTIFIES]->(m:Mem)
OPTIONAL MATCH (p:Mem)-[:PREMISE_OF]->(j)
RETURN j.id, m.id, j.at, collect(p.id)
"""
DEMO_SOURCES = "MATCH (s:Source) RETURN s.id, s.kind, s.name, s.domain"
