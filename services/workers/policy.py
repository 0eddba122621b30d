"""Entries that can never be written, told apart from a server that is away for a while.

Every text field is checked where it enters (``rescind.contract.text``), so an event FalkorDB
refuses should not reach the writer. This is the defence in depth for one that does: a batch
that fails twice the same way is split in halves, and the halves again, until the entry that
fails alone is found; it is dead-lettered with the server's own error text, and the others
land. A failure that says nothing about the entries (the server away or loading, a write that
went stale) is never split: the entries wait, and are tried again with a pause that doubles.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import redis

from rescind.contract import events as ev
from rescind.contract.errors import RescindError, StalePreview
from rescind.graph.cypher import CypherError
from rescind.transport.connection import redirection
from rescind.workers.ingest import Pending

# Replies of a server that is busy, full, loading or failing over: about the server, not the
# entry (redis.ConnectionError covers LOADING already).
_SERVER_STATES = ("OOM", "MISCONF", "LOADING", "READONLY", "MASTERDOWN", "TRYAGAIN",
                  "CLUSTERDOWN", "BUSY", "NOREPLICAS", "MOVED", "ASK", "Max pending queries")


class Refused(RescindError):
    """The server refuses this entry every time: it goes to the dead-letter stream."""


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


__all__ = ["Isolated", "Refused", "in_flight", "isolate", "lost_connection", "reason", "signature",
           "transient", "words"]
