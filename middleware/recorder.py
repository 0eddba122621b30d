"""What the interception layer records, turned into events: one object per instrumented graph."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import random
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from opentelemetry import propagate, trace
from opentelemetry.sdk.trace import TracerProvider

from rescind.contract import events as ev
from rescind.contract.kinds import WRITTEN_KINDS
from rescind.contract.text import escape

from .checks import anonymous_users
from .config import ANONYMOUS, ActionTool, InterceptConfig, configurable, fill
from .context import STORE, TOOL, USER, WRITTEN, Contexts, current_branch
from .gate import GateClient, GateRefused
from .ids import event_id
from .publisher import LINGER_S, Publisher
from .resume import Resumes
from .status import StatusCache

log = logging.getLogger("rescind.recorder")
_KEY_MAX = 1000  # the event contract's limit on a store key
_SNAPSHOT_DEPTH = 32  # nesting copied of a value the agent hands over (deeper: shared)
_LATER_BATCH = 1_000  # recording steps waiting that end a linger at once
# How long the recorder's thread keeps looking for steps (every ``linger_s``) once it has
# none: a burst within it is not woken for; after it the thread sleeps until woken.
IDLE_S = 0.1
_SPANS_KEPT = 1024  # spans whose trace headers are kept (runs and calls in flight)


def store_key(namespace: tuple[str, ...], key: str) -> str:
    """How a store item is named in Rescind: its namespace and key, joined by ``/``. Whatever
    the agent uses as a key must not fail its own store call: control characters are written
    as escapes (``rescind.contract.text.escape``), and a key longer than the contract allows
    keeps its start and a digest."""
    name = escape("/".join((*namespace, key)), one_line=True)
    if len(name) > _KEY_MAX:
        digest = hashlib.blake2b(name.encode(), digest_size=16).hexdigest()
        name = f"{name[:_KEY_MAX - 33]}#{digest}"
    return name


def memory_of(tenant: str, key: str, value: dict) -> tuple[str, str, str]:
    """(id, kind, text) of the value a store key holds: its ``text`` (or ``content``, as
    langmem and memory-agent write it) if it has one, else its JSON; identified by key and
    text, so two keys never merge."""
    kind = value.get("kind") if value.get("kind") in WRITTEN_KINDS else "belief"
    text = next((v for f in ("text", "content") if isinstance(v := value.get(f), str)
                 and v.strip()), None) or json.dumps(value, sort_keys=True, default=str)
    # What the event can carry is what identifies the value: control characters escaped
    # (a NUL could never be stored), and cut to the contract's length.
    text = escape(text)[:ev.MAX_TEXT]
    return ev.store_memory_id(tenant, kind, key, text), kind, text


def _nonzero(bits: int) -> int:
    """A random id of ``bits`` bits, never 0 (an invalid trace or span id)."""
    while not (n := random.getrandbits(bits)):
        pass
    return n


def _utc_now() -> datetime:
    return datetime.now(UTC)


def snapshot(value: Any, depth: int = 0) -> Any:
    """``value`` as it is now: its dicts, lists and tuples copied (the agent may change the
    object it handed over once its call returns), anything else shared."""
    if depth >= _SNAPSHOT_DEPTH:
        return value
    kind = type(value)
    if kind is dict:
        return {k: snapshot(v, depth + 1) for k, v in value.items()}
    if kind is list:
        return [snapshot(v, depth + 1) for v in value]
    if kind is tuple:
        return tuple(snapshot(v, depth + 1) for v in value)
    return value


class Later:
    """Recording steps run on a thread of their own ("rescind-recorder"), one at a time, in
    the order they were asked for, so that the agent's thread only notes what happened.

    A step waits at least ``linger_s`` (at most about twice that) before it runs, unless a
    ``drain`` waits or ``batch`` steps do: the steps of an invocation are mostly run after it,
    while the agent waits for something else (a model, a tool, the user), rather than taking
    turns with it on the interpreter lock. Asking for a step is an append, without a lock and
    without waking the thread: while steps keep coming the thread looks every ``linger_s``; it
    sleeps once idle for ``idle_s`` (``IDLE_S``: two looks) and only then is woken, by the
    next step: each look is a thread wake-up, which costs CPU whether or not there is a step
    to run (docs/performance.md, "Figures behind the code"). Each batch of steps is run
    between ``around``'s two calls (the publisher's ``hold`` and ``release``: its events
    leave in one send, at its end). A step that raises is logged and counted (``failed``);
    the steps after it still run, and the agent never sees the error."""

    def __init__(self, linger_s: float = LINGER_S, batch: int = _LATER_BATCH,
                 idle_s: float | None = None,
                 around: tuple[Callable[[], Any], Callable[[], Any]] | None = None) -> None:
        self.linger_s, self.batch = linger_s, batch
        self.idle_s = IDLE_S if idle_s is None else idle_s
        self.around = around  # called before and after each batch of steps
        self.failed = 0  # steps that raised
        # appended by any thread, popped by the recorder's: both atomic, so no lock
        self._steps: deque[tuple[Callable[..., Any], tuple]] = deque()
        self._first_at = 0.0  # when the oldest waiting step was asked for (about)
        self._cv = threading.Condition(threading.Lock())
        self._busy = False  # steps are being run
        self._draining = 0  # drains waiting: run at once
        self._asleep = True  # the thread waits to be woken (not started, or idle)
        self._stop = False
        self._thread: threading.Thread | None = None

    def __call__(self, step: Callable[..., Any], *args: Any) -> None:
        if not self._steps:
            self._first_at = time.monotonic()
        self._steps.append((step, args))
        if self._asleep or len(self._steps) == self.batch:
            self._wake()

    def _wake(self) -> None:
        with self._cv:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="rescind-recorder",
                                                daemon=True)
                self._thread.start()
            self._asleep = False
            self._cv.notify_all()

    @property
    def pending(self) -> int:
        return len(self._steps)

    def drain(self, timeout: float = 10.0) -> bool:
        """Wait until every step asked for so far has run; False on timeout."""
        if threading.current_thread() is self._thread:  # a step waiting for itself
            return True
        deadline = time.monotonic() + timeout
        with self._cv:
            self._draining += 1
            self._cv.notify_all()
            try:
                while self._steps or self._busy:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0 or self._thread is None or not self._thread.is_alive():
                        return False
                    self._cv.wait(min(remaining, 0.5))
            finally:
                self._draining -= 1
        return True

    def close(self, timeout: float = 10.0) -> None:
        """Run what is waiting (within ``timeout``), then stop the thread."""
        self.drain(timeout)
        with self._cv:
            self._stop = True
            self._cv.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _run_steps(self) -> None:
        while True:
            try:
                step, args = self._steps.popleft()
            except IndexError:
                return
            try:
                step(*args)
            except Exception:  # noqa: BLE001 - the agent's run goes on; the error is told
                self.failed += 1
                log.exception("a recording step (%s) failed; what it would have recorded "
                              "is missing", getattr(step, "__name__", step))

    def _due(self) -> bool:
        return bool(self._steps) and (
            self._draining > 0 or self._stop or len(self._steps) >= self.batch
            or time.monotonic() - self._first_at >= self.linger_s)

    def _run(self) -> None:
        idle_since = time.monotonic()
        while True:
            with self._cv:
                while not self._due():
                    if self._stop:
                        return
                    if not self._steps and time.monotonic() - idle_since >= self.idle_s:
                        self._asleep = True  # the next step wakes it
                        if not self._steps:  # one appended meanwhile saw it awake
                            self._cv.wait()
                        self._asleep = False
                        continue
                    self._cv.wait(self.linger_s)
                self._busy = True
            if self.around is not None:
                self.around[0]()
            try:
                self._run_steps()
            finally:
                if self.around is not None:
                    self.around[1]()
            idle_since = time.monotonic()
            with self._cv:
                self._busy = False
                self._cv.notify_all()


class Recorder:
    """``clock`` stamps every event: the wall clock, or a simulated one (the demo week)."""

    def __init__(self, config: InterceptConfig, publisher: Publisher | None = None,
                 status: StatusCache | None = None, gate: GateClient | None = None,
                 clock: Callable[[], datetime] = _utc_now,
                 tracer_provider: trace.TracerProvider | None = None) -> None:
        self.config = config
        self._provider = tracer_provider
        self.clock = clock
        self.tenant = config.tenant
        self.started = datetime.now(UTC)  # store items last changed before this predate us
        self.publisher = publisher or Publisher.from_config(config)
        self.status = status or StatusCache(config.url, config.tenant)
        self.gate = gate or GateClient(config.url, config.tenant, config.gate_timeout_s)
        self.contexts = Contexts()
        self._adopted: set[str] = set()  # store memories adopted by this process
        self._said: dict[str, None] = {}  # user messages recorded already (bounded, in order)
        self._said_lock = threading.Lock()
        self._told_anonymous = False  # several runs' users were one source: warned once
        self.at_once = 1  # the most top-level runs in flight at once so far (callbacks count)
        self.resumes = Resumes()  # interrupted runs' contexts, until resumed
        # Per message text, its escaped text and observation id: a conversation's messages are
        # shown to the model again at every call, and each is hashed once.
        self._observed: dict[str, tuple[str, str]] = {}
        self._tracer: tuple[object, trace.Tracer] | None = None  # (provider, its tracer)
        self._private = False  # tracing through a provider of our own that exports nothing
        # span -> (the propagator that injected them, its trace headers)
        self._headers: dict[object, tuple[object, tuple[str | None, str | None]]] = {}
        self._proposal: dict[str, int] = {}  # action name -> seq of its latest proposal here
        # Recording steps: on the recorder's thread when the publisher can be told to wait for
        # them (its ``flush`` runs ``before_flush`` first: the gate's, ``close``, a test's);
        # else at once, in the agent's thread.
        self.later: Later | None = None
        if hasattr(self.publisher, "before_flush"):
            # each batch of steps held, so that its events leave in one send, at its end
            around = (self.publisher.hold, self.publisher.release) \
                if hasattr(self.publisher, "hold") else None
            self.later = Later(getattr(self.publisher, "linger_s", LINGER_S), around=around)
            self.publisher.before_flush = self.later.drain

    def defer(self, step: Callable[..., Any], *args: Any) -> None:
        """Run ``step(*args)`` on the recorder's thread, after every step asked for before it
        (at once, here, without one)."""
        if self.later is None:
            step(*args)
        else:
            self.later(step, *args)

    def drain(self, timeout: float = 10.0) -> bool:
        """Wait until every recording step asked for so far has run; False on timeout."""
        return self.later is None or self.later.drain(timeout)

    @property
    def failed(self) -> int:
        """Recording steps that raised on the recorder's thread (each logged)."""
        return self.later.failed if self.later is not None else 0

    def stamp(self, run: str | None) -> tuple[datetime, trace.Span | None]:
        """When an event happens, and the span it belongs to (the current one if recording,
        else the run's): taken in the agent's thread, used when the step is run."""
        span = trace.get_current_span()
        if not span.get_span_context().is_valid:
            span = self.contexts.get(run).span if run is not None else None
        return self.clock(), span

    # tracing: one trace per top-level run; its tool calls and store writes are its spans
    def tracer(self) -> trace.Tracer:
        """The given provider's tracer, else the process's; with no OpenTelemetry SDK set up in
        the agent process, a private one that exports nothing but gives every run a real trace
        id, which the workers' spans continue (and export)."""
        provider = self._provider or trace.get_tracer_provider()
        if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
            provider = self._provider = TracerProvider()
            self._private = True
        held = self._tracer  # one tracer per provider (the SDK's get_tracer is not cheap)
        if held is None or held[0] is not provider:
            held = self._tracer = (provider, provider.get_tracer("rescind.middleware"))
        return held[1]

    def run_span(self, run: str) -> trace.Span:
        """A top-level run's span, started: its trace is the one its events carry and the
        workers' spans continue. With the private provider, which exports nothing, no SDK span
        but its context alone: ids drawn as the SDK draws them, a child of the current span's
        trace if there is one, sampled as the SDK's default sampler would."""
        tracer = self.tracer()
        if not self._private:
            return tracer.start_span("rescind.run", context=self.parent(None),
                                     attributes={"rescind.tenant": self.tenant,
                                                 "rescind.run": run})
        parent = trace.get_current_span().get_span_context()
        trace_id = parent.trace_id if parent.is_valid else _nonzero(128)
        flags = parent.trace_flags if parent.is_valid else trace.TraceFlags(
            trace.TraceFlags.SAMPLED)
        return trace.NonRecordingSpan(trace.SpanContext(trace_id, _nonzero(64), is_remote=False,
                                                        trace_flags=flags))

    def span(self, name: str, run: str | None, attributes: dict) -> trace.Span:
        """A started span of ``run`` (a tool call, a store put). With the private provider,
        which exports nothing, none: the run's own span stands for it (its trace id is what
        the workers' spans continue), and no span is made that nobody could see."""
        tracer = self.tracer()
        if self._private:
            return trace.INVALID_SPAN
        return tracer.start_span(name, context=self.parent(run), attributes=attributes)

    def parent(self, run: str | None):
        """The trace context new spans and events of ``run`` belong to: the current span if one
        is recording, else the run's own span."""
        if trace.get_current_span().get_span_context().is_valid or run is None:
            return None
        span = self.contexts.get(run).span
        return trace.set_span_in_context(span) if span is not None else None

    def _base(self, run: str | None = None,
              stamp: tuple[datetime, trace.Span | None] | None = None) -> dict:
        """An event's common fields; ``stamp``: when it happened and in which span (``stamp``),
        else now and the current span."""
        at, span = stamp if stamp is not None else self.stamp(run)
        traceparent, tracestate = self._trace_headers(span)  # the workers continue this trace
        return {"event_id": event_id(), "tenant": self.tenant, "at": at,
                "traceparent": traceparent, "tracestate": tracestate}

    def _trace_headers(self, span: trace.Span | None) -> tuple[str | None, str | None]:
        """The traceparent and tracestate of ``span``, injected by the process's propagator
        once per span, not once per event: kept by the span object itself (a span's context
        never changes), so that an event of a known span costs one lookup."""
        if span is None:
            return None, None
        textmap = propagate.get_global_textmap()
        known = self._headers.get(span)
        if known is not None and known[0] is textmap:
            return known[1]
        sc = span.get_span_context()
        headers: tuple[str | None, str | None] = (None, None)
        if sc.is_valid:
            carrier: dict[str, str] = {}
            propagate.inject(carrier, context=trace.set_span_in_context(span))
            headers = carrier.get("traceparent"), carrier.get("tracestate")
        if len(self._headers) >= _SPANS_KEPT:
            self._headers.clear()
        self._headers[span] = textmap, headers
        return headers

    def _observation(self, text: str) -> tuple[str, str]:
        """(escaped text, observation id) of a message's text, computed once per text."""
        known = self._observed.get(text)
        if known is None:
            escaped = escape(text)  # what the event can carry; identifies the observation
            known = escaped, ev.memory_id(self.tenant, "observation", escaped)
            if len(self._observed) >= 10_000:
                self._observed.clear()
            self._observed[text] = known
        return known

    # store reads and writes: what the agent must not see is decided here, the rest recorded
    # on the recorder's thread (``defer``) from snapshots of the values
    def delivered(self, run: str, key: str, value: dict, changed_at: datetime | None = None) -> bool:
        """A store item is handed to the agent; False when it is OUT (the agent must not see
        it). An item last changed before this recorder started is adopted on first sight."""
        mid, kind, text = memory_of(self.tenant, key, value)
        if self.status.is_out(mid):
            return False
        self.defer(self._delivered, run, mid, kind, text, key, snapshot(value), changed_at,
                   self.stamp(run), current_branch())
        return True

    def _delivered(self, run: str, mid: str, kind: str, text: str, key: str, value: dict,
                   changed_at: datetime | None, stamp: tuple,
                   branch: tuple[str, ...] = ()) -> None:
        if changed_at is not None and changed_at < self.started and mid not in self._adopted:
            self._adopted.add(mid)
            self.publisher.publish(ev.MemoryAdopted(**self._base(run, stamp), kind=kind, key=key,
                                                      text=text))
        self.contexts.deliver(run, mid, value, STORE, branch)

    def wrote(self, run: str, key: str, value: dict, before: dict | None) -> None:
        """The agent put ``value`` at ``key``, which held ``before`` (None: nothing)."""
        if said := self.resumes.said(run):  # a resume value not delivered yet: before it
            self.defer(self.user_said, run, said, configurable(), self.stamp(run))
        span = self.span("rescind.store put", run, {"rescind.key": key})
        if span is trace.INVALID_SPAN:  # no span of its own (nothing exported): the run's
            stamp = self.clock(), self.contexts.get(run).span
        else:
            with trace.use_span(span, end_on_exit=True):
                stamp = self.stamp(run)
        self.defer(self._wrote, run, key, snapshot(value), snapshot(before), stamp,
                   current_branch())

    def _wrote(self, run: str, key: str, value: dict, before: dict | None,
               stamp: tuple, branch: tuple[str, ...] = ()) -> None:
        mid, kind, text = memory_of(self.tenant, key, value)
        old = memory_of(self.tenant, key, before)[0] if before is not None else None
        ctx = self.contexts.get(run)
        justifications, rule = ctx.justifications(value, mid, branch)
        if not justifications:  # nothing in context: the agent's own say-so, its own domain
            justifications, rule = [[self._agent_grounding(ctx.agent, text, run, stamp)]], "agent"
        for premises in justifications:  # alternatives: one justification each
            self.publisher.publish(ev.MemoryWritten(
                **self._base(run, stamp), kind=kind, text=text, premises=premises,
                agent=ctx.agent, run=run, rule=rule, key=key,
                supersedes=old if old != mid else None))
        self._adopted.add(mid)
        self.contexts.deliver(run, mid, value, WRITTEN, branch)  # it may cite what it wrote

    def deleted(self, run: str, key: str, before: dict) -> None:
        self.defer(self._deleted, run, key, snapshot(before), self.stamp(run))

    def _deleted(self, run: str, key: str, before: dict, stamp: tuple) -> None:
        self.publisher.publish(ev.MemoryDeleted(
            **self._base(run, stamp), memory=memory_of(self.tenant, key, before)[0], key=key,
            agent=self.contexts.get(run).agent, run=run))

    def _agent_grounding(self, agent: str, text: str, run: str | None = None,
                         stamp: tuple | None = None) -> str:
        said = f"{agent} asserted: {text}"
        self.publisher.publish(ev.ObservationRecorded(**self._base(run, stamp),
                                                      source=f"agent:{agent}",
                                                      source_kind="agent", text=said))
        return ev.memory_id(self.tenant, "observation", said)

    # model inputs and tool calls (run as recording steps: see ``callbacks``)
    def model_turn(self, run: str, agent: str | None, said: list[tuple[str, str]],
                   values: dict | Callable[[], dict], stamp: tuple | None = None,
                   branch: tuple[str, ...] = ()) -> None:
        """A model call starts, its input holding the user's messages ``said`` ((message id,
        text) each): each becomes an observation of the user's source once (``user_said``).
        ``values``: the run's config values, or what reads them (called only when a message
        is new)."""
        self.user_said(run, said, values, stamp, branch)
        self.contexts.model_turn(run, agent)

    def user_said(self, run: str, said: list[tuple[str, str]],
                  values: dict | Callable[[], dict], stamp: tuple | None = None,
                  branch: tuple[str, ...] = ()) -> None:
        """The user's statements ``said`` ((message id, text) each) are delivered to the run;
        each becomes an observation of the user's source once (``users.source`` filled with
        the run's ``values``; with nothing to fill it, ``user:anonymous``, said out loud once
        several runs are at once)."""
        users = self.config.users
        for message_id, text in said if users is not None else ():
            if not text.strip():
                continue
            text, oid = self._observation(text)
            with self._said_lock:  # branches of one run start model calls at once
                new = message_id not in self._said
                if new:
                    self._said[message_id] = None
                    if len(self._said) > 10_000:
                        del self._said[next(iter(self._said))]
            if new:
                values = values() if callable(values) else values
                source = fill(users.source, values, default=ANONYMOUS)
                if source == ANONYMOUS and not self._told_anonymous:
                    self._told_anonymous = anonymous_users(users, values, self.at_once)
                domain = fill(users.domain, values, default=source) if users.domain else None
                self.publisher.publish(ev.ObservationRecorded(
                    **self._base(run, stamp), source=source, source_kind="user",
                    source_domain=domain, text=text[:ev.MAX_TEXT]))
            self.contexts.deliver(run, oid, text, USER, branch)

    def source_result(self, run: str, tool: str, values: dict, output: str,
                      stamp: tuple | None = None, run_values: dict | None = None) -> str | None:
        """A source tool answered; ``values`` are its arguments and the run's config values
        (``run_values``, default: the current run's). Returns its observation's id (None: an
        empty result records nothing)."""
        found = self.observed(run, tool, values, output, stamp, run_values)
        return found[0] if found is not None else None

    def observed(self, run: str, tool: str, values: dict, output: str,
                 stamp: tuple | None = None, run_values: dict | None = None,
                 branch: tuple[str, ...] = ()) -> tuple[str, str] | None:
        """``source_result``, returning its observation's id and text (as the event carries
        it), or None."""
        if not output.strip():
            return None
        spec = self.config.sources[tool]
        source = spec.name(values)  # canonical: any spelling of an argument, one source
        domain = spec.domain_of(run_values)  # the operator's statement: never the tool's arguments
        text = escape(output)[:ev.MAX_TEXT]
        self.publisher.publish(ev.ObservationRecorded(**self._base(run, stamp), source=source,
                                                      source_kind=spec.kind,
                                                      source_domain=domain, text=text))
        oid = ev.memory_id(self.tenant, "observation", text)
        self.contexts.deliver(run, oid, text, TOOL, branch)
        return oid, text

    def action_start(self, run: str, tool: str, args: dict, call_id: str,
                     values: dict | None = None) -> str:
        """Propose the action and/or ask the gate, by the tool's stage; GateRefused stops the
        tool. Returns the action's name."""
        spec = self.config.actions[tool]
        name = fill(spec.id, values or args) if spec.id else call_id
        amount = _number(args.get(spec.amount)) if spec.amount else None
        if spec.amount and amount is None:  # fail closed: a gate cannot judge an unknown sum
            raise GateRefused(f"{tool}: the amount {args.get(spec.amount)!r} in argument "
                              f"{spec.amount!r} is not a number; {name} does not run")
        currency = _currency(tool, name, spec, args)
        if spec.stage == "execute":  # judged by what was proposed; today's values must equal it
            self.gate.ask(name, [], amount, _arg(args, spec.payee), proposed=True,
                          at=self.clock(), account=_arg(args, spec.account), currency=currency,
                          seen=self._sent(tool, name), amount_free=spec.amount_free)
            return name
        # What it draws on is in the run's context once the steps recorded before it have run.
        if not self.drain(self.config.gate_timeout_s):
            raise GateRefused(f"{tool}: what the agent read could not be recorded in "
                              f"{self.config.gate_timeout_s}s; {name} does not run")
        ctx = self.contexts.get(run)
        payee, account = _arg(args, spec.payee), _arg(args, spec.account)
        text = f"{tool}({json.dumps(args, sort_keys=True, default=str)})"
        # What the call draws on, found as for a write: the delivered items that state its
        # arguments (account, amount, invoice), else the model's turn. One proposal per
        # alternative; the gate is asked about the first (the smallest).
        alternatives, rule = ctx.justifications(args, itself="", branch=current_branch())
        if not alternatives:
            alternatives, rule = [[self._agent_grounding(ctx.agent, text, run)]], "agent"
        seq = self._proposal[name] = time.time_ns()
        if len(self._proposal) > 10_000:
            del self._proposal[next(iter(self._proposal))]
        for premises in alternatives:
            self.publisher.publish(ev.ActionProposed(
                **self._base(run), action=name, text=text, premises=premises, agent=ctx.agent,
                run=run, rule=rule, amount=amount, currency=currency, payee=payee,
                account=account, seq=seq))
        premises = alternatives[0]
        if spec.stage == "both":
            self.gate.ask(name, premises, amount, payee, at=self.clock(), account=account,
                          currency=currency, seen=self._sent(tool, name),
                          amount_free=spec.amount_free,
                          alternatives=alternatives if len(alternatives) > 1 else None)
        return name

    def _sent(self, tool: str, name: str) -> dict[str, str]:
        """Everything published so far, sent to its stream (the gate judges once the writer has
        applied it: what the agent saw, not what happened to be written); fail closed if it
        cannot be sent in time."""
        seen = self.publisher.sent_through(self.tenant, self.config.gate_timeout_s)
        if seen is None:
            raise GateRefused(f"{tool}: what the agent read could not be sent to Rescind in "
                              f"{self.config.gate_timeout_s}s; {name} does not run")
        return seen

    def action_done(self, tool: str, name: str, output: str = "") -> None:
        """The tool ran: a proposal-only tool (scheduling) leaves its action pending; any other
        is executed, as its result (the bank's receipt) says."""
        spec = self.config.actions[tool]
        if spec.stage != "propose":
            self.drain(self.config.gate_timeout_s)  # after what was recorded before it
            self.publisher.publish(ev.ActionExecuted(**self._base(), action=name,
                                                     **receipt(spec, output)), durable=True)

    def action_failed(self, tool: str, name: str, error: BaseException) -> None:
        """The action tool raised: its proposal did not happen and must never be released."""
        if self.config.actions[tool].stage != "execute":
            self.drain(self.config.gate_timeout_s)
            self.publisher.publish(ev.ActionFailed(
                **self._base(), action=name, seq=self._proposal.get(name),
                reason=escape(f"{type(error).__name__}: {error}")[:2000]), durable=True)

    def close(self) -> None:
        if self.later is not None:  # what is recorded yet, then sent
            self.later.close()
        self.publisher.close()
        self.status.close()


