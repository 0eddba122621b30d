"""Publishing that never blocks the agent, and loses nothing when its process dies.

``publish`` writes the event to its tenant's spool on local disk (``spool``: one JSON line,
one write(2), no fsync; ``durable=True`` adds the fsync) and queues it in memory; a daemon
thread sends the queue with one pipelined XADD per batch, and, in turns with it, segment files
the spool has to send again (left by a dead process, or let go of by memory). While Redis is
unreachable the events wait in memory (up to ``capacity``; beyond that the oldest leave memory
and are sent from their files later) and on disk (up to ``spool_max_bytes`` per tenant; beyond
that the oldest segment is dropped, counted in ``stats.dropped`` and logged), and the thread
retries with backoff.

A burst is sent together: the sending thread is woken by the first event published while
its queue is empty (not by every event), then lets ``linger_s`` pass before it sends, unless
a ``flush`` (the gate's, ``close``) waits or a batch is full. So the agent's thread does not
hand the interpreter to the sender at each event of an invocation (`rescind bench fidelity`:
that hand-off, not the spooling, was most of a ``publish``'s wall time), and one pipeline
carries what an invocation recorded. Events reach Redis at most about ``linger_s`` later;
they are on disk at once, as before.

Endings: ``close()`` sends what it can in its time and leaves the rest in the spool. A process
that never calls it gets the same from an ``atexit`` hook, bounded by ``exit_flush_s`` (the
thread is a daemon: without the hook the interpreter would stop it with events unsent). A
process killed outright leaves its segments unlocked: a publisher for the tenant sends them,
when it starts, whenever Redis comes back, and every ``CLAIM_EVERY_S`` when idle. Stream
names and the envelope come from ``rescind.contract.layout``, as on the services' side.
"""

from __future__ import annotations

import atexit
import functools
import logging
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from rescind.contract import layout
from rescind.contract.events import Event
from rescind.transport import connection

from . import spool
from .spool import Segment, TenantSpool

log = logging.getLogger("rescind.publisher")

MB = 1 << 20
CLAIM_EVERY_S = 30.0  # when idle, how often to look for segments a dead process left
LINGER_S = 0.05  # how long a burst gathers before it is sent (unless a flush waits for it)


@dataclass
class PublisherStats:
    published: int = 0  # entries XADDed (sent again from a spool file included)
    dropped: int = 0  # lost: over the spool's bound, or over ``capacity`` with no spool to hold them
    failures: int = 0
    batches: int = 0
    spooled: int = 0  # written to the spool
    from_spool: int = 0  # sent from a spool file


