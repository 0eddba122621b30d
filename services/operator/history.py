"""What was believed at a moment, and why, read from each memory's own history.

Every memory keeps its birth (status, cause, revision, and ``at``, the time its writer stamped)
and a list of later changes, each with the revision it was committed at, the operation, the
retraction that caused it, the hop distance and the time the decision was stamped with. "As of"
picks, for each memory, the last of those entries that falls at or before the point asked:

- ``rev=R`` (exact): the state right after the commit that made revision R. A memory born at a
  later revision did not exist yet.
- ``at=T`` (by stamped times): every entry stamped at or before T, taken in commit order. A
  memory whose writer stamped it after T did not exist yet. Times are those recorded (agents'
  clocks for writes, the deciding clock for retractions), so a write that arrived late but was
  stamped early counts from its stamp: this answers "what does the record say was believed at
  T", not "what would Rescind have answered at T" (ask by revision for that).

The "why" of an entry is its operation (write, retract, withdraw, correct, reinstate), the
retraction id that caused it (``cause``) and the hop distance from what that retraction hit.
"""

from __future__ import annotations

from rescind.graph.reads import BIRTH, CHANGE_KEYS, GraphReads, changes


def entries(born_rev, born, born_cause, born_hops, at, history) -> list[dict]:
    """A memory's birth and its later changes, in commit order."""
    birth = {"rev": born_rev or 0, "status": born, "cause": born_cause, "hops": born_hops,
             "op": "write", "by": None, "at": at}
    return [birth] + [dict(zip(CHANGE_KEYS, e, strict=True)) for e in changes(history)]


def point(items: list[dict], at: int | None = None, rev: int | None = None) -> dict | None:
    """The entry in force at ``at`` (µs) or ``rev``; None when the memory did not exist yet."""
    birth = items[0]
    if rev is not None:
        if birth["rev"] > rev:
            return None
        return [e for e in items if (e["rev"] or 0) <= rev][-1]
    if birth["at"] is None or birth["at"] > at:
        return None
    return [e for e in items if e["at"] is not None and e["at"] <= at][-1]


def points(graph: GraphReads, ids: list[str], at: int | None,
           rev: int | None) -> dict[str, dict | None]:
    return {mid: point(entries(*birth), at, rev) for mid, birth in graph.histories(ids).items()}


def page(graph: GraphReads, at: int | None, rev: int | None, kind: str | None, status: str | None,
         skip: int, limit: int) -> tuple[list[tuple[dict, dict]], int]:
    """(row, entry) of the memories that existed at the point, in one page of the scan; each
    row a dict (``rescind.graph.reads.HISTORY_PAGE``)."""
    rows = graph.history_page(kind, skip, limit)
    found = []
    for row in rows:
        e = point(entries(*(row[k] for k in BIRTH)), at, rev)
        if e is not None and (status is None or e["status"] == status):
            found.append((row, e))
    return found, len(rows)

