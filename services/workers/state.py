"""What the writer keeps in memory of the writes it holds back: each held entry, and each
tenant's trouble (how its writes last failed, and the crash quarantine's state)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rescind.contract import events as ev
from rescind.workers.ingest import PRODUCES  # writes that make a memory: from the writer's table


@dataclass
class Held:
    stream: str
    entry_id: str
    event: ev.Event
    since: float
    missing: list[str] = field(default_factory=list)


@dataclass
class Trouble:
    """A tenant's held writes (on one stream) that failed, not for a missing premise: how it
    last failed, how often, and when to try again. Logged when it starts and when it ends."""

    since: float
    due: float
    sig: str | None = None  # the last failure's signature; None: nothing said about the entries
    tries: int = 1
    # Crash quarantine: when an attempt lost the server mid-command (monotonic) and its entries;
    # the deaths of the server seen with entries of this tenant in flight; the parts of the
    # entries in flight at a second death still to try, one a round (None: not in quarantine).
    lost_at: float | None = None
    flight: set[str] = field(default_factory=set)
    deaths: int = 0
    parts: list[list[str]] | None = None
    gone: dict[str, str] = field(default_factory=dict)  # memory id -> why it was dead-lettered


__all__ = ["PRODUCES", "Held", "Trouble"]
