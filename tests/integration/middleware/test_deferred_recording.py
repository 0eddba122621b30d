"""Recording done on the recorder's thread records what recording in the agent's thread did:
the same events, from the values as the agent handed them over, ready at the next flush, and
a failing step never reaches the agent; a message a node builds is not the user's, read from
the node's own output."""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableLambda
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.store.memory import InMemoryStore

from rescind.contract import events as ev
from rescind.middleware import InterceptConfig, Recorder, SourceTool, instrument
from rescind.middleware.context import RunContext
from tests.support import foreign as f

URL = "https://trends.example/colour"
# What differs between two recordings of the same play: ids and times drawn anew, the run's id.
_DRAWN = {"event_id", "at", "traceparent", "tracestate", "run", "seq"}


class Kept:
    """A publisher that keeps the events it is given; ``deferred``: it can be told to wait for
    the recorder's steps (``before_flush``), so the recorder defers them."""

    def __init__(self, deferred: bool) -> None:
        self.events: list[ev.Event] = []
        if deferred:
            self.before_flush = None

    def publish(self, event: ev.Event, durable: bool = False) -> None:
        self.events.append(event)

    def flush(self, timeout: float = 10.0) -> bool:
        hook = getattr(self, "before_flush", None)
        return hook is None or hook(timeout)

    def close(self, timeout: float = 10.0) -> None:
        pass


def _play(config: InterceptConfig, deferred: bool) -> list[tuple]:
    """Two runs of a per-user agent (a web page read, a fact remembered, then the same page
    again): its events, without what is drawn anew."""
    kept = Kept(deferred)
    recorder = Recorder(config, publisher=kept)  # type: ignore[arg-type]
    assert (recorder.later is not None) == deferred
    model = f.scripted(f.call("fetch_page", {"url": URL}),
                       f.call("remember", {"fact": "Colour of the year: teal blue"}),
                       AIMessage(content="ok"),
                       f.call("fetch_page", {"url": URL}), AIMessage(content="ok"))
    graph = instrument(f.per_user(model, InMemoryStore()), config, recorder=recorder)
    try:
        graph.invoke({"messages": [("user", "colour?")]}, {"configurable": {"user_id": "a"}})
        graph.invoke({"messages": [("user", "and now?")]}, {"configurable": {"user_id": "a"}})
        assert kept.flush()
    finally:
        recorder.close()
    assert recorder.failed == 0
    return [(type(e).__name__, sorted((k, repr(v)) for k, v in e.model_dump().items()
                                      if k not in _DRAWN)) for e in kept.events]


def test_deferred_recording_publishes_the_same_events_as_recording_at_once(falkordb,
                                                                          tenant_name):
    """The same play recorded on the recorder's thread and in the agent's own: the same
    events (observations, the write with its premises), in the same order."""
    config = InterceptConfig(tenant=tenant_name, url=falkordb,
                             sources={"fetch_page": SourceTool(source="web:{url}")})
    deferred, at_once = _play(config, True), _play(config, False)
    assert [kind for kind, _ in at_once] == ["ObservationRecorded", "ObservationRecorded",
                                             "MemoryWritten", "ObservationRecorded",
                                             "ObservationRecorded"]
    assert deferred == at_once


class Notes(TypedDict):
    done: bool


def _mutating_graph(store: InMemoryStore) -> Any:
    """A node that reads a note, changes the dict it was handed, writes a new note and then
    changes that dict too: all after the store call returned."""

    def note(state: Notes) -> dict:
        notes = get_store()
        item = notes.get(("notes",), "seed")
        seen = item.value if item else {}
        value = {"text": f"Follow-up on {seen.get('text', '')}", "tags": ["a"]}
        notes.put(("notes",), "follow-up", value)
        seen["text"] = "Changed afterwards"
        value["text"] = "Changed afterwards too"
        value["tags"].append("b")
        return {"done": True}

    builder = StateGraph(Notes)
    builder.add_node("note", note)
    builder.add_edge(START, "note")
    builder.add_edge("note", END)
    return builder.compile(store=store)


