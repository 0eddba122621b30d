"""One FastStream broker carrying the subscribers of the chosen roles.

Roles: ``writer`` applies justified writes in batches; ``retraction`` applies security and
finance decisions one at a time and emits StatusChanged; ``reaper`` claims entries that a dead
consumer left pending (XAUTOCLAIM; Redis 8.2 has no XREADGROUP CLAIM) and hands them to the same
code, dead-lettering an entry delivered more than ``max_deliveries`` times. What each role does
with an entry is in ``rescind.workers.roles``; here is how FastStream hands entries over.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading

import redis
from faststream import AckPolicy
from faststream.redis import RedisBroker, RedisClusterBroker, RedisStreamMessage, StreamSub
from faststream.redis.opentelemetry import RedisTelemetryMiddleware
from pydantic import SkipValidation

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.contract.errors import Invalid
from rescind.engine import collector
from rescind.runtime import telemetry
from rescind.transport import connection
from rescind.transport import streams as st
from rescind.workers.link import Link, quiet
from rescind.workers.policy import lost_connection
from rescind.workers.roles import Workers, WorkerSettings

log = logging.getLogger("rescind.workers")

ROLES = ("writer", "retraction", "reaper", "gate")  # what a worker process may run


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


async def _survive(what: str, link: Link, fn, *args) -> None:
    """Run one step of a background loop in a thread; a failure is logged and the loop goes on,
    so held writes are never left without a retrier. A lost connection is the Link's to say."""
    try:
        await asyncio.to_thread(fn, *args)
    except Exception as exc:
        if lost_connection(exc):
            link.lost(exc)
        else:
            log.exception("%s failed; trying again on the next round", what)


def _paused(fn, *args):
    """Decoding and planning a batch allocate many small objects: see engine.collector."""
    with collector.paused():
        return fn(*args)


def _text(value: object) -> object:
    return value.decode(errors="replace") if isinstance(value, bytes) else value


def build(settings: WorkerSettings, roles: tuple[str, ...],
          workers: Workers | None = None) -> tuple[RedisBroker, Workers]:
    """A broker with the subscribers of ``roles`` on every partition (groups declared first),
    handing entries to ``workers`` (new ones if None)."""
    if quiet not in log.filters:
        log.addFilter(quiet)  # a lost connection is said once, by the Link
    # On a cluster each stream is read from the master that owns it (FastStream routes by key),
    # found from a node that answers now: the one named by the URL may be the one that died.
    workers = workers or Workers(settings)
    if connection.is_cluster(settings.url):
        url = connection.live_url(workers.conn, settings.url)
        broker = RedisClusterBroker(url, logger=log, middlewares=[RedisTelemetryMiddleware()])
    else:
        broker = RedisBroker(settings.url, logger=log, middlewares=[RedisTelemetryMiddleware()])
    st.ensure_groups(workers.conn, settings.partitions)
    if "gate" in roles:
        with contextlib.suppress(redis.ResponseError):  # BUSYGROUP: declared already
            workers.conn.xgroup_create(layout.GATE, layout.GATE_GROUP, id="$", mkstream=True)
    subscribe(broker, workers, roles, layout.event_streams(settings.partitions))
    return broker, workers


def subscribe(broker: RedisBroker, workers: Workers, roles: tuple[str, ...],
              streams: list[str]) -> None:
    """The subscribers of ``roles``: on each events stream of ``streams``, and on the gate's.
    What the workers run, and what the AsyncAPI document describes (rescind.workers.spec)."""
    if "gate" in roles:
        _gate(broker, workers)
    for name in streams:
        if "writer" in roles:
            _writer(broker, workers, name)
        if "retraction" in roles:
            _retraction(broker, workers, name)
        if "reaper" in roles:
            for group in layout.GROUPS:
                _reaper(broker, workers, name, group)


