"""OpenTelemetry: one trace from the intercepted tool call, through the stream, to the graph write.

The middleware puts the W3C ``traceparent`` of the tool call's span into every event (and the
envelope's headers); FastStream's RedisTelemetryMiddleware continues that trace when a worker
consumes the entry, and the engine's steps are spans under it. Export is chosen in settings:
``RESCIND_OTEL=console`` prints spans and metrics, ``otlp`` sends both over OTLP/HTTP to
``RESCIND_OTLP_ENDPOINT`` (a collector), ``none`` (default) records nothing; the worker
commands call ``configure``; tests install in-memory readers. Metrics, on one meter provider:
FastStream's message counters and durations, and Rescind's own: events applied (a counter, so a
rate is events/s), writer batch size, retraction latency, gate decisions (allowed or blocked),
consumer lag per stream and group (an observable gauge read from XINFO GROUPS when the reader
collects) and the entries in the dead-letter stream (XLEN, likewise). The Grafana dashboard and
the Prometheus alert rules under deploy/monitoring/ use these names, as Prometheus spells them.
"""

from __future__ import annotations

import contextlib
import threading

import redis
from opentelemetry import metrics, trace
from opentelemetry.metrics import CallbackOptions, Observation

from rescind.transport import connection

tracer = trace.get_tracer("rescind")
meter = metrics.get_meter("rescind")
events_applied = meter.create_counter("rescind.events.applied", description="Events written")
batch_size = meter.create_histogram("rescind.writer.batch_size", description="Entries per batch")
premise_never_arrived = meter.create_counter(
    "rescind.writer.premise_never_arrived",
    description="Writes given up (dead-lettered) because a premise never arrived")
server_deaths = meter.create_counter(
    "rescind.writer.server_deaths",
    description="Deaths of FalkorDB seen by the writer with a write batch in flight")
crash_quarantined = meter.create_counter(
    "rescind.writer.crash_quarantined",
    description="Writes dead-lettered because FalkorDB died applying them (crash quarantine)")
server_restarts = meter.create_counter(
    "rescind.server.restarts",
    description="Restarts of the embedded FalkorDB by `rescind up`'s supervisor after it died")
gate_decisions = meter.create_counter(
    "rescind.gate.decisions", description="Payment gate decisions, by decision: allowed or blocked")
retraction_ms = meter.create_histogram("rescind.retraction.duration", unit="ms",
                                       description="Preview and commit of one retraction")


def configure(exporter: str, endpoint: str = "http://127.0.0.1:4318",
              interval_ms: int = 10_000) -> None:
    """Install the exporters the settings name; ``none`` leaves OpenTelemetry's no-op default."""
    if exporter == "none":
        return
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    resource = Resource.create({"service.name": "rescind"})
    if exporter == "console":
        from opentelemetry.sdk.metrics.export import ConsoleMetricExporter
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        spans, processor, metric_exporter = ConsoleSpanExporter(), SimpleSpanProcessor, \
            ConsoleMetricExporter()
    elif exporter == "otlp":
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        base = endpoint.rstrip("/")
        spans, processor = OTLPSpanExporter(endpoint=f"{base}/v1/traces"), BatchSpanProcessor
        metric_exporter = OTLPMetricExporter(endpoint=f"{base}/v1/metrics")
    else:
        raise ValueError(f"unknown exporter {exporter!r}: none, console or otlp")
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(processor(spans))
    trace.set_tracer_provider(provider)
    reader = PeriodicExportingMetricReader(metric_exporter, export_interval_millis=interval_ms)
    metrics.set_meter_provider(MeterProvider(resource=resource, metric_readers=[reader]))


class LagWatch:
    """The consumer lag of every group on the event streams, observed when metrics are read."""

    def __init__(self) -> None:
        self._sources: list[tuple[redis.Redis, list[str]]] = []
        self._lock = threading.Lock()

    def add(self, conn: redis.Redis, streams: list[str]) -> None:
        with self._lock:
            self._sources.append((conn, streams))

    def remove(self, conn: redis.Redis) -> None:
        with self._lock:
            self._sources = [(c, s) for c, s in self._sources if c is not conn]

    def observe(self, options: CallbackOptions) -> list[Observation]:
        found = []
        with self._lock:
            sources = list(self._sources)
        for conn, streams in sources:
            for stream in streams:
                with contextlib.suppress(redis.RedisError):
                    for g in conn.xinfo_groups(stream):
                        found.append(Observation(g.get("lag") or 0, {
                            "stream": stream, "group": g["name"].decode()}))
        return found

    def observe_dead(self, options: CallbackOptions) -> list[Observation]:
        """Entries in the dead-letter stream of each server watched (once per server)."""
        from rescind.contract.layout import DEAD

        found, seen = [], set()
        with self._lock:
            sources = list(self._sources)
        for conn, _ in sources:
            server = connection.url_of(conn)
            if server in seen:
                continue
            seen.add(server)
            with contextlib.suppress(redis.RedisError):
                found.append(Observation(conn.xlen(DEAD), {"stream": DEAD}))
        return found


lag = LagWatch()
consumer_lag = meter.create_observable_gauge(
    "rescind.consumer.lag", callbacks=[lag.observe],
    description="Entries not yet delivered to each consumer group")
dead_letters = meter.create_observable_gauge(
    "rescind.dead_letters", callbacks=[lag.observe_dead],
    description="Entries in the dead-letter stream (what could not be applied, kept to replay)")
