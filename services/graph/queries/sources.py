"""Sources: who said what (SAID edges to the memories they ground), their trust domains, and
the statements that merge variant spellings of one source.

A source's name is canonical since rescind.contract.identity, but a graph written before may
hold one source under several spellings (``portal:northwind``, ``portal:Northwind``): each a
:Source node with its own SAID edges. RENAME and MOVE fold a variant into the canonical node,
guarded by the revision like every write; they match sources by ``id`` (the name): an
operator's command, not a hot path.
"""

from __future__ import annotations

from rescind.graph.queries.layout import GUARD

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

# Every grounding of a page of memories: which source said each (the product view's links).
SOURCES_OF = """
UNWIND $ids AS id
MATCH (s:Source)-[:SAID]->(:Mem {id: id})
RETURN DISTINCT s.id, id
"""

# Every source with how much it said: the variants' report.
SOURCES_SAID = """
MATCH (s:Source)
OPTIONAL MATCH (s)-[e:SAID]->()
RETURN s.id, s.kind, s.name, s.domain, count(e)
ORDER BY s.id
"""

# The variant becomes the canonical source: its name (and its uid, when the graph keys
# sources by one), its display name and trust domain when those were its old name.
RENAME = GUARD + """
MATCH (v:Source {id: $variant})
SET v.id = $canonical,
    v.uid = CASE WHEN v.uid IS NULL THEN NULL ELSE $uid END,
    v.name = CASE WHEN v.name IS NULL OR v.name = $variant THEN $canonical ELSE v.name END,
    v.domain = $domain
RETURN count(v)
"""

# The variant's SAID edges, properties and all, move to the canonical source; then it goes.
MOVE = GUARD + """
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
