"""The callback handler that sees model inputs and tool calls, per call or process-wide."""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage
from opentelemetry import trace

from .config import configurable
from .context import TOOL, branch_of, current_run, run_key
from .gate import GateRefused
from .recorder import Recorder
from .resume import interrupted


class RescindCallbacks(BaseCallbackHandler):
    raise_error = True  # a refused gate must stop the action tool, not be logged and ignored
    run_inline = True  # in async runs too: the root run is set where the graph's tasks see it

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self._tools: dict[UUID, tuple[str, str, dict, str]] = {}
        self._spans: dict[UUID, trace.Span] = {}
        self._roots: dict[UUID, object] = {}
        self._branches: dict[UUID, tuple[str, ...]] = {}  # a source tool call's branch

    def on_chain_start(self, serialized: dict, inputs: Any, *, run_id: UUID,
                       parent_run_id: UUID | None = None, **kw: Any) -> None:
        if parent_run_id is None:  # a top-level invocation: its own context and trace
            # Its input's texts are the user's word; a message the program builds is not.
            run = str(run_id)
            # an invocation resuming an interrupt continues the interrupted run's context
            kept = self.recorder.resumes.begin(run, inputs, (kw.get("metadata") or {})
                                               .get("thread_id"))
            self._roots[run_id] = self.recorder.contexts.begin(run, _texts(inputs), kept)
            if len(self._roots) > self.recorder.at_once:  # runs at once: users told apart?
                self.recorder.at_once = len(self._roots)
            self.recorder.contexts.get(run).span = self.recorder.run_span(run)
        elif _is_task(kw.get("tags")) and (run := run_key()) is not None:
            # a graph's task: the step it ran at, which tells branches run at once apart
            meta = kw.get("metadata") or {}
            self.recorder.contexts.task(run, meta.get("langgraph_checkpoint_ns"),
                                        meta.get("langgraph_step"))

    def on_chain_end(self, outputs: Any, *, run_id: UUID, error: BaseException | None = None,
                     **kw: Any) -> None:
        if run_id not in self._roots:  # a node's output: the human messages it built
            if error is not None and interrupted(error):  # the run stops at an interrupt
                self.recorder.resumes.stopped(run_key(), error)
            # Only a graph's task (a node, a functional-API task, the input's start) hands the
            # state what it returns: the runnables inside a node return to the node, whose own
            # end follows with what it returns.
            if not _is_task(kw.get("tags")):
                return
            run = run_key()
            # Read now: a message the state takes gets an id, and new ones have none yet.
            if run is not None and outputs is not None and (built := _built(outputs)):
                self.recorder.defer(self.recorder.contexts.built, run, built)
            return
        run = str(run_id)
        ctx = self.recorder.contexts.get(run)
        self.recorder.resumes.end(run, ctx)  # kept if an interrupt stopped it
        self.recorder.contexts.leave(self._roots.pop(run_id))
        # Dropped once the steps the run asked for have run (they use it).
        self.recorder.defer(self.recorder.contexts.drop, run)
        if ctx.span is not None:
            if error is not None:
                ctx.span.record_exception(error)
            ctx.span.end()

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        self.on_chain_end(None, run_id=run_id, error=error)

    def on_chat_model_start(self, serialized: dict, messages: list[list[Any]], *, run_id: UUID,
                            metadata: dict | None = None, **kw: Any) -> None:
        meta = metadata or {}
        run = current_run(meta.get("thread_id"))
        self._resumed(run)
        # Noted now (a message's id, which the state may give it later), read by a step.
        shown = []
        for m in (m for batch in messages for m in batch):
            kind = getattr(m, "type", None)
            if kind == "human":
                shown.append((m, getattr(m, "id", None)))
            elif kind == "system":  # the program's prompt: what it quotes is shown too
                shown.append((m, None))
            elif kind == "tool":
                shown.append((None, str(getattr(m, "tool_call_id", ""))))
        self.recorder.defer(_shown, self.recorder, run,
                            meta.get("lc_agent_name") or meta.get("langgraph_node"), shown,
                            configurable(), self.recorder.stamp(run),
                            branch_of(meta.get("langgraph_checkpoint_ns")))

    def on_tool_start(self, serialized: dict, input_str: str, *, run_id: UUID,
                      metadata: dict | None = None, inputs: dict | None = None,
                      **kw: Any) -> None:
        name = (serialized or {}).get("name") or kw.get("name", "")
        thread = current_run((metadata or {}).get("thread_id"))
        self._resumed(thread)
        args = inputs if isinstance(inputs, dict) else _args(input_str)
        call_id = str(kw.get("tool_call_id") or (metadata or {}).get("tool_call_id") or run_id)
        self._tools[run_id] = (name, thread, args, call_id)
        if name in self.recorder.config.sources:
            self._branches[run_id] = branch_of((metadata or {}).get("langgraph_checkpoint_ns"))
        span = self.recorder.span(f"rescind.tool {name}", thread, {"rescind.run": thread})
        self._spans[run_id] = span
        if name not in self.recorder.config.actions:  # nothing to do in the span yet
            return
        try:
            with trace.use_span(span):
                call_id = self.recorder.action_start(thread, name, args, call_id,
                                                     {**configurable(), **args})
                self._tools[run_id] = (name, thread, args, call_id)
        except BaseException as exc:  # a refused gate: the tool will not run, the span ends here
            self._spans.pop(run_id, None)
            span.record_exception(exc)
            span.end()
            raise

    def _resumed(self, run: str) -> None:
        """The run's resume value, the resuming user's word, delivered by the run's first step
        that sees its config values (a model call, a tool call, a store write)."""
        if said := self.recorder.resumes.said(run):
            self.recorder.defer(self.recorder.user_said, run, said, configurable(),
                                self.recorder.stamp(run))

    def on_tool_end(self, output: Any, *, run_id: UUID, **kw: Any) -> None:
        name, thread, args, call_id = self._tools.pop(run_id, ("", current_run(), {}, ""))
        branch = self._branches.pop(run_id, ())
        span = self._spans.pop(run_id, None) or trace.INVALID_SPAN
        if span is trace.INVALID_SPAN and name not in self.recorder.config.actions:
            # no span of the call's own (nothing exported): what ``use_span`` of it would
            # stamp is the run's span, had without entering it
            if name in self.recorder.config.sources:
                self._source_end(thread, name, args, output, call_id,
                                 (self.recorder.clock(), self.recorder.contexts.get(thread).span),
                                 branch)
            return
        with trace.use_span(span, end_on_exit=True):
            if name in self.recorder.config.sources:
                self._source_end(thread, name, args, output, call_id,
                                 self.recorder.stamp(thread), branch)
            elif name in self.recorder.config.actions:
                self.recorder.action_done(name, call_id, tool_text(output))

    def _source_end(self, thread: str, name: str, args: dict, output: Any, call_id: str,
                    stamp: tuple, branch: tuple[str, ...] = ()) -> None:
        values = configurable()
        self.recorder.defer(_source_done, self.recorder, thread, name, {**values, **args},
                            values, tool_text(output), call_id, stamp, branch)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        name, _, _, action = self._tools.pop(run_id, ("", "", {}, ""))
        self._branches.pop(run_id, None)
        if name in self.recorder.config.actions and not isinstance(error, GateRefused):
            self.recorder.action_failed(name, action, error)
        span = self._spans.pop(run_id, None)
        if span is not None:
            span.record_exception(error)
            span.end()


