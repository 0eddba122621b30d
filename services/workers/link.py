"""Whether the workers reach FalkorDB, and how they come back when it returns.

The server can go away (killed, restarted by ``rescind up`` on its data, failed over) and come
back after a while, perhaps still loading its data. The workers notice it by a PING every
``healthy_s`` (or at once, when a step of theirs loses the connection), log it once, stop
reading the streams, and look for the server again with a pause that doubles from ``first_s``
up to ``max_s``. When it answers they log it once and read again (``rescind.workers.app``).
Nothing is logged per attempt: FastStream's own fetch errors about a lost connection are
dropped (``quiet``), since this one line says it.
"""

from __future__ import annotations

import asyncio
import logging
import time

import redis

from rescind.transport import connection
from rescind.workers.policy import lost_connection

log = logging.getLogger("rescind.workers")


class Link:
    def __init__(self, first_s: float = 0.1, max_s: float = 2.0, healthy_s: float = 0.5) -> None:
        self.first_s, self.max_s, self.healthy_s = first_s, max_s, healthy_s
        self.up = True
        self.outages = 0
        self._since = 0.0
        self._pause = first_s

    def lost(self, exc: BaseException) -> None:
        """The connection failed (any thread may say so): logged once per outage."""
        if self.up:
            self.up, self._since, self._pause = False, time.monotonic(), self.first_s
            self.outages += 1
            log.warning("lost FalkorDB (%s: %s); the workers wait for it, looking again with a "
                        "pause that doubles up to %.0f s", type(exc).__name__, exc, self.max_s)

    def pause(self) -> float:
        """How long to wait before the next probe."""
        if self.up:
            return self.healthy_s
        pause, self._pause = self._pause, min(self.max_s, self._pause * 2)
        return pause

    def probe(self, conn: redis.Redis) -> bool:
        """PING the server; True when it answers (a server loading its data does not). On a
        cluster, True once it says ``cluster_state:ok``: while a master's replica is taking
        over, the master's slots are served by no one, and reading then only fails again."""
        try:
            conn.ping()
            if connection.clustered(conn):
                state = conn.cluster_info().get("cluster_state")
                if state != "ok":
                    raise redis.ConnectionError(f"the cluster's state is {state!r}")
        except Exception as exc:
            if not lost_connection(exc) and not isinstance(exc, redis.ResponseError):
                raise
            self.lost(exc)
            return False
        if not self.up:
            log.warning("FalkorDB answers again after %.1f s; the workers go on",
                        time.monotonic() - self._since)
            self.up = True
        return True


def quiet(record: logging.LogRecord) -> bool:
    """A logging filter: FastStream's report of a lost connection (one per subscriber and
    attempt, with a traceback) is dropped; the Link says it once per outage. So is a handler
    cancelled because its subscribers were stopped for an outage: its entry stays pending, and
    is taken again (by the reaper, or when the subscribers read again)."""
    exc = record.exc_info[1] if record.exc_info else None
    return not (exc is not None and (lost_connection(exc)
                                     or isinstance(exc, asyncio.CancelledError)))


__all__ = ["Link", "quiet"]
