"""Publishing that never blocks the agent: events go to the streams in background batches.

``publish`` only appends to a bounded in-memory buffer; a daemon thread sends what is there
with one pipelined XADD per batch. While Redis is unreachable the buffer holds events (up to
``capacity``; beyond that the oldest are dropped and counted) and the thread retries with
backoff, flushing everything on reconnect. Stream names and the envelope come from
``rescind.contract.layout``, as on the services' side.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass

import redis

from rescind.contract import layout
from rescind.contract.events import Event


@dataclass
class PublisherStats:
    published: int = 0
    dropped: int = 0
    failures: int = 0
    batches: int = 0


class Publisher:
    def __init__(self, url: str, partitions: int = layout.PARTITIONS, capacity: int = 100_000,
                 batch: int = 1_000, connect_timeout: float = 1.0) -> None:
        self.url = url
        self.partitions = partitions
        self.batch = batch
        self.buffer: deque[tuple[int, str, dict]] = deque()
        self._seq = 0
        self.capacity = capacity
        self.stats = PublisherStats()
        self._cv = threading.Condition()
        self._stop = False
        self._sending = False  # a chunk is on the wire
        self._conn = redis.Redis.from_url(url, socket_connect_timeout=connect_timeout,
                                          socket_timeout=5)
        self._thread = threading.Thread(target=self._run, name="rescind-publisher", daemon=True)
        self._thread.start()

    def stream_of(self, tenant: str) -> str:
        return layout.tenant_stream(tenant, self.partitions)

    def publish(self, event: Event) -> None:
        """Queue one event; returns at once whatever Redis is doing."""
        entry = layout.encode_event(event)
        with self._cv:
            if len(self.buffer) >= self.capacity:
                self.buffer.popleft()
                self.stats.dropped += 1
            self._seq += 1
            self.buffer.append((self._seq, self.stream_of(event.tenant), entry))
            self._cv.notify()

    @property
    def backlog(self) -> int:
        return len(self.buffer)

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything queued so far has been sent; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cv:
            self._cv.notify()
            while self.buffer or self._sending:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cv.wait(min(remaining, 0.05))
        return True

    def close(self, timeout: float = 10.0) -> None:
        self.flush(timeout)
        with self._cv:
            self._stop = True
            self._cv.notify()
        self._thread.join(timeout)

    def _run(self) -> None:
        backoff = 0.05
        while True:
            with self._cv:
                while not self.buffer and not self._stop:
                    self._cv.wait(0.5)
                if self._stop and not self.buffer:
                    return
                chunk = [self.buffer[i] for i in range(min(self.batch, len(self.buffer)))]
                self._sending = True
            try:
                pipe = self._conn.pipeline(transaction=False)
                for _, stream, entry in chunk:
                    pipe.xadd(stream, entry)
                pipe.execute()
            except (redis.ConnectionError, redis.TimeoutError):
                with self._cv:
                    self._sending = False
                    self.stats.failures += 1
                time.sleep(backoff)
                backoff = min(backoff * 2, 2.0)
                continue
            backoff = 0.05
            with self._cv:
                last = chunk[-1][0]  # an overflow meanwhile may have dropped some already
                while self.buffer and self.buffer[0][0] <= last:
                    self.buffer.popleft()
                self.stats.published += len(chunk)
                self.stats.batches += 1
                self._sending = False
                self._cv.notify_all()
