"""Lineage for identifiers (``rescind.core.lineage``): which observations of the tenant state
an identifier, and the texts of the premises a write names.

FalkorDB cannot index the elements of a list, so each canonical identifier an observation
states is a node, ``(:Ident {uid})``, linked to every observation that states it by a STATES
edge, written in the same guarded batch as the observation (``LINK``, part of
``writes.WRITE_BATCH``). Its ``uid`` is a digest of the identifier's key
(``rescind.graph.keys.uid``): an identifier is a string from outside, never looked up as such.
"""

from __future__ import annotations

from rescind.graph.cypher import Plain

IDENT_LABEL = "Ident"

# Part of writes.WRITE_BATCH, after the new memories exist: rows {iuid, muid, mem}.
LINK = """
FOREACH (x IN $idents |
  MERGE (i:Ident {uid: x.iuid}) MERGE (m:Mem {uid: x.muid, id: x.mem})
  MERGE (i)-[:STATES]->(m))"""

# The observations that state each identifier (by its uid), with their statuses.
STATING = Plain("""
UNWIND $uids AS u
MATCH (:Ident {uid: u})-[:STATES]->(m:Mem)-[st:STATUS]->()
RETURN u, m.id, st.status, st.cause, st.hops
""")

# The texts of memories by id (the premises of a write with an identifier).
TEXTS = Plain("""
UNWIND $ids AS id
MATCH (m:Mem {id: id})
RETURN m.id, m.text
""")
