"""Crash quarantine: a batch the server dies under is found and set aside, so that one entry
cannot keep FalkorDB, and every tenant on it, in a crash loop.

The writer remembers which of a tenant's entries were in flight when the connection dropped in
the middle of a command (not one refused at connect, not a server loading its data), and once
the server answers again, whether it died then (its uptime is shorter than the time since).
The first death is taken for chance: the entries are tried again whole. At a second death the
entries in flight are tried in halves, one part at a time, and a part under which the server
dies again is split again, down to the single entry under which it dies: that one is
dead-lettered at that death ("the server died applying this", its tenant named), what rests on
it with it, and the rest lands. So one entry among n costs 2 + ceil(log2 n) deaths at most,
one alone; acknowledged with its dead letter, it is never sent again (the reaper leaves an
entry acknowledged since its claim). The state lives in the writer's memory (``Trouble``), which outlives the
server and the writer's reconnects. An entry that lands is in the graph whatever happened
before (applying again is a no-op), so a death that left the batch half applied by the AOF, or
not at all, is the same to the writer.
"""

from __future__ import annotations

import logging
import time

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.runtime import telemetry
from rescind.transport import connection
from rescind.workers.ingest import apply_writes, to_write
from rescind.workers.policy import backoff, in_flight, transient
from rescind.workers.shared import Role
from rescind.workers.state import PRODUCES, Held, Trouble

log = logging.getLogger("rescind.workers")

DIED = "the server died applying this"  # the dead letter's reason for a crash's culprit