async def serve(settings: WorkerSettings, roles: tuple[str, ...], stop: asyncio.Event,
                ready: asyncio.Event | None = None) -> None:
    """Run ``roles`` until ``stop`` is set: then stop taking work, finish what is in hand, exit.

    When the server goes away the subscribers are stopped (the Link logs it once) and started
    again, on a new broker, once it answers: with its groups declared again, in case it came
    back without its data. A server that does not answer at the start (`rescind up` restarting
    it as the workers start) is waited for the same way."""
    workers = Workers(settings)
    link = workers.link
    reading: list[RedisBroker | None] = [await _first_broker(settings, roles, workers)]
    telemetry.lag.add(workers.conn, [*layout.event_streams(settings.partitions), layout.GATE])

    closing = asyncio.Event()  # set on the way out, also when ``stop`` never was

    def running() -> bool:
        return not (stop.is_set() or closing.is_set())

    async def retry_held() -> None:
        while running():
            await asyncio.sleep(settings.retry_s)
            if running() and link.up:
                async with workers.lock:
                    await _survive("retrying held writes", link, workers.retry_held)

    async def flush_idle() -> None:
        """A full batch is kept until the next one arrives (see Pipeline; a partial one, which
        drained the stream, is sent at once); when none does soon, it is sent on its own."""
        while running():
            await asyncio.sleep(IDLE_FLUSH_S / 5)
            if running() and link.up and workers.pipeline.kept_for() > IDLE_FLUSH_S:
                async with workers.lock:
                    await _survive("sending a kept batch", link, _paused, workers.pipeline.flush)

    async def watch() -> None:
        """Probe the server; stop reading while it is away, read again once it answers."""
        while running():
            with contextlib.suppress(TimeoutError):  # a pause, cut short on the way out
                await asyncio.wait_for(closing.wait(), link.pause())
            if not running():
                return
            up = await asyncio.to_thread(link.probe, workers.conn)
            if not up and reading[0] is not None:
                stopping, reading[0] = reading[0], None
                await _close(stopping)
            elif up and reading[0] is None:
                fresh = None
                try:
                    fresh, _ = build(settings, roles, workers)  # groups declared again
                    await fresh.start()
                except Exception as exc:  # noqa: BLE001 - gone again: the next probe says so
                    if fresh is not None:
                        await _close(fresh)
                    if not lost_connection(exc):
                        log.exception("reading the streams again failed; trying again")
                    link.lost(exc)
                    continue
                reading[0] = fresh

    # The reaper redoes writes through the same pipeline and holds, so it needs both too.
    background = [asyncio.create_task(retry_held()), asyncio.create_task(flush_idle())] \
        if {"writer", "reaper"} & set(roles) else []
    background.append(asyncio.create_task(watch()))
    if ready is not None:
        ready.set()
    try:
        await stop.wait()
    finally:
        closing.set()
        if reading[0] is not None:  # stops the subscribers; a handler in flight completes first
            await _close(reading[0])
        # Not cancelled: a cancel would free the lock while its thread still flushes or
        # retries, racing the close below. Each ends after the step it is in.
        await asyncio.gather(*background, return_exceptions=True)
        async with workers.lock:
            await asyncio.to_thread(workers.pipeline.close)
        telemetry.lag.remove(workers.conn)
        workers.conn.close()


async def _first_broker(settings: WorkerSettings, roles: tuple[str, ...],
                        workers: Workers) -> RedisBroker | None:
    """A started broker, or None when the server does not answer (the watch starts one later)."""
    broker = None
    try:
        broker, _ = build(settings, roles, workers)
        await broker.start()
        return broker
    # TimeoutError: a subscriber's first fetch failed, and FastStream's pause before the next
    # (5 s) outlasted its wait for the subscriber to start (3 s).
    except (redis.ConnectionError, redis.TimeoutError, TimeoutError) as exc:
        if broker is not None:
            await _close(broker)
        workers.link.lost(exc)
        return None


