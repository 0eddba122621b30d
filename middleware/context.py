"""Per run: what the agent has been handed, and in which model turn.

A context belongs to one top-level invocation of a wrapped graph (its root run, tracked by the
callback handler in ``current_run``): a new invocation starts empty, and two users' runs never
share one, with or without a ``thread_id``. A run's branches (``Send``, parallel tasks, tool
calls of one model turn) run in threads or tasks at once and share their run's context: every
structure in it is read and changed under the context's lock. A branch that is an invocation
of a compiled subgraph is kept apart from its siblings of the same step (``RunContext.apart``):
a write in it never rests on what only a sibling run at once was given, while what its
parent had (before the fan-out) stays visible to it, and the parent after the join sees all.

Delivery is by identity: a store item by its memory id (tenant, namespace, key and value), a
tool result or a user message by its observation id. A tool result shown to a model again (in
the thread's history, restored by a checkpointer from an earlier run) is delivered again by its
tool-call id. The premises of a write are the delivered items whose facts it uses (rule
``matched``, see ``attribution``): one justification per minimal set of items covering those
facts; a user's message is a fact's source for the words of its statements too (``statements``).
Two writes of one model turn are no premises of each other (one output of the model); a write
of an earlier turn was shown to the later call as the model's own tool call, and is a premise
of what uses it (a payment on the plan it wrote). A memory written in an earlier run is shown
when read from the store, or quoted in a prompt the program built (``Contexts.quoted``: a
running summary in the system prompt). What uses a write of the run rests on that write, not
on what the write rests on: a payment follows its plan (withdraw the plan, the payment falls).
The user's messages of a run are one source: a justification holding another once they count
as one adds nothing and is dropped (``_by_source``), as a plan note adding to them only what a
prompt restating the plan says already.
When it uses none (rule ``turn-context``): of what the model's latest call was shown since the
call before it started (the run's own writes only if nothing else), the items sharing the most
content words with the write, one after another while each adds a word; when none shares a
word, the newest tool results, else the store items and messages. Never the whole run.

An item's facts and words depend on its text alone, and the same texts come back run after
run (a thread's history restored by a checkpointer, a profile read each run): they are
computed once for the process and kept by exact text (``ItemFacts``), and outside the run's
lock, so that parallel branches do not wait on each other's matching.
"""

from __future__ import annotations

import functools
import json
import re
import threading
import uuid
from collections import OrderedDict
from contextvars import ContextVar
from dataclasses import dataclass, field

from .attribution import (
    FactIndex,
    asked_names,
    facts,
    key_words,
    read_written,
    statements,
    words_of,
)

_RUN: ContextVar[str | None] = ContextVar("rescind_run", default=None)

# What a delivered item is, for the fallback: a tool result, a store item read, a user's
# message, the run's own write.
TOOL, STORE, USER, WRITTEN = "tool", "store", "user", "written"
_QUOTED = 24  # the shortest text a prompt is looked at for as quoting it
_REMEMBERED = 100_000  # tool calls (and built messages) remembered across runs, the oldest dropped
_SPACE = re.compile(r"\s")


@functools.lru_cache(maxsize=64)
def _windows(text: str) -> dict[str, list[int]]:
    """The first ``_QUOTED`` characters from each word's start in ``text`` (its start, and
    after each white space), with where they are. A program sends the same system prompt at
    every model call: kept for the last few texts, so a long prompt is read once, not at
    every call."""
    found: dict[str, list[int]] = {}
    for i in [0, *(m.end() for m in _SPACE.finditer(text))]:
        found.setdefault(text[i:i + _QUOTED], []).append(i)
    return found
# Items' facts kept across runs (``ItemFacts``): texts are the agent's input, any size, so both
# how many and how much text are bounded; a longer text is computed each time it is needed.
_KEPT_ITEMS = 4096
_KEPT_CHARS = 2_000_000  # of all the texts kept together
_KEPT_TEXT = 20_000  # the longest text kept (a tool result's text is cut at this already)
_KEPT_DEPTH = 8  # nesting a stored value may have to be kept


