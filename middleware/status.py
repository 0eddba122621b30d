"""What is OUT, as the StatusChanged events say: read from the status stream in the background."""

from __future__ import annotations

import threading

import redis

from rescind.contract import layout
from rescind.contract.errors import Invalid


class StatusCache:
    def __init__(self, url: str, tenant: str) -> None:
        self.tenant = tenant
        self.out: set[str] = set()
        self._conn = redis.Redis.from_url(url, socket_timeout=10)
        self._last = "0"
        self._stop = threading.Event()
        self._lock = threading.Lock()  # one reader at a time, so statuses apply in stream order
        self.refresh()
        self._thread = threading.Thread(target=self._run, name="rescind-status", daemon=True)
        self._thread.start()

    def refresh(self, block_ms: int | None = None) -> None:
        """Read status events up to now (or wait ``block_ms`` for the next ones)."""
        with self._lock:
            reply = self._conn.xread({layout.status_stream(self.tenant): self._last},
                                     count=10_000, block=block_ms)
            self._apply(reply)

    def _apply(self, reply) -> None:
        for _, entries in reply or ():
            for entry_id, fields in entries:
                self._last = entry_id.decode()
                try:
                    event = layout.decode(fields).event()
                except Invalid:
                    continue
                if event.get("tenant") != self.tenant:
                    continue
                if event.get("status") == "OUT":
                    self.out.add(event["memory"])
                else:
                    self.out.discard(event["memory"])

    def is_out(self, mem_id: str) -> bool:
        return mem_id in self.out

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.refresh(block_ms=500)
            except redis.RedisError:
                self._stop.wait(1.0)

    def close(self) -> None:
        self._stop.set()
