"""Typed reads and writes of one tenant's graph, over the statements in ``queries``."""

from __future__ import annotations

import contextlib
import itertools
import logging
import random
import sys
import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass

import redis

from rescind.contract.errors import StalePreview
from rescind.contract.layout import gate_log_key, gate_log_ready_key, graph_key, lock_key
from rescind.core.belief import Node, Rules, Status
from rescind.core.shapes import Mutation, Region, WriteBatch
from rescind.graph import gate_facts
from rescind.graph import queries as q
from rescind.graph.cypher import (
    ConstraintViolation,
    CypherError,
    InFlight,
    Plain,
    Prepared,
    Result,
    client_for,
    command,
    header,
    parse,
    prepare,
    query,
    send,
)
from rescind.graph.keys import justification_uid, keyed, source_uid, uid
from rescind.graph.reads import CHANGE_KEYS, CypherReads, changes, rules_from
from rescind.graph.region import read_nodes, walk
from rescind.transport import connection

_SCHEMA_LOCK = threading.Lock()
log = logging.getLogger("rescind.graph")


_UNLOCK = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end"


def linearised(graph: TenantGraph, attempt, free_tries: int = 3):
    """``attempt()`` raises StalePreview when another write got in first. Try a few times
    freely; then hold the tenant's lock, so that under heavy contention everyone progresses.

    A decision (a retraction, a recall) passes ``free_tries=0``: it takes the lock at once, and
    the writers' batches wait while it is held (``TenantGraph.wait_for_decisions``). Without
    that, under a steady stream of writes every batch made its preview stale, and a retraction
    retried until it got the lock (docs/performance.md, "Decisions take the tenant's lock")."""
    for _ in range(free_tries):
        try:
            return attempt()
        except StalePreview:
            time.sleep(random.random() * 0.002)
    with graph.exclusive():
        for _ in range(1000):  # only writers still on their free tries can get in now
            try:
                return attempt()
            except StalePreview:
                continue
    raise StalePreview(f"{graph.tenant}: the graph kept changing under the write lock")


def log_failure(logger: logging.Logger, what: str, *args) -> None:
    """Log the exception being handled, after something that already happened (a batch landed):
    a lost server is one line, since the workers' outage handling reports and waits for it; any
    other failure keeps its traceback."""
    exc = sys.exc_info()[1]
    if isinstance(exc, redis.ConnectionError | redis.TimeoutError | ConnectionError | TimeoutError):
        logger.warning(what + " (the server went away: %s)", *args, exc)
    else:
        logger.exception(what, *args)


def connect(url: str) -> connection.Client:
    """A client of the server, or of the cluster it belongs to (``rescind.transport.connection``)."""
    return connection.connect(url, socket_timeout=120, health_check_interval=30)


@dataclass
class BatchInFlight:
    key: str
    rev: int
    sent: InFlight

    def result(self) -> Result:
        try:
            result = self.sent.result()
        except ConstraintViolation as exc:  # planned against a view that missed a new node
            raise StalePreview(f"write batch of {self.key} collided with an existing node; "
                               "plan again") from exc
        if result.properties_set == 0:
            raise StalePreview(f"graph {self.key} moved past revision {self.rev} while writing")
        return result


def _fold_into_aof_base(conn: redis.Redis) -> None:
    """Ask a server with an AOF for a rewrite, so that new indexes are in the AOF's base.

    Replayed from the AOF's command part, CREATE INDEX builds its index in the background and
    the writes replayed after it do not use it: each one scans the label, and loading grows
    with the square of the graph (measured: docs/performance.md, "Restart")."""
    try:
        if conn.info("persistence").get("aof_enabled"):
            connection.rewrite_aof(conn, timeout_s=5.0)
    except redis.RedisError as exc:  # a restart is slower, nothing is lost: go on
        log.warning("could not ask FalkorDB for an AOF rewrite after creating indexes: %s", exc)


