"""What is OUT for one tenant: a snapshot of its graph, then its status stream, in the background.

A cache starts from a snapshot: it notes where the tenant's status stream (``rescind:{t}:status``)
ends, reads the tenant's OUT memories from its graph, and then follows the stream from the noted
entry on. Statuses are absolute, so replaying events the snapshot already reflects converges to
the latest state. The stream is capped: when entries the cache had not read yet were trimmed
away (or the stream was deleted since, the tenant starting afresh), it takes a fresh snapshot,
so trimming never hands out an OUT memory.

Whether entries were lost is counted, not guessed: XINFO STREAM says how many entries were ever
added and how many are left; the cache knows how many it has accounted for (at its snapshot,
and one per entry read since). The check and the read are one transaction, so no trim slips
between them.

Redis away: constructing a cache never raises and waits at most ``wait_s`` for its first
snapshot. Until one has been taken the cache is not ``synced`` and holds nothing, and its
thread keeps trying (snapshot first, then follow). Meanwhile ``is_out`` answers from what the
cache has (nothing: every memory counts as IN) rather than hiding everything: the agent's store
is not Redis and keeps working, while what can cause harm, an action, still asks the gate, which
fails closed without Redis.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from rescind.contract import layout
from rescind.contract.errors import Invalid
from rescind.transport import connection

# The snapshot reads the graph directly; this query lives here because the middleware may not
# import rescind.graph (see tests/unit/test_layers.py).
OUT_MEMORIES = "MATCH (m:Mem)-[:STATUS {status: 'OUT'}]->() RETURN m.id"  # see rescind.graph.queries
log = logging.getLogger("rescind.status")
BATCH = 10_000  # status entries read at a time
IDLE_BLOCK_MS = 2_000  # one blocking read per this while nothing arrives
RECHECK_S = 30.0  # and the full catch-up at least this often even so


class StatusCache:
    """The OUT memories of one tenant (``out``), kept current by a background thread.

    ``follow=False`` starts no thread: the owner calls ``refresh`` (tests, scripted runs)."""

    def __init__(self, url: str, tenant: str, wait_s: float = 1.0, follow: bool = True) -> None:
        self.tenant = tenant
        self.out: set[str] = set()
        self.synced = False  # a snapshot was taken and the stream is followed from it
        self._stream = layout.status_stream(tenant)
        self._graph = layout.graph_key(tenant)
        # No retries of its own: the thread tries again, and the constructor must not wait.
        # On a cluster, the master that owns the tenant's slot (its graph and stream are there):
        # the stream's transactions read as on one server.
        self._server = connection.connect(url, socket_timeout=10, socket_connect_timeout=wait_s,
                                          retry=Retry(NoBackoff(), 0))
        self._conn = connection.node_for(self._server, self._stream)
        self._last, self._added = "0-0", 0  # the last entry accounted for, and its rank
        self._told = False  # whether the tenant's existence was checked
        self._stop = threading.Event()
        self._tried = threading.Event()  # the first snapshot was tried
        self._lock = threading.Lock()  # one reader at a time, so statuses apply in stream order
        self._thread: threading.Thread | None = None
        if follow:
            self._thread = threading.Thread(target=self._run, name="rescind-status", daemon=True)
            self._thread.start()
            self._tried.wait(wait_s)
        else:
            with contextlib.suppress(redis.RedisError):
                self._catch_up()

    def is_out(self, mem_id: str) -> bool:
        return mem_id in self.out

    def refresh(self, block_ms: int | None = None) -> None:
        """Catch up with the stream (a snapshot first when one is due); with ``block_ms``, wait
        that long for new entries if there were none. RedisError when Redis cannot be reached."""
        if self._catch_up() or not block_ms:
            return
        self._wait(block_ms)
        self._catch_up()

    def close(self) -> None:
        self._stop.set()

    # -- the work -----------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                read = self._catch_up()
                self._tried.set()
                # Idle, only the blocking read runs: the catch-up's transaction (and the check
                # for lost entries in it) waits until an entry arrives, or a while has passed.
                since = time.monotonic()
                while not read and not self._stop.is_set():
                    read = self._wait(IDLE_BLOCK_MS) or time.monotonic() - since > RECHECK_S
            except Exception:  # noqa: BLE001 - Redis away, or a reply it could not read: again
                self._tried.set()
                self._stop.wait(1.0)

    def _wait(self, block_ms: int) -> bool:
        """Until an entry after the last one accounted for arrives, or ``block_ms`` passes:
        whether one did. It is read by the next ``_catch_up``, with the check for lost
        entries."""
        return bool(self._conn.xread({self._stream: self._last}, count=1, block=block_ms))

    def _catch_up(self) -> int:
        """Snapshot if due, then read what is new; the number of entries read (1 for a
        snapshot)."""
        with self._lock:
            n = 0
            if not self.synced:
                self._snapshot()
                n = 1
            while True:
                read = self._step()
                if read is None:  # entries were lost: start again from the graph
                    self.synced = False
                    self._snapshot()
                    n += 1
                    continue
                n += read
                if read < BATCH:
                    return n

    def _snapshot(self) -> None:
        if not self._told:  # once: an agent wrapped for a tenant nobody created loses its events
            self._told = True
            if not self._server.hexists(layout.TENANTS, self.tenant):
                log.warning("tenant %r was never created: Rescind's workers dead-letter its "
                            "events until it is (`rescind tenant create %s`, or the admin's "
                            "POST /api/v1/tenants)", self.tenant, self.tenant)
        info = self._info()
        last = _text(info["last-generated-id"]) if info else "0-0"
        added = info.get("entries-added", 0) if info else 0
        out = self._out_of_graph()
        self.out, self._last, self._added, self.synced = out, last, added, True

    def _info(self) -> dict | None:
        try:
            return self._conn.xinfo_stream(self._stream)
        except redis.ResponseError as exc:
            if "no such key" in str(exc).lower():
                return None
            raise

    def _out_of_graph(self) -> set[str]:
        try:
            reply = self._conn.execute_command("GRAPH.RO_QUERY", self._graph, OUT_MEMORIES)
        except redis.ResponseError as exc:
            if "empty key" in str(exc):  # no graph yet: nothing is OUT
                return set()
            raise
        _header, rows, *_stats = reply
        return {_text(row[0]) for row in rows}

    def _step(self) -> int | None:
        """Read the next entries with the stream's state, in one transaction: how many were
        read, or None when entries after the last one accounted for are gone."""
        pipe = self._conn.pipeline(transaction=True)
        pipe.xinfo_stream(self._stream)
        pipe.xread({self._stream: self._last}, count=BATCH)
        info, reply = pipe.execute(raise_on_error=False)
        if isinstance(reply, Exception):
            raise reply
        if isinstance(info, redis.ResponseError) and "no such key" in str(info).lower():
            info = None
        elif isinstance(info, Exception):
            raise info
        if lost(info, self._last, self._added):
            return None
        n = 0
        for _, entries in reply or ():
            for entry_id, fields in entries:
                self._last, self._added, n = _text(entry_id), self._added + 1, n + 1
                self._apply(fields)
        return n

    def _apply(self, fields: dict) -> None:
        try:
            event = layout.decode(fields).event()
        except Invalid:
            return
        if event.get("tenant") != self.tenant or not isinstance(event.get("memory"), str):
            return
        if event.get("status") == "OUT":
            self.out.add(event["memory"])
        else:
            self.out.discard(event["memory"])


def lost(info: dict | None, last: str, added: int) -> bool:
    """Whether entries after ``last``, the ``added``-th entry ever added to the stream, are gone
    (``info``: XINFO STREAM's reply, None when the stream does not exist)."""
    if info is None:
        return added > 0  # deleted: the tenant started afresh
    first = info.get("first-entry")
    first_id = _text(first[0]) if first else None
    total = info.get("entries-added")
    if total is None:  # a server before Redis 7 does not count: by ids alone, erring on caution
        newest = first_id or _text(info["last-generated-id"])
        return _newer(newest, last)
    if total < added:
        return True  # deleted and created again
    if first_id is not None and not _newer(first_id, last):
        return False  # trims take the oldest entries first: none after ``last`` went
    # Every entry left is after ``last``; were fewer left than were added after it?
    return info["length"] < total - added


def _newer(a: str, b: str) -> bool:
    """Whether stream id ``a`` comes after ``b``."""
    return _parts(a) > _parts(b)


def _parts(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
