"""The workers' retry, poison and dead-letter policy, in one place: which failures are the
entry's and which the server's, when a failure is the same twice, how long to wait before the
next try, what the dead letter says, and what is remembered of how an entry last failed.

Entries that can never be applied are told apart from a server that is away for a while. A
decision the engine refuses (``refused``) is dead-lettered at once. Every text field is checked
where it enters (``rescind.contract.text``), so an event FalkorDB refuses should not reach the
writer. This is the defence in depth for one that does: a batch that fails twice the same way
is split in halves, and the halves again, until the entry that fails alone is found; it is
dead-lettered with the server's own error text, and the others land. A failure that says
nothing about the entries (the server away or loading, a write that went stale) is never split:
the entries wait, and are tried again with a pause that doubles (``backoff``). A decision the
server refuses twice the same way is dead-lettered as ``Refused``. An entry a dead consumer
left pending and that keeps failing is dead-lettered by the reaper with the last failure
remembered here (``Failures``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import redis

from rescind.contract import events as ev
from rescind.contract.errors import RescindError, StalePreview
from rescind.graph.cypher import CypherError
from rescind.transport import streams as st
from rescind.transport.connection import Client, redirection
from rescind.workers.ingest import Pending

# Replies of a server that is busy, full, loading or failing over: about the server, not the
# entry (redis.ConnectionError covers LOADING already).
_SERVER_STATES = ("OOM", "MISCONF", "LOADING", "READONLY", "MASTERDOWN", "TRYAGAIN",
                  "CLUSTERDOWN", "BUSY", "NOREPLICAS", "MOVED", "ASK", "Max pending queries")


class Refused(RescindError):
    """The server refuses this entry every time: it goes to the dead-letter stream."""


def refused(exc: BaseException) -> bool:
    """Whether ``exc`` means the entry can never be applied, and so goes to the dead-letter
    stream with its message as the reason: a malformed entry, or a decision the engine refuses.
    A StalePreview (a concurrent write) is not: it is retried, like any failure of the server."""
    return isinstance(exc, RescindError) and not isinstance(exc, StalePreview)


def lost_connection(exc: BaseException) -> bool:
    """The server cannot be reached (or is loading its data): the workers wait for it."""
    return isinstance(exc, redis.ConnectionError | redis.TimeoutError | ConnectionError
                      | TimeoutError)


def in_flight(exc: BaseException) -> bool:
    """The connection was lost in the middle of a command (not refused, not a server loading
    its data): the server may have died under what was sent."""
    return (lost_connection(exc) and not isinstance(exc, redis.BusyLoadingError)
            and "connecting to" not in str(exc))


def transient(exc: BaseException) -> bool:
    """A failure that says nothing about the entries: tried again later, never split."""
    if lost_connection(exc) or isinstance(exc, StalePreview) or redirection(exc) is not None:
        return True  # a redirection's text is the slot and the address alone, no "MOVED"
    text = str(exc)
    if isinstance(exc, CypherError | redis.ResponseError):
        text = text.removeprefix("errMsg: ")
        return text.startswith(_SERVER_STATES)
    return False


def signature(exc: BaseException) -> str:
    """What a failure says, without the numbers in it (offsets, revisions, sizes): two failures
    with one signature failed the same way."""
    return f"{type(exc).__name__}: {re.sub(r'[0-9]+', '#', words(exc))[:300]}"


def said(exc: BaseException) -> str | None:
    """What a failure says about the entries: its signature, or None when it says nothing of
    them (``transient``). Two failures that said the same are the entries' doing."""
    return None if transient(exc) else signature(exc)


def backoff(first_s: float, max_s: float, tries: int) -> float:
    """The pause before the next try of entries that failed ``tries`` times: ``first_s``,
    doubling, at most ``max_s``."""
    return min(max_s, first_s * 2 ** (tries - 1))


def words(exc: BaseException) -> str:
    """What the server (or Python) said, on one line: a CypherError's message without the
    query it quotes."""
    text = re.sub(r" \(in: .*\)$", "", str(exc), flags=re.DOTALL)
    return " ".join(text.split())


def reason(exc: BaseException) -> str:
    """The dead letter's reason for an entry that fails alone: the server's own words."""
    if isinstance(exc, CypherError | redis.ResponseError):
        return f"refused by FalkorDB: {words(exc)}"
    return f"cannot be written: {type(exc).__name__}: {words(exc)}"


class Failures:
    """How each entry last failed (by stream and entry id), for the dead letter the reaper
    writes when it gives the entry up; bounded, the oldest forgotten first."""

    LIMIT = 10_000

    def __init__(self) -> None:
        self._last: dict[tuple[str, str], str] = {}

    def note(self, stream: str, entry_id: str, exc: BaseException) -> None:
        if len(self._last) >= self.LIMIT:
            self._last.pop(next(iter(self._last)))
        self._last[(stream, entry_id)] = f"{type(exc).__name__}: {words(exc)}"[:1000]

    def seen(self, stream: str, entry_id: str) -> bool:
        return (stream, entry_id) in self._last

    def forget(self, stream: str, entry_id: str) -> str | None:
        """How the entry last failed (None if it never did), forgotten."""
        return self._last.pop((stream, entry_id), None)

    def dead_letter(self, conn: Client, stream: str, entry_id: str, body: object, why: str,
                    group: str) -> None:
        """The entry goes to the dead-letter stream with why; what was noted of it is
        forgotten. ``body``: as read, or the decoded event."""
        if isinstance(body, ev.Event):
            body = body.model_dump(mode="json", by_alias=True)
        st.dead_letter(conn, stream, entry_id, body, why, group)
        self.forget(stream, entry_id)


Items = list[tuple[str, ev.Event]]


@dataclass
class Isolated:
    """What splitting a failing batch found: the entries that wait for a premise, those that
    fail alone (with why), and those not tried because the server went away meanwhile."""

    waiting: list[Pending] = field(default_factory=list)
    refused: list[tuple[str, ev.Event, BaseException]] = field(default_factory=list)
    untried: Items = field(default_factory=list)
    stopped_by: BaseException | None = None


def isolate(apply: Callable[[Items], list[Pending]], items: Items,
            failed: BaseException) -> Isolated:
    """Apply ``items``, which failed as a whole with ``failed``, in halves (in order, so a
    write lands before what rests on it), and each failing half in halves again, down to single
    entries. About 2·log2(n) tries for one bad entry among n."""
    out = Isolated()

    def split(part: Items, failed: BaseException | None = None) -> None:
        if out.stopped_by is not None:
            out.untried.extend(part)
            return
        if failed is None:
            try:
                out.waiting.extend(apply(part))
                return
            except Exception as exc:  # noqa: BLE001 - sorted below: the entry's, or the server's
                failed = exc
        if transient(failed):
            out.stopped_by = failed
            out.untried.extend(part)
            return
        if len(part) == 1:
            key, event = part[0]
            out.refused.append((key, event, failed))
            return
        mid = len(part) // 2
        split(part[:mid])
        split(part[mid:])

    if items:
        split(items, failed)
    return out


__all__ = ["Failures", "Isolated", "Refused", "backoff", "in_flight", "isolate", "lost_connection",
           "reason", "refused", "said", "signature", "transient", "words"]
