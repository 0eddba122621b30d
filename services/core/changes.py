"""How one operation's status changes are sent: grouped by the status they set, with each
memory's history line encoded once. Pure; used by the write batch and the retraction commit."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable

from rescind.core.belief import Status
from rescind.core.shapes import StatusGroup


def status_changes(changed: Iterable[tuple[int | str, Status]], rev: int, op: str,
                   by: str | None, at: int | None) -> list[StatusGroup]:
    """One operation's status changes, grouped by what they set: {status, cause, hops, entry,
    ids}, ``entry`` the line appended to each memory's history (the JSON of ``[rev, status,
    cause, hops, op, by, at]``) and ``ids`` the memories that take that status, as the query
    finds them (node ids for a commit, memory ids for a write batch). The thousands of changes
    of one retraction share a few statuses, and FalkorDB parses parameters as query text:
    each value is sent once (the text it saves: docs/performance.md)."""
    groups: dict[Status, StatusGroup] = {}
    for key, st in changed:
        group = groups.get(st)
        if group is None:
            group = groups[st] = {"status": st.status, "cause": st.cause, "hops": st.hops,
                                  "entry": _entry(rev, *st, op, by, at), "ids": []}
        group["ids"].append(key)
    return list(groups.values())


@functools.lru_cache(maxsize=1024)
def _entry(rev: int, status: str, cause: str | None, hops: int | None, op: str, by: str | None,
           at: int | None) -> str:
    """A retraction's thousands of history lines repeat a few values: encode each line once."""
    return (f"[{rev},{_json(status)},{_json(cause)},{_json(hops)},{_json(op)},{_json(by)},"
            f"{_json(at)}]")


@functools.lru_cache(maxsize=4096)
def _json(value: str | int | None) -> str:
    return json.dumps(value)


# Release the lock only if we still hold it (it may have expired and been taken by another).