async def _close(broker: RedisBroker) -> None:
    """Stop ``broker`` and close its client for good. FastStream raises before it closes the
    client when a subscriber fails to stop (the server gone), and a subscriber's read in flight
    outlives ``stop()`` and opens the (cluster) client again: such clients were found open,
    later, by the garbage collector."""
    state = broker.config.broker_config.connection
    client = state.client if state else None  # the object the subscribers read through
    tasks = [t for sub in broker.subscribers for t in getattr(sub, "tasks", ())]
    try:
        await broker.stop()
    except Exception as exc:  # noqa: BLE001 - the server is away; the Link says so once
        log.debug("stopping the broker: %r", exc)
    finally:
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5.0)
        with contextlib.suppress(Exception):
            await broker.config.disconnect()
        if client is not None:
            with contextlib.suppress(Exception):
                await client.aclose()


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
            await asyncio.wait([task, asyncio.create_task(ready.wait())],
                               return_when=asyncio.FIRST_COMPLETED)  # serve may end unstarted
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
            self.stop()
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


# What each subscriber is handed, by role (rescind.contract.events): FastStream describes it in
# the AsyncAPI document from these annotations. SkipValidation: the workers decode each entry
# themselves, so that one that is not an event is dead-lettered with its reason.
Writes = SkipValidation[list[ev.one_of(ev.WRITES)]]
Decision = SkipValidation[ev.one_of(ev.CONTROL)]
Question = SkipValidation[ev.one_of(ev.of_role("gate"))]
Claimed = SkipValidation[ev.one_of(ev.WRITES + ev.CONTROL)]


def _writer(broker: RedisBroker, workers: Workers, name: str) -> None:
    s = workers.settings

    @broker.subscriber(stream=StreamSub(name, group=layout.WRITER_GROUP, consumer=workers.consumer(
        "writer"), batch=True, max_records=s.batch, polling_interval=s.polling_ms),
        ack_policy=AckPolicy.MANUAL, parser=_keep_raw, title="justification-writer",
        description="Justified writes, in batches; one events stream per partition "
                    "(RESCIND_PARTITIONS, by crc32 of the tenant)")
    async def on_writes(placeholders: Writes, msg: RedisStreamMessage) -> None:
        async with workers.lock:
            await asyncio.to_thread(_paused, workers.write_batch, name, _raw_entries(msg))


def _retraction(broker: RedisBroker, workers: Workers, name: str) -> None:
    s = workers.settings

    @broker.subscriber(stream=StreamSub(name, group=layout.RETRACTION_GROUP,
                                        consumer=workers.consumer("retraction"),
                                        polling_interval=s.polling_ms),
                       ack_policy=AckPolicy.MANUAL, title="retraction-worker",
                       description="Security and finance decisions, one at a time")
    async def on_control(body: Decision, msg: RedisStreamMessage) -> None:
        [(entry_id, raw)] = _entries(msg, [body])
        async with workers.lock:
            await asyncio.to_thread(workers.control, name, entry_id, raw)


def _gate(broker: RedisBroker, workers: Workers) -> None:
    @broker.subscriber(stream=StreamSub(layout.GATE, group=layout.GATE_GROUP,
                                        consumer=workers.consumer("gate"), polling_interval=20),
                       ack_policy=AckPolicy.MANUAL, title="payment-gate",
                       description="Asked before an action tool runs; answered on the "
                                   "question's reply_to list")
    async def on_gate(body: Question, msg: RedisStreamMessage) -> None:
        [(entry_id, raw)] = _entries(msg, [body])
        await asyncio.to_thread(workers.gate, entry_id, raw)  # reads only: no lock needed


def _reaper(broker: RedisBroker, workers: Workers, name: str, group: str) -> None:
    s = workers.settings

    @broker.subscriber(stream=StreamSub(name, group=group, consumer=workers.consumer("reaper"),
                                        min_idle_time=s.reaper_idle_ms,
                                        polling_interval=max(s.polling_ms, 200)),
                       ack_policy=AckPolicy.MANUAL, title=f"reaper-{group}",
                       description=f"Entries of group {group} that a dead consumer left "
                                   "pending: redone, or dead-lettered once delivered too often")
    async def on_claimed(body: Claimed, msg: RedisStreamMessage) -> None:
        [(entry_id, raw)] = _entries(msg, [body])
        async with workers.lock:
            await asyncio.to_thread(workers.reap, group, name, entry_id, raw)
