"""`rescind bench ingest`: end-to-end justified writes through the event path, beside raw UNWIND.

Measured in one run: events published by the middleware's publisher (in a process of its own,
as the agents' side is) until the writer has put them all in the graph (writes/s), raw batched
UNWIND writes of the same rows, consumer lag sampled while the load runs, and the latency an
intercepted store operation adds.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from rescind.bench.engine import RAW_UNWIND
from rescind.contract import events as ev
from rescind.contract import layout
from rescind.graph import tenants
from rescind.graph.cypher import query
from rescind.graph.store import TenantGraph, connect
from rescind.middleware.publisher import Publisher
from rescind.transport import connection
from rescind.transport import streams as st
from rescind.workers.app import WorkerSettings, WorkerThread

AT = datetime(2026, 11, 2, tzinfo=UTC)


def _events(tenant: str, n: int) -> list[ev.Event]:
    """Half observations, half beliefs each resting on the observation before it."""
    out: list[ev.Event] = []
    for i in range(n // 2):
        text = f"reading {i}"
        out.append(ev.ObservationRecorded(event_id=f"o{i}", tenant=tenant, at=AT, source="feed",
                                          text=text))
        out.append(ev.MemoryWritten(event_id=f"b{i}", tenant=tenant, at=AT, kind="belief",
                                    text=f"note on {i}", agent="ap",
                                    premises=[ev.memory_id(tenant, "observation", text)]))
    return out


def _agent(url: str, tenant: str, n: int, ready, go) -> None:
    """The agents' side, in a process of its own as in production: publish ``n`` events."""
    events = _events(tenant, n)
    pub = Publisher(url, capacity=n + 1)
    ready.set()
    go.wait()
    for e in events:
        pub.publish(e)
    pub.close(timeout=300)


