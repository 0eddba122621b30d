"""Cypher of the sources' identities: finding variant spellings and merging them into one.

A source's name is canonical since rescind.contract.identity, but a graph written before may
hold one source under several spellings (``portal:northwind``, ``portal:Northwind``): each a
:Source node with its own SAID edges. These statements move a variant's SAID edges to the
canonical node (or rename the variant when there is none), guarded by the revision like every
write. Sources are matched by ``id`` (the name): an operator's command, not a hot path.
"""

from rescind.graph.queries import _GUARD

# Every source with how much it said: the variants' report.
SOURCES_SAID = """
MATCH (s:Source)
OPTIONAL MATCH (s)-[e:SAID]->()
RETURN s.id, s.kind, s.name, s.domain, count(e)
ORDER BY s.id
"""

# The variant becomes the canonical source: its name (and its uid, when the graph keys
# sources by one), its display name and trust domain when those were its old name.
RENAME = _GUARD + """
MATCH (v:Source {id: $variant})
SET v.id = $canonical,
    v.uid = CASE WHEN v.uid IS NULL THEN NULL ELSE $uid END,
    v.name = CASE WHEN v.name IS NULL OR v.name = $variant THEN $canonical ELSE v.name END,
    v.domain = $domain
RETURN count(v)
"""

# The variant's SAID edges, properties and all, move to the canonical source; then it goes.
MOVE = _GUARD + """
MATCH (t:Source {id: $canonical})
MATCH (v:Source {id: $variant})
OPTIONAL MATCH (v)-[e:SAID]->(m)
FOREACH (_ IN CASE WHEN e IS NULL THEN [] ELSE [1] END |
  CREATE (t)-[n:SAID]->(m) SET n = properties(e))
DELETE e
WITH DISTINCT v
DELETE v
RETURN count(v)
"""
