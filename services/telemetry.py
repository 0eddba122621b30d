"""OpenTelemetry: one trace from the intercepted tool call, through the stream, to the graph write.

The middleware puts the W3C ``traceparent`` of the tool call's span into every event (and the
envelope's headers); FastStream's RedisTelemetryMiddleware continues that trace when a worker
consumes the entry, and the engine's steps are spans under it. Export is chosen in settings:
``RESCIND_OTEL=console`` prints spans, ``none`` (default) records nothing (the worker commands
call ``configure``); tests install an in-memory exporter. Metrics: FastStream's message
counters and durations, plus the engine's own (events applied, batch size, retraction latency)
on the same meter provider.
"""

from __future__ import annotations

from opentelemetry import metrics, trace

tracer = trace.get_tracer("rescind")
meter = metrics.get_meter("rescind")
events_applied = meter.create_counter("rescind.events.applied", description="Events written")
batch_size = meter.create_histogram("rescind.writer.batch_size", description="Entries per batch")
retraction_ms = meter.create_histogram("rescind.retraction.duration", unit="ms",
                                       description="Preview and commit of one retraction")


def configure(exporter: str) -> None:
    """Install the exporter the settings name; ``none`` leaves OpenTelemetry's no-op default."""
    if exporter != "console":
        return
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
    trace.set_tracer_provider(provider)
