"""What the interception layer records, turned into events: one object per instrumented graph."""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

from opentelemetry import propagate, trace
from opentelemetry.sdk.trace import TracerProvider

from rescind.contract import events as ev
from rescind.contract.kinds import WRITTEN_KINDS
from rescind.contract.text import escape

from .config import ActionTool, InterceptConfig, fill
from .context import STORE, TOOL, USER, WRITTEN, Contexts
from .gate import GateClient, GateRefused
from .ids import event_id
from .publisher import Publisher
from .status import StatusCache

_KEY_MAX = 1000  # the event contract's limit on a store key


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


def _utc_now() -> datetime:
    return datetime.now(UTC)


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
        # Per message text, its escaped text and observation id: a conversation's messages are
        # shown to the model again at every call, and each is hashed once.
        self._observed: dict[str, tuple[str, str]] = {}
        self._tracer: tuple[object, trace.Tracer] | None = None  # (provider, its tracer)
        self._private = False  # tracing through a provider of our own that exports nothing
        self._headers: dict[tuple, tuple[str | None, str | None]] = {}  # span -> trace headers
        self._proposal: dict[str, int] = {}  # action name -> seq of its latest proposal here

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

    def _base(self, run: str | None = None) -> dict:
        traceparent, tracestate = self._trace_headers(run)  # the workers continue this trace
        return {"event_id": event_id(), "tenant": self.tenant, "at": self.clock(),
                "traceparent": traceparent, "tracestate": tracestate}

    def _trace_headers(self, run: str | None) -> tuple[str | None, str | None]:
        """The traceparent and tracestate of the span ``parent`` names (the current one, else
        the run's), injected by the process's propagator once per span, not once per event."""
        span = trace.get_current_span()
        if not span.get_span_context().is_valid and run is not None:
            span = self.contexts.get(run).span or span
        sc = span.get_span_context()
        if not sc.is_valid:
            return None, None
        key = (sc.trace_id, sc.span_id, sc.trace_flags, propagate.get_global_textmap())
        headers = self._headers.get(key)
        if headers is None:
            carrier: dict[str, str] = {}
            propagate.inject(carrier, context=trace.set_span_in_context(span))
            headers = carrier.get("traceparent"), carrier.get("tracestate")
            if len(self._headers) >= 4096:
                self._headers.clear()
            self._headers[key] = headers
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

    # store reads and writes
    def delivered(self, run: str, key: str, value: dict, changed_at: datetime | None = None) -> bool:
        """A store item is handed to the agent; False when it is OUT (the agent must not see
        it). An item last changed before this recorder started is adopted on first sight."""
        mid, kind, text = memory_of(self.tenant, key, value)
        if self.status.is_out(mid):
            return False
        if changed_at is not None and changed_at < self.started and mid not in self._adopted:
            self._adopted.add(mid)
            self.publisher.publish(ev.MemoryAdopted(**self._base(run), kind=kind, key=key,
                                                      text=text))
        self.contexts.deliver(run, mid, value, STORE)
        return True

    def wrote(self, run: str, key: str, value: dict, before: dict | None) -> None:
        """The agent put ``value`` at ``key``, which held ``before`` (None: nothing)."""
        mid, kind, text = memory_of(self.tenant, key, value)
        old = memory_of(self.tenant, key, before)[0] if before is not None else None
        ctx = self.contexts.get(run)
        justifications, rule = ctx.justifications(value, mid)
        if not justifications:  # nothing in context: the agent's own say-so, its own domain
            justifications, rule = [[self._agent_grounding(ctx.agent, text, run)]], "agent"
        with trace.use_span(self.span("rescind.store put", run, {"rescind.key": key}),
                            end_on_exit=True):
            for premises in justifications:  # alternatives: one justification each
                self.publisher.publish(ev.MemoryWritten(
                    **self._base(run), kind=kind, text=text, premises=premises,
                    agent=ctx.agent, run=run, rule=rule, key=key,
                    supersedes=old if old != mid else None))
        self._adopted.add(mid)
        self.contexts.deliver(run, mid, value, WRITTEN)  # it may cite what it wrote

    def deleted(self, run: str, key: str, before: dict) -> None:
        self.publisher.publish(ev.MemoryDeleted(
            **self._base(run), memory=memory_of(self.tenant, key, before)[0], key=key,
            agent=self.contexts.get(run).agent, run=run))

    def _agent_grounding(self, agent: str, text: str, run: str | None = None) -> str:
        said = f"{agent} asserted: {text}"
        self.publisher.publish(ev.ObservationRecorded(**self._base(run), source=f"agent:{agent}",
                                                      source_kind="agent", text=said))
        return ev.memory_id(self.tenant, "observation", said)

    # model inputs and tool calls
    def model_turn(self, run: str, agent: str | None, said: list[tuple[str, str]],
                   values: dict | Callable[[], dict]) -> None:
        """A model call starts, its input holding the user's messages ``said`` ((message id,
        text) each): each becomes an observation of the user's source once. ``values``: the
        run's config values, or what reads them (called only when a message is new)."""
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
                source = fill(users.source, values, default="user:anonymous")
                domain = fill(users.domain, values, default=source) if users.domain else None
                self.publisher.publish(ev.ObservationRecorded(
                    **self._base(run), source=source, source_kind="user", source_domain=domain,
                    text=text[:ev.MAX_TEXT]))
            self.contexts.deliver(run, oid, text, USER)
        self.contexts.model_turn(run, agent)

    def source_result(self, run: str, tool: str, values: dict, output: str) -> str | None:
        """A source tool answered; ``values`` are its arguments and the run's config values.
        Returns its observation's id (None: an empty result records nothing)."""
        if not output.strip():
            return None
        spec = self.config.sources[tool]
        source = spec.name(values)  # canonical: any spelling of an argument, one source
        domain = spec.domain_of()  # the operator's statement: never the tool's arguments
        text = escape(output)[:ev.MAX_TEXT]
        self.publisher.publish(ev.ObservationRecorded(**self._base(run), source=source,
                                                      source_kind=spec.kind,
                                                      source_domain=domain, text=text))
        oid = ev.memory_id(self.tenant, "observation", text)
        self.contexts.deliver(run, oid, text, TOOL)
        return oid

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
        ctx = self.contexts.get(run)
        payee, account = _arg(args, spec.payee), _arg(args, spec.account)
        text = f"{tool}({json.dumps(args, sort_keys=True, default=str)})"
        # What the call draws on, found as for a write: the delivered items that state its
        # arguments (account, amount, invoice), else the model's turn. One proposal per
        # alternative; the gate is asked about the first (the smallest).
        alternatives, rule = ctx.justifications(args, itself="")
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
            self.publisher.publish(ev.ActionExecuted(**self._base(), action=name,
                                                     **receipt(spec, output)), durable=True)

    def action_failed(self, tool: str, name: str, error: BaseException) -> None:
        """The action tool raised: its proposal did not happen and must never be released."""
        if self.config.actions[tool].stage != "execute":
            self.publisher.publish(ev.ActionFailed(
                **self._base(), action=name, seq=self._proposal.get(name),
                reason=escape(f"{type(error).__name__}: {error}")[:2000]), durable=True)

    def close(self) -> None:
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