class TenantGraph(CypherReads):
    """One tenant's graph ``rescind:{tenant}``; the schema is created on first use. Its named
    reads (``rescind.graph.reads.GraphReads``) are what the operator surfaces ask of it."""

    def __init__(self, conn: connection.Client, tenant: str) -> None:
        self.tenant = tenant
        self.key = graph_key(tenant)
        self.server = conn  # for keys of the whole server (the tenants' registry, the streams)
        # On a cluster, the master that owns the tenant's slot: every key of the tenant is there.
        self.conn = connection.node_for(conn, self.key)
        self._schema_ready = False
        self.gate_log_ready = False  # its gate log made ready (rescind.engine.gate.log_of)

    # -- plumbing -------------------------------------------------------------------------
    def rows(self, cypher: str, params: dict | None = None, read_only: bool = True) -> list[list]:
        self.ensure_schema()
        if not read_only:  # a write the gate's facts cannot follow: they are renewed after it
            with gate_facts.mutating(self.conn, self.tenant):
                return query(self.conn, self.key, cypher, params, read_only).rows
        return query(self.conn, self.key, cypher, params, read_only).rows

    def many(self, *queries: tuple[str, dict | None]) -> list[list[list]]:
        """Several read queries, run in order: one round trip per run of plain or compact ones
        (they are read on different connections; a pipeline, not a transaction)."""
        self.ensure_schema()
        rows = []
        for _, run in itertools.groupby(queries, key=lambda qp: isinstance(qp[0], Plain)):
            run = list(run)
            pipe = client_for(self.conn, run[0][0], self.key).pipeline(transaction=False)
            for cypher, params in run:
                name, flags = command(cypher, read_only=True)
                pipe.execute_command(name, self.key, header(params) + cypher, *flags)
            try:
                replies = pipe.execute()
            except redis.ResponseError as exc:
                raise CypherError(str(exc)) from exc
            rows += [parse(cypher, r).rows for (cypher, _), r in zip(run, replies, strict=True)]
        return rows

    def ensure_schema(self) -> None:
        """Indexes, unique constraints and the revision, created once and waited for.

        Serialised by the tenant's lock: two processes creating a tenant's indexes at once, or a
        query racing an index still under construction, made index lookups miss nodes.
        """
        if self._schema_ready:
            return
        with _SCHEMA_LOCK, self.exclusive(purpose="schema"):
            if self._schema_ready:
                return
            existing = self._indexed()
            added = False
            for label, props in q.INDEXES.items():
                missing = tuple(p for p in props if p not in existing.get(label, ()))
                if missing:
                    query(self.conn, self.key, q.create_index(label, missing))
                    added = True
            [[_, layout]] = query(self.conn, self.key, q.INIT_META, {"layout": q.LAYOUT}).rows
            layout = layout or 1  # a graph written before the layout was kept
            if layout < 2:
                self._migrate_statuses()
            if layout < q.LAYOUT:
                self._migrate_uids()
            for label, prop in q.UNIQUE:
                self._constraint("CREATE", label, prop)
            deadline = time.monotonic() + 30
            while not self._operational():
                if time.monotonic() > deadline:
                    raise CypherError(f"indexes of {self.key} did not become operational")
                time.sleep(0.005)
            if added:
                _fold_into_aof_base(self.conn)
            self._schema_ready = True

    def _migrate_statuses(self) -> None:
        """A graph written before statuses moved to STATUS edges (queries.LAYOUT) is moved
        once, in pages, under the tenant's lock; beliefs do not change, nor the revision."""
        moved = 0
        while n := query(self.conn, self.key, q.MIGRATE_STATUS, {"page": 10_000}).rows[0][0]:
            moved += n
        log.info("%s: moved the statuses of %d memories to STATUS edges", self.key, moved)

    def _migrate_uids(self) -> None:
        """A graph written before uids (queries.LAYOUT 3) had its unique constraints on names
        that came from outside (rescind.graph.keys): those are dropped, and every node of a
        constrained label gets its uid, in pages, under the tenant's schema lock."""
        for label, prop in q.OLD_UNIQUE:
            self._constraint("DROP", label, prop)
        done = 0
        for label, _ in q.UNIQUE:
            page = q.UIDLESS.format(label=label)
            while rows := query(self.conn, self.key, page, {"page": 10_000}).rows:
                query(self.conn, self.key, q.SET_UIDS,
                      {"rows": [[n, uid(label, str(name))] for n, name in rows]})
                done += len(rows)
        query(self.conn, self.key, q.SET_LAYOUT, {"layout": q.LAYOUT})
        log.info("%s: gave %d nodes their uid; unique constraints moved to uids", self.key, done)

    def _constraint(self, verb: str, label: str, prop: str) -> None:
        """Create or drop a unique constraint; one already there (or gone) is fine."""
        try:
            self.conn.execute_command("GRAPH.CONSTRAINT", verb, self.key, "UNIQUE", "NODE", label,
                                      "PROPERTIES", "1", prop)
        except redis.ResponseError as exc:
            text = str(exc).lower()
            if not ("already exists" in text or "no such constraint" in text):
                raise

    def _index_states(self) -> dict[str, str]:
        if not self.exists():
            return {}
        rows = query(self.conn, self.key, "CALL db.indexes() YIELD label, status "
                     "RETURN label, status", read_only=True).rows
        return {label: status for label, status in rows}

    def _indexed(self) -> dict[str, set[str]]:
        """Each label's indexed properties."""
        if not self.exists():
            return {}
        rows = query(self.conn, self.key, "CALL db.indexes() YIELD label, properties "
                     "RETURN label, properties", read_only=True).rows
        return {label: set(props) for label, props in rows}

    def _operational(self) -> bool:
        indexes = self._index_states()
        constraints = query(self.conn, self.key, "CALL db.constraints()", read_only=True).rows
        return (all(indexes.get(label) == "OPERATIONAL" for label in q.INDEXES)
                and all(row[-1] == "OPERATIONAL" for row in constraints)
                and len(constraints) >= len(q.UNIQUE))

    def exists(self) -> bool:
        return self.key.encode() in self.conn.execute_command("GRAPH.LIST")

    def delete(self) -> None:
        """The graph, and the gate's decisions kept beside it (``rescind.engine.gate.log_of``)."""
        graphs = self.conn.execute_command("GRAPH.LIST")
        for key in (self.key, gate_log_key(self.tenant)):
            if key.encode() in graphs:
                self.conn.execute_command("GRAPH.DELETE", key)
        self.conn.delete(gate_log_ready_key(self.tenant))
        gate_facts.forget(self.conn, self.tenant)
        self._schema_ready = self.gate_log_ready = False

    # -- reads ----------------------------------------------------------------------------
    def revision(self) -> int:
        return self.rows(q.REVISION)[0][0]

    def region(self, seeds: Iterable[str] = (), seed_facts: list[list] | None = None) -> Region:
        """Everything downstream of ``seeds`` with its facts (see ``rescind.graph.region``)."""
        return walk(self, seeds, seed_facts)

    def nodes(self, ids: Iterable[str]) -> dict[str, Node]:
        """Facts, justifications and groundings of ``ids`` (no walk)."""
        return read_nodes(self, ids)

    def upstream(self, target: str) -> set[str]:
        seen, frontier = {target}, [target]
        while frontier:
            nxt = [r[0] for r in self.rows(q.UPSTREAM_STEP, {"ids": frontier}) if r[0] not in seen]
            seen.update(nxt)
            frontier = nxt
        return seen

    def statuses(self, ids: Iterable[str]) -> dict[str, Status]:
        return {
            mid: Status(st, cause, hops)
            for mid, st, cause, hops in self.rows(q.STATUSES, {"ids": list(ids)})
        }

    def memories(self, ids: Iterable[str]) -> list[dict]:
        return [r[0] for r in self.rows(q.MEMORY_FACTS, {"ids": list(ids)})]

    rules_from = staticmethod(rules_from)  # the rules, from rows of queries.ACTIVE_RETRACTIONS

    def rules(self) -> Rules:
        return self.rules_from(self.rows(q.ACTIVE_RETRACTIONS))

    def context(self, retraction_id: str, window: tuple[str, int | None, int | None] | None = None):
        """In two round trips, in this order: the revision, a stored retraction, the active
        rules, and for a window (source, start, end) whether the source exists and the facts
        of what it covers."""
        source, start, end = window or ("", None, None)
        rev, stored, active, src, seeds = self.many(
            (q.REVISION, None), (q.RETRACTION, {"id": retraction_id}), (q.ACTIVE_RETRACTIONS, None),
            (q.SOURCE, {"uid": source_uid(source)}),
            (q.WINDOW_SEEDS, {"source_uid": source_uid(source), "start": start, "end": end}))
        return (rev[0][0], (stored[0][0] if stored else None), self.rules_from(active), bool(src),
                seeds)

    def retraction(self, rid: str) -> dict | None:
        rows = self.rows(q.RETRACTION, {"id": rid})
        return rows[0][0] if rows else None

    def window_seeds(self, source: str, start: int | None, end: int | None) -> list[str]:
        params = {"source_uid": source_uid(source), "start": start, "end": end}
        return [r[1] for r in self.rows(q.WINDOW_SEEDS, params)]  # r[0]: the node id

    def source_facts(self, sources: Iterable[str]) -> dict[str, tuple[str, str]]:
        """Each source's (trust domain, kind)."""
        uids = [source_uid(s) for s in sources]
        return {s: (d, kind) for s, d, kind in self.rows(q.DOMAINS_OF, {"uids": uids})}

    def domains(self, sources: Iterable[str]) -> dict[str, str]:
        return {s: d for s, (d, _) in self.source_facts(sources).items()}

    def write_context(self, justification_ids: list[str], groundings: list[dict],
                      ids: Iterable[str]) -> tuple[int, set[str], dict[str, Status], Rules]:
        """In two round trips, what planning a write batch reads: the revision (first, so that
        anything written after it makes the batch stale), the active rules, which event ids
        were applied already ({id, mem} for groundings), and the statuses of ``ids``."""
        rev, active, a, b, st = self.many(
            (q.REVISION, None), (q.ACTIVE_RETRACTIONS, None),
            (q.EXISTING_JUSTIFICATIONS,
             {"uids": [justification_uid(j) for j in justification_ids]}),
            (q.EXISTING_GROUNDINGS, {"rows": groundings}), (q.STATUSES, {"ids": list(ids)}))
        return (rev[0][0], {r[0] for r in a} | {r[0] for r in b},
                {mid: Status(s, cause, hops) for mid, s, cause, hops in st}, self.rules_from(active))

    def actions(self) -> list[dict]:
        return [r[0] for r in self.rows(q.ACTIONS)]

    def actions_in(self, ids: list[str]) -> list[dict]:
        return [r[0] for r in self.rows(q.ACTIONS_IN, {"ids": ids})]

    def history(self, mid: str) -> list[dict]:
        """Every status a memory has had, with its cause and hop distance, oldest first."""
        rows = self.rows(q.HISTORY, {"id": mid})
        if not rows:
            return []
        rev, born, cause, hops, at, later = rows[0]
        birth = {"rev": rev, "status": born, "cause": cause, "hops": hops, "op": "write", "at": at}
        return [birth] + [dict(zip(CHANGE_KEYS, e, strict=True)) for e in changes(later)]

    # -- contention ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def exclusive(self, ttl_ms: int = 10_000, wait_s: float = 60.0, purpose: str = "write"):
        """Hold one of the tenant's locks. The write lock is a fallback for progress when
        optimistic attempts keep going stale; correctness never rests on it (every write is
        still revision-guarded). The schema lock serialises the creation of indexes."""
        key, token = lock_key(self.tenant, purpose), uuid.uuid4().hex
        deadline, pause = time.monotonic() + wait_s, 0.001
        while not self.conn.set(key, token, nx=True, px=ttl_ms):
            if time.monotonic() > deadline:
                raise StalePreview(f"could not take the write lock of {self.tenant} in {wait_s}s")
            time.sleep(pause + random.random() * pause)
            pause = min(pause * 2, 0.05)
        try:
            yield
        finally:
            self.conn.eval(_UNLOCK, 1, key, token)

    def wait_for_decisions(self, timeout_s: float = 10.0) -> None:
        """Wait while someone holds the tenant's write lock (a decision being previewed and
        committed): a batch sent meanwhile would only make it stale. The lock expires, so
        a holder that died holds no one up for longer than its ttl; nor does this wait."""
        key, pause = lock_key(self.tenant, "write"), 0.0005
        deadline = time.monotonic() + timeout_s
        while self.conn.exists(key) and time.monotonic() < deadline:
            time.sleep(pause)
            pause = min(pause * 2, 0.01)

    # -- the writes -------------------------------------------------------------------------
    def write_batch(self, batch: WriteBatch, rev: int) -> Result:
        """Justified writes (see queries.WRITE_BATCH), if the graph is still at ``rev``."""
        return self.send_batch(self.prepare_batch(batch, rev), rev).result()

    @staticmethod
    def prepare_batch(batch: WriteBatch, rev: int) -> Prepared:
        """The text of ``write_batch``: for 5,000 writes, building it costs a third as much as
        the server takes to write them, so a bulk load builds it while the server works."""
        return prepare(q.WRITE_BATCH, keyed(batch.params(rev)))

    def send_batch(self, prepared: Prepared, rev: int) -> BatchInFlight:
        """A prepared batch sent without waiting: ``.result()`` waits (and raises StalePreview)."""
        self.ensure_schema()
        return BatchInFlight(self.key, rev, send(self.conn, self.key, prepared))

    def apply(self, mutation: Mutation, rev: int) -> Result:
        """Write ``mutation`` atomically if the graph is still at ``rev``; else StalePreview."""
        self.ensure_schema()
        with gate_facts.mutating(self.conn, self.tenant):  # statuses, sources, rules: any
            result = query(self.conn, self.key, q.APPLY, keyed(mutation.params(rev)))
        if result.properties_set == 0:  # the revision guard matched nothing, so nothing was written
            raise StalePreview(
                f"stale preview: graph {self.key} is no longer at revision {rev}; preview again"
            )
        return result

    def rename_source(self, rev: int, variant: str, canonical: str, uid: str | None,
                      domain: str) -> bool:
        """Source ``variant`` becomes ``canonical`` (queries.RENAME), if the graph is still at
        ``rev``; False when it moved."""
        return bool(self.rows(q.RENAME, {"rev": rev, "variant": variant, "canonical": canonical,
                                         "uid": uid, "domain": domain}, read_only=False))

    def move_source(self, rev: int, variant: str, canonical: str) -> bool:
        """Source ``variant``'s SAID edges move to ``canonical``, and it goes (queries.MOVE), if
        the graph is still at ``rev``; False when it moved."""
        return bool(self.rows(q.MOVE, {"rev": rev, "variant": variant, "canonical": canonical},
                              read_only=False))
