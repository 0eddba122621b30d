"""With no OpenTelemetry set up in the agent's process: one trace per run, carried by its events."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage
from opentelemetry import trace

from rescind.contract import events as ev
from rescind.middleware import InterceptConfig, Recorder, SourceTool, instrument
from tests.support import foreign as f

URL = "https://trends.example/colour"


class Kept:
    """A publisher that keeps the events it is given (nothing is sent); ``deferred``: it can
    be told to wait for the recorder's steps, so the recorder runs them on its thread."""

    def __init__(self, deferred: bool = False) -> None:
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


@pytest.mark.parametrize("deferred", [True, False], ids=["recorder-thread", "at-once"])
def test_without_a_tracer_provider_each_run_s_events_carry_the_run_s_own_trace(
        falkordb, tenant_name, monkeypatch, deferred):
    """No provider set up: every event of a run (the user's message, the tool's result, the
    store put made inside a tool) carries the run span's traceparent, not a span per call that
    nothing exports; the next run is another trace. Recorded on the recorder's thread or in
    the agent's, alike."""
    monkeypatch.setattr(trace, "get_tracer_provider", trace.ProxyTracerProvider)
    config = InterceptConfig(tenant=tenant_name, url=falkordb,
                             sources={"fetch_page": SourceTool(source="web:{url}")})
    kept = Kept(deferred)
    recorder = Recorder(config, publisher=kept)  # type: ignore[arg-type]
    assert (recorder.later is not None) == deferred
    model = f.scripted(f.call("fetch_page", {"url": URL}),
                       f.call("remember", {"fact": "Colour of the year: teal blue"}),
                       AIMessage(content="ok"),
                       f.call("fetch_page", {"url": URL}), AIMessage(content="ok"))
    graph = instrument(f.per_user(model, None), config, recorder=recorder)
    try:
        graph.invoke({"messages": [("user", "colour?")]}, {"configurable": {"user_id": "a"}})
        assert kept.flush()
        first = list(kept.events)
        kept.events.clear()
        graph.invoke({"messages": [("user", "and now?")]}, {"configurable": {"user_id": "a"}})
        assert kept.flush()
        second = list(kept.events)
    finally:
        recorder.close()
    kinds = {type(e).__name__ for e in first}
    assert {"ObservationRecorded", "MemoryWritten"} <= kinds, kinds
    assert len([e for e in first if isinstance(e, ev.ObservationRecorded)]) == 2  # user, web
    parents = {e.traceparent for e in first}
    assert len(parents) == 1 and None not in parents, parents
    (parent,) = parents
    version, trace_id, span_id, flags = parent.split("-")
    assert int(trace_id, 16) and int(span_id, 16)
    again = {e.traceparent for e in second}
    assert len(again) == 1 and again.pop().split("-")[1] != trace_id
