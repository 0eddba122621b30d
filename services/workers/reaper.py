"""The reaper role: entries a dead consumer left pending, claimed once idle (XAUTOCLAIM; Redis
8.2 has no XREADGROUP CLAIM), redone by the writer or the retraction role, or dead-lettered,
with the last failure seen, once delivered more than ``max_deliveries`` times. An entry
acknowledged between its claim and its turn (the writer landed it, or dead-lettered it as what
the server died applying) is left alone."""

from __future__ import annotations

from rescind.contract import layout
from rescind.workers.retraction import Retraction
from rescind.workers.shared import Role, Shared
from rescind.workers.writer import Writer


class Reaper(Role):
    def __init__(self, shared: Shared, writer: Writer, retraction: Retraction) -> None:
        super().__init__(shared)
        self.writer, self.retraction = writer, retraction

    def reap(self, group: str, stream: str, entry_id: str, body: object) -> None:
        """An entry claimed from a dead consumer: dead-letter it if it keeps failing, else redo."""
        if group == layout.WRITER_GROUP and (stream, entry_id) in self.writer.held:
            return  # held here (waiting, or in crash quarantine): retried by retry_held
        info = self.conn.xpending_range(stream, group, min=entry_id, max=entry_id, count=1)
        if not info:
            # Acknowledged since it was claimed: landed, or dead-lettered (a write the server
            # died applying must never reach it again). Nothing to redo.
            return
        deliveries = info[0]["times_delivered"]
        if deliveries > self.settings.max_deliveries:
            last = self.failures.forget(stream, entry_id)
            self.failures.dead_letter(self.conn, stream, entry_id, body,
                                      f"delivered {deliveries} times without success"
                                      + (f"; last error: {last}" if last else ""), group)
            self._ack(stream, group, [entry_id])
        elif group == layout.WRITER_GROUP:
            self.writer.write_batch(stream, [(entry_id, body)])
        else:
            self.retraction.control(stream, entry_id, body)


__all__ = ["Reaper"]
