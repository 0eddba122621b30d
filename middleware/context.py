"""Per thread: what the agent has been handed, and what its model saw last.

The premises of a write are the delivered memories whose text appears in the latest model input
of the thread (rule ``model-input``); when none does, everything delivered in the run (rule
``run``). Matching is on normalised text, so the agent's prompt needs no tags of ours.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from rescind.contract.events import normalise


@dataclass
class RunContext:
    delivered: dict[str, str] = field(default_factory=dict)  # memory id -> normalised text
    model_input: str = ""
    agent: str = "agent"

    def premises(self) -> tuple[list[str], str]:
        if self.model_input:
            seen = [m for m, text in self.delivered.items() if text and text in self.model_input]
            if seen:
                return seen, "model-input"
        return list(self.delivered), "run"


class Contexts:
    def __init__(self) -> None:
        self._by_thread: dict[str, RunContext] = {}
        self._lock = threading.Lock()

    def get(self, thread: str) -> RunContext:
        with self._lock:
            return self._by_thread.setdefault(thread, RunContext())

    def deliver(self, thread: str, mem_id: str, text: str) -> None:
        self.get(thread).delivered[mem_id] = normalise(text)

    def saw(self, thread: str, model_input: str, agent: str | None) -> None:
        ctx = self.get(thread)
        ctx.model_input = normalise(model_input)
        if agent:
            ctx.agent = agent
