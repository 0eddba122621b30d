"""Events in, graph changes out: what the writer and retraction workers do with an entry.

Plain functions over a TenantGraph, so they are tested without FastStream, and the workers
stay a thin shell (decode, call, ack, dead-letter).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import propagate, trace
from pydantic import ValidationError

from rescind.contract import events as ev
from rescind.contract.errors import Invalid
from rescind.contract.layout import MAX_ENTRY_BYTES
from rescind.core.shapes import Mutation, RetractionResult
from rescind.engine import retraction as ret
from rescind.engine.writes import Moved, Pipeline, UnknownPremise, Write, execute, fail, record
from rescind.graph.store import TenantGraph, linearised
from rescind.operator.recalls import approve
from rescind.runtime.telemetry import tracer

_CANONICAL = '{"schema":1,'  # how the middleware's publisher writes every event


def decode(body: object) -> ev.Event:
    """A stream body as a typed event, or Invalid with a reason a person can act on."""
    if isinstance(body, bytes | str) and len(body) <= MAX_ENTRY_BYTES:
        text = body.decode(errors="replace") if isinstance(body, bytes) else body
        if text.startswith(_CANONICAL):  # the common case: one pass of pydantic-core's parser
            with contextlib.suppress(ValidationError):
                return ev.EVENT.validate_json(text)
    if isinstance(body, (bytes, str)):  # anything else: the slow path, which says why
        size = len(body)
        try:
            body = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            raise Invalid("malformed: the entry is not JSON") from None
    else:
        size = len(json.dumps(body, default=str))
    if size > MAX_ENTRY_BYTES:
        raise Invalid(f"oversized: {size} bytes, the limit is {MAX_ENTRY_BYTES}")
    if not isinstance(body, dict):
        raise Invalid("malformed: an event is a JSON object")
    if body.get("schema") != ev.SCHEMA:
        raise Invalid(f"unknown schema version {body.get('schema')!r}; this worker reads "
                       f"{ev.SCHEMA}")
    try:
        return ev.EVENT.validate_python(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = first["loc"][1:] if len(first["loc"]) > 1 else first["loc"]  # drop the type tag
        where = ".".join(str(x) for x in loc)
        raise Invalid(f"invalid event: {where}: {first['msg']}") from None


@dataclass
class Pending:
    """A write that waits for a premise that has not arrived yet."""

    key: str
    event: ev.Event
    missing: list[str] = field(default_factory=list)


def trace_id(traceparent: str | None) -> str | None:
    """The trace id of a W3C ``traceparent`` (``00-<32 hex>-<16 hex>-<flags>``), else None."""
    parts = (traceparent or "").split("-")
    if len(parts) == 4 and len(parts[1]) == 32 and parts[1].strip("0"):
        try:
            int(parts[1], 16)
        except ValueError:
            return None
        return parts[1].lower()
    return None


def _observed(e: ev.ObservationRecorded) -> Write:
    return Write(e.event_id, ev.memory_id(e.tenant, "observation", e.text), "observation", e.text,
                 ev.to_micros(e.at), name=e.name or e.event_id, source=e.source,
                 trace=trace_id(e.traceparent))


def _written(e: ev.MemoryWritten) -> Write:
    return Write(e.event_id, e.memory(), e.kind, e.text, ev.to_micros(e.at),
                 name=e.name or e.key or e.event_id, premises=tuple(e.premises), agent=e.agent,
                 run=e.run, rule=e.rule, key=e.key, supersedes=e.supersedes,
                 trace=trace_id(e.traceparent))


def _adopted(e: ev.MemoryAdopted) -> Write:
    return Write(e.event_id, e.memory(), e.kind, e.text, ev.to_micros(e.at), name=e.key,
                 source=ev.PREEXISTING, key=e.key, adopt=True)


def _deleted(e: ev.MemoryDeleted) -> Write:
    return Write(e.event_id, e.memory, "belief", "", ev.to_micros(e.at), name=e.key,
                 agent=e.agent, run=e.run, key=e.key, deletes=True)


def _proposed(e: ev.ActionProposed) -> Write:
    extra = {"amount": e.amount, "currency": e.currency, "payee": e.payee, "account": e.account,
             "executed": e.executed, "executed_at": ev.to_micros(e.at) if e.executed else None,
             "seq": e.seq if e.seq is not None else ev.to_micros(e.at)}
    return Write(e.event_id, ev.action_id(e.tenant, e.action), "action", e.text,
                 ev.to_micros(e.at), name=e.action, premises=tuple(e.premises), agent=e.agent,
                 run=e.run, rule=e.rule, extra=extra, trace=trace_id(e.traceparent))


def _declared_source(e: ev.SourceDeclared) -> dict:
    return {"id": e.source, "kind": e.source_kind, "name": e.name or e.source,
            "domain": e.source_domain or e.source}


def _observed_source(e: ev.ObservationRecorded) -> dict:
    return {"id": e.source, "kind": e.source_kind, "name": e.source,
            "domain": e.source_domain or e.source}


def _preexisting(e: ev.MemoryAdopted) -> dict:
    """Adopted store items rest on this source: a trust domain of its own, retractable whole."""
    return {"id": ev.PREEXISTING, "kind": "store", "domain": ev.PREEXISTING,
            "name": "the agent's store before Rescind wrapped it"}


def _settle_executed(graph: TenantGraph, e: ev.ActionExecuted, action: dict) -> None:
    execute(graph, action["id"], ev.to_micros(e.at), paid_as(e))


def _settle_failed(graph: TenantGraph, e: ev.ActionFailed, action: dict) -> None:
    stored = action.get("seq")
    if e.seq is None or stored is None or stored == e.seq:  # else: a later try replaced it
        fail(graph, action["id"], ev.to_micros(e.at), e.reason)


@dataclass(frozen=True)
class OnWrite:
    """What the writer does with one kind of write event, in this order within a batch."""

    # The source it names, made first; a declaration (``declares``) names it over an observation.
    source: Callable[[Any], dict] | None = None
    declares: bool = False
    write: Callable[[Any], Write] | None = None  # then recorded, with the batch's other writes
    produces: bool = False  # its write makes the memory it names: other writes may rest on it
    # Last, applied to the stored action it names (held until that is stored).
    settle: Callable[[TenantGraph, Any, dict], None] | None = None


# The writer's handler of every write event (role "write"); tests/unit/workers/test_registry.py
# checks each kind in ev.WRITES has one.
WRITE: dict[type[ev.Event], OnWrite] = {
    ev.SourceDeclared: OnWrite(source=_declared_source, declares=True),
    ev.ObservationRecorded: OnWrite(source=_observed_source, write=_observed, produces=True),
    ev.MemoryWritten: OnWrite(write=_written, produces=True),
    ev.MemoryDeleted: OnWrite(write=_deleted),
    ev.MemoryAdopted: OnWrite(source=_preexisting, declares=True, write=_adopted, produces=True),
    ev.ActionProposed: OnWrite(write=_proposed, produces=True),
    ev.ActionExecuted: OnWrite(settle=_settle_executed),
    ev.ActionFailed: OnWrite(settle=_settle_failed),
}
# The write events whose write makes a memory (what a held write may wait for).
PRODUCES = tuple(k for k, h in WRITE.items() if h.produces)


def to_write(e: ev.Event) -> Write:
    """The graph write of a recorded write event (``OnWrite.write``)."""
    return WRITE[type(e)].write(e)


def apply_writes(graph: TenantGraph, items: list[tuple[str, ev.Event]],
                 pipeline: Pipeline | None = None, moved: Moved | None = None) -> list[Pending]:
    """Apply one tenant's writes in order, in one batch; return those whose premises are missing.
    With a ``pipeline`` the batch is only sent: ``pipeline.then`` says when it has landed (and
    the pipeline's own ``moved`` hears of the statuses it changed); without, ``moved`` does.

    Rule for a premise that has not arrived: the write (and any write of the same batch that
    rests on it) is held back, unacknowledged, and tried again with later batches; after the
    worker's patience runs out it is dead-lettered with the missing ids. Nothing is dropped.
    """
    handled = [(k, e, WRITE[type(e)]) for k, e in items]
    _ensure_sources(graph, [h.source(e) for _, e, h in handled if h.source and h.declares]
                    + [h.source(e) for _, e, h in handled if h.source and not h.declares])
    writes = [(k, e) for k, e, h in handled if h.write]
    settles = [(k, e, h.settle) for k, e, h in handled if h.settle
               and not _proposed_after(e, k, items)]
    held: list[Pending] = []
    while writes:
        try:
            parent, links = _trace_of([e for _, e in writes])
            with tracer.start_as_current_span("rescind.record", context=parent, links=links,
                                              attributes={"rescind.tenant": graph.tenant,
                                                          "rescind.writes": len(writes)}):
                batch = [to_write(e) for _, e in writes]
                if pipeline is not None:
                    pipeline.record(graph, batch)
                else:
                    record(graph, batch, moved)
            break
        except UnknownPremise as exc:
            missing = set(exc.missing)
            blocked = {k for k, e in writes if missing & set(getattr(e, "premises", ()))}
            # Anything resting on a held write is held with it.
            produced = {k: to_write(e).mem_id for k, e in writes}
            grew = True
            while grew:
                held_ids = {produced[k] for k in blocked}
                more = {k for k, e in writes if k not in blocked
                        and held_ids & set(getattr(e, "premises", ()))}
                grew, blocked = bool(more), blocked | more
            for k, e in writes:
                if k in blocked:
                    held.append(Pending(k, e, sorted(missing & set(e.premises)) or
                                        sorted(set(e.premises) - set(produced.values()))))
            writes = [(k, e) for k, e in writes if k not in blocked]
    for k, e, settle in settles:
        target = ev.action_id(e.tenant, e.action)
        found = graph.actions_in([target])
        if not found:
            held.append(Pending(k, e, [target]))
            continue
        settle(graph, e, {**found[0], "id": target})
    return held


def paid_as(e: ev.ActionExecuted) -> dict:
    """What the bank's receipt says was executed, as the action's ``paid_*`` facts."""
    return {k: v for k, v in {"paid_amount": e.amount, "paid_currency": e.currency,
                              "paid_account": e.account, "paid_reference": e.reference,
                              "paid_on": e.value_date, "receipt": e.receipt}.items()
            if v is not None}


def _proposed_after(e: ev.Event, key: str, items: list[tuple[str, ev.Event]]) -> bool:
    """A failure followed in the same batch by a new proposal of the action: the failure is of
    the try the proposal replaces (writes are applied before failures), so it is dropped."""
    if not isinstance(e, ev.ActionFailed):
        return False
    later = [x for k, x in items[[k for k, _ in items].index(key) + 1:]]
    return any(isinstance(x, ev.ActionProposed) and x.action == e.action for x in later)


def _trace_of(events: list[ev.Event]):
    """The write continues the trace of the first event that has one; the others are linked."""
    contexts = [propagate.extract({"traceparent": e.traceparent}) for e in events
                if e.traceparent]
    if not contexts:
        return None, []
    links = [trace.Link(c) for c in (trace.get_current_span(x).get_span_context()
                                     for x in contexts[1:]) if c.is_valid]
    return contexts[0], links


def _ensure_sources(graph: TenantGraph, sources: list[dict]) -> None:
    """Make the sources not in the graph yet; the first naming of each wins."""
    wanted: dict[str, dict] = {}
    for source in sources:
        wanted.setdefault(source["id"], source)
    if not wanted:
        return
    missing = [s for s in wanted if s not in graph.domains(list(wanted))]
    if not missing:
        return
    linearised(graph, lambda: graph.apply(Mutation(op="source", sources=[wanted[s] for s in missing]),
                                          graph.revision()))


def _compromised(graph: TenantGraph, e: ev.SourceCompromised, at: int) -> RetractionResult:
    op = ret.Retract(e.retraction, e.source, ev.to_micros(e.start) if e.start else None,
                     ev.to_micros(e.end) if e.end else None, e.reason, e.by)
    return ret.run(graph, op, at)


def _approved(graph: TenantGraph, e: ev.RecallApproved, at: int) -> None:
    approve(graph, ev.action_id(e.tenant, e.action), e.by, at)


# The retraction worker's handler of every decision (role "control"), given the graph, the
# event and its time in microseconds; tests/unit/workers/test_registry.py checks each kind in
# ev.CONTROL has one.
CONTROL: dict[type[ev.Event], Callable[[TenantGraph, Any, int], RetractionResult | None]] = {
    ev.SourceCompromised: _compromised,
    ev.MemoryWithdrawn: lambda graph, e, at: ret.run(
        graph, ret.Withdraw(e.retraction, e.memory, e.reason, e.by), at),
    ev.MemoryCorrected: lambda graph, e, at: ret.run(
        graph, ret.Correct(e.retraction, e.memory, e.text, e.by, reason="correction",
                           name=e.name), at),
    ev.RetractionReinstated: lambda graph, e, at: ret.run(
        graph, ret.Reinstate(e.retraction, e.by), at),
    ev.RecallApproved: _approved,
}


def apply_control(graph: TenantGraph, e: ev.Event) -> RetractionResult | None:
    """Run one security or finance decision; a ``refused`` error (``rescind.workers.policy``)
    when the engine refuses it."""
    return CONTROL[type(e)](graph, e, ev.to_micros(e.at))
