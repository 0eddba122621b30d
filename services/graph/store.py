"""Typed reads and writes of one tenant's graph, over the statements in ``queries``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

import redis
from falkordb import FalkorDB

from services.engine.belief import Grounding, Node, Rules, Status, Window

from . import queries as q
from .keys import graph_key


class StalePreview(RuntimeError):
    """The graph changed since the preview was computed: preview again, then commit."""


@dataclass
class Mutation:
    """Everything one atomic write changes; each list may be empty."""

    op: str
    at: int | None = None
    sources: list[dict] = field(default_factory=list)
    mems: list[dict] = field(default_factory=list)  # {id, name, props}
    updates: list[dict] = field(default_factory=list)  # {id, props}
    justifications: list[dict] = field(default_factory=list)  # {id, mem, premises, agent, run, at, rule}
    groundings: list[dict] = field(default_factory=list)  # {id, source, mem, at, via}
    retractions: list[dict] = field(default_factory=list)  # {id, props}
    supersedes: list[dict] = field(default_factory=list)  # {new, old, by}
    changes: list[dict] = field(default_factory=list)  # {id, status, cause, hops}
    outbox: list[dict] = field(default_factory=list)  # {id, action, by, at, payload}

    def params(self, rev: int) -> dict[str, Any]:
        return {
            "rev": rev, "op": self.op, "at": self.at, "sources": self.sources, "mems": self.mems,
            "updates": self.updates, "justifications": self.justifications,
            "groundings": self.groundings, "retractions": self.retractions,
            "supersedes": self.supersedes, "changes": self.changes, "outbox": self.outbox,
        }


def connect(url: str) -> FalkorDB:
    pool = redis.ConnectionPool.from_url(url, decode_responses=True)
    return FalkorDB(connection_pool=pool)


class TenantGraph:
    """One tenant's graph ``rescind:{tenant}``; the schema is created on first use."""

    def __init__(self, db: FalkorDB, tenant: str) -> None:
        self.tenant = tenant
        self.key = graph_key(tenant)
        self.db = db
        self.graph = db.select_graph(self.key)
        self._schema_ready = False

    # -- plumbing -------------------------------------------------------------------------
    def rows(self, query: str, params: dict | None = None, read_only: bool = True) -> list[list]:
        self.ensure_schema()
        if read_only:
            return self.graph.ro_query(query, params or {}).result_set
        return self.graph.query(query, params or {}).result_set

    def ensure_schema(self) -> None:
        if self._schema_ready:
            return
        conn = self.db.connection
        existing = {row[0] for row in _safe_rows(self.graph, "CALL db.indexes()")}
        for label, stmt in q.INDEXES.items():
            if label not in existing:
                self.graph.query(stmt)
        for label, prop in q.UNIQUE:
            try:
                conn.execute_command(
                    "GRAPH.CONSTRAINT", "CREATE", self.key, "UNIQUE", "NODE", label,
                    "PROPERTIES", "1", prop,
                )
            except redis.ResponseError as exc:  # already there from an earlier process
                if "already exists" not in str(exc).lower():
                    raise
        self.graph.query(q.INIT_META)
        self._schema_ready = True

    def exists(self) -> bool:
        return self.key in self.db.connection.execute_command("GRAPH.LIST")

    def delete(self) -> None:
        if self.exists():
            self.graph.delete()
        self._schema_ready = False

    # -- reads ----------------------------------------------------------------------------
    def revision(self) -> int:
        return self.rows(q.REVISION)[0][0]

    def downstream(self, seeds: Iterable[str]) -> dict[str, int]:
        """Hop distance of every memory downstream of ``seeds`` (seeds at 0), one hop a query."""
        hops = {s: 0 for s in seeds}
        frontier, depth = list(hops), 0
        while frontier:
            depth += 1
            nxt = [r[0] for r in self.rows(q.DOWNSTREAM_STEP, {"ids": frontier}) if r[0] not in hops]
            for m in nxt:
                hops[m] = depth
            frontier = nxt
        return hops

    def upstream(self, target: str) -> set[str]:
        seen, frontier = {target}, [target]
        while frontier:
            nxt = [r[0] for r in self.rows(q.UPSTREAM_STEP, {"ids": frontier}) if r[0] not in seen]
            seen.update(nxt)
            frontier = nxt
        return seen

    def nodes(self, ids: Iterable[str]) -> dict[str, Node]:
        ids = list(ids)
        nodes: dict[str, Node] = {}
        for mid, kind, _st, _c, _h, withdrawn in self.rows(q.MEMORIES, {"ids": ids}):
            nodes[mid] = Node(id=mid, kind=kind, withdrawn_by=list(withdrawn or []))
        for mid, _jid, premises in self.rows(q.JUSTIFICATIONS_OF, {"ids": ids}):
            nodes[mid].justifications.append(tuple(sorted(premises)))
        for mid, source, at, via in self.rows(q.GROUNDINGS_OF, {"ids": ids}):
            nodes[mid].groundings.append(Grounding(source, at, via))
        return nodes

    def statuses(self, ids: Iterable[str]) -> dict[str, Status]:
        return {
            mid: Status(st, cause, hops)
            for mid, st, cause, hops in self.rows(q.STATUSES, {"ids": list(ids)})
        }

    def memories(self, ids: Iterable[str]) -> list[dict]:
        return [r[0] for r in self.rows(q.MEMORY_FACTS, {"ids": list(ids)})]

    def rules(self) -> Rules:
        rules = Rules()
        for rid, kind, source, start, end, order in self.rows(q.ACTIVE_RETRACTIONS):
            if kind == "retract":
                rules.windows.append(Window(rid, source, start, end, order))
            else:
                rules.withdrawal_order[rid] = order
                if kind == "correct":
                    rules.corrections[rid] = order
        rules.windows.sort(key=lambda w: w.order)
        return rules

    def retraction(self, rid: str) -> dict | None:
        rows = self.rows(q.RETRACTION, {"id": rid})
        return rows[0][0] if rows else None

    def window_seeds(self, source: str, start: int | None, end: int | None) -> list[str]:
        params = {"source": source, "start": start, "end": end}
        return [r[0] for r in self.rows(q.WINDOW_SEEDS, params)]

    def source(self, sid: str) -> dict | None:
        rows = self.rows(q.SOURCE, {"id": sid})
        if not rows:
            return None
        sid, kind, name, domain = rows[0]
        return {"id": sid, "kind": kind, "name": name, "domain": domain}

    def domains(self, sources: Iterable[str]) -> dict[str, str]:
        return {s: d for s, d in self.rows(q.DOMAINS_OF, {"ids": list(sources)})}

    def existing_events(self, justification_ids: list[str], grounding_ids: list[str]) -> set[str]:
        found = {r[0] for r in self.rows(q.EXISTING_JUSTIFICATIONS, {"ids": justification_ids})}
        found |= {r[0] for r in self.rows(q.EXISTING_GROUNDINGS, {"ids": grounding_ids})}
        return found

    def actions(self) -> list[dict]:
        return [r[0] for r in self.rows(q.ACTIONS)]

    def actions_in(self, ids: list[str]) -> list[dict]:
        return [r[0] for r in self.rows(q.ACTIONS_IN, {"ids": ids})]

    def history(self, mid: str) -> list[dict]:
        keys = ("rev", "status", "cause", "hops", "op", "at")
        return [dict(zip(keys, r)) for r in self.rows(q.HISTORY, {"id": mid})]

    # -- the one write ---------------------------------------------------------------------
    def apply(self, mutation: Mutation, rev: int) -> None:
        """Write ``mutation`` atomically if the graph is still at ``rev``; else StalePreview."""
        self.ensure_schema()
        result = self.graph.query(q.APPLY, mutation.params(rev))
        if result.properties_set == 0:  # the revision guard matched nothing, so nothing was written
            raise StalePreview(
                f"stale preview: graph {self.key} is no longer at revision {rev}; preview again"
            )


def _safe_rows(graph, query: str) -> list[list]:
    try:
        return graph.query(query).result_set
    except redis.ResponseError:
        return []
