"""One trace from the intercepted tool call through the stream to the graph write."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.test_interception import agent, call, rescind_workers, run, settle  # noqa: F401

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


def test_the_tool_call_and_the_graph_write_share_one_trace(rescind_workers, tenant_name):  # noqa: F811
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
