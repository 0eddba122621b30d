"""One registry of events (rescind.contract.events): each kind declares its role once, and the
workers' handlers, the API's accepted events and the AsyncAPI document follow from it."""

from __future__ import annotations

import json
import typing
from typing import Literal

import pytest
from pydantic import TypeAdapter, ValidationError

from rescind.api.models import AgentEvent, EventBatch
from rescind.cli.run import ROLES as CLI_ROLES
from rescind.contract import events as ev
from rescind.workers import app, ingest
from rescind.workers.spec import document

# The AsyncAPI channel where the events of each role are described.
CHANNEL = {"write": "justification-writer", "control": "retraction-worker",
           "gate": "payment-gate", "answer": "gate-answers", "status": "status-changes"}


def kinds_of(union) -> set[type]:
    """The event classes of a discriminated union made by ev.one_of."""
    inner = typing.get_args(union)[0]
    return set(typing.get_args(inner)) or {inner}


def test_every_event_kind_declares_one_of_the_roles_and_is_registered():
    """Each event class in the contract declares a role and is in EVENTS and AnyEvent."""
    declared = {c for c in vars(ev).values()
                if isinstance(c, type) and issubclass(c, ev.Event) and c is not ev.Event}
    assert declared == set(ev.EVENTS)
    assert {k.role for k in ev.EVENTS} <= set(ev.ROLES)
    assert kinds_of(ev.AnyEvent) == set(ev.EVENTS)
    assert set(ev.WRITES) == {k for k in ev.EVENTS if k.role == "write"}
    assert set(ev.CONTROL) == {k for k in ev.EVENTS if k.role == "control"}
    assert {ev.MemoryDeleted, ev.MemoryAdopted, ev.ActionFailed} <= set(ev.WRITES)


def test_an_event_kind_without_a_role_is_refused_when_declared():
    """Declaring an Event subclass with no role, or an unknown one, raises at once."""
    with pytest.raises(TypeError, match="declares no role"):
        class NoRole(ev.Event):
            type: Literal["no_role"] = "no_role"
    with pytest.raises(TypeError, match="declares no role"):
        class BadRole(ev.Event):
            type: Literal["bad_role"] = "bad_role"
            role = "telemetry"
    assert "no_role" not in {k.model_fields["type"].default for k in ev.EVENTS}


def test_an_event_kind_reusing_a_type_tag_is_refused_when_declared():
    """Two kinds with one ``type`` tag could not be told apart on a stream: the second raises."""
    with pytest.raises(TypeError, match="'memory_written' is taken"):
        class Twin(ev.Event):
            type: Literal["memory_written"] = "memory_written"
            role = "write"


def test_every_write_kind_has_exactly_one_writer_handler_that_does_something():
    """The writer's table (ingest.WRITE) names every write kind, and nothing else."""
    assert set(ingest.WRITE) == set(ev.WRITES)
    for kind, on in ingest.WRITE.items():
        assert on.source or on.write or on.settle, kind.__name__
        assert not (on.write and on.settle), kind.__name__  # a write is recorded or settles
        assert not on.produces or on.write, kind.__name__  # only a recorded write makes one


def test_every_decision_kind_has_a_retraction_handler():
    """The retraction worker's table (ingest.CONTROL) names every control kind, and nothing
    else."""
    assert set(ingest.CONTROL) == set(ev.CONTROL)
    assert all(callable(h) for h in ingest.CONTROL.values())


def test_the_held_writes_wait_only_for_writes_that_make_a_memory():
    """PRODUCES (what a held write may wait for) comes from the writer's table: the memory
    writes, not a deletion, a declaration or an execution."""
    from rescind.workers.state import PRODUCES

    assert PRODUCES == ingest.PRODUCES
    assert set(PRODUCES) == {ev.ObservationRecorded, ev.MemoryWritten, ev.MemoryAdopted,
                             ev.ActionProposed}


