"""The retraction role: security and finance decisions, one at a time, each followed by a
StatusChanged per memory it moved, on the tenant's status stream."""

from __future__ import annotations

import logging

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.core.shapes import RetractionResult
from rescind.engine.writes import Pipeline
from rescind.graph import tenants
from rescind.transport import streams as st
from rescind.workers.ingest import apply_control, decode
from rescind.workers.policy import Refused, reason, refused, said, transient, words
from rescind.workers.shared import Role, Shared

log = logging.getLogger("rescind.workers")


class Retraction(Role):
    """Applies decisions; the writer's ``pipeline`` is flushed first, so that the writes read
    before a decision are in the graph when it is taken."""

    def __init__(self, shared: Shared, pipeline: Pipeline) -> None:
        super().__init__(shared)
        self.pipeline = pipeline

    def control(self, stream: str, entry_id: str, body: object) -> None:
        """Apply one decision. One the engine refuses, of a tenant never created, or that the
        server refuses twice the same way is dead-lettered with why; one that fails otherwise
        (the server away) is left pending for the reaper, and logged once."""
        self.pipeline.flush()  # the writes read before this decision are in the graph
        event = None
        try:
            event = decode(body)
            if isinstance(event, ev.CONTROL):
                if not self.known(event.tenant):
                    raise tenants.UnknownTenant(event.tenant)
                result = self._decide(event)
                if result:
                    self._emit_status(event, result)
        except Exception as exc:
            if event is not None:
                self._redirected(event.tenant, exc)
            if event is not None and not refused(exc) and self.dropped(event.tenant):
                exc = tenants.UnknownTenant(event.tenant)  # dropped while remembered as known
            if not refused(exc):  # left pending: the reaper retries, then dead-letters
                if not self._lost(exc) and not self.failures.seen(stream, entry_id):
                    log.warning("control entry %s failed (%s: %s); left pending for the reaper",
                                entry_id, type(exc).__name__, words(exc))
                self.failures.note(stream, entry_id, exc)
                return
            if isinstance(exc, Refused):
                log.warning("control entry %s dead-lettered: %s", entry_id, exc)
            self.failures.dead_letter(self.conn, stream, entry_id, body, str(exc),
                                      layout.RETRACTION_GROUP)
        self._ack(stream, layout.RETRACTION_GROUP, [entry_id])

    def _decide(self, event: ev.Event) -> RetractionResult | None:
        """``apply_control``, tried a second time when the server refuses it; Refused (with
        the server's words) when it fails the same way again."""
        first: str | None = None  # what the first failure said of the entry
        while True:
            try:
                return apply_control(self.graph(event.tenant), event)
            except Exception as exc:
                if refused(exc) or transient(exc):
                    raise
                if first is not None:
                    if said(exc) == first:  # the same way twice: the entry's doing
                        raise Refused(reason(exc)) from exc
                    raise
                first = said(exc)

    def _emit_status(self, cause: ev.Event, result: RetractionResult) -> None:
        st.publish_status(self.conn, cause.tenant, result.id, result.rev, result.changed,
                          cause.at, cause.traceparent)


__all__ = ["Retraction"]
