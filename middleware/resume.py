"""An invocation that resumes an interrupted one continues it.

A graph run stopped by an ``interrupt()`` (LangChain's ``HumanInTheLoopMiddleware`` asking to
approve a tool call, a node asking a person a question) ends; a later invocation of the same
thread with ``Command(resume=...)`` goes on from where it stopped: the tool the model asked for
runs then, with no model call before it in that invocation. What the write it makes rests on
is what the interrupted run had been handed (the model call that produced the tool call was
shown it), so the resumed invocation takes over the interrupted run's context (``Resumes``):
what was delivered, the model turns, the run's own writes. The resume value is the resuming
person's word: its statements are the user's, of the resuming invocation's user
(``statements``), delivered at the first step of the run that sees its config values. What the
person sends back as it was asked (an edit's arguments left as the model proposed them: the
interrupt's own value holds them) is no statement of theirs: it rests on what it was made from.

Kept in the agent's process, by thread id, for the most recent ``KEPT`` interrupted threads: an
invocation resumed by another process, or after the thread was dropped, starts afresh.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from typing import Any

KEPT = 4096  # interrupted threads whose run context is kept until resumed
_TAG = re.compile(r"[a-z][a-z0-9_-]*")  # a structured answer's choice ("approve", "edit")
_LEAVES = 64  # values looked at in a resume value, at most
_DEPTH = 6


def interrupted(error: BaseException | None) -> bool:
    """Whether a task's error is LangGraph stopping the run at an interrupt."""
    if error is None:
        return False
    try:
        from langgraph.errors import GraphInterrupt
    except ImportError:  # pragma: no cover - langgraph is a dependency of the middleware
        return False
    return isinstance(error, GraphInterrupt)


def resume_value(inputs: Any) -> tuple[bool, Any]:
    """(True, its value) when an invocation's input resumes an interrupt: a
    ``Command(resume=...)``; (False, None) otherwise."""
    if inputs is None or isinstance(inputs, dict | list | str):
        return False, None
    if hasattr(inputs, "goto") and hasattr(inputs, "resume"):  # a langgraph Command
        return inputs.resume is not None, inputs.resume
    return False, None


def statements(value: Any, asked: frozenset[str] = frozenset()) -> str:
    """What a resume value says, as one text: a plain answer whole; of a structured one (a
    dict, a list: ``{"decisions": [{"type": "reject", "message": ...}]}``) its texts and
    numbers, one a line, less the bare lowercase words that name a choice among the program's
    own (``approve``, ``reject``, a tool's name), not a statement of the person's, and less
    what the interrupt asked with (``asked``: its value's texts) sent back unchanged."""
    if isinstance(value, str):
        return value.strip() if value.strip() not in asked else ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    said = [t for t in _leaves(value) if t not in asked and not _TAG.fullmatch(t)]
    return "\n".join(dict.fromkeys(said))


def asked(error: BaseException) -> frozenset[str]:
    """The texts of what an interrupt asked with (each ``Interrupt``'s value)."""
    found: set[str] = set()
    for each in (error.args[0] if error.args else ()) or ():
        found.update(_leaves(getattr(each, "value", None)))
    return frozenset(found)


def _leaves(value: Any) -> list[str]:
    """The texts and numbers inside ``value`` (dicts' values, lists), bounded."""
    said: list[str] = []
    stack = [(value, 0)]
    left = _LEAVES
    while stack and left > 0:
        item, depth = stack.pop()
        left -= 1
        if isinstance(item, str):
            if text := item.strip():
                said.append(text)
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int | float):
            said.append(str(item))
        elif depth < _DEPTH and isinstance(item, dict):
            stack.extend((v, depth + 1) for v in reversed(list(item.values())))
        elif depth < _DEPTH and isinstance(item, list | tuple):
            stack.extend((v, depth + 1) for v in reversed(list(item)))
    return said


class Resumes:
    """Interrupted runs' contexts by thread, until an invocation of the thread resumes one;
    and, per resuming run, what its resume value says, until it is delivered. Thread safe."""

    def __init__(self, kept: int = KEPT) -> None:
        self.kept = kept
        self._lock = threading.Lock()
        # thread -> (its interrupted run's context, the texts its interrupts asked with)
        self._by_thread: OrderedDict[str, tuple[object, frozenset[str]]] = OrderedDict()
        self._thread: dict[str, str] = {}  # root run -> its thread id (runs in flight)
        self._stopped: dict[str, frozenset[str]] = {}  # root runs an interrupt stopped
        self._said: dict[str, str] = {}  # resuming run -> its resume value's statements

    def begin(self, run: str, inputs: Any, thread: object) -> object | None:
        """A root run starts with ``inputs`` on ``thread``: the interrupted context it
        continues (a ``Command(resume=...)`` of a thread an interrupt stopped), else None. An
        invocation of the thread that resumes nothing forgets what the thread kept."""
        if thread is None:
            return None
        thread = str(thread)
        resumes, value = resume_value(inputs)
        with self._lock:
            self._thread[run] = thread
            ctx, asked_with = self._by_thread.pop(thread, (None, frozenset()))
            if resumes:
                said = statements(value, asked_with)
                if said:
                    self._said[run] = said
                return ctx
        return None

    def stopped(self, run: str | None, error: BaseException) -> None:
        """A task of ``run`` raised LangGraph's interrupt (``error``): the run stops there."""
        if run is not None:
            with self._lock:
                if run in self._thread:
                    self._stopped[run] = self._stopped.get(run, frozenset()) | asked(error)

    def end(self, run: str, ctx: object) -> None:
        """A root run ended; if an interrupt stopped it, its context ``ctx`` is kept for the
        invocation of its thread that resumes it."""
        with self._lock:
            thread = self._thread.pop(run, None)
            self._said.pop(run, None)
            asked_with = self._stopped.pop(run, None)
            if asked_with is not None and thread is not None:
                self._by_thread[thread] = ctx, asked_with
                self._by_thread.move_to_end(thread)
                while len(self._by_thread) > self.kept:
                    self._by_thread.popitem(last=False)

    def said(self, run: str | None) -> list[tuple[str, str]]:
        """What ``run``'s resume value says, as the user's statement ((id, text)), once: the
        first step that sees the run's config values delivers it; [] after, or with none."""
        if run is None or not self._said:
            return []
        with self._lock:
            text = self._said.pop(run, None)
        return [(f"resume:{run}", text)] if text else []

    def __len__(self) -> int:
        return len(self._by_thread)
