"""The four scenarios of `rescind bench rules`, as plain timelines of writes and retractions.

This module holds what they share: the timeline (``Batch`` of writes, ``Checkpoint`` of
retractions) and a ``Case`` that carries it. Each scenario is built in a module of its own:

- ``scenario_demo``: the reference agents' week (``rescind.demo``), read back from the graph at
  Thursday 09:00, just before security acts, with security's retraction of Northwind's portal.
- ``scenario_precision``: constructed. Vendors' portals read over four weeks, notes taken from
  each read, payment plans, payments and answers built on the notes; five portals compromised,
  each over a window of its own; about 40% of the notes taken from a compromised read are also
  confirmed by the signed contract, an independent trust domain. It exists to test whether
  telling those apart matters; it is not a measurement of the world.
- ``scenario_real``: real retractions, read in place from a folder outside the repository (by
  default ``../shared/data/retractions`` beside it), replayed on their dates.
- ``scenario_scale``: the agent-like generator of the engine benchmark, one whole source
  retracted at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from rescind.contract.events import to_micros
from rescind.engine.retraction import Retract
from rescind.engine.writes import Write


@dataclass
class Batch:
    """Writes applied together (in one engine call)."""

    writes: list[Write]


@dataclass
class Checkpoint:
    """Retractions applied at one moment; then every rule is scored against the truth."""

    label: str
    at: int
    retractions: list[Retract]
    score: bool = True


@dataclass
class Case:
    """One scenario: its sources and its timeline (a list, or a stream for the large ones), with
    the parameters and notes its results carry."""

    name: str
    sources: list[dict]
    events: list[Batch | Checkpoint] | None = None
    stream: object = None  # for large cases: a callable yielding the events lazily
    params: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)
    scored_rule2: bool = True  # False where rule 2 runs on stand-in vectors

    def timeline(self) -> Iterator[Batch | Checkpoint]:
        if self.events is not None:
            yield from self.events
        else:
            yield from self.stream()

    @property
    def size(self) -> int:
        return self.params.get("memories") or sum(
            len(e.writes) for e in self.events or () if isinstance(e, Batch))


def micros(day: date | datetime, hour: int = 0) -> int:
    """Microseconds since the epoch, the engine's time: of ``day`` at ``hour`` UTC for a date."""
    if isinstance(day, datetime):
        return to_micros(day)
    return to_micros(datetime(day.year, day.month, day.day, hour, tzinfo=UTC))


def stamp(us: int | None) -> str:
    """A time in microseconds as the checkpoints' labels show it (UTC, to the minute)."""
    return "open" if us is None else (datetime(1970, 1, 1, tzinfo=UTC)
                                      + timedelta(microseconds=us)).strftime("%Y-%m-%d %H:%M")
