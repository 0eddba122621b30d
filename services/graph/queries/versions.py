"""Store versions: which version of a key is current, which memories are not.

A version replaced by a newer value at its key, or deleted, carries ``replaced`` (``superseded``
or ``deleted``: rescind.core.belief.REPLACED); a version written again loses it. That mark is
no part of the belief rule: a version that is not current keeps its status. Graphs written
before the mark existed kept the same facts as withdrawals (``withdrawn_by``), read here too.
"""

from __future__ import annotations

_LEGACY = "any(w IN coalesce(m.withdrawn_by, []) WHERE w IN ['superseded', 'deleted'])"
_NOT_CURRENT = f"(m.replaced IS NOT NULL OR {_LEGACY})"

# A store key's current version: the one not replaced, else the latest (a scan: keys are for
# people, not for hot paths).
CURRENT_OF_KEY = f"""
MATCH (m:Mem) WHERE m.key = $key
RETURN m.id ORDER BY CASE WHEN {_NOT_CURRENT} THEN 1 ELSE 0 END, m.born_rev DESC LIMIT 1"""

# Which of ``ids`` are not current, and why (superseded or deleted).
NOT_CURRENT = f"""
UNWIND $ids AS id
MATCH (m:Mem {{id: id}}) WHERE {_NOT_CURRENT}
RETURN m.id, coalesce(m.replaced, [w IN m.withdrawn_by WHERE w IN ['superseded', 'deleted']][0])
"""

# Versions marked the old way (a withdrawal in ``withdrawn_by``), with their withdrawals: a scan,
# run once per tenant by rescind.engine.versions.migrate_store_marks.
LEGACY_MARKED = f"MATCH (m:Mem) WHERE {_LEGACY} RETURN m.id, m.withdrawn_by"
