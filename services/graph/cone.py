"""The cone of a memory: everything it rests on, up to the sources, as fragility needs it.

Read upstream from the targets, five levels a round trip in one statement (``queries.CONE``):
each memory's facts, its justifications and its groundings with each source's trust domain and
kind. Reads that do not depend on the cone (the active retractions, the gate's aggregate) ride
on the first round trip, or on the next one once their parameters are known (``ride``): a
payment whose cone is five levels deep is judged in one round trip.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from rescind.core.belief import Grounding, Node, Status
from rescind.graph import queries as q
from rescind.graph.cypher import InFlight, Plain, send_reads
from rescind.graph.reads import Wire


@dataclass
class Cone:
    """Memories closed under premises, with what the gate reads about them."""

    nodes: dict[str, Node] = field(default_factory=dict)
    status: dict[str, Status] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)  # of memories a source grounds
    sources: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (domain, kind)

    def of(self, target: str) -> dict[str, Node]:
        """The part of the cone ``target`` rests on (itself included)."""
        seen, stack = {target}, [target]
        while stack:
            for premises in self.nodes[stack.pop()].justifications:
                for p in premises:
                    if p not in seen and p in self.nodes:
                        seen.add(p)
                        stack.append(p)
        return {m: self.nodes[m] for m in seen}


class ConeRead:
    """A cone being read: the first round trip is sent at once, with the reads ``also``.

    ``first()`` waits for it and gives their rows (the targets' facts are then in
    ``cone.status``); ``ride`` adds reads to the next round trip; ``finish()`` reads on to the
    sources and returns the cone (``rows`` then holds every riding read's rows, in order).
    """

    def __init__(self, graph: Wire, targets: Iterable[str],
                 also: Iterable[tuple[str, dict | None]] = ()) -> None:
        graph.ensure_schema()
        self.graph, self.cone = graph, Cone()
        self.rows: list[list[list]] = []
        self.raw: list[list] = []  # the cone statement's rows, as read (the gate keeps them)
        self._riding: list[tuple[str, dict | None]] = list(also)
        self._frontier: list[str] = []
        self._order: list[str] = []  # the statements of the round trip in flight
        self._sent: tuple[int, list[InFlight]] | None = self._send(list(dict.fromkeys(targets)))

    def ride(self, *queries: tuple[str, dict | None]) -> int:
        """Send ``queries`` with the next round trip; returns the index of the first one's
        rows in ``rows``."""
        at = len(self.rows) + len(self._riding)
        self._riding.extend(queries)
        return at

    def first(self) -> list[list[list]]:
        if self._sent is not None:
            sent, self._sent = self._sent, None
            self._frontier = self._take(*sent)
        return self.rows

    def finish(self) -> Cone:
        self.first()
        while self._frontier or self._riding:
            self._frontier = self._take(*self._send(self._frontier))
        return self.cone

    # -- one round trip -------------------------------------------------------------------
    def _send(self, frontier: list[str]) -> tuple[int, list[InFlight]]:
        riding, self._riding = self._riding, []
        reads = riding + ([(q.CONE, {"ids": frontier})] if frontier else [])
        self._order = [c for c, _ in reads]
        groups = [[r for r in reads if isinstance(r[0], Plain) is plain] for plain in (False, True)]
        return len(riding), [send_reads(self.graph.conn, self.graph.key, g) for g in groups if g]

    def _take(self, riding: int, sent: list[InFlight]) -> list[str]:
        """Take in one round trip's replies; returns the next frontier."""
        replies: dict[bool, list[list[list]]] = {False: [], True: []}
        error = None
        for flight in sent:  # every reply is read, so that each connection goes back clean
            try:
                replies[isinstance(flight.cyphers[0], Plain)] += [r.rows for r in flight.results()]
            except Exception as exc:  # noqa: BLE001 - raised once the other is read
                error = error or exc
        if error is not None:
            raise error
        compact, plain = iter(replies[False]), iter(replies[True])
        reads = [next(plain if isinstance(c, Plain) else compact) for c in self._order]
        self.rows += reads[:riding]
        nxt: dict[str, None] = {}
        for rows in reads[riding:]:
            for row in rows:
                self.raw.append(row)
                add_row(self.cone, row, nxt)
        return [m for m in nxt if m not in self.cone.nodes]


def add_row(cone: Cone, row: list, nxt: dict[str, None]) -> None:
    """Add one row of ``queries.CONE`` to ``cone``; the premises it names go into ``nxt``."""
    mid, kind, status, cause, hops, withdrawn, text, premises, groundings = row
    if mid in cone.nodes:  # read in an earlier round trip as well
        return
    node = cone.nodes[mid] = Node(mid, kind, withdrawn_by=list(withdrawn or []))
    cone.status[mid] = Status(status, cause, hops)
    if text is not None:
        cone.texts[mid] = text
    justs: dict[int, list[str]] = {}
    for jid, premise in premises:
        if jid is not None:
            justs.setdefault(jid, []).append(premise)
            nxt[premise] = None
    node.justifications = [(ps[0],) if len(ps) == 1 else tuple(sorted(ps))
                           for ps in justs.values()]
    for source, at, via, domain, skind in groundings:
        if source is not None:
            node.groundings.append(Grounding(source, at, via))
            cone.sources[source] = (domain, skind)