def _shown(recorder: Recorder, run: str, agent: str | None,
           shown: list[tuple[Any, str | None]], values: dict, stamp: tuple,
           branch: tuple[str, ...] = ()) -> None:
    """A recording step: a model call was shown ``shown`` (a human message and its id, or a
    tool result's tool-call id): the user's messages (only if the input or the thread holds
    them) and the tool results known by their call ids are delivered, in a new turn."""
    contexts = recorder.contexts
    said = []
    for message, mid in shown:
        if message is not None:  # the user's only if the input (or the thread) holds it
            text = _text(message)
            if contexts.is_users(run, text, mid is not None):
                said.append((str(mid or hash(text)), text))
            else:  # a prompt the program built: the input texts and memories it quotes
                said += contexts.quoted(run, text, branch)
        else:  # shown again (this run's, or a checkpointer's restored one)
            known = contexts.observation_of(mid)
            if known is not None:
                contexts.deliver(run, known[0], known[1], TOOL, branch)
    recorder.model_turn(run, agent, said, values, stamp, branch)


def _source_done(recorder: Recorder, run: str, name: str, values: dict, run_values: dict,
                 text: str, call_id: str, stamp: tuple, branch: tuple[str, ...] = ()) -> None:
    """A recording step: a source tool answered ``text`` (in ``branch``)."""
    found = recorder.observed(run, name, values, text, stamp, run_values, branch)
    if found is not None:  # shown again later by its tool-call id, in any run
        recorder.contexts.tool_result(call_id, *found)


def _is_task(tags: Any) -> bool:
    """Whether a run is one of a graph's tasks: LangGraph tags each with its step."""
    return any(isinstance(t, str) and t.startswith("graph:step:") for t in tags or ())


