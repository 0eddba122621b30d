"""One FastStream broker carrying the subscribers of the chosen roles.

Roles: ``writer`` applies justified writes in batches; ``retraction`` applies security and
finance decisions one at a time and emits StatusChanged; ``reaper`` claims entries that a dead
consumer left pending (XAUTOCLAIM; Redis 8.2 has no XREADGROUP CLAIM) and hands them to the same
code, dead-lettering an entry delivered more than ``max_deliveries`` times.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field

import redis
from faststream import AckPolicy
from faststream.redis import RedisBroker, RedisStreamMessage, StreamSub
from faststream.redis.opentelemetry import RedisTelemetryMiddleware

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.contract import streams as st
from rescind.contract.errors import Invalid
from rescind.core.shapes import GateDecision, RetractionResult
from rescind.engine import collector
from rescind.engine.gate import UnknownAction, check, check_premises
from rescind.engine.writes import Pipeline
from rescind.graph.store import TenantGraph, connect
from rescind.runtime import telemetry
from rescind.workers.ingest import apply_control, apply_writes, decode, refused

log = logging.getLogger("rescind.workers")


@dataclass
class WorkerSettings:
    url: str
    worker_id: str = "0"
    partitions: int = layout.PARTITIONS
    batch: int = 500
    polling_ms: int = 50
    reaper_idle_ms: int = 30_000
    max_deliveries: int = 5
    patience_s: float = 300.0  # how long a write may wait for its premise
    gate_threshold: float = layout.GATE_THRESHOLD
    gate_min_domains: int = layout.GATE_MIN_DOMAINS


@dataclass
class Held:
    stream: str
    entry_id: str
    event: ev.Event
    since: float
    missing: list[str] = field(default_factory=list)


class Workers:
    """The state the handlers share: connections, graphs by tenant, and held writes."""

    def __init__(self, settings: WorkerSettings) -> None:
        self.settings = settings
        self.conn = connect(settings.url)
        self.graphs: dict[str, TenantGraph] = {}
        self.held: dict[str, Held] = {}
        self.lock = asyncio.Lock()  # one batch at a time per process keeps the graph linear
        self.pipeline = Pipeline()  # a batch is written while the next is read and planned
        self._lost: list[Held] = []  # batches that could not be written, from its thread
        self._lost_lock = threading.Lock()

    def graph(self, tenant: str) -> TenantGraph:
        if tenant not in self.graphs:
            self.graphs[tenant] = TenantGraph(self.conn, tenant)
        return self.graphs[tenant]

    # -- writer ---------------------------------------------------------------------------
    def write_batch(self, stream: str, entries: list[tuple[str, object]]) -> None:
        """Decode, dead-letter what cannot be applied, apply the rest, ack all but held ones."""
        telemetry.batch_size.record(len(entries))
        by_tenant: dict[str, list[tuple[str, ev.Event]]] = defaultdict(list)
        done: list[str] = []
        for entry_id, body in entries:
            try:
                event = decode(body)
            except Invalid as exc:
                st.dead_letter(self.conn, stream, entry_id, body, str(exc), layout.WRITER_GROUP)
                done.append(entry_id)
                continue
            if isinstance(event, ev.WRITES):
                by_tenant[event.tenant].append((entry_id, event))
            else:
                done.append(entry_id)  # the retraction group's business
        for tenant, items in by_tenant.items():
            try:
                held = apply_writes(self.graph(tenant), items, self.pipeline)
            except Exception as exc:  # held for retry (a restarting server, say): not acked
                log.warning("writes of tenant %s failed (%s); held for retry", tenant, exc)
                now = time.monotonic()
                for k, e in items:
                    self.held.setdefault(k, Held(stream, k, e, now, [f"error: {exc}"]))
                continue
            kept = {p.key for p in held}
            now = time.monotonic()
            for p in held:
                self.held.setdefault(p.key, Held(stream, p.key, p.event, now, p.missing))
            sent = [(k, e) for k, e in items if k not in kept]
            # Acknowledged once the batch is in the graph; if it cannot be written, held.
            self.pipeline.then(functools.partial(self._landed, stream, tenant, sent),
                               functools.partial(self._not_landed, stream, sent))
        self._ack(stream, layout.WRITER_GROUP, done)
        if len(entries) < self.settings.batch:  # the stream was drained: nothing to wait for
            self.pipeline.flush()

    def _landed(self, stream: str, tenant: str, items: list[tuple[str, ev.Event]]) -> None:
        try:
            self._ack(stream, layout.WRITER_GROUP, [k for k, _ in items])
        except Exception as exc:  # written but not acknowledged: applying again is a no-op
            self._not_landed(stream, items, exc)
            return
        telemetry.events_applied.add(len(items), {"tenant": tenant})

    def _not_landed(self, stream: str, items: list[tuple[str, ev.Event]],
                    exc: BaseException) -> None:
        log.warning("a write batch failed (%s); its %d events are held for retry", exc, len(items))
        now = time.monotonic()
        with self._lost_lock:
            self._lost.extend(Held(stream, k, e, now, [f"error: {exc}"]) for k, e in items)

    def retry_held(self) -> None:
        """Try held writes again; past the patience they go to the dead-letter stream."""
        self.pipeline.flush()
        with self._lost_lock:
            lost, self._lost = self._lost, []
        for h in lost:
            self.held.setdefault(h.entry_id, h)
        if not self.held:
            return
        now = time.monotonic()
        by_key = dict(self.held)
        self.held.clear()
        groups: dict[tuple[str, str], list[tuple[str, ev.Event]]] = defaultdict(list)
        for h in by_key.values():
            groups[(h.stream, h.event.tenant)].append((h.entry_id, h.event))
        for (stream, tenant), items in groups.items():
            try:
                still = {p.key: p for p in apply_writes(self.graph(tenant), items)}
            except Exception as exc:
                log.warning("held writes of tenant %s failed again (%s); kept", tenant, exc)
                self.held.update({k: by_key[k] for k, _ in items})
                continue
            done = []
            for key, _ in items:
                h = by_key[key]
                if key not in still:
                    done.append(key)
                elif now - h.since > self.settings.patience_s:
                    reason = f"premise never arrived: {', '.join(still[key].missing)}"
                    st.dead_letter(self.conn, stream, key, h.event.model_dump(mode="json",
                                   by_alias=True), reason, layout.WRITER_GROUP)
                    done.append(key)
                else:
                    h.missing = still[key].missing
                    self.held[key] = h
            self._ack(stream, layout.WRITER_GROUP, done)
            kept = [k for k, _ in items if k in self.held]
            if kept:  # we still own them: keep the reaper's hands off
                self.conn.xclaim(stream, layout.WRITER_GROUP, self.consumer("writer"), 0, kept,
                                 justid=True)

    # -- retraction -----------------------------------------------------------------------
    def control(self, stream: str, entry_id: str, body: object) -> None:
        self.pipeline.flush()  # the writes read before this decision are in the graph
        try:
            event = decode(body)
            if isinstance(event, ev.CONTROL):
                result = apply_control(self.graph(event.tenant), event)
                if result:
                    self._emit_status(event, result)
        except Exception as exc:
            if not refused(exc):  # left pending: the reaper retries, then dead-letters
                log.exception("control entry %s failed; left pending", entry_id)
                return
            st.dead_letter(self.conn, stream, entry_id, body, str(exc), layout.RETRACTION_GROUP)
        self._ack(stream, layout.RETRACTION_GROUP, [entry_id])

    def _emit_status(self, cause: ev.Event, result: RetractionResult) -> None:
        st.publish_status(self.conn, cause.tenant, result.id, result.rev, result.changed,
                          cause.at, cause.traceparent)

    # -- gate -----------------------------------------------------------------------------
    def gate(self, entry_id: str, body: object) -> None:
        """Answer one GateAsked on its reply list; a malformed request is dead-lettered."""
        try:
            asked = decode(body)
            if not isinstance(asked, ev.GateAsked):
                raise Invalid(f"the gate stream carries GateAsked, not {type(asked).__name__}")
        except Invalid as exc:
            st.dead_letter(self.conn, layout.GATE, entry_id, body, str(exc), layout.GATE_GROUP)
            self._ack(layout.GATE, layout.GATE_GROUP, [entry_id])
            return
        graph = self.graph(asked.tenant)
        d = self._judge(graph, asked)
        answer = ev.GateAnswered(event_id=f"{asked.event_id}:answer", tenant=asked.tenant,
                                 at=asked.at, allowed=d.allowed, reason=d.reason,
                                 fragility=d.fragility, traceparent=asked.traceparent)
        pipe = self.conn.pipeline()
        pipe.rpush(asked.reply_to, answer.model_dump_json(by_alias=True))
        pipe.expire(asked.reply_to, 60)
        pipe.xack(layout.GATE, layout.GATE_GROUP, entry_id)
        pipe.execute()

    def _judge(self, graph: TenantGraph, asked: ev.GateAsked) -> GateDecision:
        """An earlier proposal by its stored facts; a new one by the premises it would rest on.
        Either may have been published just before the question: wait for it a moment."""
        limits = (self.settings.gate_threshold, self.settings.gate_min_domains)
        deadline = time.monotonic() + 2.0
        if asked.proposed:
            mid = ev.action_id(asked.tenant, asked.action)
            while not graph.actions_in([mid]) and time.monotonic() < deadline:
                time.sleep(0.01)
            try:
                return check(graph, mid, *limits)
            except UnknownAction:
                return GateDecision(mid, False, f"blocked: no proposal named {asked.action!r}", 0)
        while len(graph.statuses(asked.premises)) < len(set(asked.premises)) \
                and time.monotonic() < deadline:
            time.sleep(0.01)
        return check_premises(graph, asked.action, asked.premises, asked.amount, *limits)

    # -- reaper ---------------------------------------------------------------------------
    def reap(self, group: str, stream: str, entry_id: str, body: object) -> None:
        """An entry claimed from a dead consumer: dead-letter it if it keeps failing, else redo."""
        info = self.conn.xpending_range(stream, group, min=entry_id, max=entry_id, count=1)
        deliveries = info[0]["times_delivered"] if info else 1
        if deliveries > self.settings.max_deliveries:
            st.dead_letter(self.conn, stream, entry_id, body,
                           f"delivered {deliveries} times without success", group)
            self._ack(stream, group, [entry_id])
        elif group == layout.WRITER_GROUP:
            self.write_batch(stream, [(entry_id, body)])
        else:
            self.control(stream, entry_id, body)

    # -- plumbing -------------------------------------------------------------------------
    def consumer(self, role: str) -> str:
        return f"{role}-{self.settings.worker_id}"

    def _ack(self, stream: str, group: str, ids: list[str]) -> None:
        if ids:
            self.conn.xack(stream, group, *ids)


def _entry_ids(msg: RedisStreamMessage) -> list[str]:
    return [i.decode() if isinstance(i, bytes) else i for i in msg.raw_message["message_ids"]]


def _entries(msg: RedisStreamMessage, bodies: list) -> list[tuple[str, object]]:
    return list(zip(_entry_ids(msg), bodies, strict=True))


IDLE_FLUSH_S = 0.1  # a full batch kept this long had no successor after all

_RAW = "rescind_raw"  # where the writer's parser keeps the entries as they came from Redis
_PLACEHOLDER = {k.encode(): v.encode() for k, v in layout.encode("0").items()}


async def _keep_raw(message: dict, original) -> RedisStreamMessage:
    """The writer's parser. FastStream's batch parser decodes each entry's JSON several times
    (envelope, body, the batch re-encoded, then decoded again); the writer validates each event's
    own JSON once, so the raw entries are kept aside and FastStream parses one placeholder
    (one per entry still cost a third of the worker's time: the GIL is what a batch waits for).
    The trace of each write comes from its event's own traceparent (ingest._trace_of)."""
    message[_RAW] = message["data"]
    message["data"] = [_PLACEHOLDER]
    return await original(message)


def _raw_entries(msg: RedisStreamMessage) -> list[tuple[str, object]]:
    """Entry ids with each event's own JSON text, read from the raw entry; what is not in our
    envelope is passed on as it is, for the decoder to say what is wrong with it."""
    out: list[tuple[str, object]] = []
    for entry_id, raw in zip(_entry_ids(msg), msg.raw_message[_RAW], strict=True):
        try:
            out.append((entry_id, layout.decode(raw).data))
        except Invalid:
            envelope = raw.get(layout.DATA.encode())
            out.append((entry_id, {_text(k): _text(v) for k, v in raw.items()}
                        if envelope is None else _text(envelope)))
    return out


def _paused(fn, *args):
    """Decoding and planning a batch allocate many small objects: see engine.collector."""
    with collector.paused():
        return fn(*args)


def _text(value: object) -> object:
    return value.decode(errors="replace") if isinstance(value, bytes) else value


def build(settings: WorkerSettings, roles: tuple[str, ...]) -> tuple[RedisBroker, Workers]:
    """A broker with the subscribers of ``roles`` on every partition (groups declared first)."""
    broker = RedisBroker(settings.url, logger=log, middlewares=[RedisTelemetryMiddleware()])
    workers = Workers(settings)
    st.ensure_groups(workers.conn, settings.partitions)
    if "gate" in roles:
        _gate(broker, workers)
    for name in layout.event_streams(settings.partitions):
        if "writer" in roles:
            _writer(broker, workers, name)
        if "retraction" in roles:
            _retraction(broker, workers, name)
        if "reaper" in roles:
            for group in layout.GROUPS:
                _reaper(broker, workers, name, group)
    return broker, workers


async def serve(settings: WorkerSettings, roles: tuple[str, ...], stop: asyncio.Event,
                ready: asyncio.Event | None = None) -> None:
    """Run ``roles`` until ``stop`` is set: then stop taking work, finish what is in hand, exit."""
    broker, workers = build(settings, roles)
    await broker.start()
    telemetry.lag.add(workers.conn, [*layout.event_streams(settings.partitions), layout.GATE])

    closing = asyncio.Event()  # set on the way out, also when ``stop`` never was

    def running() -> bool:
        return not (stop.is_set() or closing.is_set())

    async def retry_held() -> None:
        while running():
            await asyncio.sleep(0.2)
            if running():
                async with workers.lock:
                    await asyncio.to_thread(workers.retry_held)

    async def flush_idle() -> None:
        """A full batch is kept until the next one arrives (see Pipeline; a partial one, which
        drained the stream, is sent at once); when none does soon, it is sent on its own."""
        while running():
            await asyncio.sleep(IDLE_FLUSH_S / 5)
            if running() and workers.pipeline.kept_for() > IDLE_FLUSH_S:
                async with workers.lock:
                    await asyncio.to_thread(_paused, workers.pipeline.flush)

    # The reaper redoes writes through the same pipeline and holds, so it needs both too.
    background = [asyncio.create_task(retry_held()), asyncio.create_task(flush_idle())] \
        if {"writer", "reaper"} & set(roles) else []
    if ready is not None:
        ready.set()
    try:
        await stop.wait()
    finally:
        await broker.stop()  # stops the subscribers; a handler in flight completes first
        # Not cancelled: a cancel would free the lock while its thread still flushes or
        # retries, racing the close below. Each ends after the step it is in.
        closing.set()
        await asyncio.gather(*background, return_exceptions=True)
        async with workers.lock:
            await asyncio.to_thread(workers.pipeline.close)
        telemetry.lag.remove(workers.conn)
        workers.conn.close()


class WorkerThread:
    """Workers in a background thread with their own event loop (replay, tests, `rescind up`)."""

    def __init__(self, settings: WorkerSettings, roles: tuple[str, ...]) -> None:
        self.settings, self.roles = settings, roles
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"rescind-{'-'.join(roles)}",
                                        daemon=True)
        self.error: BaseException | None = None

    def _run(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            ready = asyncio.Event()
            task = asyncio.create_task(serve(self.settings, self.roles, self._stop, ready))
            await ready.wait()
            self._started.set()
            await task
        try:
            asyncio.run(main())
        except BaseException as exc:  # reported to whoever waits on start()
            self.error = exc
            self._started.set()

    def start(self, timeout: float = 20) -> WorkerThread:
        self._thread.start()
        if not self._started.wait(timeout) or self.error:
            raise RuntimeError(f"workers did not start: {self.error!r}")
        return self

    def stop(self, timeout: float = 20) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout)

    def __enter__(self) -> WorkerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _writer(broker: RedisBroker, workers: Workers, name: str) -> None:
    s = workers.settings

    @broker.subscriber(stream=StreamSub(name, group=layout.WRITER_GROUP, consumer=workers.consumer(
        "writer"), batch=True, max_records=s.batch, polling_interval=s.polling_ms),
        ack_policy=AckPolicy.MANUAL, parser=_keep_raw)
    async def on_writes(placeholders: list, msg: RedisStreamMessage) -> None:
        async with workers.lock:
            await asyncio.to_thread(_paused, workers.write_batch, name, _raw_entries(msg))


