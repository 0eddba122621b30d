"""The publisher's spool: every event it accepts stays on local disk until its stream has it.

Why: the send queue lives in memory, so a process that dies (killed, crashed, or exiting
before its events are out) would lose what it had not sent, and a long Redis outage would drop
events. Each event is one line of an append-only segment file (the stream's name and the
entry's fields: all it takes to XADD it again); a later publisher of the tenant sends what a
dead one left.

Layout: ``<spool_dir>/<tenant>/<time_ns>-<pid>-<n>.jsonl``, names sorting oldest first. Whose a
segment is is told by ``fcntl.flock``: a live publisher holds an exclusive lock on every
segment it still has to send and on the one it appends to, so a segment whose lock can be
taken belongs to nobody (its process died, or closed with events unsent) and may be taken
over. The kernel drops a process's locks however it ends, SIGKILL included.

A line reaches the OS with one write(2) (no fsync): it survives the process, not a crash
of the machine; ``durable`` adds an fsync for what must survive that too (an executed
payment). The spool is bounded: past ``max_bytes`` the oldest segment goes, unsent or not.

Sending an entry twice is harmless, which is what lets a segment be sent again whole (after a
crash, or when part of it had left memory): each event carries an ``event_id``; the writer
applies a write event once per id (``planning.fresh`` against the ids the graph already
holds); ``ActionExecuted`` sets the same two properties again; a control event is idempotent
by its own id (a repeated retraction, withdrawal, correction or reinstatement returns the
stored result; a repeated ``RecallApproved`` is refused and dead-lettered, changing nothing).
The agents' recorder sends no control events.

Every method here runs under the publisher's lock, except ``read``, which the sending
thread calls on a segment it has marked ``busy`` (so nobody closes its descriptor meanwhile).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import itertools
import logging
import os
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

import orjson

log = logging.getLogger("rescind.publisher")

SUFFIX = ".jsonl"
MAX_CLAIMED = 64  # others' segments held at once: each holds a descriptor
_STALE_TMP_S = 60.0  # a half-made segment this old belongs to a process that died making it
_names = itertools.count()


def _write_keeping_the_gil() -> Callable[[int, bytes], int]:
    """write(2) called without releasing the GIL (ctypes.PyDLL), or ``os.write`` where that
    cannot be had.

    Why: ``os.write`` releases the GIL, and the sending thread, woken by the previous event,
    takes it and keeps it a while, so the agent's thread waits to get it back (a ``publish``
    costs a few times more: docs/performance.md). A line to the page cache takes microseconds:
    holding the GIL for that long costs the other threads nothing."""
    try:
        raw = ctypes.PyDLL(None, use_errno=True).write
    except (OSError, AttributeError):
        return os.write
    raw.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t)
    raw.restype = ctypes.c_ssize_t

    def write(fd: int, data: bytes) -> int:
        while True:
            n = raw(fd, data, len(data))
            if n >= 0:
                return n
            err = ctypes.get_errno()
            if err != errno.EINTR:
                raise OSError(err, os.strerror(err))

    return write


_write = _write_keeping_the_gil()


def default_dir() -> Path:
    """``$RESCIND_SPOOL_DIR``, else the user's cache: ``$XDG_CACHE_HOME/rescind/spool`` or
    ``~/.cache/rescind/spool``."""
    if os.environ.get("RESCIND_SPOOL_DIR"):
        return Path(os.environ["RESCIND_SPOOL_DIR"]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "rescind" / "spool"


def line(stream: str, fields: dict) -> bytes:
    return orjson.dumps({"stream": stream, "fields": fields}) + b"\n"


class Segment:
    """One file. ``own``: written by this process, its entries also queued in memory;
    otherwise taken over, or sent again from the file (``resend_from``)."""

    __slots__ = ("path", "fd", "size", "entries", "sent", "unsent", "sealed", "resend_from",
                 "synced", "busy", "gone")

    def __init__(self, path: Path, fd: int, size: int, own: bool) -> None:
        self.path, self.fd, self.size = path, fd, size
        self.entries = 0  # lines this process wrote
        self.sent = 0  # of those, in their stream
        self.unsent = 0  # of those, still queued in memory
        self.sealed = not own  # no more appends
        self.resend_from: int | None = None if own else 0  # sent again from the file, from here
        self.synced = not own  # its name is on disk (the folder was fsynced since it was made)
        self.busy = False  # the sender is reading it
        self.gone = False  # deleted, dropped or released: its bookkeeping is over


class TenantSpool:
    def __init__(self, folder: Path, max_bytes: int, segment_bytes: int) -> None:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.folder = folder
        self.max_bytes = max_bytes
        self.segment_bytes = max(1, min(segment_bytes, max_bytes // 4))  # always one to drop
        self.current: Segment | None = None
        self.own: deque[Segment] = deque()  # written here, oldest first, the current one last
        self.disk: deque[Segment] = deque()  # to send from their files, oldest first
        self.size = 0  # bytes of every segment held (own and disk)
        self.broken = False  # the last write failed; said once until one succeeds

    # -- writing ---------------------------------------------------------------------------
    def append(self, data: bytes, durable: bool = False) -> tuple[Segment, int] | None:
        """Write one line; (segment, offset), or None when the disk refused it (logged)."""
        seg = self.current
        try:
            if seg is None or seg.size >= self.segment_bytes:
                seg = self._roll()
            offset = seg.size
            written = _write(seg.fd, data)
            if written != len(data):
                raise OSError(f"short write ({written} of {len(data)} bytes)")
            seg.size += written
            self.size += written
        except OSError as exc:
            if seg is not None and seg is self.current:
                self.seal(seg)  # a partial line may end it: append nothing after that
            if not self.broken:
                log.warning("cannot write the spool in %s (%s); events are kept in "
                            "memory only until it works again", self.folder, exc)
            self.broken = True
            return None
        self.broken = False
        seg.entries += 1
        seg.unsent += 1
        if durable:
            try:
                os.fsync(seg.fd)
                if not seg.synced:
                    self._sync_folder()
                    seg.synced = True
            except OSError as exc:  # in the spool all the same, as a plain event is
                log.warning("cannot fsync the spool in %s (%s)", self.folder, exc)
        return seg, offset

    def _roll(self) -> Segment:
        if self.current is not None:
            self.seal(self.current)
        name = f"{time.time_ns():020d}-{os.getpid()}-{next(_names)}{SUFFIX}"
        tmp = self.folder / f".{name}.tmp"  # locked before it has a name anyone would take
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.rename(tmp, self.folder / name)
        except OSError:
            os.close(fd)
            tmp.unlink(missing_ok=True)
            raise
        seg = Segment(self.folder / name, fd, 0, own=True)
        self.current = seg
        self.own.append(seg)
        return seg

    def _sync_folder(self) -> None:
        fd = os.open(self.folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def seal(self, seg: Segment) -> None:
        seg.sealed = True
        if seg is self.current:
            self.current = None
        self._settle(seg)

    # -- what became of one entry queued in memory ------------------------------------------
    def sent(self, seg: Segment) -> None:
        if seg.gone:
            return
        seg.unsent -= 1
        seg.sent += 1
        self._settle(seg)

    def evicted(self, seg: Segment, offset: int) -> None:
        """The memory queue let go of this entry: its segment is sent again from its file."""
        if seg.gone:
            return
        seg.unsent -= 1
        if seg.resend_from is None:
            seg.resend_from = offset
        if seg is self.current:
            self.seal(seg)  # what follows goes to a new segment, sent from memory
        else:
            self._settle(seg)

    def _settle(self, seg: Segment) -> None:
        if seg.gone or seg.unsent:
            return
        if seg.resend_from is not None:
            if seg.sealed and seg in self.own:
                self.own.remove(seg)
                self.disk.append(seg)
        elif seg.sealed:
            self.delete(seg)
        elif seg.size:  # the current segment, all of it sent: empty it rather than resend it
            try:
                os.ftruncate(seg.fd, 0)
            except OSError:
                return
            self.size -= seg.size
            seg.size = seg.entries = seg.sent = 0

    # -- sending from the files ----------------------------------------------------------
    @staticmethod
    def read(seg: Segment, at: int, limit: int) -> tuple[list[tuple[str, dict]], int, int]:
        """Up to ``limit`` entries from offset ``at``: (entries, where the next read starts,
        lines that could not be read). A last line without its newline (the process died
        while writing it) is skipped."""
        block = 1 << 20
        while True:
            data = os.pread(seg.fd, block, at)
            cut = data.rfind(b"\n") + 1
            if cut or len(data) < block:
                break
            block *= 2  # one line longer than the block
        entries, bad, end = [], 0, at
        for raw in data[:cut].split(b"\n")[:-1][:limit]:
            end += len(raw) + 1
            try:
                doc = orjson.loads(raw)
                entries.append((str(doc["stream"]), {str(k): str(v)
                                                     for k, v in doc["fields"].items()}))
            except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
                bad += 1
        if not entries and not bad and cut == 0 and data:  # only a torn last line is left
            end, bad = at + len(data), 1
        return entries, end, bad

    def unread(self, seg: Segment) -> None:
        """The sender is done with ``seg`` for now (its send failed)."""
        seg.busy = False
        if seg.gone:
            _close(seg)

    def resent(self, seg: Segment, end: int, count: int) -> None:
        """``count`` entries of ``seg`` up to ``end`` are in their streams."""
        self.unread(seg)
        if seg.gone:
            return
        seg.resend_from = end
        seg.sent += count
        if end >= seg.size:
            self.delete(seg)

    # -- others' segments --------------------------------------------------------------------
    def claim(self) -> int:
        """Take over the segments nobody holds (see the module docstring), up to
        ``MAX_CLAIMED`` held at once; how many. The caller applies the bound after."""
        held = {s.path.name for s in self.own} | {s.path.name for s in self.disk}
        try:
            names = sorted(os.listdir(self.folder))
        except OSError:
            return 0
        taken = 0
        for name in names:
            if len(self.disk) >= MAX_CLAIMED:
                break
            if name.endswith(".tmp"):
                self._clear_tmp(self.folder / name)
            if not name.endswith(SUFFIX) or name in held:
                continue
            fd = _lock(self.folder / name)
            if fd is None:
                continue
            size = os.fstat(fd).st_size
            if not size:
                with contextlib.suppress(OSError):
                    os.unlink(self.folder / name)
                os.close(fd)
                continue
            self.disk.append(Segment(self.folder / name, fd, size, own=False))
            self.size += size
            taken += 1
        return taken

    def _clear_tmp(self, path: Path) -> None:
        try:
            if time.time() - path.stat().st_mtime < _STALE_TMP_S:
                return
        except OSError:
            return
        fd = _lock(path)
        if fd is not None:
            path.unlink(missing_ok=True)
            os.close(fd)

    # -- the bound ---------------------------------------------------------------------------
    def bound(self) -> list[tuple[Segment, int]]:
        """Drop the oldest segments while over ``max_bytes``: each dropped segment with how
        many of its entries were unsent (those of an own segment must leave the memory queue
        too). Logs what was lost."""
        dropped = []
        while self.size > self.max_bytes:
            if self.disk:
                seg = self.disk[0]
            elif self.own and self.own[0] is not self.current:
                seg = self.own[0]
            else:
                break
            lost = self.unsent_of(seg)
            log.warning("the spool in %s is over %d bytes: dropped %s with %d unsent "
                        "events", self.folder, self.max_bytes, seg.path.name, lost)
            self.delete(seg)
            dropped.append((seg, lost))
        return dropped

    @staticmethod
    def unsent_of(seg: Segment) -> int:
        """Entries of ``seg`` not in their streams yet, as far as this process knows."""
        if seg.resend_from is None:
            return seg.entries - seg.sent
        try:
            rest = os.pread(seg.fd, max(seg.size - seg.resend_from, 0), seg.resend_from)
        except OSError:
            return 0
        return rest.count(b"\n") + (1 if rest and not rest.endswith(b"\n") else 0)

    # -- endings -----------------------------------------------------------------------------
    def delete(self, seg: Segment) -> None:
        if seg.gone:
            return
        with contextlib.suppress(OSError):
            os.unlink(seg.path)  # while still locked: nobody takes it in between
        self._forget(seg)

    def _forget(self, seg: Segment) -> None:
        seg.gone = True
        self.size -= seg.size
        for queue in (self.own, self.disk):
            if seg in queue:
                queue.remove(seg)
        if seg is self.current:
            self.current = None
        if not seg.busy:
            _close(seg)

    def release(self) -> None:
        """Delete what is all sent, let go of the rest for the next publisher."""
        for seg in list(self.own) + list(self.disk):
            if seg.resend_from is None and not seg.unsent:
                self.delete(seg)
            else:
                self._forget(seg)


def _lock(path: Path) -> int | None:
    """A descriptor holding ``path``'s exclusive lock, or None (held, or gone meanwhile)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.fstat(fd).st_ino == os.stat(path).st_ino:  # not deleted before we locked it
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _close(seg: Segment) -> None:
    if seg.fd >= 0:
        with contextlib.suppress(OSError):
            os.close(seg.fd)
        seg.fd = -1
