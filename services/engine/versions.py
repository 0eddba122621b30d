"""Store versions written before a replaced version was merely *not current*.

Until then, a store update or delete put a mark (``superseded``, ``deleted``) in the old
version's ``withdrawn_by``, and the belief rule took it as a withdrawal: the old version went
OUT, and with it everything resting on it, the new version too. The rule no longer reads those
marks (rescind.core.belief), but statuses written under it stay until something settles their
region again. ``migrate_store_marks`` does that once for a tenant: each mark moves to the
version's ``replaced`` property, and the region downstream of the marked versions is settled
under the tenant's active rules, in one guarded write. Idempotent: a graph without such marks
costs one read.

The agents' status caches hear nothing of it (no StatusChanged): run it while the tenant's
agents are stopped, or restart them after (a cache starts from a snapshot of the graph).
"""

from __future__ import annotations

from rescind.core.belief import REPLACED, settle
from rescind.core.changes import status_changes
from rescind.core.shapes import Mutation
from rescind.graph.queries import versions as vq
from rescind.graph.store import TenantGraph, linearised

OP = "versions"  # the operation named in each moved memory's history


def migrate_store_marks(graph: TenantGraph, at: int = 0) -> dict[str, int]:
    """Move the old store marks of ``graph`` to ``replaced`` and settle what they held OUT;
    how many versions were marked and how many memories changed status."""

    def attempt() -> dict[str, int]:
        rows = graph.rows(vq.LEGACY_MARKED)
        if not rows:
            return {"versions": 0, "moved": 0}
        rev, _stored, rules, *_ = graph.context("")
        region = graph.region([mid for mid, _ in rows])
        mutation = Mutation(op=OP, at=at)
        for mid, marks in rows:
            keep = [w for w in marks if w not in REPLACED]
            why = [w for w in marks if w in REPLACED][-1]
            region.nodes[mid].withdrawn_by = keep
            mutation.updates.append({"id": mid, "props": {"withdrawn_by": keep, "replaced": why}})
        after = settle(region.nodes, region.boundary, rules)
        node = {mid: n for n, mid in region.mid.items()}
        moved = [(node[mid], st) for mid, st in after.items() if region.status.get(mid) != st]
        mutation.changes = status_changes(moved, rev + 1, OP, None, at)
        graph.apply(mutation, rev)
        return {"versions": len(rows), "moved": len(moved)}

    return linearised(graph, attempt)
