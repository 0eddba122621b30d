"""Where a timed engine operation spends its time: medians of the engine's own spans.

The engine names its steps as OpenTelemetry spans, which operators see in their traces: under
``rescind.retraction`` (the whole of ``retraction.run``), ``rescind.context``, ``rescind.walk``
and ``rescind.settle`` in ``rescind.preview``, ``rescind.result`` and ``rescind.apply`` in
``rescind.commit``. A benchmark row that wants its time explained records them inside
``recording()``; outside it the sampler drops every span, so the other rows pay little for them
(what they cost each way: docs/performance.md).
"""

from __future__ import annotations

import contextlib
import statistics
from collections.abc import Iterator

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult

STEPS = ("rescind.retraction", "rescind.context", "rescind.walk", "rescind.settle",
         "rescind.result", "rescind.apply")


class _WhileRecording(Sampler):
    def __init__(self) -> None:
        self.on = False

    def should_sample(self, parent_context, trace_id, name, kind=None, attributes=None,
                      links=None, trace_state=None) -> SamplingResult:
        return SamplingResult(Decision.RECORD_AND_SAMPLE if self.on else Decision.DROP)

    def get_description(self) -> str:
        return "rescind bench: only while recording"


_sampler = _WhileRecording()
_exporter = InMemorySpanExporter()
_feeding: list[TracerProvider] = []  # the provider that sends its spans to _exporter


def _install() -> None:
    """Our provider, once per process (OpenTelemetry allows one); an SDK provider that is
    already there records with its own sampler, into our exporter as well."""
    if _feeding:
        return
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider(sampler=_sampler)
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(_exporter))
    _feeding.append(provider)


@contextlib.contextmanager
def recording() -> Iterator[dict[str, float]]:
    """Yield a dict that holds, once the block ends, the median in ms of each of ``STEPS``
    over the operations run inside it (``rescind.retraction`` is the whole of ``run``)."""
    _install()
    _exporter.clear()
    medians: dict[str, float] = {}
    _sampler.on = True
    try:
        yield medians
    finally:
        _sampler.on = False
        spans = _exporter.get_finished_spans()
        _exporter.clear()
        took: dict[str, list[float]] = {}
        for span in spans:
            took.setdefault(span.name, []).append((span.end_time - span.start_time) / 1e6)
        for name in STEPS:
            if name in took:
                medians[name] = round(statistics.median(took[name]), 2)


def table(rows: dict[str, dict]) -> list[str]:
    """Markdown: for each row that recorded its steps, their medians, and what is left of the
    whole (taking and releasing the tenant's lock, freeing the region, the spans themselves)."""
    named = {k: v["steps_ms"] for k, v in rows.items() if v.get("steps_ms")}
    if not named:
        return []
    lines = ["\nWhere the time goes: medians of the engine's spans over the same runs (ms); "
             "a median of the whole is not the sum of the steps' medians.\n",
             "| region | whole | context | walk | settle | result | apply | rest |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for k, took in named.items():
        parts = [took.get(name) for name in STEPS]
        whole, rest = parts[0], None
        if None not in parts:
            rest = round(whole - sum(parts[1:]), 2)
        lines.append("| " + " | ".join([k, *(str(p) for p in parts), str(rest)]) + " |")
    return lines
