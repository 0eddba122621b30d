"""Per run: what the agent has been handed, and in which model turn.

A context belongs to one top-level invocation of a wrapped graph (its root run, tracked by the
callback handler in ``current_run``): a new invocation starts empty, and two users' runs never
share one, with or without a ``thread_id``.

Delivery is by identity: a store item by its memory id (tenant, namespace, key and value), a
tool result or a user message by its observation id. The premises of a write are the delivered
items whose facts it uses (rule ``matched``, see ``attribution``): one justification per
minimal set of items covering those facts. When it uses none, what was delivered in the
model's current turn (rule ``turn-context``): since the model call before the latest one
started, which is what the latest call could have read. Never the whole run.
"""

from __future__ import annotations

import threading
import uuid
from contextvars import ContextVar
from dataclasses import dataclass, field

from .attribution import FactIndex, facts

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
    facts: dict[str, frozenset] = field(default_factory=dict)  # memory id -> its content facts
    turn_of: dict[str, int] = field(default_factory=dict)  # memory id -> turn last delivered in
    unread: dict[str, object] = field(default_factory=dict)  # delivered, facts not computed yet
    index: FactIndex = field(default_factory=FactIndex)  # fact -> the items stating it
    turn: int = 0  # model calls started so far in this run
    agent: str = "agent"
    span: object | None = None  # the run's trace span, if tracing

    def justifications(self, written: object, itself: str) -> tuple[list[list[str]], str]:
        """The alternatives ``written`` rests on (each a list of premises, all needed), and the
        rule that found them; ``itself`` (the memory being written) is never its own premise.
        No alternative at all: nothing was delivered in this turn."""
        if self.unread:  # facts are computed when a write first needs them, once per item
            for mid, value in self.unread.items():
                self.facts[mid] = frozenset(facts(value))
                self.index.add(mid, self.facts[mid])
            self.unread.clear()
        found = self.index.attribute(written, exclude=itself)
        if found.justifications:
            return [list(j) for j in found.justifications], found.rule
        premises = [p for p in self.in_turn() if p != itself]
        return ([premises] if premises else []), "turn-context"

    def in_turn(self) -> list[str]:
        """What the latest model call could have read, or what was handed over since."""
        return [m for m, t in self.turn_of.items() if t >= self.turn - 1]


class Contexts:
    def __init__(self) -> None:
        self._by_run: dict[str, RunContext] = {}
        self._lock = threading.Lock()

    def get(self, run: str) -> RunContext:
        with self._lock:
            return self._by_run.setdefault(run, RunContext())

    def begin(self, run: str):
        """A root run starts: its context is new; returns what ``end`` needs."""
        with self._lock:
            self._by_run[run] = RunContext()
        return _RUN.set(run)

    def end(self, run: str, token) -> RunContext | None:
        """A root run ended: its context is dropped (and returned), and the run is no longer
        current."""
        with self._lock:
            ctx = self._by_run.pop(run, None)
        try:
            _RUN.reset(token)
        except ValueError:  # ended in another context than it began: just leave it
            _RUN.set(None)
        return ctx

    def deliver(self, run: str, mem_id: str, value: object) -> None:
        ctx = self.get(run)
        ctx.turn_of[mem_id] = ctx.turn
        if mem_id not in ctx.facts:  # its facts are computed once, by the next write
            ctx.unread[mem_id] = value

    def model_turn(self, run: str, agent: str | None) -> None:
        """A model call starts: a new turn."""
        ctx = self.get(run)
        ctx.turn += 1
        if agent:
            ctx.agent = agent