def _plain_key(value: object, depth: int = 0) -> bool:
    """Whether ``value`` is made of exactly dicts (string keys), lists, strings, numbers,
    booleans and None: a value its JSON text stands for, whose facts that text decides."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return True
    if depth >= _KEPT_DEPTH:
        return False
    if kind is dict:
        return all(type(k) is str and _plain_key(v, depth + 1) for k, v in value.items())
    if kind is list or kind is tuple:
        return all(_plain_key(v, depth + 1) for v in value)
    return False


class ItemFacts:
    """A delivered item's facts and content words, computed once for the process: the least
    recently used of at most ``items`` entries and ``chars`` characters of text, each at most
    ``longest`` long, kept by exact text (a stored value by its JSON text, when plain). Thread
    safe; the computing is done outside its lock."""

    def __init__(self, items: int = _KEPT_ITEMS, chars: int = _KEPT_CHARS,
                 longest: int = _KEPT_TEXT) -> None:
        self.items, self.chars, self.longest = items, chars, longest
        self._kept: OrderedDict[tuple[bool, bool, str], tuple[frozenset, frozenset]] = \
            OrderedDict()
        self._size = 0  # characters of the texts kept
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._kept)

    @property
    def size(self) -> int:
        return self._size

    def of(self, value: object, users: bool) -> tuple[frozenset, frozenset]:
        """(facts, content words) of ``value``; ``users``: a user's message, whose statements'
        words are facts too, and the names it only asks about none."""
        key = self._key(value, users)
        if key is not None:
            with self._lock:
                known = self._kept.get(key)
                if known is not None:
                    self._kept.move_to_end(key)
                    return known
        found = facts(value) | key_words(value)  # a key's words: what its value is of
        if users:  # a user's statements say words too, and the names they only ask about none
            found |= statements(value)
            found -= asked_names(value)
        known = frozenset(found), words_of(value)
        if key is not None:
            with self._lock:
                if key not in self._kept:
                    self._kept[key] = known
                    self._size += len(key[2])
                    while len(self._kept) > self.items or self._size > self.chars:
                        self._size -= len(self._kept.popitem(last=False)[0][2])
        return known

    def _key(self, value: object, users: bool) -> tuple[bool, bool, str] | None:
        if type(value) is str:
            text, plain = value, True
        elif (type(value) is dict or type(value) is list) and _plain_key(value):
            try:
                text, plain = json.dumps(value, ensure_ascii=False), False
            except (ValueError, RecursionError):
                return None
        else:
            return None
        return (users, plain, text) if len(text) <= self.longest else None


ITEM_FACTS = ItemFacts()  # for the process: facts depend on the text alone


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
    words: dict[str, frozenset] = field(default_factory=dict)  # memory id -> its content words
    turn_of: dict[str, int] = field(default_factory=dict)  # memory id -> turn last delivered in
    first_turn: dict[str, int] = field(default_factory=dict)  # memory id -> turn first delivered
    kind_of: dict[str, str] = field(default_factory=dict)  # memory id -> TOOL, STORE, USER...
    unread: dict[str, object] = field(default_factory=dict)  # delivered, facts not computed yet
    index: FactIndex = field(default_factory=FactIndex)  # fact -> the items stating it
    inputs: set[str] = field(default_factory=set)  # the invocation's input texts: the user's
    built: set[str] = field(default_factory=set)  # message texts the program built in this run
    turn: int = 0  # model calls started so far in this run
    # a branch: the subgraph invocations a step runs inside (its checkpoint namespace less its
    # own task), () at the graph's top; where each item was delivered, and the parent's step
    # each subgraph task ran at (``task``)
    branch_of: dict[str, set[tuple[str, ...]]] = field(default_factory=dict)
    steps: dict[str, object] = field(default_factory=dict)
    agent: str = "agent"
    span: object | None = None  # the run's trace span, if tracing
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    def deliver(self, mem_id: str, value: object, kind: str = STORE,
                branch: tuple[str, ...] = ()) -> None:
        with self.lock:
            self.branch_of.setdefault(mem_id, set()).add(branch)
            self.turn_of[mem_id] = self.turn
            self.first_turn.setdefault(mem_id, self.turn)
            if self.kind_of.get(mem_id) != TOOL:  # a tool result stays one, however re-sent
                self.kind_of[mem_id] = kind
            if mem_id not in self.facts:  # its facts are read once, by the next write
                self.unread[mem_id] = value

    def model_turn(self, agent: str | None) -> None:
        with self.lock:
            self.turn += 1
            if agent:
                self.agent = agent

    def apart(self, a: tuple[str, ...], b: tuple[str, ...]) -> bool:
        """Whether branches ``a`` and ``b`` ran at once, kept apart: they part at two subgraph
        tasks the same step of their graph ran (a ``Send`` fan-out), neither inside the other.
        A branch inside another, or the graph's top, or a later step, sees what it was given."""
        k = 0
        while k < len(a) and k < len(b) and a[k] == b[k]:
            k += 1
        if k == len(a) or k == len(b):
            return False
        step = self.steps.get(a[k])
        return step is not None and step == self.steps.get(b[k])

    def hidden(self, branch: tuple[str, ...]) -> list[str]:
        """The items delivered only in branches kept apart from ``branch`` (run at once)."""
        if not branch:
            return []
        with self.lock:
            return [m for m, where in self.branch_of.items()
                    if all(self.apart(branch, w) for w in where)]

    def justifications(self, written: object, itself: str,
                       branch: tuple[str, ...] = ()) -> tuple[list[list[str]], str]:
        """The alternatives ``written`` rests on (each a list of premises, all needed), and the
        rule that found them; ``itself`` (the memory being written) is never its own premise,
        nor what only a branch run at once with ``branch`` (the write's) was given.
        No alternative at all: nothing was delivered in this turn."""
        target = read_written(written)  # outside the lock: branches read theirs at once
        self._read_unread()  # outside the lock, then under it what was delivered meanwhile
        with self.lock:
            self._read_unread()
            # the writes of this model turn: one output of the model, none shown to another
            # (a write of an earlier turn was shown to this call, as the model's own tool call)
            same = [m for m, k in self.kind_of.items()
                    if k == WRITTEN and self.first_turn.get(m) == self.turn]
            hidden = self.hidden(branch)
            found = self.index.attribute(written, exclude=[itself, *same, *hidden],
                                         target=target)
            if found.justifications:
                return [list(j) for j in self._by_source(found.justifications)], found.rule
            premises = [p for p in self.fallback(written, target.content_words, hidden)
                        if p != itself]
            return ([premises] if premises else []), "turn-context"

    def _by_source(self, covers: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
        """``covers`` less those that hold another once the user's messages count as one (they
        are one source, the run's user): {user's objective, venues, trains, plan} adds the plan
        to {user's objective, venues, trains, prompt restating the user}, so it is no minimal
        justification (retracting anything it needs retracts the other too, or the plan)."""
        if len(covers) < 2:
            return covers
        keyed = [frozenset(USER if self.kind_of.get(p) == USER else p for p in c)
                 for c in covers]
        return [c for c, k in zip(covers, keyed, strict=True) if not any(o < k for o in keyed)]

    def _read_unread(self) -> None:
        """The facts of the items delivered since the last write, computed (or found in
        ``ITEM_FACTS``) without holding the lock unless the caller does; only reading what is
        unread and merging what was computed take it."""
        with self.lock:
            pending = [(mid, value, self.kind_of.get(mid) == USER)
                       for mid, value in self.unread.items()]
        if not pending:
            return
        read = [(mid, *ITEM_FACTS.of(value, users)) for mid, value, users in pending]
        with self.lock:
            for mid, found, words in read:
                if mid not in self.facts:  # another branch may have read it meanwhile
                    self.facts[mid], self.words[mid] = found, words
                    self.index.add(mid, found, words)
                self.unread.pop(mid, None)

    def in_turn(self) -> list[str]:
        """What the latest model call could have read, or what was handed over since."""
        with self.lock:
            return [m for m, t in self.turn_of.items() if t >= self.turn - 1]

    def fallback(self, written: object = None, words: frozenset[str] | None = None,
                 hidden: list[str] | None = None) -> list[str]:
        """Of what the latest call was shown (the run's own writes only if nothing else): the
        items sharing the most content words with ``written``, one after another while each
        adds a word the others do not (a paraphrase keeps some words); when none shares a
        word, the newest tool results, else the store items and messages. ``words``: the
        content words of ``written``, when read already (``read_written``); ``hidden``: items
        a branch run at once was given, never chosen."""
        with self.lock:
            shown = self.in_turn()
            if hidden:
                shown = [m for m in shown if m not in set(hidden)]
            others = [m for m in shown if self.kind_of.get(m) != WRITTEN] or shown
            if words is None and written is not None:
                words = words_of(written)
            if words and others and (left := set(words)):  # nothing shown: no premise
                chosen: list[str] = []
                while left:
                    score, best = max(((len(self.words.get(m, frozenset()) & left),
                                        self._rank(m)), m) for m in others)
                    if score[0] == 0:
                        break
                    chosen.append(best)
                    left -= self.words[best]
                if chosen:
                    return sorted(chosen)
            tools = [m for m in others if self.kind_of.get(m) == TOOL]
            if tools:
                newest = max(self.first_turn[m] for m in tools)
                return [m for m in tools if self.first_turn[m] == newest]
            return others

    def _rank(self, mid: str) -> tuple[int, int]:
        """Between items sharing as many words: a tool result, then a store item, then a
        message, then the run's own write; the newest first."""
        order = {TOOL: 3, STORE: 2, USER: 1}.get(self.kind_of.get(mid, ""), 0)
        return order, self.first_turn.get(mid, 0)


class Contexts:
    def __init__(self) -> None:
        self._by_run: dict[str, RunContext] = {}
        self._lock = threading.Lock()
        self._calls: dict[str, tuple[str, str]] = {}  # tool call id -> (observation id, text)
        self._built: dict[str, None] = {}  # texts of messages programs built, across runs
        # memories written, across runs, by the start of their text: a prompt that quotes one
        # shows it (a running summary put in the system prompt)
        self._written: dict[str, dict[str, tuple[str, object]]] = {}

    def get(self, run: str) -> RunContext:
        ctx = self._by_run.get(run)  # a dict read is atomic: the lock is for making one
        if ctx is not None:
            return ctx
        with self._lock:
            ctx = self._by_run.get(run)
            if ctx is None:
                ctx = self._by_run[run] = RunContext()
            return ctx

    def begin(self, run: str, inputs: set[str] | None = None,
              continues: RunContext | None = None):
        """A root run starts: its context is new (or ``continues``, an interrupted run's, which
        it resumes), ``inputs`` (the texts of its input) are the user's; returns what ``end``
        needs."""
        with self._lock:
            if continues is None:
                self._by_run[run] = RunContext(inputs=set(inputs or ()))
            else:
                with continues.lock:
                    continues.inputs = set(inputs or ())  # the resuming invocation's only
                self._by_run[run] = continues
        return _RUN.set(run)

    def end(self, run: str, token) -> RunContext | None:
        """A root run ended: its context is dropped (and returned), and the run is no longer
        current."""
        ctx = self.drop(run)
        self.leave(token)
        return ctx

    @staticmethod
    def leave(token) -> None:
        """The run ``begin`` made current (its token) is no longer current."""
        try:
            _RUN.reset(token)
        except ValueError:  # ended in another context than it began: just leave it
            _RUN.set(None)

    def drop(self, run: str) -> RunContext | None:
        """The run's context is dropped (and returned)."""
        with self._lock:
            return self._by_run.pop(run, None)

    def task(self, run: str, namespace: object, step: object) -> None:
        """A graph's task started at ``step`` of its graph, ``namespace`` its checkpoint
        namespace: the step a subgraph run by that task ran at (branches of one step run at
        once)."""
        if isinstance(namespace, str) and namespace and step is not None:
            self.get(run).steps[namespace.rsplit("|", 1)[-1]] = step

    def deliver(self, run: str, mem_id: str, value: object, kind: str = STORE,
                branch: tuple[str, ...] = ()) -> None:
        self.get(run).deliver(mem_id, value, kind, branch)
        if kind == WRITTEN and isinstance(value, dict):
            text = next((v for f in ("text", "content") if isinstance(v := value.get(f), str)),
                        None)
            if text is not None and len(text.strip()) >= _QUOTED:
                text = text.strip()
                with self._lock:
                    self._written.setdefault(text[:_QUOTED], {})[text] = (mem_id, value)
                    if len(self._written) > _REMEMBERED:
                        del self._written[next(iter(self._written))]

    def quoted(self, run: str, text: str,
               branch: tuple[str, ...] = ()) -> list[tuple[str, str]]:
        """What a prompt the program built (not the user's message) quotes: the memories
        written (in any run) whose text it holds, delivered as read; and the texts of the
        invocation's input it holds (a value given to resume an interrupt, a field of the
        input state), returned as the user's statements ((id, text) each)."""
        ctx = self.get(run)
        with ctx.lock:
            inputs = [t for t in ctx.inputs if len(t) >= _QUOTED and " " in t and t in text]
        found: list[tuple[int, tuple[str, object]]] = []
        if self._written:
            windows = _windows(text)
            with self._lock:
                small, big = sorted((windows, self._written), key=len)
                for key in [k for k in small if k in big]:
                    for whole, known in self._written[key].items():
                        found += [(i, known) for i in windows[key] if text.startswith(whole, i)]
        found.sort(key=lambda hit: hit[0])  # as the prompt quotes them
        for _, (mem_id, value) in found:
            if branch:  # inside a subgraph's branch: shown to it and what it runs only
                ctx.deliver(mem_id, value, STORE, branch)
            else:
                ctx.deliver(mem_id, value, STORE)
        return [(f"input:{hash(t)}", t) for t in inputs]

    def model_turn(self, run: str, agent: str | None) -> None:
        """A model call starts: a new turn."""
        self.get(run).model_turn(agent)

    # across runs: a tool result keeps its observation through its tool-call id
    def tool_result(self, call_id: str, observation: str, text: str) -> None:
        with self._lock:
            self._calls[call_id] = (observation, text)
            if len(self._calls) > _REMEMBERED:
                del self._calls[next(iter(self._calls))]

    def observation_of(self, call_id: str) -> tuple[str, str] | None:
        with self._lock:
            return self._calls.get(call_id)

    def built(self, run: str, texts: list[str]) -> None:
        """The program built messages holding ``texts`` (a node's output): not the user's."""
        ctx = self.get(run)
        with ctx.lock:
            texts = [t for t in texts if t not in ctx.inputs]  # the input passing through
            ctx.built.update(texts)
        with self._lock:
            for t in texts:
                self._built[t] = None
            while len(self._built) > _REMEMBERED:
                del self._built[next(iter(self._built))]

    def is_users(self, run: str, text: str, has_id: bool) -> bool:
        """A human message in a model's input is the user's when the invocation's input holds
        it, or when it comes from the thread's state (it has an id) and no program built it."""
        ctx = self.get(run)
        with ctx.lock:
            if text in ctx.inputs:
                return True
            if not has_id or text in ctx.built:
                return False
        with self._lock:
            return text not in self._built


def branch_of(namespace: object) -> tuple[str, ...]:
    """The branch a step runs in, from its checkpoint namespace (``parent:task|node:task``):
    the subgraph tasks it runs inside, () at the graph's top."""
    if not isinstance(namespace, str) or "|" not in namespace:
        return ()
    return tuple(namespace.split("|")[:-1])


def current_branch() -> tuple[str, ...]:
    """The branch the code running now (a node, a tool, a store call) runs in; () outside a
    graph."""
    try:
        from langgraph.config import get_config

        conf = get_config()
    except (RuntimeError, ImportError):
        return ()
    meta = conf.get("metadata") or {}
    return branch_of(meta.get("langgraph_checkpoint_ns")
                     or (conf.get("configurable") or {}).get("checkpoint_ns"))


def run_key() -> str | None:
    """The root run this code runs under, or None outside one."""
    return _RUN.get()
