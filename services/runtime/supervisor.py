"""`rescind up` keeps its embedded FalkorDB running.

When the server dies it is started again on the same port and data directory (the AOF keeps
the data), after a pause that doubles with each death or failed restart up to a cap, and starts
again from the first pause once the server has stayed up for ``stable_s``: a server that keeps
dying (a crash loop) is restarted less and less often, while the writer finds the entry it dies
under (``rescind.workers.held``, crash quarantine). ``attempts`` failures in a row within
``window_s`` seconds (a death, then restarts that did not come up: a corrupt AOF, a full disk, a
port taken) mean something is wrong that a restart will not mend: the supervisor gives up and
`up` exits non-zero. Each death and each restart is logged once; the restarts are counted, the
server's last crash line (from falkordb.log) kept, and health reports them (``Restarts``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime

import redis
from pydantic import BaseModel, Field

from rescind.runtime import telemetry
from rescind.runtime.readiness import Progress, Restarts, ServerError, ServerStatus, probe
from rescind.runtime.server import EmbeddedFalkorDB

log = logging.getLogger("rescind.server")


class RestartPolicy(BaseModel):
    """How hard `up` tries (the RESCIND_RESTART_* settings)."""

    attempts: int = Field(5, ge=1, description="Failures within the window before giving up")
    window_s: float = Field(300.0, gt=0, description="The window failures are counted in")
    backoff_s: float = Field(1.0, gt=0, description="Pause before the first restart; doubles")
    backoff_max_s: float = Field(30.0, gt=0, description="Longest pause between restarts")
    stable_s: float = Field(60.0, gt=0, description="Up this long without dying: the next pause "
                            "is the first again")
    loop_after: int = Field(3, ge=1, description="Deaths within loop_window_s that health "
                            "reports as a crash loop")
    loop_window_s: float = Field(600.0, gt=0, description="The window deaths are counted in "
                                 "for a crash loop")

    @classmethod
    def from_settings(cls, settings) -> RestartPolicy:
        return cls(attempts=settings.restart_attempts, window_s=settings.restart_window_s,
                   backoff_s=settings.restart_backoff_s,
                   backoff_max_s=settings.restart_backoff_max_s)


class Supervisor:
    """Watches the server from a thread of its own, which also starts it again: the server's
    parent-death signal follows the thread that started it, so that thread must live as long
    as the server."""

    def __init__(self, server: EmbeddedFalkorDB, policy: RestartPolicy | None = None,
                 on_give_up: Callable[[str], None] | None = None) -> None:
        self.server = server
        self.policy = policy or RestartPolicy()
        self.on_give_up = on_give_up
        self.failure: str | None = None  # why it gave up
        self.restarts = 0
        self.last_crash: str | None = None  # the server's last crash line, or how it ended
        self._deaths: deque[float] = deque(maxlen=1000)  # when it died (wall clock)
        self._streak = 0  # deaths and failed restarts since it was last up for stable_s
        self._up_since: float | None = None
        self._next_pause: float | None = None
        self._lock = threading.Lock()
        self._state: ServerStatus | None = None  # restarting, loading or failed; None: look
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="rescind-supervisor",
                                        daemon=True)
        self._client = redis.Redis.from_url(server.url, socket_connect_timeout=1.0,
                                            socket_timeout=2.0)

    def start(self) -> Supervisor:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop watching. A restart still loading is not waited for: the server's own stop,
        which follows, ends it, and the thread with it."""
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(5)
        self._client.close()

    def __enter__(self) -> Supervisor:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def status(self) -> ServerStatus:
        """What health reports: our own state while restarting or after giving up, else a look
        at the server; with the restarts either way."""
        status = self._state or probe(self._client)
        return status.model_copy(update={"restarts": self.report()})

    def report(self) -> Restarts:
        """The restarts, the deaths within the crash-loop window, and the last crash line."""
        p, now = self.policy, time.time()
        with self._lock:
            deaths = list(self._deaths)
        recent = sum(1 for t in deaths if now - t <= p.loop_window_s)
        return Restarts(total=self.restarts, recent=recent, window_s=p.loop_window_s,
                        loop_after=p.loop_after, crash_loop=recent >= p.loop_after,
                        last_crash=self.last_crash, next_pause_s=self._next_pause,
                        last_death_at=datetime.fromtimestamp(deaths[-1], UTC) if deaths else None)

    def _watch(self) -> None:
        failures: deque[float] = deque()  # failures in a row: a death, then failed restarts
        while not self._stop.wait(0.2):
            process = self.server.process
            if process is not None and process.poll() is None:
                if self._up_since is not None and \
                        time.monotonic() - self._up_since >= self.policy.stable_s:
                    self._streak, self._up_since = 0, None  # stable: the pause starts afresh
                continue
            why = self.server.exit_reason()
            with self._lock:
                self._deaths.append(time.time())
            self.last_crash = self.server.crash_line() or why
            log.error("FalkorDB on %s died (%s); restarting it on the same port and data",
                      self.server.url, why)
            while True:
                pause = self._failed(failures, why)
                if pause is None:
                    return
                self._next_pause = pause
                self._state = ServerStatus(state="restarting", detail=f"FalkorDB died ({why}); "
                                           f"restarting it in {pause:.1f} s")
                if self._stop.wait(pause):
                    return
                self._next_pause = None
                self.restarts += 1
                telemetry.server_restarts.add(1, {"server": self.server.url})
                log.warning("restarting FalkorDB on %s (restart %d)", self.server.url,
                            self.restarts)
                try:
                    self.server.restart(on_progress=self._loading(Progress(self.server.where)))
                except ServerError as exc:
                    why = exc.message
                    log.error("%s", why)
                    continue
                self._state = None
                failures.clear()  # it came up: what kills it now is not for giving up on
                self._up_since = time.monotonic()
                log.warning("FalkorDB is back on %s", self.server.url)
                break

    def _failed(self, failures: deque[float], why: str) -> float | None:
        """Count one failure; the pause before the next restart, or None if we give up."""
        self._streak += 1
        now = time.monotonic()
        failures.append(now)
        while now - failures[0] > self.policy.window_s:
            failures.popleft()
        if len(failures) >= self.policy.attempts:
            self.failure = (f"FalkorDB failed {len(failures)} times within "
                            f"{self.policy.window_s:.0f} s; last: {why}")
            self._state = ServerStatus(state="failed", detail=self.failure)
            log.error("giving up: %s", self.failure)
            if self.on_give_up is not None:
                self.on_give_up(self.failure)
            return None
        return min(self.policy.backoff_max_s, self.policy.backoff_s * 2 ** (self._streak - 1))

    def _loading(self, progress: Progress) -> Callable[[ServerStatus], None]:
        """Health says how far the restarted server's loading is; stderr too."""
        def seen(status: ServerStatus) -> None:
            if not status.ok:
                self._state = status
            progress(status)
        return seen


