"""Per run: what the agent has been handed, and what its model saw last.

A context belongs to one top-level invocation of a wrapped graph (its root run, tracked by the
callback handler in ``current_run``): a new invocation starts empty, and two users' runs never
share one, with or without a ``thread_id``.

The premises of a write are the delivered items whose facts it uses (rule ``matched``, see
``attribution``): one justification per minimal set of items covering those facts. When it
uses none, the delivered memories whose text appears in the latest model input of the thread
(rule ``model-input``); when none does, everything delivered in the run (rule ``run``).
"""

from __future__ import annotations

import threading
import uuid
from contextvars import ContextVar
from dataclasses import dataclass, field

from rescind.contract.events import normalise

from .attribution import attribute_facts, facts

_RUN: ContextVar[str | None] = ContextVar("rescind_run", default=None)


def current_run(thread_id: object = None) -> str:
    """The key of the context in use: the root run this code runs under; outside one, the
    configured thread, else a key of its own (nothing is shared by default)."""
    run = _RUN.get()
    if run is not None:
        return run
    return f"thread:{thread_id}" if thread_id is not None else f"op:{uuid.uuid4().hex}"


@dataclass
class RunContext:
    delivered: dict[str, str] = field(default_factory=dict)  # memory id -> normalised text
    facts: dict[str, frozenset] = field(default_factory=dict)  # memory id -> its content facts
    model_input: str = ""
    agent: str = "agent"

    def justifications(self, written: object, itself: str) -> tuple[list[list[str]], str]:
        """The alternatives ``written`` rests on (each a list of premises, all needed), and the
        rule that found them; ``itself`` (the memory being written) is never its own premise."""
        found = attribute_facts(written, {m: f for m, f in self.facts.items() if m != itself})
        if found.justifications:
            return [list(j) for j in found.justifications], found.rule
        premises, rule = self.premises()
        premises = [p for p in premises if p != itself]
        return ([premises] if premises else []), rule

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

    def begin(self, run: str):
        """A root run starts: its context is new; returns what ``end`` needs."""
        with self._lock:
            self._by_thread[run] = RunContext()
        return _RUN.set(run)

    def end(self, run: str, token) -> None:
        """A root run ended: its context is dropped, and the run is no longer current."""
        with self._lock:
            self._by_thread.pop(run, None)
        try:
            _RUN.reset(token)
        except ValueError:  # ended in another context than it began: just leave it
            _RUN.set(None)

    def deliver(self, thread: str, mem_id: str, text: str, value: object = None) -> None:
        ctx = self.get(thread)
        ctx.delivered[mem_id] = normalise(text)
        if mem_id not in ctx.facts:  # computed once: every later write is matched against it
            ctx.facts[mem_id] = frozenset(facts(text if value is None else value))

    def saw(self, thread: str, model_input: str, agent: str | None) -> None:
        ctx = self.get(thread)
        ctx.model_input = normalise(model_input)
        if agent:
            ctx.agent = agent
