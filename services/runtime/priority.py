"""CPU priority by role: throughput work (the writer) yields the CPU to latency work (the gate).

Linux keeps a niceness per thread, and a thread starts at its creator's: ``lower`` sets it on
every thread a process has now, so a process lowered before it starts its threads is lowered
whole. A niceness above 0 only makes a process wait while another wants the CPU; on an idle
machine it runs as fast as before.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Mapping


def threads(pid: int) -> list[int]:
    """The thread ids of process ``pid`` (Linux's /proc), or ``[pid]`` where there is none."""
    try:
        return sorted(int(t) for t in os.listdir(f"/proc/{pid}/task"))
    except (FileNotFoundError, NotADirectoryError):
        return [pid]


def nice_of(pid: int = 0) -> int:
    """The niceness of process ``pid`` (its main thread; 0: this one)."""
    return os.getpriority(os.PRIO_PROCESS, pid)


def lower(nice: int, pid: int | None = None) -> int:
    """Set ``nice`` on every thread of process ``pid`` (None: this one); the niceness it had."""
    pid = os.getpid() if pid is None else pid
    before = nice_of(pid)
    for tid in threads(pid):
        with contextlib.suppress(ProcessLookupError):  # a thread that ended meanwhile
            os.setpriority(os.PRIO_PROCESS, tid, nice)
    return before


def for_roles(roles: Iterable[str], nice: Mapping[str, int]) -> int:
    """The niceness of a process running ``roles``: the least of theirs (a role ``nice`` does
    not name is at 0), so a process that also answers the gate is never lowered."""
    return min((nice.get(role, 0) for role in roles), default=0)
