"""Writes the writer holds back, and how it tries them again.

A write is held when its premise has not arrived (it waits, up to the patience), or when its
batch failed. A tenant's failed writes are tried again at the next round; a batch that fails
twice the same way is split to find the entry that fails alone, which is dead-lettered with the
server's own words, and the others land; any other failure is tried again with a pause that
doubles up to ``retry_max_s`` (while the server is away, once it answers). What counts as the
same failure, the pause and the dead letters are the policy's (``rescind.workers.policy``). The
trouble is logged when it starts and when it ends, never at each try.

A batch the server dies under is found and set aside by ``rescind.workers.quarantine``.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.runtime import telemetry
from rescind.workers.ingest import Pending, apply_writes, to_write
from rescind.workers.policy import Isolated, isolate, reason, said, words
from rescind.workers.quarantine import CrashQuarantine, in_flight_of
from rescind.workers.state import PRODUCES, Held, Trouble

log = logging.getLogger("rescind.workers")



def _order(entry_id: str) -> tuple[int, ...]:
    """Stream order of an entry id (``<ms>-<seq>``)."""
    return tuple(int(x) for x in entry_id.split("-") if x.isdigit())


class HeldWrites(CrashQuarantine):
    """The writer's held writes: the part of ``rescind.workers.writer.Writer`` that retries."""

    def _failed(self, stream: str, tenant: str, items: list[tuple[str, ev.Event]],
                exc: BaseException, now: float, at: float | None = None) -> None:
        """A batch of the tenant's writes failed: hold its entries, and try them again at the
        next round. Logged once, when the tenant's trouble starts, not at each try."""
        self._redirected(tenant, exc)
        for k, e in items:
            self.held.setdefault((stream, k), Held(stream, k, e, now, [f"error: {exc}"]))
            self.failures.note(stream, k, exc)
        key = (stream, tenant)
        if not self._lost(exc) and key not in self.trouble:
            log.warning("writes of tenant %s failed (%s: %s); %d event(s) held, tried again "
                        "with a pause that doubles, split if they fail the same way again",
                        tenant, type(exc).__name__, words(exc), len(items))
        sig = said(exc)
        t = self.trouble.setdefault(key, Trouble(since=now, due=now, sig=sig))
        t.sig = sig if t.sig is None else t.sig
        in_flight_of(t, items, exc, now if at is None else at)

    def retry_held(self) -> None:
        """Try held writes again (those of a tenant in trouble when due); past the patience
        a write waiting for its premise goes to the dead-letter stream."""
        self.pipeline.flush()
        with self._lost_lock:
            lost, self._lost_batches = self._lost_batches, []
        now = time.monotonic()
        for stream, tenant, items, exc, at in lost:
            self._failed(stream, tenant, items, exc, now, at)
        by_key = dict(self.held)
        self.held.clear()
        groups: dict[tuple[str, str], list[tuple[str, ev.Event]]] = defaultdict(list)
        for h in by_key.values():
            groups[(h.stream, h.event.tenant)].append((h.entry_id, h.event))
        for key in [k for k in self.trouble if k not in groups]:  # settled elsewhere (reaper)
            del self.trouble[key]
        for (stream, tenant), items in groups.items():
            items.sort(key=lambda item: _order(item[0]))
            t = self.trouble.get((stream, tenant))
            try:
                known = self.known(tenant)
            except Exception as exc:  # noqa: BLE001 - the server away: held, none forgotten
                self.held.update({(stream, k): by_key[(stream, k)] for k, _ in items})
                if self._lost(exc):
                    continue
                raise
            if not known:  # dropped since its writes were held
                self._gone(stream, tenant, items, by_key, now)
                continue
            if t is not None and now < t.due:
                self.held.update({(stream, k): by_key[(stream, k)] for k, _ in items})
                continue
            if t is not None and t.lost_at is not None:
                items = self._after_loss(stream, tenant, items, by_key, t, now)
                if items is None:  # the server is away again: tried once it answers
                    continue
            if t is not None and t.parts is not None:
                self._quarantine(stream, tenant, items, by_key, t, now)
                continue
            try:
                still = apply_writes(self.graph(tenant), items, moved=self._moved)
            except Exception as exc:  # noqa: BLE001 - a poison entry, or the server away
                if self.dropped(tenant):  # since the writes were held: none can ever land
                    self._gone(stream, tenant, items, by_key, now)
                    continue
                self.held.update({(stream, k): by_key[(stream, k)] for k, _ in items})
                self._again(stream, tenant, items, by_key, exc, now)
                continue
            self._settled(stream, tenant, items, still, by_key, now)
            if t is not None:
                del self.trouble[(stream, tenant)]
                log.warning("held writes of tenant %s landed after %d tries in %.1f s", tenant,
                            t.tries + 1, now - t.since)

    def _gone(self, stream: str, tenant: str, items: list[tuple[str, ev.Event]],
              by_key: dict[tuple[str, str], Held], now: float) -> None:
        """The tenant was dropped since its writes were held: none can ever land."""
        self._dead_tenant(stream, layout.WRITER_GROUP, tenant, items)
        self._settled(stream, tenant, items, [], by_key, now)
        self.trouble.pop((stream, tenant), None)

    def _again(self, stream: str, tenant: str, items: list[tuple[str, ev.Event]],
               by_key: dict[tuple[str, str], Held], exc: BaseException, now: float) -> None:
        """Held writes failed again: the same way twice, find the entry that fails alone;
        else wait a pause that doubles (the server away: until it answers again)."""
        key = (stream, tenant)
        if key not in self.trouble:
            self._failed(stream, tenant, items, exc, now)
            return
        t = self.trouble[key]
        if self._failed_again(stream, tenant, t, items, exc, now):
            return  # the server away: at the first round once it answers again
        sig = said(exc)
        if sig is not None and sig == t.sig:  # the same way twice: the entries' doing
            self._isolate(stream, tenant, items, by_key, exc, now)
            return
        t.sig = sig
        self._later(t, now)

    def _isolate(self, stream: str, tenant: str, items: list[tuple[str, ev.Event]],
                 by_key: dict[tuple[str, str], Held], exc: BaseException, now: float) -> None:
        """Split a batch that failed twice the same way until the entries that fail alone are
        found: each is dead-lettered with the server's own words, the others land (or wait
        for their premise); what rests on a dead-lettered write is dead-lettered with it."""
        out = self._split(stream, tenant, items, by_key, exc, now, {})
        if out.stopped_by is not None:
            self._again(stream, tenant, out.untried, by_key, out.stopped_by, now)
        else:
            del self.trouble[(stream, tenant)]

    def _split(self, stream: str, tenant: str, items: list[tuple[str, ev.Event]],
               by_key: dict[tuple[str, str], Held], exc: BaseException, now: float,
               gone: dict[str, str]) -> Isolated:
        """``_isolate``'s work; the entries not tried (the server went away) are held again.
        ``gone``: memory ids whose write was dead-lettered (added to), and why."""
        for k, _ in items:
            self.held.pop((stream, k), None)
        graph = self.graph(tenant)
        out = isolate(lambda part: apply_writes(graph, part, moved=self._moved), items, exc)
        for k, e, why in out.refused:
            text = reason(why)
            log.warning("event %s of tenant %s dead-lettered: %s", e.event_id, tenant, text)
            self._dead(stream, k, e, text)
            if isinstance(e, PRODUCES):
                gone[to_write(e).mem_id] = f"event {e.event_id}: {text}"
        untried = {k for k, _ in out.untried}
        self._settled(stream, tenant, [(k, e) for k, e in items if k not in untried],
                      self._orphans(stream, out.waiting, gone), by_key, now)
        self.held.update({(stream, k): by_key[(stream, k)] for k in untried})
        return out

    def _orphans(self, stream: str, waiting: list[Pending], gone: dict[str, str]) -> list[Pending]:
        """Dead-letter the waiting writes that rest on a dead-lettered one; the others wait."""
        still: list[Pending] = []
        for p in waiting:
            lost = [m for m in p.missing if m in gone]
            if lost:
                self._dead(stream, p.key, p.event,
                           f"rests on {lost[0]}, whose write was dead-lettered ({gone[lost[0]]})")
            else:
                still.append(p)
        return still

    def _dead(self, stream: str, key: str, event: ev.Event, why: str) -> None:
        self.failures.dead_letter(self.conn, stream, key, event, why, layout.WRITER_GROUP)

    def _settled(self, stream: str, tenant: str, items: list[tuple[str, ev.Event]],
                 pending: list[Pending], by_key: dict[tuple[str, str], Held], now: float) -> None:
        """Ack the held writes that landed (or were dead-lettered), or waited too long for
        their premise; keep the rest."""
        still = {p.key: p for p in pending}
        done, settled = [], []
        for key, _ in items:
            h = by_key[(stream, key)]
            if key not in still:
                done.append(key)
                settled += h.missing
                self.failures.forget(stream, key)
            elif now - h.since > self.settings.patience_s:
                missing = still[key].missing
                reason = f"premise never arrived: {', '.join(missing)}"
                log.warning("write %s of tenant %s waited %.0fs for premise(s) %s: given up, "
                            "dead-lettered", h.event.event_id, tenant, now - h.since,
                            ", ".join(missing))
                telemetry.premise_never_arrived.add(1, {"tenant": tenant})
                self._dead(stream, key, h.event, reason)
                done.append(key)
                settled += missing
            else:
                h.missing = still[key].missing
                self.held[(stream, key)] = h
        try:
            self._ack(stream, layout.WRITER_GROUP, done)
            still_waiting = {m for h in self.held.values() if h.event.tenant == tenant
                             for m in h.missing}
            self._waiting(tenant, [m for m in settled if m not in still_waiting], done=True)
            kept = [k for k, _ in items if (stream, k) in self.held]
            if kept:  # we still own them: keep the reaper's hands off
                self.conn.xclaim(stream, layout.WRITER_GROUP, self.consumer("writer"), 0, kept,
                                 justid=True)
        except Exception as exc:  # landed but not acknowledged: applying again is a no-op
            if not self._lost(exc):
                log.warning("acknowledging writes of tenant %s failed (%s); kept", tenant, exc)
            self.held.update({(stream, k): by_key[(stream, k)] for k in done})

