"""The worker roles put together, apart from how FastStream hands them entries
(``rescind.workers.app``): the writer batches justified writes (and tells the agents of the
statuses a write changed, ``rescind.workers.writer``), the retraction role applies decisions
and tells the agents (``retraction``), the gate answers (``gate``), the reaper retries or
dead-letters (``reaper``). They share one connection, the tenants' graphs and the failures
remembered per entry (``rescind.workers.shared``); how a failure is told and retried is the
policy's (``rescind.workers.policy``).
"""

from __future__ import annotations

from rescind.engine.writes import Pipeline
from rescind.workers.gate import GATE_ASKER, Gate, gate_detail
from rescind.workers.reaper import Reaper
from rescind.workers.retraction import Retraction
from rescind.workers.shared import Shared, WorkerSettings
from rescind.workers.state import Held, Trouble
from rescind.workers.writer import Unreplicated, Writer


class Workers(Shared):
    """The four roles over the state they share; what FastStream's handlers call."""

    def __init__(self, settings: WorkerSettings) -> None:
        super().__init__(settings)
        self.writer = Writer(self)
        self.retraction = Retraction(self, self.writer.pipeline)
        self.gatekeeper = Gate(self)
        self.reaper = Reaper(self, self.writer, self.retraction)

    # The writer's state, which the loops of rescind.workers.app drive.
    @property
    def pipeline(self) -> Pipeline:
        return self.writer.pipeline

    @property
    def held(self) -> dict[tuple[str, str], Held]:
        return self.writer.held

    @property
    def trouble(self) -> dict[tuple[str, str], Trouble]:
        return self.writer.trouble

    def write_batch(self, stream: str, entries: list[tuple[str, object]]) -> None:
        self.writer.write_batch(stream, entries)

    def retry_held(self) -> None:
        self.writer.retry_held()

    def control(self, stream: str, entry_id: str, body: object) -> None:
        self.retraction.control(stream, entry_id, body)

    def gate(self, entry_id: str, body: object) -> None:
        self.gatekeeper.gate(entry_id, body)

    def reap(self, group: str, stream: str, entry_id: str, body: object) -> None:
        self.reaper.reap(group, stream, entry_id, body)


__all__ = ["GATE_ASKER", "Held", "Unreplicated", "WorkerSettings", "Workers", "gate_detail"]
