"""Whether the embedded FalkorDB answers, and which process owns a data directory.

A restart replays the AOF, and until that is done the server answers every command with
LOADING. Whoever starts or reaches the server waits for it as long as the loading lasts, saying
how far it is (``wait_ready``): a large AOF takes minutes (docs/performance.md, "Restart"),
and a fixed limit would make every command fail on data that is fine. Health, ``rescind up``'s
supervisor and every command that reaches a data directory another process serves read the
same ``probe``.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Literal

import redis
from pydantic import BaseModel, Field

from rescind.contract.errors import Unavailable


class ServerError(Unavailable):
    """The embedded FalkorDB server could not be started or did not answer."""


class DataDirInUse(ServerError):
    """Another embedded server owns this data directory; ``running_url`` says where it is."""


class ServerGone(ServerError):
    """The process that owned a data directory stopped while we waited for its server."""


class Restarts(BaseModel):
    """How often `rescind up`'s supervisor had to start the server again, and why it died last:
    a crash loop is ``loop_after`` deaths or more within the last ``window_s`` seconds."""

    total: int = Field(0, description="Restarts since `rescind up` started")
    recent: int = Field(0, description="Deaths within the last window_s seconds")
    window_s: float = Field(600.0, description="The window recent deaths are counted in")
    loop_after: int = Field(3, description="Recent deaths from which it is a crash loop")
    crash_loop: bool = Field(False, description="recent >= loop_after")
    last_crash: str | None = Field(None, description="The server's last crash line in "
                                   "falkordb.log (crashed by signal, a failed assertion), or "
                                   "how it ended when it logged none")
    last_death_at: datetime | None = Field(None, description="When it last died")
    next_pause_s: float | None = Field(None, description="The pause before the next restart, "
                                       "while one is waited for")


class ServerStatus(BaseModel):
    """What the server is doing, as health and the progress lines tell it."""

    state: Literal["up", "loading", "busy", "restarting", "down", "failed"]
    loaded_percent: float | None = None
    eta_s: int | None = None
    detail: str = ""
    restarts: Restarts | None = None  # known when `rescind up` supervises the server

    @property
    def ok(self) -> bool:
        return self.state == "up"


def probe(client: redis.Redis) -> ServerStatus:
    """One look at the server: up (graph commands answer), loading (and how far), busy (it took
    the connection but did not answer in time: a long step of loading, or stuck), or down."""
    try:
        client.execute_command("GRAPH.LIST")
        return ServerStatus(state="up", detail="FalkorDB answers")
    except redis.BusyLoadingError:
        return _loading(client)
    except redis.TimeoutError:
        return ServerStatus(state="busy", detail="FalkorDB did not answer in time (busy "
                            "loading its data, or stuck)")
    except redis.ConnectionError as exc:
        return ServerStatus(state="down", detail=f"FalkorDB does not answer: {exc}")


def _loading(client: redis.Redis) -> ServerStatus:
    try:  # INFO answers while loading
        info = client.info("persistence")
    except (redis.ConnectionError, redis.TimeoutError):
        return ServerStatus(state="loading", detail="FalkorDB is loading its data")
    if not info.get("loading") or not info.get("loading_loaded_bytes"):
        return ServerStatus(state="loading", detail="FalkorDB is loading its data")
    percent = float(info.get("loading_loaded_perc", 0.0))
    eta = info.get("loading_eta_seconds")
    eta = int(eta) if eta is not None and int(eta) >= 0 else None
    about = f" (about {eta} s left)" if eta is not None else ""
    return ServerStatus(state="loading", loaded_percent=percent, eta_s=eta,
                        detail=f"FalkorDB is loading its data: {percent:.0f}%{about}")


class Progress:
    """Loading progress on stderr: nothing for a load that is over within a second, then a line
    every few seconds, and one when it is done."""

    def __init__(self, where: str, every_s: float = 3.0, quiet_s: float = 1.0, stream=None) -> None:
        self.where, self.every_s, self.quiet_s, self.stream = where, every_s, quiet_s, stream
        self._first: float | None = None
        self._last = 0.0

    def __call__(self, status: ServerStatus) -> None:
        now = time.monotonic()
        self._first = now if self._first is None else self._first
        told = self._last > 0
        if status.ok and not told:
            return
        if not status.ok and (now - self._first < self.quiet_s or now - self._last < self.every_s):
            return
        self._last = now
        print(f"{status.detail} ({self.where})", file=self.stream or sys.stderr, flush=True)


def wait_ready(url: str, alive: Callable[[], bool] | None = None,
               on_progress: Callable[[ServerStatus], None] | None = None,
               connect_timeout: float | None = 20.0) -> None:
    """Return once the server at ``url`` answers graph commands.

    While it loads its data it is waited for as long as that lasts, each look passed to
    ``on_progress``. A port that refuses connections is Unavailable at once, unless ``alive``
    says the server is ours to wait for (starting, or being restarted by the process that owns
    its data): then for ``connect_timeout`` seconds (None: while ``alive()``)."""
    client = redis.Redis.from_url(url, socket_connect_timeout=1.0, socket_timeout=2.0,
                                  retry_on_timeout=False)
    started = time.monotonic()
    deadline = None if connect_timeout is None else started + connect_timeout
    loaded = False
    try:
        while True:
            status = probe(client)
            if status.ok:
                if loaded and on_progress is not None:
                    on_progress(ServerStatus(state="up", detail="FalkorDB loaded its data in "
                                             f"{time.monotonic() - started:.1f} s"))
                return
            if alive is not None and not alive():
                raise ServerGone(f"FalkorDB at {url} stopped while we waited for it: "
                                 f"{status.detail}")
            # Loading, or busy in a long step of it: no limit shorter than the data needs. A
            # server that is not ours to wait for is given that only while it says LOADING.
            if status.state == "loading" or (status.state == "busy" and alive is not None):
                deadline = None
                loaded = True
                if on_progress is not None:
                    on_progress(status)
            elif alive is None:
                raise Unavailable(f"cannot reach FalkorDB at {url}: {status.detail}")
            elif deadline is not None and time.monotonic() > deadline:
                raise ServerError(f"cannot start the embedded FalkorDB: it did not answer on "
                                  f"{url} in {connect_timeout}s")
            time.sleep(0.25 if loaded else 0.05)
    finally:
        client.close()


def running_url(data_dir: str | os.PathLike) -> str | None:
    """The URL of the server that owns ``data_dir``, if one is running."""
    try:
        return (Path(data_dir) / "server.url").read_text().strip() or None
    except OSError:
        return None


def owned(data_dir: str | os.PathLike) -> bool:
    """Whether a live process holds ``data_dir`` (the flock ``EmbeddedFalkorDB`` takes)."""
    try:
        fd = os.open(Path(data_dir) / "server.lock", os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # releases our shared lock, if we got it


def reach(data_dir: str | os.PathLike,
          on_progress: Callable[[ServerStatus], None] | None = None) -> str:
    """The URL of the server another process runs on ``data_dir``, once it answers graph
    commands: waited for while it loads, or while its owner restarts it."""
    on_progress = on_progress or Progress(f"data in {data_dir}")
    while True:
        if not owned(data_dir):
            raise ServerGone(f"the process that served {data_dir} stopped; run the command again")
        url = running_url(data_dir)
        if url:
            wait_ready(url, alive=lambda: owned(data_dir), on_progress=on_progress,
                       connect_timeout=None)
            return url
        time.sleep(0.05)  # the owner is between taking the directory and starting the server
