"""One trace from the intercepted tool call through the stream to the graph write."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from rescind.transport import connection
from tests.support.agent import agent, call, run, settle

EXPORTER = InMemorySpanExporter()


@pytest.fixture(scope="module", autouse=True)
def tracing():
    """An in-memory exporter on the global tracer provider (set once per process)."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
    yield EXPORTER


def test_the_tool_call_and_the_graph_write_share_one_trace(rescind_workers, tenant_name):
    """The source tool's span and the writer's `rescind.record` span have the same trace id."""
    EXPORTER.clear()
    wrapped = agent([call("read_vendor_portal", {"vendor": "acme"}, 1), AIMessage(content="ok")],
                    rescind_workers, tenant_name)
    run(wrapped, "read the portal")
    settle(rescind_workers, wrapped)
    wrapped.rescind.close()
    spans = EXPORTER.get_finished_spans()
    tool = [s for s in spans if s.name == "rescind.tool read_vendor_portal"]
    assert tool, [s.name for s in spans]
    trace_id = tool[0].context.trace_id
    same = {s.name for s in spans if s.context.trace_id == trace_id}
    assert "rescind.record" in same, [(s.name, hex(s.context.trace_id)[-6:]) for s in spans]


METRICS = InMemoryMetricReader()


@pytest.fixture(scope="module")
def metric_reader():
    """An in-memory reader on the global meter provider (the first one set wins)."""
    metrics.set_meter_provider(MeterProvider(metric_readers=[METRICS]))
    return METRICS


def _points(reader) -> dict[str, list]:
    found: dict[str, list] = {}
    for rm in reader.get_metrics_data().resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                found.setdefault(m.name, []).extend(m.data.data_points)
    return found


def test_the_workers_report_events_batches_lag_and_retraction_latency(
        metric_reader, rescind_workers, tenant_name):
    """After an agent's writes and a retraction: events applied counted per tenant, batch sizes
    recorded, consumer lag observed per stream and group (0 once drained), and the retraction's
    latency recorded."""
    from rescind.contract import events as ev
    from rescind.middleware.publisher import Publisher

    wrapped = agent([call("read_vendor_portal", {"vendor": "acme"}, 1), AIMessage(content="ok")],
                    rescind_workers, tenant_name)
    run(wrapped, "read the portal")
    settle(rescind_workers, wrapped)
    pub = Publisher(rescind_workers)
    pub.publish(ev.SourceCompromised(event_id=f"{tenant_name}-r", tenant=tenant_name,
                                     at=ev.from_micros(0), retraction="r1", source="portal:acme",
                                     reason="hacked", by="security"))
    pub.close()
    settle(rescind_workers, wrapped)
    wrapped.rescind.close()
    points = _points(metric_reader)
    applied = [p for p in points["rescind.events.applied"] if p.attributes["tenant"] == tenant_name]
    assert applied and applied[0].value >= 1
    assert points["rescind.writer.batch_size"][0].count >= 1
    lag = {(p.attributes["stream"], p.attributes["group"]): p.value
           for p in points["rescind.consumer.lag"]}
    assert ("rescind:events:0", "rescind-writer") in lag and all(v >= 0 for v in lag.values())
    assert lag[(wrapped.rescind.publisher.stream_of(tenant_name), "rescind-writer")] == 0
    durations = [p for p in points["rescind.retraction.duration"] if p.attributes["op"] == "retract"]
    assert durations and durations[0].count >= 1 and durations[0].sum > 0


def test_one_trace_per_run_with_its_tool_calls_and_store_writes_as_spans(rescind_workers,
                                                                         tenant_name):
    """Each top-level invocation is one trace: a ``rescind.run`` span whose children are the
    tool calls and the store writes (a note saved from inside a tool), continued by the
    writer's ``rescind.record``; a second invocation is another trace."""
    EXPORTER.clear()
    note = "Acme is paid to IBAN GB33 BUKB 2020 1555 5555 55"
    wrapped = agent([call("read_vendor_portal", {"vendor": "acme"}, 1),
                     call("save_note", {"text": note}, 2), AIMessage(content="ok"),
                     call("read_vendor_portal", {"vendor": "acme"}, 3), AIMessage(content="ok")],
                    rescind_workers, tenant_name)
    run(wrapped, "note acme's account")
    run(wrapped, "read it again")
    settle(rescind_workers, wrapped)
    wrapped.rescind.close()
    spans = EXPORTER.get_finished_spans()
    runs = [s for s in spans if s.name == "rescind.run"]
    assert len(runs) == 2 and runs[0].context.trace_id != runs[1].context.trace_id
    first = runs[0].context
    children = {s.name for s in spans if s.parent is not None
                and s.parent.span_id == first.span_id}
    assert {"rescind.tool read_vendor_portal", "rescind.tool save_note",
            "rescind.store put"} <= children, children
    in_first = {s.name for s in spans if s.context.trace_id == first.trace_id}
    assert "rescind.record" in in_first


def test_a_tracer_provider_given_to_instrument_gets_the_agent_side_spans(rescind_workers,
                                                                         tenant_name):
    """``instrument(..., tracer_provider=...)``: the run's spans go to that provider."""
    from langchain_core.messages import AIMessage as AI

    from rescind.middleware import InterceptConfig, SourceTool, instrument
    from tests.support import foreign as f

    mine = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(mine))
    graph = instrument(f.per_user(f.scripted(f.call("fetch_page", {
        "url": "https://trends.example/colour"}), AI(content="ok")), None),
        InterceptConfig(tenant=tenant_name, url=rescind_workers,
                        sources={"fetch_page": SourceTool(source="web:{url}")}),
        tracer_provider=provider)
    graph.invoke({"messages": [("user", "colour?")]}, {"configurable": {"user_id": "a"}})
    graph.rescind.close()
    names = [s.name for s in mine.get_finished_spans()]
    assert names.count("rescind.run") == 1 and "rescind.tool fetch_page" in names


def test_gate_decisions_are_counted_and_dead_letters_observed(metric_reader, rescind_workers,
                                                              tenant_name):
    """Each recorded gate decision counts once per tenant and decision (what the gate-refusal
    alert reads); the dead-letter gauge is the length of the dead-letter stream."""

    from rescind.contract import layout
    from rescind.core.shapes import GateDecision
    from rescind.engine.gate import GateCall, record
    from rescind.graph.store import TenantGraph, connect
    from rescind.transport import streams as st

    def count(decision: str) -> int:
        return sum(p.value for p in _points(metric_reader).get("rescind.gate.decisions", [])
                   if p.attributes == {"tenant": tenant_name, "decision": decision})

    graph = TenantGraph(connect(rescind_workers), tenant_name)
    blocked, allowed = count("blocked"), count("allowed")
    call = GateCall("act-telemetry", (), 20_000.0, "ZZ00 TEST", "acme", 1, "USD")
    record(graph, call, GateDecision("act-telemetry", False, "blocked: test", 1))
    record(graph, call, GateDecision("act-telemetry", False, "blocked: test", 1))
    record(graph, call, GateDecision("act-telemetry", True, "allowed", 2))
    assert (count("blocked") - blocked, count("allowed") - allowed) == (2, 1)

    conn = connection.connect(rescind_workers)
    st.dead_letter(conn, layout.GATE, "0-1", {"not": "an event"}, "telemetry test", "test")
    [dead] = _points(metric_reader)["rescind.dead_letters"]
    assert dead.attributes == {"stream": layout.DEAD} and dead.value == conn.xlen(layout.DEAD) >= 1