class Publisher:
    """``tenant``: whose spool to open (and take over) at once; any other tenant's opens with
    its first event."""

    def __init__(self, url: str, partitions: int = layout.PARTITIONS, capacity: int = 100_000,
                 batch: int = 1_000, connect_timeout: float = 1.0, *, tenant: str | None = None,
                 spool_dir: str | Path | None = None, spool_max_bytes: int = 512 * MB,
                 segment_bytes: int = 4 * MB, exit_flush_s: float = 2.0,
                 linger_s: float = LINGER_S) -> None:
        self.url = url
        self.linger_s = linger_s
        self.partitions = partitions
        self.batch = batch
        # (seq, stream, fields, spool, segment, offset in it): the send queue
        self.buffer: deque[tuple[int, str, dict, TenantSpool | None, Segment | None, int]] = \
            deque()
        self._seq = 0
        self.capacity = capacity
        self.stats = PublisherStats()
        self.spool_dir = Path(spool_dir) if spool_dir is not None else spool.default_dir()
        self.spool_max_bytes, self.segment_bytes = spool_max_bytes, segment_bytes
        self.exit_flush_s = exit_flush_s
        # Run by ``flush`` first (with its timeout): the recorder's steps not run yet, whose
        # events are to be published (``recorder.Later.drain``).
        self.before_flush: Callable[[float], bool] | None = None
        connection.replica_wait_ms()  # a bad RESCIND_REPLICA_WAIT_MS stops here, not the sender
        self._spools: dict[str, TenantSpool | None] = {}
        self._streams: dict[str, str] = {}  # tenant -> its stream
        self._cv = threading.Condition()
        self._stop = False
        self._closed = False
        self._sending = False  # a chunk is on the wire
        self._streak = 0  # sends failed in a row
        self._retry_now = False  # a flush is waiting: skip the backoff
        self._flushing = 0  # flushes waiting: send at once, no lingering
        self._burst_at = 0.0  # when the queue last went from empty to holding an event
        self._held = 0  # batches of recording steps running (``hold``)
        self._kick = False  # a held batch ended: send what it published now, no linger
        self._last: dict[str, str] = {}  # stream -> the id of the last entry sent there
        self._conn = connection.connect(url, socket_connect_timeout=connect_timeout,
                                          socket_timeout=5)
        if tenant is not None:
            with self._cv:
                self._open(tenant)
        self._thread = threading.Thread(target=self._run, name="rescind-publisher", daemon=True)
        self._thread.start()
        self._exit_hook = functools.partial(_at_exit, weakref.ref(self))
        atexit.register(self._exit_hook)

    @classmethod
    def from_config(cls, config: Any) -> Publisher:
        """The publisher an ``InterceptConfig`` describes."""
        return cls(config.url, partitions=config.partitions, tenant=config.tenant,
                   spool_dir=config.spool_dir, spool_max_bytes=config.spool_max_bytes,
                   exit_flush_s=config.exit_flush_s)

    def stream_of(self, tenant: str) -> str:
        stream = self._streams.get(tenant)
        if stream is None:  # a hash of the tenant's name: once per tenant, not per event
            stream = self._streams[tenant] = layout.tenant_stream(tenant, self.partitions)
        return stream

    def publish(self, event: Event, durable: bool = False) -> None:
        """Spool and queue one event; returns at once whatever Redis is doing. ``durable``:
        the event is fsynced to disk before this returns (it survives a crash of the machine,
        not only of the process); costs a disk flush, so kept for what must not be lost."""
        entry = layout.encode_event(event)
        stream = self.stream_of(event.tenant)
        data = spool.line(stream, entry)
        with self._cv:
            sp = self._spools[event.tenant] if event.tenant in self._spools \
                else self._open(event.tenant)
            seg, offset = (sp.append(data, durable) if sp is not None else None) or (None, 0)
            if seg is not None:
                self.stats.spooled += 1
            elif durable:
                log.warning("a durable event (%s) is in memory only: the spool "
                            "could not take it", type(event).__name__)
            if len(self.buffer) >= self.capacity:
                self._evict()
            first = not self.buffer  # the sender sleeps: wake it (once per burst)
            if first:
                self._burst_at = time.monotonic()
            self._seq += 1
            self.buffer.append((self._seq, stream, entry, sp, seg, offset))
            if sp is not None and sp.size > sp.max_bytes:
                self._bound(sp)
            if (first and not self._held) or len(self.buffer) == self.batch:
                self._cv.notify_all()

    def hold(self) -> None:
        """A batch of recording steps starts (``recorder.Later``): the events it publishes
        are sent together once it ends (``release``), without waking the sender for the first
        of them and without a linger after the last: one wake-up of the sender per batch."""
        with self._cv:
            self._held += 1

    def release(self) -> None:
        """The batch ``hold`` announced has ended: what is queued is sent now."""
        with self._cv:
            self._held -= 1
            if not self._held and self.buffer:
                self._kick = True
                self._cv.notify_all()

    @property
    def backlog(self) -> int:
        """Events queued in memory (the spool's files may hold more to send again)."""
        return len(self.buffer)

    @property
    def spool_bytes(self) -> int:
        """Bytes of spool segments this publisher holds."""
        with self._cv:
            return sum(sp.size for sp in self._spools.values() if sp is not None)

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything queued so far is in its stream (what memory holds and the
        spool files being sent); False on timeout, or as soon as the server proves
        unreachable (two sends in a row failed, one of them during this call; the first retry
        after a success is immediate, since a server that restarted fails once on the old
        connection). What is unsent stays queued and spooled."""
        deadline = time.monotonic() + timeout
        if self.before_flush is not None and not self.before_flush(timeout):
            return False
        with self._cv:
            failures = self.stats.failures
            self._retry_now = True
            self._flushing += 1
            self._cv.notify_all()
            try:
                while self.buffer or self._sending or self._disk_pending():
                    if self.stats.failures > failures and self._streak >= 2:
                        return False
                    remaining = deadline - time.monotonic()
                    if remaining <= 0 or not self._thread.is_alive():
                        return False
                    self._cv.wait(min(remaining, 0.05))
            finally:
                self._flushing -= 1
        return True

    def sent_through(self, tenant: str, timeout: float) -> dict[str, str] | None:
        """Flush, then where this process's events of ``tenant`` ended in their stream ({stream:
        the last entry id sent}): what the gate waits for the writer to apply before judging.
        None when they could not all be sent in ``timeout``."""
        if not self.flush(timeout):
            return None
        stream = self.stream_of(tenant)
        with self._cv:
            last = self._last.get(stream)
        return {stream: last} if last else {}

    def close(self, timeout: float = 10.0) -> None:
        """Send what can be sent within ``timeout``; the rest stays in the spool for the next
        publisher of the tenant. Events published afterwards are spooled only."""
        atexit.unregister(self._exit_hook)
        deadline = time.monotonic() + timeout
        if not self._closed:
            self.flush(timeout)
        with self._cv:
            self._stop = True
            self._cv.notify_all()
        self._thread.join(max(deadline - time.monotonic(), 0.1))
        with self._cv:
            self._closed = True
            for sp in self._spools.values():
                if sp is not None:
                    sp.release()
            self._spools.clear()

    # -- under the lock ----------------------------------------------------------------------
    def _open(self, tenant: str) -> TenantSpool | None:
        try:
            sp = TenantSpool(self.spool_dir / tenant, self.spool_max_bytes, self.segment_bytes)
        except OSError as exc:
            log.warning("no spool for tenant %s in %s (%s): its events are kept in "
                        "memory only", tenant, self.spool_dir, exc)
            sp = None
        self._spools[tenant] = sp
        if sp is not None and not self._closed and sp.claim():
            self._bound(sp)
            self._cv.notify_all()
        return sp

    def _evict(self) -> None:
        """Memory is full: its oldest entry leaves it, to be sent from its spool file later."""
        _, _, _, sp, seg, offset = self.buffer.popleft()
        if sp is None or seg is None:
            self.stats.dropped += 1
        else:
            sp.evicted(seg, offset)

    def _bound(self, sp: TenantSpool) -> None:
        dropped = sp.bound()
        for _, lost in dropped:
            self.stats.dropped += lost
        gone = {id(seg) for seg, _ in dropped}
        if any(id(e[4]) in gone for e in self.buffer):
            self.buffer = deque(e for e in self.buffer if id(e[4]) not in gone)

    def _disk_pending(self) -> bool:
        return any(sp is not None and sp.disk for sp in self._spools.values())

    def _disk_job(self) -> tuple[TenantSpool, Segment] | None:
        for sp in self._spools.values():
            if sp is not None and sp.disk:
                return sp, sp.disk[0]
        return None

    def _claim_all(self) -> None:
        for sp in self._spools.values():
            if sp is not None and sp.claim():
                self._bound(sp)

    # -- the sending thread ------------------------------------------------------------------
    def _run(self) -> None:
        disk_turn = False  # memory and files take turns, so neither starves the other
        next_claim = time.monotonic() + CLAIM_EVERY_S
        while True:
            with self._cv:
                while not self._stop and not self.buffer and not self._disk_pending():
                    # Woken by what brings work (the first event of a burst, a flush, a claim,
                    # close): idle, it wakes only to look for what a dead sibling left.
                    self._cv.wait(max(next_claim - time.monotonic(), 0.01))
                    if time.monotonic() >= next_claim:  # a sibling process died meanwhile
                        next_claim = time.monotonic() + CLAIM_EVERY_S
                        self._claim_all()
                if self._stop:
                    self._cv.notify_all()
                    return
                self._linger()
                if self._stop:
                    self._cv.notify_all()
                    return
                job = self._disk_job() if disk_turn or not self.buffer else None
                if job is not None:
                    sp, seg = job
                    seg.busy = True
                    at = seg.resend_from or 0
                else:
                    chunk = [self.buffer[i] for i in range(min(self.batch, len(self.buffer)))]
                    self._kick = False
                self._sending = True
            disk_turn = job is None
            if job is not None:
                try:
                    entries, end, _ = TenantSpool.read(seg, at, self.batch)
                except OSError:  # unreadable: nothing more can come of it
                    entries, end = [], seg.size
            else:
                entries = [(stream, fields) for _, stream, fields, *_ in chunk]
            try:
                if entries:
                    pipe = self._conn.pipeline(transaction=False)
                    for stream, fields in entries:
                        pipe.xadd(stream, fields)
                    ids = pipe.execute()
                    # Sent once a replica has them too (when there are replicas): a failover
                    # then loses nothing the spool let go of.
                    if not all(connection.replicated(self._conn, s)
                               for s in {stream for stream, _ in entries}):
                        raise redis.ConnectionError("no replica confirmed the events in time")
            except redis.RedisError:
                self._failed(job)
                continue
            with self._cv:
                back = self._streak >= 2
                self._streak, self._retry_now = 0, False
                if job is not None:
                    sp.resent(seg, end, len(entries))
                    self.stats.from_spool += len(entries)
                    if not sp.disk and sp.claim():  # more than one claim could hold
                        self._bound(sp)
                else:
                    last = chunk[-1][0]  # an overflow meanwhile may have dropped some already
                    while self.buffer and self.buffer[0][0] <= last:
                        _, _, _, esp, eseg, _ = self.buffer.popleft()
                        if esp is not None and eseg is not None:
                            esp.sent(eseg)
                for (stream, _), entry in zip(entries, ids, strict=True):
                    self._last[stream] = entry.decode() if isinstance(entry, bytes) else entry
                if back:  # Redis is back: what processes that died meanwhile left
                    self._claim_all()
                self._burst_at = time.monotonic()  # what came meanwhile: the next burst
                self.stats.published += len(entries)
                self.stats.batches += 1
                self._sending = False
                self._cv.notify_all()

    def _linger(self) -> None:
        """Under the lock: let the queue's burst gather for ``linger_s`` after its first
        event, unless a flush waits, the sender is stopping, a batch is full or a held batch
        of recording steps has ended (``release``)."""
        while self.buffer and not (self._stop or self._flushing or self._kick
                                   or len(self.buffer) >= self.batch):
            remaining = self._burst_at + self.linger_s - time.monotonic()
            if remaining <= 0:
                return
            self._cv.wait(remaining)

    def _failed(self, job: tuple[TenantSpool, Segment] | None) -> None:
        with self._cv:
            if job is not None:
                job[0].unread(job[1])
            self._sending = False
            self.stats.failures += 1
            self._streak += 1
            self._cv.notify_all()
            if self._streak > 1:  # the first retry is at once: a restarted server's old socket
                delay = min(0.05 * 2 ** (self._streak - 2), 2.0)
                self._cv.wait_for(lambda: self._retry_now or self._stop, delay)
            self._retry_now = False


def _at_exit(ref: weakref.ref) -> None:
    """At interpreter exit: send what can be sent in ``exit_flush_s``, spool the rest."""
    pub = ref()
    if pub is not None:
        pub.close(pub.exit_flush_s)