def _retraction(broker: RedisBroker, workers: Workers, name: str) -> None:
    s = workers.settings

    @broker.subscriber(stream=StreamSub(name, group=layout.RETRACTION_GROUP,
                                        consumer=workers.consumer("retraction"),
                                        polling_interval=s.polling_ms),
                       ack_policy=AckPolicy.MANUAL)
    async def on_control(body: object, msg: RedisStreamMessage) -> None:
        [(entry_id, raw)] = _entries(msg, [body])
        async with workers.lock:
            await asyncio.to_thread(workers.control, name, entry_id, raw)


def _gate(broker: RedisBroker, workers: Workers) -> None:
    with contextlib.suppress(redis.ResponseError):  # BUSYGROUP: declared already
        workers.conn.xgroup_create(layout.GATE, layout.GATE_GROUP, id="$", mkstream=True)

    @broker.subscriber(stream=StreamSub(layout.GATE, group=layout.GATE_GROUP,
                                        consumer=workers.consumer("gate"), polling_interval=20),
                       ack_policy=AckPolicy.MANUAL)
    async def on_gate(body: object, msg: RedisStreamMessage) -> None:
        [(entry_id, raw)] = _entries(msg, [body])
        await asyncio.to_thread(workers.gate, entry_id, raw)  # reads only: no lock needed


def _reaper(broker: RedisBroker, workers: Workers, name: str, group: str) -> None:
    s = workers.settings

    @broker.subscriber(stream=StreamSub(name, group=group, consumer=workers.consumer("reaper"),
                                        min_idle_time=s.reaper_idle_ms,
                                        polling_interval=max(s.polling_ms, 200)),
                       ack_policy=AckPolicy.MANUAL)
    async def on_claimed(body: object, msg: RedisStreamMessage) -> None:
        [(entry_id, raw)] = _entries(msg, [body])
        async with workers.lock:
            await asyncio.to_thread(workers.reap, group, name, entry_id, raw)