def test_a_write_that_makes_a_memory_names_the_memory_its_event_names():
    """For the writes that make a memory, the graph write's id is the event's own memory id."""
    at = "2026-11-16T08:00:00Z"
    base = {"event_id": "e1", "tenant": "acme", "at": at}
    samples = [
        ev.ObservationRecorded(**base, source="portal:acme", text="IBAN DE02"),
        ev.MemoryWritten(**base, kind="belief", text="pay acme", premises=["obs-1"], agent="a"),
        ev.MemoryWritten(**base, kind="belief", text="v2", premises=["obs-1"], agent="a",
                         key="ns/k"),
        ev.MemoryAdopted(**base, kind="belief", key="ns/k", text="old"),
        ev.ActionProposed(**base, action="pay-1", text="pay", premises=["obs-1"], agent="a"),
    ]
    assert {type(e) for e in samples} == set(ingest.PRODUCES)
    want = [ev.memory_id("acme", "observation", "IBAN DE02"), samples[1].memory(),
            ev.store_memory_id("acme", "belief", "ns/k", "v2"), samples[3].memory(),
            ev.action_id("acme", "pay-1")]
    assert [ingest.to_write(e).mem_id for e in samples] == want


def test_the_api_accepts_every_write_kind_and_no_other():
    """POST /events (EventBatch) takes each write kind, and refuses a decision or a gate event."""
    assert kinds_of(AgentEvent) == set(ev.WRITES)
    at = "2026-11-16T08:00:00Z"
    base = {"schema": 1, "event_id": "e1", "tenant": "acme", "at": at}
    batch = EventBatch(events=[
        {**base, "type": "memory_deleted", "memory": "bel-1", "key": "ns/k", "agent": "a"},
        {**base, "type": "memory_adopted", "kind": "belief", "key": "ns/k", "text": "old"},
        {**base, "type": "action_failed", "action": "pay-1", "reason": "bank down"},
    ])
    assert [type(e) for e in batch.events] == [ev.MemoryDeleted, ev.MemoryAdopted,
                                              ev.ActionFailed]
    with pytest.raises(ValidationError):
        TypeAdapter(AgentEvent).validate_python(
            {**base, "type": "memory_withdrawn", "retraction": "r1", "memory": "m", "by": "x"})


def test_the_asyncapi_document_shows_every_event_kind_on_the_channel_of_its_role():
    """Each kind's schema is in the document, reached from the channel its role names; the
    document describes the subscribers of every role a worker process runs."""
    doc = json.loads(document())
    assert set(app.ROLES) == set(CLI_ROLES)
    comps = doc["components"]

    def refs(node) -> set[str]:
        if isinstance(node, dict):
            got = {node["$ref"].rsplit("/", 1)[-1]} if "$ref" in node else set()
            return got.union(*(refs(v) for k, v in node.items() if k != "$ref"))
        if isinstance(node, list):
            return set().union(*(refs(v) for v in node))
        return set()

    def reached(channel: str) -> set[str]:
        seen: set[str] = set()
        todo = [m["$ref"].rsplit("/", 1)[-1] for m in doc["channels"][channel]["messages"]
                .values()]
        todo = [r for name in todo for r in refs(comps["messages"][name])]
        while todo:
            name = todo.pop()
            if name not in seen and name in comps["schemas"]:
                seen.add(name)
                todo += refs(comps["schemas"][name])
        return seen

    for kind in ev.EVENTS:
        assert kind.__name__ in reached(CHANNEL[kind.role]), (kind.__name__, kind.role)
    assert kind_names(reached("justification-writer")) == {k.__name__ for k in ev.WRITES}
    assert kind_names(reached("retraction-worker")) == {k.__name__ for k in ev.CONTROL}
    subscribers = {c for c, v in doc["channels"].items()
                   if v["bindings"]["redis"]["method"] == "xreadgroup"}
    assert subscribers == {"justification-writer", "retraction-worker", "payment-gate",
                           "reaper-rescind-writer", "reaper-rescind-retraction"}


def kind_names(names: set[str]) -> set[str]:
    return names & {k.__name__ for k in ev.EVENTS}