class Supervisors:
    """The nodes of a local cluster, each watched by a Supervisor of its own: health shows the
    first node that is not well, and giving up on one node gives up on the whole."""

    def __init__(self, servers: list[EmbeddedFalkorDB], policy: RestartPolicy | None = None) -> None:
        self.each = [Supervisor(s, policy) for s in servers]

    @property
    def failure(self) -> str | None:
        return next((s.failure for s in self.each if s.failure), None)

    @property
    def on_give_up(self) -> Callable[[str], None] | None:
        return self.each[0].on_give_up

    @on_give_up.setter
    def on_give_up(self, then: Callable[[str], None] | None) -> None:
        for s in self.each:
            s.on_give_up = then

    def status(self) -> ServerStatus:
        """The first node that is not well, else the first; with the restarts of the node that
        died most often lately."""
        looks = [(s.server.url, s.status()) for s in self.each]
        worst = max((st.restarts for _, st in looks if st.restarts is not None),
                    key=lambda r: (r.recent, r.total), default=None)
        for url, status in looks:
            if not status.ok:
                return status.model_copy(update={"detail": f"{url}: {status.detail}",
                                                 "restarts": worst})
        return looks[0][1].model_copy(update={"restarts": worst})

    def __enter__(self) -> Supervisors:
        for s in self.each:
            s.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for s in self.each:
            s.stop()