def end_to_end(url: str, n: int, batch: int) -> dict:
    """Publish in one process, write in another (the workers here); time until all is in the
    graph. The publishing process is started and warmed up before the clock starts."""
    import multiprocessing

    tenant = f"bench-ingest-{int(time.time())}"
    conn = connection.connect(url)
    st.ensure_groups(conn)
    tenants.create(connect(url), tenant, by="bench")  # the writer applies its events only then
    stream = layout.tenant_stream(tenant)
    lags: list[int] = []
    ctx = multiprocessing.get_context("spawn")  # no fork of a process running threads
    ready, go = ctx.Event(), ctx.Event()
    agent = ctx.Process(target=_agent, args=(url, tenant, n, ready, go), daemon=True)
    agent.start()
    if not ready.wait(120):
        raise RuntimeError("the publishing process did not start")
    with WorkerThread(WorkerSettings(url=url, worker_id="bench", batch=batch), ("writer",)):
        graph = TenantGraph(connect(url), tenant)
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                g = {x["name"]: x for x in conn.xinfo_groups(stream)}.get(layout.WRITER_GROUP.encode())
                if g:
                    lags.append((g.get("lag") or 0) + g["pending"])
                time.sleep(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        start = time.perf_counter()
        go.set()
        sampler.start()
        while True:
            if graph.exists() and graph.memory_total() >= n:
                break
            time.sleep(0.02)
        elapsed = time.perf_counter() - start
        done.set()
        agent.join(60)
        tenants.drop(graph.server, tenant)
    return {"events": n, "seconds": round(elapsed, 2), "writes_per_s": round(n / elapsed),
            "lag_median": statistics.median(lags) if lags else 0,
            "lag_max": max(lags) if lags else 0,
            "publisher": "a separate process (the agents' side), started before the clock"}


def raw(url: str, n: int, batch: int) -> dict:
    conn = connect(url)
    graph = TenantGraph(conn, f"bench-raw-{int(time.time())}")
    graph.ensure_schema()
    rows = [{"id": f"j{i}", "mem": f"m{i}", "kind": "belief", "text": f"note on {i}", "at": i,
             "premises": [f"m{i - 1}"] if i % 2 else []} for i in range(n)]
    start = time.perf_counter()
    for i in range(0, n, batch):
        query(conn, graph.key, RAW_UNWIND, {"rows": rows[i:i + batch]})
    elapsed = time.perf_counter() - start
    graph.delete()
    return {"rows": n, "seconds": round(elapsed, 2), "writes_per_s": round(n / elapsed)}


def store_latency(url: str, ops: int = 5_000, delivered: int = 50, size: int = 2_000) -> dict:
    """Median and p99 of get/put on the recording store, minus the bare store's, in µs: inside
    one run that was handed ``delivered`` items, each put a value of about ``size`` bytes that
    quotes some of them (so attribution has work to do)."""
    from langgraph.store.memory import InMemoryStore

    from rescind.middleware.config import InterceptConfig
    from rescind.middleware.recorder import Recorder
    from rescind.middleware.store import RecordingStore

    bare = InMemoryStore()
    recorder = Recorder(InterceptConfig(tenant="bench-store", url=url))
    wrapped = RecordingStore(InMemoryStore(), recorder)
    token = recorder.contexts.begin("bench-run")
    items = [{"text": f"Vendor {i} bank account: GB{i:02d} BUKB 2020 {1000 + i} 5555 55; "
                      f"invoice INV-{2000 + i} for {1000 + 37 * i:,}.00 USD, due 2026-12-{i % 28 + 1:02d}"}
             for i in range(delivered)]
    for i, value in enumerate(items):
        recorder.contexts.deliver("bench-run", f"bel-item{i}", value)
    ctx = recorder.contexts.get("bench-run")
    ctx.justifications({}, "")  # their facts, computed once per run by its first write
    handed = (dict(ctx.facts), dict(ctx.turn_of))  # each operation starts from these
    prose = ("The supplier confirmed the delivery schedule and asked that remittance advice "
             "go to the accounts team, with the purchase order quoted on every invoice. ")
    filler = prose * (size // len(prose) + 1)

    def value(i: int) -> dict:
        quoted = items[i % delivered]["text"]
        return {"text": f"Note {i}: {quoted}. {filler}"[:size]}

    def timings(store) -> list[float]:
        out = []
        for i in range(ops):
            v = value(i)
            ctx.facts, ctx.turn_of, ctx.unread = dict(handed[0]), dict(handed[1]), {}
            t = time.perf_counter()
            store.put(("notes",), f"k{i % 100}", v)
            store.get(("notes",), f"k{i % 100}")
            out.append((time.perf_counter() - t) / 2)
        return sorted(out)

    a, b = timings(bare), timings(wrapped)
    matching = []  # attribution alone: which delivered items a written value rests on
    for i in range(ops):
        v = value(i)
        t = time.perf_counter()
        ctx.justifications(v, "itself")
        matching.append(time.perf_counter() - t)
    matching.sort()
    recorder.contexts.end("bench-run", token)
    recorder.close()
    q = lambda xs, p: xs[min(len(xs) - 1, int(p * len(xs)))]  # noqa: E731
    return {"ops": ops, "delivered_items": delivered, "value_bytes": size,
            "bare_median_us": round(q(a, 0.5) * 1e6, 1),
            "wrapped_median_us": round(q(b, 0.5) * 1e6, 1),
            "added_median_us": round((q(b, 0.5) - q(a, 0.5)) * 1e6, 1),
            "added_p99_us": round((q(b, 0.99) - q(a, 0.99)) * 1e6, 1),
            "attribution_median_us": round(q(matching, 0.5) * 1e6, 1),
            "attribution_p99_us": round(q(matching, 0.99) * 1e6, 1)}


def run(url: str, n: int, batch: int, out: Path, command: str, repeats: int = 3) -> dict:
    """End-to-end and raw runs alternate ``repeats`` times; the figures are their medians."""
    e2e_runs, raw_runs = [], []
    for _ in range(repeats):
        e2e_runs.append(end_to_end(url, n, batch))
        raw_runs.append(raw(url, n, batch))
    e2e = dict(sorted(e2e_runs, key=lambda r: r["writes_per_s"])[len(e2e_runs) // 2])
    rawr = dict(sorted(raw_runs, key=lambda r: r["writes_per_s"])[len(raw_runs) // 2])
    e2e["runs_writes_per_s"] = [r["writes_per_s"] for r in e2e_runs]
    rawr["runs_writes_per_s"] = [r["writes_per_s"] for r in raw_runs]
    result = {"command": command, "repeats": repeats, "end_to_end": e2e, "raw_unwind": rawr,
              "store_operation": store_latency(url)}
    result["ratio_end_to_end_to_raw"] = round(e2e["writes_per_s"] / rawr["writes_per_s"], 2)
    # Each end-to-end run over the raw run beside it: the machine's drift cancels out.
    result["ratio_paired_median"] = round(statistics.median(
        a["writes_per_s"] / b["writes_per_s"] for a, b in zip(e2e_runs, raw_runs, strict=True)), 2)
    out.mkdir(parents=True, exist_ok=True)
    (out / "ingest.json").write_text(json.dumps(result, indent=2) + "\n")
    s = result["store_operation"]
    md = [
        "# Ingest benchmark\n", f"Command: `{command}`\n",
        "| figure | value |", "|---|---:|",
        f"| end-to-end justified writes/s (publish -> graph), {n:,} events, median of "
        f"{repeats} | {e2e['writes_per_s']:,} (runs: {e2e['runs_writes_per_s']}) |",
        f"| raw batched UNWIND writes/s, same rows, alternating with the above, median | "
        f"{rawr['writes_per_s']:,} (runs: {rawr['runs_writes_per_s']}) |",
        f"| ratio end-to-end / raw (of the medians; median of the paired runs) | "
        f"{result['ratio_end_to_end_to_raw']}; {result['ratio_paired_median']} |",
        f"| consumer lag under load (entries), median / max | {e2e['lag_median']} / "
        f"{e2e['lag_max']} |",
        f"| added latency of an intercepted store operation (half a put and a get; "
        f"{s['delivered_items']} items delivered in the run, values of {s['value_bytes']:,} "
        f"bytes), median / p99 (µs) | {s['added_median_us']} / {s['added_p99_us']} |",
        f"| of which attribution, per write (which delivered items the value rests on), "
        f"median / p99 (µs) | {s['attribution_median_us']} / {s['attribution_p99_us']} |",
    ]
    (out / "ingest.md").write_text("\n".join(md) + "\n")
    return result
