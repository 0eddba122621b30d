"""OpenTelemetry: one trace from the intercepted tool call, through the stream, to the graph write.

The middleware puts the W3C ``traceparent`` of the tool call's span into every event (and the
envelope's headers); FastStream's RedisTelemetryMiddleware continues that trace when a worker
consumes the entry, and the engine's steps are spans under it. Export is chosen in settings:
``RESCIND_OTEL=console`` prints spans, ``none`` (default) records nothing; tests install an
in-memory exporter. Metrics: FastStream's message counters and durations, plus the engine's own
(events applied, batch size, retraction latency) on the same meter provider.
"""

from __future__ import annotations

import os

from opentelemetry import metrics, trace

tracer = trace.get_tracer("rescind")
meter = metrics.get_meter("rescind")
events_applied = meter.create_counter("rescind.events.applied", description="Events written")
batch_size = meter.create_histogram("rescind.writer.batch_size", description="Entries per batch")
retraction_ms = meter.create_histogram("rescind.retraction.duration", unit="ms",
                                       description="Preview and commit of one retraction")


def configure_from_env() -> None:
    """Install an exporter when RESCIND_OTEL asks for one (console); leave the default else."""
    if os.environ.get("RESCIND_OTEL", "none") != "console":
        return
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
    trace.set_tracer_provider(provider)
