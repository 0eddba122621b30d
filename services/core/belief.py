"""The belief rule, on plain Python data: the least fixpoint over a region of the graph.

A memory is IN when it is not withdrawn and either one of its groundings is valid (a source
said it, and no active retraction of that source covers the moment it was read) or one of its
justifications has every premise IN. Everything else is OUT, including memories that only
support each other. Nothing here touches FalkorDB, so it can be tested alone and reused by
preview, commit and fragility alike.

Only evidence makes a memory OUT: a retraction of a source, a withdrawal, a correction. A store
version that was updated or deleted is *not current* (``REPLACED``: no longer served as what
its key holds), which is no part of this rule: it stays a valid premise of what was built on
it, so it is never in ``withdrawn_by``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from rescind.contract.kinds import IN, OUT


@dataclass(frozen=True)
class Grounding:
    """A source said this memory at ``at`` (epoch µs); ``via`` names the correction it came from."""

    source: str
    at: int
    via: str | None = None


@dataclass(frozen=True)
class Window:
    """An active retraction of ``source`` for reads in [start, end]; None is an open end."""

    id: str
    source: str
    start: int | None = None
    end: int | None = None
    order: int = 0

    def covers(self, g: Grounding) -> bool:
        return (
            g.source == self.source
            and (self.start is None or g.at >= self.start)
            and (self.end is None or g.at <= self.end)
        )


@dataclass(slots=True)
class Node:
    """What the rule needs to know about one memory."""

    id: str
    kind: str = "belief"
    justifications: list[tuple[str, ...]] = field(default_factory=list)
    groundings: list[Grounding] = field(default_factory=list)
    withdrawn_by: list[str] = field(default_factory=list)  # active withdraw/correct ids


class Status(NamedTuple):
    """A memory's status; a tuple because a large retraction builds tens of thousands."""

    status: str
    cause: str | None = None
    hops: int | None = None

    @property
    def is_in(self) -> bool:
        return self.status == IN


# Why a version is not current (a memory's ``replaced`` property): a newer value was put at
# its key, or the key was deleted. Not a withdrawal: the belief rule never reads it.
SUPERSEDED, DELETED = "superseded", "deleted"
REPLACED = (SUPERSEDED, DELETED)


@dataclass
class Rules:
    """The active retractions: source windows, and the corrections whose groundings count."""

    windows: list[Window] = field(default_factory=list)
    corrections: dict[str, int] = field(default_factory=dict)  # active correction id -> order
    withdrawal_order: dict[str, int] = field(default_factory=dict)  # active withdrawal id -> order

    def by_source(self) -> dict[str, list[Window]]:
        index: dict[str, list[Window]] = {}
        for w in self.windows:
            index.setdefault(w.source, []).append(w)
        return index

    def grounding_cause(self, g: Grounding,
                        by_source: dict[str, list[Window]] | None = None) -> tuple[int, str] | None:
        """None when the grounding is valid; else (order, id) of what invalidates it.

        ``by_source`` (from ``by_source()``) spares a settle over thousands of groundings a
        scan of every active window for each."""
        if g.via is not None and g.via not in self.corrections:
            return (-1, g.via)
        windows = self.windows if by_source is None else by_source.get(g.source, ())
        hits = [(w.order, w.id) for w in windows if w.covers(g)]
        return min(hits) if hits else None


def settle(
    region: Mapping[str, Node],
    boundary: Mapping[str, Status],
    rules: Rules,
) -> dict[str, Status]:
    """Statuses of every memory in ``region``; premises outside it keep their ``boundary`` status.

    ``region`` must be closed downstream of whatever changed: nothing outside it may rest on it.
    """
    outside_in = {p for p, st in boundary.items() if st.status == IN}
    is_in: set[str] = set()
    waiting: dict[str, list[list]] = {}  # premise id -> justifications still waiting on it
    queue: list[str] = []
    roots: dict[str, tuple[int, str]] = {}  # memory -> (order, id) of what takes it OUT itself
    windows = rules.by_source()

    for mid, node in region.items():
        active = active_withdrawals(node, rules) if node.withdrawn_by else None
        if active:
            roots[mid] = min((rules.withdrawal_order[w], w) for w in active)
            continue
        if node.groundings:
            causes = [rules.grounding_cause(g, windows) for g in node.groundings]
            if None in causes:
                queue.append(mid)
                continue
            roots[mid] = min(causes)
        for premises in node.justifications:
            missing = [p for p in premises if p in region or p not in outside_in]
            if not missing:
                queue.append(mid)
                break
            slot = [mid, len(missing)]
            for p in missing:
                waiting.setdefault(p, []).append(slot)

    while queue:
        mid = queue.pop()
        if mid in is_in:
            continue
        is_in.add(mid)
        for slot in waiting.pop(mid, ()):
            slot[1] -= 1
            if slot[1] == 0 and slot[0] not in is_in:
                queue.append(slot[0])

    # What still waits on a premise now waits on an OUT one: exactly the edges along which
    # an OUT memory's cause travels.
    return _explain_out(region, boundary, is_in, roots, waiting)


_IN = Status(IN)


def active_withdrawals(node: Node, rules: Rules) -> list[str]:
    return [w for w in node.withdrawn_by if w in rules.withdrawal_order]


def _explain_out(
    region: Mapping[str, Node],
    boundary: Mapping[str, Status],
    is_in: set[str],
    roots: dict[str, tuple[int, str]],
    waiting: dict[str, list[list]],
) -> dict[str, Status]:
    """Give each OUT memory the cause nearest to it, and its hop distance from that cause.

    Roots (withdrawn memories, and memories with a retracted grounding) are hop 0; OUT premises
    outside the region carry their own distance in. Ties go to the earliest retraction.
    """
    result = dict.fromkeys(is_in, _IN)
    if len(result) == len(region):
        return result
    # Every step is one hop, so nearest-first is level by level: level -> memory -> the best
    # (order, cause) offered at that distance (cheaper than a heap over ten thousand tuples).
    levels: dict[int, dict[str, tuple[int, str]]] = {}

    def offer(hops: int, key: tuple[int, str], mid: str) -> None:
        level = levels.setdefault(hops, {})
        best = level.get(mid)
        if best is None or key < best:
            level[mid] = key

    for mid, key in roots.items():
        if mid not in is_in:
            offer(0, key, mid)
    for p, slots in waiting.items():
        if p not in region:
            st = boundary.get(p)
            if st is not None and st.hops is not None and st.status != IN:
                for slot in slots:
                    offer(st.hops + 1, (0, st.cause or ""), slot[0])
    while levels:
        hops = min(levels)
        level, after = levels.pop(hops), levels.setdefault(hops + 1, {})
        made: dict[tuple[int, str], Status] = {}  # the few statuses of a level, built once each
        for mid, key in level.items():
            if mid in result:
                continue
            st = made.get(key)
            if st is None:
                st = made[key] = Status(OUT, key[1] or None, hops)
            result[mid] = st
            for slot in waiting.get(mid, ()):  # offer(hops + 1, key, slot[0]), inlined
                nxt = slot[0]
                if nxt not in result:
                    best = after.get(nxt)
                    if best is None or key < best:
                        after[nxt] = key
        if not after:
            del levels[hops + 1]
    for mid in region:
        if mid not in result:
            result[mid] = Status(OUT)  # unsupported from the start: no cause to name
    return result
