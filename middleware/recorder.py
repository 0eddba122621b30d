"""What the interception layer records, turned into events: one object per instrumented graph."""

from __future__ import annotations

import json
import math
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime

from opentelemetry import propagate

from rescind.contract import events as ev
from rescind.contract.kinds import WRITTEN_KINDS

from .config import InterceptConfig, fill
from .context import Contexts
from .gate import GateClient, GateRefused
from .publisher import Publisher
from .status import StatusCache


def memory_of(tenant: str, value: dict) -> tuple[str, str, str]:
    """(id, kind, text) of a store item: ``value["text"]`` if there is one, else its JSON."""
    kind = value.get("kind") if value.get("kind") in WRITTEN_KINDS else "belief"
    text = value.get("text") if isinstance(value.get("text"), str) and value.get("text") \
        else json.dumps(value, sort_keys=True, default=str)
    return ev.memory_id(tenant, kind, text), kind, text


def _utc_now() -> datetime:
    return datetime.now(UTC)


class Recorder:
    """``clock`` stamps every event: the wall clock, or a simulated one (the demo week)."""

    def __init__(self, config: InterceptConfig, publisher: Publisher | None = None,
                 status: StatusCache | None = None, gate: GateClient | None = None,
                 clock: Callable[[], datetime] = _utc_now) -> None:
        self.config = config
        self.clock = clock
        self.tenant = config.tenant
        self.publisher = publisher or Publisher.from_config(config)
        self.status = status or StatusCache(config.url, config.tenant)
        self.gate = gate or GateClient(config.url, config.tenant, config.gate_timeout_s)
        self.contexts = Contexts()

    def _base(self) -> dict:
        carrier: dict[str, str] = {}
        propagate.inject(carrier)  # the current span (the tool call's) continues in the workers
        return {"event_id": uuid.uuid4().hex, "tenant": self.tenant, "at": self.clock(),
                "traceparent": carrier.get("traceparent"), "tracestate": carrier.get("tracestate")}

    # store reads and writes
    def delivered(self, thread: str, value: dict) -> bool:
        """A store item is handed to the agent; False when it is OUT (the agent must not see it)."""
        mid, _, text = memory_of(self.tenant, value)
        if self.status.is_out(mid):
            return False
        self.contexts.deliver(thread, mid, text, value)
        return True

    def wrote(self, thread: str, value: dict, name: str) -> None:
        mid, kind, text = memory_of(self.tenant, value)
        ctx = self.contexts.get(thread)
        justifications, rule = ctx.justifications(value, mid)
        if not justifications:  # nothing in context: the agent's own say-so, its own domain
            justifications, rule = [[self._agent_grounding(ctx.agent, text)]], "run"
        for premises in justifications:  # alternatives: one justification each, one memory
            self.publisher.publish(ev.MemoryWritten(**self._base(), kind=kind, text=text,
                                                    premises=premises, agent=ctx.agent,
                                                    run=thread, rule=rule, name=name))
        self.contexts.deliver(thread, mid, text, value)  # it may cite what it wrote

    def _agent_grounding(self, agent: str, text: str) -> str:
        said = f"{agent} asserted: {text}"
        self.publisher.publish(ev.ObservationRecorded(**self._base(), source=f"agent:{agent}",
                                                      source_kind="agent", text=said))
        return ev.memory_id(self.tenant, "observation", said)

    # model inputs and tool calls
    def model_input(self, thread: str, text: str, agent: str | None) -> None:
        self.contexts.saw(thread, text, agent)

    def source_result(self, thread: str, tool: str, args: dict, output: str) -> None:
        spec = self.config.sources[tool]
        source = fill(spec.source, args)
        domain = fill(spec.domain, args) if spec.domain else None
        self.publisher.publish(ev.ObservationRecorded(**self._base(), source=source,
                                                      source_kind=spec.kind,
                                                      source_domain=domain, text=output))
        self.contexts.deliver(thread, ev.memory_id(self.tenant, "observation", output), output)

    def action_start(self, thread: str, tool: str, args: dict, call_id: str) -> str:
        """Propose the action and/or ask the gate, by the tool's stage; GateRefused stops the
        tool. Returns the action's name."""
        spec = self.config.actions[tool]
        name = fill(spec.id, args) if spec.id else call_id
        if spec.stage == "execute":  # judged by what was proposed, not by today's arguments
            self.gate.ask(name, [], None, None, proposed=True, at=self.clock())
            return name
        ctx = self.contexts.get(thread)
        premises, rule = ctx.premises()
        amount = _number(args.get(spec.amount)) if spec.amount else None
        if spec.amount and amount is None:  # fail closed: a gate cannot judge an unknown sum
            raise GateRefused(f"{tool}: the amount {args.get(spec.amount)!r} in argument "
                              f"{spec.amount!r} is not a number; {name} does not run")
        payee = str(args[spec.payee]) if spec.payee and spec.payee in args else None
        account = str(args[spec.account]) if spec.account and spec.account in args else None
        text = f"{tool}({json.dumps(args, sort_keys=True, default=str)})"
        if not premises:
            premises, rule = [self._agent_grounding(ctx.agent, text)], "run"
        self.publisher.publish(ev.ActionProposed(
            **self._base(), action=name, text=text, premises=premises, agent=ctx.agent,
            run=thread, rule=rule, amount=amount, payee=payee, account=account,
            seq=time.time_ns()))
        if spec.stage == "both":
            self.publisher.flush(self.config.gate_timeout_s)  # the gate reads what we sent
            self.gate.ask(name, premises, amount, payee, at=self.clock())
        return name

    def action_done(self, tool: str, name: str) -> None:
        """The tool ran: a proposal-only tool (scheduling) leaves its action pending."""
        if self.config.actions[tool].stage != "propose":
            self.publisher.publish(ev.ActionExecuted(**self._base(), action=name), durable=True)

    def close(self) -> None:
        self.publisher.close()
        self.status.close()


def _number(x: object) -> float | None:
    """A finite, non-negative amount, or None."""
    try:
        value = None if x is None or isinstance(x, bool) else float(x)
    except (TypeError, ValueError):
        return None
    return value if value is not None and math.isfinite(value) and value >= 0 else None