def tool_text(output: Any) -> str:
    """What a tool returned, as the model reads it: a ToolMessage's content, the messages a
    ``Command`` carries in its update, or the value itself."""
    if isinstance(output, BaseMessage):  # the common case: no Command, read it at once
        return _content_text(output.content)
    update = getattr(output, "update", None)
    if isinstance(update, dict) and hasattr(output, "goto"):  # a langgraph Command: its
        # messages, then the rest of its update (``user_info``...), which the graph's state and
        # so the model receive as well
        messages = update.get("messages", [])
        messages = messages if isinstance(messages, list | tuple) else [messages]
        rest = {k: v for k, v in update.items() if k != "messages"}
        parts = [tool_text(m) for m in messages]
        if rest:
            parts.append(json.dumps(rest, sort_keys=True, default=_plain))
        return "\n".join(p for p in parts if p)
    return _content_text(getattr(output, "content", output))


def _content_text(content: Any) -> str:
    if isinstance(content, list):  # content blocks
        return "\n".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
    return str(content)


def _text(message: Any) -> str:
    return tool_text(message)


def _args(input_str: str) -> dict:
    try:
        value = json.loads(input_str)
    except (TypeError, ValueError):
        return {"input": input_str}
    return value if isinstance(value, dict) else {"input": value}


def _plain(value: Any) -> Any:
    """A value JSON cannot write, as text: a message's content, else its str."""
    return tool_text(value)


_SCAN = 500  # values looked at in one input or output, at most
# Values with nothing inside them to walk into: plain values and messages (a message is not a
# Command or a Send; asking a pydantic message for an attribute it lacks raises inside it).
_LEAVES = (str, int, float, bool, BaseMessage)
# What a value is, for the walk, decided once per type (a message's isinstance goes through its
# ABC's check): a dict, a list or tuple, a leaf (``_LEAVES``, None), or another object.
_DICT, _SEQ, _LEAF, _OTHER = range(4)
_KIND: dict[type, int] = {}
_KINDS_KEPT = 1024  # types classified at most (a program makes few)


def _kind(value: Any) -> int:
    kind = type(value)
    found = _KIND.get(kind)
    if found is None:
        found = (_DICT if issubclass(kind, dict) else _SEQ if issubclass(kind, list | tuple)
                 else _LEAF if issubclass(kind, _LEAVES) or value is None else _OTHER)
        if len(_KIND) < _KINDS_KEPT:
            _KIND[kind] = found
    return found


def _walk(value: Any, budget: list[int], depth: int = 0) -> list[tuple[Any, int]]:
    """Values inside ``value``, each with its ``_kind``: dicts, lists, a Command's update, a
    Send's argument, bounded (``_SCAN`` values, 6 levels deep), in depth-first order. A loop,
    not a recursive generator: it runs at the end of every graph task of every wrapped run."""
    out: list[tuple[Any, int]] = []
    stack = [(value, depth)]
    left = budget[0]
    while stack and left > 0:
        value, depth = stack.pop()
        if depth > 6:
            continue
        left -= 1
        kind = _KIND.get(type(value))
        if kind is None:
            kind = _kind(value)
        out.append((value, kind))
        if kind == _DICT:
            children = value.values()
        elif kind == _SEQ:
            children = value
        elif kind == _LEAF:  # nothing inside to look at
            continue
        elif hasattr(value, "goto") and isinstance(getattr(value, "update", None), dict):
            children = [value.update, value.goto, getattr(value, "resume", None)]  # a Command
        elif hasattr(value, "goto") and hasattr(value, "resume"):  # Command(resume=...)
            children = [value.resume]
        elif hasattr(value, "node") and hasattr(value, "arg"):
            children = [value.arg]  # a Send
        else:
            continue
        if children:
            depth += 1
            stack.extend([(child, depth) for child in reversed(list(children))])
    budget[0] = left
    return out


def _texts(inputs: Any) -> set[str]:
    """Every text an invocation's input holds (a message's content, a plain string)."""
    out: set[str] = set()
    for v, kind in _walk(inputs, [_SCAN]):
        if isinstance(v, str):
            out.add(v)
        elif kind != _DICT and kind != _SEQ and hasattr(v, "content") and hasattr(v, "type"):
            out.add(_text(v))
    return out


def _built(outputs: Any) -> list[str]:
    """Texts of the human messages a node's output creates: new messages, with no id yet (a
    message of the state, the input's or the thread's, has the one the state gave it)."""
    if isinstance(outputs, str | int | float | bool) or outputs is None:  # a router's answer
        return []
    out = []
    for v, kind in _walk(outputs, [_SCAN]):
        if kind == _DICT:
            if v.get("role") in ("user", "human") and "id" not in v \
                    and isinstance(v.get("content"), str):
                out.append(v["content"])
        elif kind == _SEQ:
            if isinstance(v, tuple) and len(v) == 2 and v[0] in ("user", "human") \
                    and isinstance(v[1], str):
                out.append(v[1])
        elif isinstance(v, str | int | float | bool) or v is None:  # none of the below
            continue
        elif getattr(v, "type", None) == "human" and getattr(v, "id", None) is None:
            out.append(_text(v))
    return out
