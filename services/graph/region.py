"""The region of a retraction or a revived write: memories downstream of some seeds, with the
facts, justifications and groundings the belief rule needs, read from FalkorDB hop by hop."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

from rescind.core.belief import Grounding, Node, Status
from rescind.core.shapes import Region
from rescind.graph import queries as q
from rescind.graph.cypher import InFlight, send_reads
from rescind.graph.reads import Wire


def walk(graph: Wire, seeds: Iterable[str] = (),
         seed_facts: list[list] | None = None) -> Region:
    """Everything downstream of ``seeds`` with its facts, one round trip per hop.

    ``seed_facts`` are the seeds' rows when a previous query (a window) already read them.
    The walk addresses nodes by FalkorDB's internal id (memories are never deleted, so an
    id stays the memory's): a seek by id costs half an index lookup by ``id``. Only the next
    hop is on the walk's path; the justifications of each hop are read on a second
    connection meanwhile, and taken in while the server looks for the hop after.
    """
    reg = Region()
    graph.ensure_schema()
    if seed_facts is None:
        seeds = list(dict.fromkeys(seeds))
        seed_facts = graph.many((q.MEMORIES, {"ids": seeds}))[0] if seeds else []
    rows, depth, unread = seed_facts, 0, []
    try:
        while rows:
            # The next hop's reads go out before this hop's facts are taken in, so that the
            # server looks for the hop after while Python builds this one's nodes.
            frontier = [row[0] for row in rows]
            unread.append(send_reads(graph.conn, graph.key, _reasons_of(rows)))
            unread.append(send_reads(graph.conn, graph.key,
                                     [(q.DOWNSTREAM_BY_NODE, {"ids": frontier})]))
            _add_facts(reg, rows, depth)
            if len(unread) > 2:
                _take_reasons(reg, unread.pop(0))
            depth += 1
            rows = [r for r in unread.pop().result().rows if r[0] not in reg.mid]
        while unread:
            _take_reasons(reg, unread.pop(0))
    finally:
        for sent in unread:  # after an error: read what is pending, freeing its connection
            with contextlib.suppress(Exception):
                sent.results()
    _finish(graph, reg)
    return reg

def read_nodes(graph: Wire, ids: Iterable[str]) -> dict[str, Node]:
    """Facts, justifications and groundings of ``ids`` (no walk)."""
    reg = Region()
    [facts] = graph.many((q.MEMORIES, {"ids": list(ids)}))
    if facts:
        sent = send_reads(graph.conn, graph.key, _reasons_of(facts))
        _add_facts(reg, facts, 0)
        _take_reasons(reg, sent)
    _finish(graph, reg)
    return reg.nodes

def _reasons_of(rows: list[list]) -> list[tuple[str, dict]]:
    """The reads of the justifications of the memories in ``rows`` (their facts), and of their
    groundings where they have any."""
    grounded = [row[0] for row in rows if row[8]]
    queries = [(q.PREMISES_BY_NODE, {"ids": [row[0] for row in rows]})]
    if grounded:
        queries.append((q.GROUNDINGS_BY_NODE, {"ids": grounded}))
    return queries

def _take_reasons(reg: Region, sent: InFlight) -> None:
    justs, *grounds = (r.rows for r in sent.results())
    premises = reg.premises
    for node, jid, premise in justs:
        premises.setdefault((node, jid), []).append(premise)
    for node, source, at, via in grounds[0] if grounds else ():
        reg.nodes[reg.mid[node]].groundings.append(Grounding(source, at, via))

def _finish(graph: Wire, reg: Region) -> None:
    """Name every premise, read the statuses of those outside the region (the fixed edge
    of its fixpoint) and the withdrawal lists of the few memories whose facts counted any."""
    outside = {p for premises in reg.premises.values() for p in premises} - reg.mid.keys()
    queries = [(q.STATUSES_BY_NODE, {"ids": sorted(outside)})] if outside else []
    if reg.withdrawn:
        queries.append((q.WITHDRAWALS_OF, {"ids": sorted(reg.withdrawn)}))
    replies = graph.many(*queries) if queries else []
    if outside:
        for node, mid, st, cause, hops in replies.pop(0):
            reg.mid[node] = mid
            reg.status[mid] = Status(st, cause, hops)
    for mid, ids in replies.pop(0) if reg.withdrawn else ():
        reg.nodes[mid].withdrawn_by = list(ids or [])
    name, nodes = reg.mid, reg.nodes
    for (node, _jid), premises in reg.premises.items():
        nodes[name[node]].justifications.append((name[premises[0]],) if len(premises) == 1
                                                else tuple(sorted([name[p] for p in premises])))

def _add_facts(reg: Region, rows: list[list], depth: int) -> None:
    names, nodes, status, kinds, hops_of = reg.mid, reg.nodes, reg.status, reg.kinds, reg.hops
    made: dict[tuple, Status] = {}  # a region's thousands of statuses are a few distinct ones
    for node, mid, kind, st, cause, hops, withdrawn, executed, grounded in rows:
        names[node] = mid
        nodes[mid] = Node(mid, kind)
        key = (st, cause, hops)
        got = made.get(key)
        if got is None:
            got = made[key] = Status(st, cause, hops)
        status[mid] = got
        kinds[mid] = kind
        hops_of[mid] = depth
        if withdrawn:
            reg.withdrawn.add(mid)
        if executed:
            reg.executed.add(mid)
        if grounded:
            reg.grounded.add(mid)