def _currency(tool: str, name: str, spec: ActionTool, args: dict) -> str | None:
    """The call's currency: its argument, else the tool's default, else None (the gate's).
    GateRefused when the tool names an argument the call leaves out, or an unknown code."""
    given = _arg(args, spec.currency)
    if given is None and spec.currency and spec.default_currency is None:
        raise GateRefused(f"{tool}: no currency in argument {spec.currency!r}; {name} does not "
                          "run")
    code = (given or spec.default_currency or "").strip().upper() or None
    if code is not None and not re.fullmatch(r"[A-Z]{3}", code):
        raise GateRefused(f"{tool}: {given!r} is not a currency code; {name} does not run")
    return code


def receipt(spec: ActionTool, output: str) -> dict:
    """The ActionExecuted fields the tool's result states, by the tool's ``receipt``
    patterns; a value that does not fit its field is left out (the proposal's stands)."""
    output = escape(output)  # the receipt is stored as text: no control characters
    found: dict = {"receipt": output[:2000]} if output.strip() else {}
    for field, pattern in (spec.receipt.model_dump().items() if spec.receipt else ()):
        hit = re.search(pattern, output) if pattern else None
        value = escape(hit.group(1).strip(), one_line=True) if hit and hit.group(1) else None
        if value is None:
            continue
        if field == "amount":
            found[field] = _number(value.replace(",", ""))
        elif field == "currency":
            found[field] = value.upper() if re.fullmatch(r"[A-Za-z]{3}", value) else None
        else:
            found[field] = value[:200 if field != "value_date" else 100]
    return {k: v for k, v in found.items() if v is not None}


def _arg(args: dict, name: str | None) -> str | None:
    """An argument as the one-line value events carry (a payee, an account, a currency)."""
    if not name or name not in args or args[name] is None:
        return None
    return escape(str(args[name]), one_line=True)


def _number(x: object) -> float | None:
    """A finite, non-negative amount, or None."""
    try:
        value = None if x is None or isinstance(x, bool) else float(x)
    except (TypeError, ValueError):
        return None
    return value if value is not None and math.isfinite(value) and value >= 0 else None