class CrashQuarantine(Role):
    """The part of the writer's held writes (``rescind.workers.held.HeldWrites``) that deals
    with a server dying under them."""

    def _after_loss(self, stream: str, tenant: str, items: list[tuple[str, ev.Event]],
                    by_key: dict[tuple[str, str], Held], t: Trouble,
                    now: float) -> list[tuple[str, ev.Event]] | None:
        """An attempt lost the server mid-command; it answers again: did it die then? A death
        is counted against the entries that were in flight (``_restarted_since``). Returns the
        entries still to try (without one dead-lettered here), None if the server is away."""
        try:
            died = self._restarted_since(tenant, t.lost_at)
        except Exception as exc:  # noqa: BLE001 - away again: looked at once it answers
            self._lost(exc)
            self.held.update({(stream, k): by_key[(stream, k)] for k, _ in items})
            return None
        flight, t.lost_at, t.flight = t.flight, None, set()
        if not died:  # the connection dropped, the server lived on: not the entries' doing
            return items
        t.deaths += 1
        telemetry.server_deaths.add(1, {"tenant": tenant})
        keys = [k for k, _ in items if k in flight]  # in stream order
        if not keys:
            return items
        if t.parts is None and t.deaths < 2:
            log.warning("FalkorDB died with %d write(s) of tenant %s in flight; they are tried "
                        "again whole, and in halves if it dies again", len(keys), tenant)
            return items
        if t.parts is None:
            t.parts = []
        t.parts = [[k for k in p if k not in flight] for p in t.parts]
        if len(keys) > 1:
            mid = len(keys) // 2
            t.parts[:0] = [keys[:mid], keys[mid:]]
            log.warning("FalkorDB died again with %d write(s) of tenant %s in flight; they are "
                        "tried in halves (%d and %d), one half a round", len(keys), tenant, mid,
                        len(keys) - mid)
            return items
        [key] = keys
        event = dict(items)[key]
        why = f"{DIED} (tenant {tenant}): FalkorDB died {t.deaths} times with it in flight"
        log.warning("event %s of tenant %s dead-lettered: %s", event.event_id, tenant, why)
        telemetry.crash_quarantined.add(1, {"tenant": tenant})
        self._dead(stream, key, event, why)
        if isinstance(event, PRODUCES):
            t.gone[to_write(event).mem_id] = f"event {event.event_id}: {DIED}"
        self._settled(stream, tenant, [(key, event)], [], by_key, now)
        return [(k, e) for k, e in items if k != key]

    def _failed_again(self, stream: str, tenant: str, t: Trouble,
                      items: list[tuple[str, ev.Event]], exc: BaseException, now: float) -> bool:
        """Held writes of a tenant in trouble failed again: each entry notes how. True when the
        server is away (its entries in flight remembered, tried at the first round once it
        answers again); else the caller decides, the pause (``_later``) or a split."""
        self._redirected(tenant, exc)
        for k, _ in items:
            self.failures.note(stream, k, exc)
        if self._lost(exc):
            in_flight_of(t, items, exc, now)
            t.due = now
            return True
        return False

    def _later(self, t: Trouble, now: float) -> None:
        """One more try failed: the next after a pause that doubles (``policy.backoff``)."""
        t.tries += 1
        t.due = now + backoff(self.settings.retry_s, self.settings.retry_max_s, t.tries)

    def _restarted_since(self, tenant: str, since: float) -> bool:
        """Whether the server that holds the tenant's graph started after ``since`` (monotonic):
        its uptime is shorter than the time since then, measured once the uptime is in hand (a
        round's start is not: on a loaded machine the round may reach this a while later). The
        uptime is whole seconds, so a start just before counts too."""
        node = connection.node_for(self.conn, layout.graph_key(tenant))
        uptime = int(node.info("server")["uptime_in_seconds"])
        return uptime < time.monotonic() - since + 1

    def _quarantine(self, stream: str, tenant: str, items: list[tuple[str, ev.Event]],
                    by_key: dict[tuple[str, str], Held], t: Trouble, now: float) -> None:
        """Try the parts of a batch the server died under, in order, until one fails: a part
        that lands is acknowledged; a part the server dies under is split at the next round
        (``_after_loss``); one FalkorDB refuses is split as ``_isolate`` does. Once every
        part is tried, the quarantine ends, and the tenant's other held writes are tried
        as usual at the next round."""
        by = dict(items)
        graph = self.graph(tenant)
        queued = {k for p in t.parts for k in p}
        tried: set[str] = set()  # settled this round: acknowledged, dead-lettered or waiting
        while t.parts:
            part = [(k, by[k]) for k in t.parts[0] if k in by]
            if not part:
                t.parts.pop(0)
                continue
            try:
                still = apply_writes(graph, part, moved=self._moved)
            except Exception as exc:  # noqa: BLE001 - the server's death, or a refusal
                if not transient(exc):  # refused: split as _isolate does, the rest held
                    out = self._split(stream, tenant, part, by_key, exc, now, t.gone)
                    tried |= {k for k, _ in part} - {k for k, _ in out.untried}
                    if out.stopped_by is None:
                        t.parts.pop(0)
                        continue
                    exc, part = out.stopped_by, out.untried
                    t.parts[0] = [k for k, _ in part]
                # the server away, perhaps dead under this part: all is held, and looked at
                # once it answers (``_after_loss``)
                self.held.update({(stream, k): by_key[(stream, k)] for k, _ in items
                                  if k not in tried})
                if not self._failed_again(stream, tenant, t, part, exc, now):
                    self._later(t, now)
                return
            self._settled(stream, tenant, part, self._orphans(stream, still, t.gone), by_key,
                          now)
            tried |= {k for k, _ in part}
            t.parts.pop(0)
        others = [(k, e) for k, e in items if k not in queued]
        self.held.update({(stream, k): by_key[(stream, k)] for k, _ in others})
        del self.trouble[(stream, tenant)]
        log.warning("crash quarantine of tenant %s over after %d death(s) of FalkorDB; %d other "
                    "held write(s) tried again as usual", tenant, t.deaths, len(others))


def in_flight_of(t: Trouble, items: list[tuple[str, ev.Event]], exc: BaseException,
                 at: float) -> None:
    """Remember the entries of an attempt that lost the server mid-command (not one that
    could not reach it): if the server started again since, it died under them."""
    if in_flight(exc):
        t.lost_at = at if t.lost_at is None else min(t.lost_at, at)
        t.flight |= {k for k, _ in items}