def test_what_is_recorded_is_the_value_as_handed_over_and_waits_for_the_flush(falkordb,
                                                                             tenant_name):
    """With a long linger nothing is recorded when the call returns; at the flush the write is
    recorded as it was put, resting on the note it read as it was read, though the agent
    changed both dicts afterwards."""
    config = InterceptConfig(tenant=tenant_name, url=falkordb)
    kept = Kept(True)
    recorder = Recorder(config, publisher=kept)  # type: ignore[arg-type]
    assert recorder.later is not None
    recorder.later.linger_s = 60
    store = InMemoryStore()
    store.put(("notes",), "seed", {"text": "Invoice INV-2211 due 14 Dec"})
    graph = instrument(_mutating_graph(store), config, recorder=recorder)
    try:
        graph.invoke({"done": False})
        assert kept.events == [] and recorder.later.pending > 0
        assert kept.flush()
        written = [e for e in kept.events if isinstance(e, ev.MemoryWritten)]
    finally:
        recorder.close()
    assert [w.text for w in written] == ["Follow-up on Invoice INV-2211 due 14 Dec"]
    seed = ev.store_memory_id(tenant_name, "belief", "notes/seed", "Invoice INV-2211 due 14 Dec")
    assert written[0].premises == [seed]


def test_a_recording_step_that_fails_never_reaches_the_agent(falkordb, tenant_name,
                                                             monkeypatch):
    """The attribution raising for one write: the agent's call returns as unwrapped, the
    failure is counted, and the next run is recorded."""
    config = InterceptConfig(tenant=tenant_name, url=falkordb)
    kept = Kept(True)
    recorder = Recorder(config, publisher=kept)  # type: ignore[arg-type]
    store = InMemoryStore()
    store.put(("notes",), "seed", {"text": "Invoice INV-2211 due 14 Dec"})
    graph = instrument(_mutating_graph(store), config, recorder=recorder)
    real = RunContext.justifications
    calls = []

    def once_broken(self, written, *args, **kwargs):
        calls.append(written)
        if len(calls) == 1:
            raise RuntimeError("dictionary changed size during iteration")
        return real(self, written, *args, **kwargs)

    monkeypatch.setattr(RunContext, "justifications", once_broken)
    try:
        assert graph.invoke({"done": False}) == {"done": True}
        assert kept.flush()
        assert recorder.failed == 1
        assert not [e for e in kept.events if isinstance(e, ev.MemoryWritten)]
        store.put(("notes",), "seed", {"text": "Invoice INV-2211 due 14 Dec"})
        assert graph.invoke({"done": False}) == {"done": True}
        assert kept.flush()
    finally:
        recorder.close()
    assert recorder.failed == 1
    assert len([e for e in kept.events if isinstance(e, ev.MemoryWritten)]) == 1


class Chat(TypedDict):
    messages: Annotated[list, add_messages]


def _reducer_graph(model: Any, nested: bool) -> Any:
    """A node adds a human message of its own making to the state (a reducer's prompt, as
    map-reduce examples write it); the next node shows the state's messages to the model.
    ``nested``: the prompt is made by a runnable inside the node, as a chain step would."""
    make = RunnableLambda(lambda findings: HumanMessage(f"Summarise these findings: {findings}"))

    def reduce(state: Chat) -> dict:
        findings = "Acme Corp is at 5 Quay Street, Bristol"
        prompt = make.invoke(findings) if nested else HumanMessage(
            f"Summarise these findings: {findings}")
        return {"messages": [prompt]}

    def answer(state: Chat) -> dict:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(Chat)
    builder.add_node("reduce", reduce)
    builder.add_node("answer", answer)
    builder.add_edge(START, "reduce")
    builder.add_edge("reduce", "answer")
    builder.add_edge("answer", END)
    return builder.compile(store=InMemoryStore())


@pytest.mark.parametrize("nested", [False, True], ids=["in-the-node", "in-a-runnable"])
def test_a_human_message_a_node_builds_is_not_recorded_as_the_user_s(falkordb, tenant_name,
                                                                    nested):
    """The prompt a node built reaches the model with the id the state gave it, yet only the
    invocation's own message is recorded as the user's word, whether the node made the prompt
    itself or through a runnable inside it."""
    config = InterceptConfig(tenant=tenant_name, url=falkordb)
    kept = Kept(True)
    recorder = Recorder(config, publisher=kept)  # type: ignore[arg-type]
    graph = instrument(_reducer_graph(f.scripted(AIMessage(content="ok")), nested), config,
                       recorder=recorder)
    try:
        graph.invoke({"messages": [HumanMessage("Where is Acme based?")]},
                     {"configurable": {"user_id": "u1"}})
        assert kept.flush()
    finally:
        recorder.close()
    said = [(e.source, e.text) for e in kept.events
            if isinstance(e, ev.ObservationRecorded) and e.source_kind == "user"]
    assert said == [("user:u1", "Where is Acme based?")]
