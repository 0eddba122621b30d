"""`rescind bench restart`: how long the embedded FalkorDB takes to come back on a data directory
holding N memories and a day of events.

For each size, on a fresh data directory with the AOF settings `rescind up` uses
(``rescind.runtime.server.AOF``): the memories are loaded with the engine's batched writes (the
generator of `rescind bench engine`), then a day of justified writes goes through the event path
(publisher, stream, writer worker) while the AOF rewrites itself as configured. The server is
stopped, then started again ``repeats`` times on the directory, each start timed from spawn
until it answers graph commands. The server's log splits a start into the RDB base and the
replayed commands; with the replay rate it gives the worst case as well: a restart just before
the next rewrite replays commands up to the rewrite threshold.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import redis
from rich.progress import Progress

from rescind.bench.engine import load
from rescind.bench.generator import plain_clusters
from rescind.contract import events as ev
from rescind.contract import layout
from rescind.graph import queries as q
from rescind.graph.store import TenantGraph, connect
from rescind.middleware.publisher import Publisher
from rescind.runtime.server import AOF, EmbeddedFalkorDB
from rescind.scenario.via_streams import wait_idle
from rescind.workers.app import WorkerSettings, WorkerThread

TARGET_S = 15.0  # issue 15: 1M memories and a day of events back in at most 15 s
MB = 1024 * 1024
DAY_STARTS = datetime(2026, 11, 16, tzinfo=UTC)


def day_of_events(tenant: str, sources: list[str], n: int) -> Iterator[ev.Event]:
    """``n`` justified writes over a day: half observations of the graph's sources, half notes
    resting on such an observation and on one the graph already held of the same source."""
    step = timedelta(days=1) / max(n, 1)
    for i in range(n // 2):
        source = sources[i % len(sources)]
        at = DAY_STARTS + 2 * i * step
        text = f"{source} says reading {i}"
        yield ev.ObservationRecorded(event_id=f"day-o{i}", tenant=tenant, at=at, source=source,
                                     source_kind="portal", text=text)
        yield ev.MemoryWritten(event_id=f"day-b{i}", tenant=tenant, at=at + step, kind="belief",
                               text=f"note on reading {i} of {source}", agent="ap",
                               premises=[ev.memory_id(tenant, "observation", text),
                                         f"{source}/o0"])


def _through_the_event_path(url: str, tenant: str, sources: list[str], n: int,
                            spool: Path) -> float:
    """Publish the day's events and wait until the writer has acknowledged every one."""
    started = time.perf_counter()
    with WorkerThread(WorkerSettings(url=url, worker_id="bench-restart"), ("writer",)):
        pub = Publisher(url, capacity=n + 1, spool_dir=spool)
        for event in day_of_events(tenant, sources, n):
            pub.publish(event)
        pub.close(timeout=3600)
        wait_idle(redis.Redis.from_url(url), layout.tenant_stream(tenant), timeout=3600,
                  only=(layout.WRITER_GROUP,))
    return time.perf_counter() - started


def _settle(conn: redis.Redis) -> dict:
    """Wait for a rewrite under way to finish, so that every restart finds the same files."""
    time.sleep(0.5)  # the server checks the rewrite thresholds ten times a second
    while True:
        info = conn.info("persistence")
        if not (info["aof_rewrite_in_progress"] or info["aof_rewrite_scheduled"]):
            return info
        time.sleep(0.2)


_LOADED = re.compile(r"DB loaded from (base|incr) file \S+: ([0-9.]+) seconds")


def _phases(log_file: Path) -> dict[str, float]:
    """Seconds the last start spent on the AOF's base and on its commands (the server's log)."""
    lines = log_file.read_text(errors="replace").splitlines()
    last = max((i for i, line in enumerate(lines) if "Redis is starting" in line), default=0)
    spent = {"base": 0.0, "incr": 0.0}
    for line in lines[last:]:
        if m := _LOADED.search(line):
            spent[m.group(1)] += float(m.group(2))
    return spent


def measure(size: int, events: int, repeats: int, batch: int, work: Path, progress) -> dict:
    """Load, append a day of events, restart ``repeats`` times; the figures of one size."""
    data = work / f"data-{size}"
    shutil.rmtree(data, ignore_errors=True)
    tenant = f"bench-restart-{size}"
    clusters = plain_clusters(size)
    with EmbeddedFalkorDB(data_dir=data) as server:
        graph = TenantGraph(connect(server.url), tenant)
        task = progress.add_task(f"load {size:,} memories", total=int(size * 1.04))
        writes, load_s = load(graph, clusters, batch, progress, task)
        progress.console.print(f"{size:,}: {writes:,} writes loaded in {load_s:.0f} s; "
                               f"{events:,} events through the event path…")
        events_s = _through_the_event_path(server.url, tenant, [c.source for c in clusters],
                                           events, work / "spool")
        memories = graph.rows(q.MEMORY_TOTAL)[0][0]
        if memories < size + events:  # dead-lettered or still held: the figures would lie
            raise RuntimeError(f"{size + events:,} memories expected, {memories:,} in the graph")
        info = _settle(graph.conn)
        used = graph.conn.info("memory")["used_memory"]
    base, current = info["aof_base_size"], info["aof_current_size"]
    restarts, phases = [], []
    for _ in range(repeats):
        server = EmbeddedFalkorDB(data_dir=data)
        started = time.perf_counter()
        server.start(on_progress=lambda status: None)  # timed here, told below
        restarts.append(time.perf_counter() - started)
        phases.append(_phases(server.log_file))
        found = TenantGraph(connect(server.url), tenant).rows(q.MEMORY_TOTAL)[0][0]
        server.stop()
        if found != memories:
            raise RuntimeError(f"{memories:,} memories before the restart, {found:,} after")
        progress.console.print(f"{size:,}: restarted in {restarts[-1]:.1f} s")
    median = statistics.median(restarts)
    base_s = statistics.median(p["base"] for p in phases)
    incr_s = statistics.median(p["incr"] for p in phases)
    threshold = max(_bytes(_aof_setting("auto-aof-rewrite-min-size")) - base,
                    base * int(_aof_setting("auto-aof-rewrite-percentage")) // 100)
    # Replaying commands costs about the same per byte whatever their number: a restart just
    # before the next rewrite replays ``threshold`` bytes of them.
    rate = (current - base) / incr_s if incr_s > 0.05 else None
    worst = median - incr_s + threshold / rate if rate else None
    shutil.rmtree(data, ignore_errors=True)
    return {"memories": memories, "writes_loaded": writes, "load_s": round(load_s, 1),
            "events": events, "events_s": round(events_s, 1),
            "used_memory_mb": round(used / MB), "aof_base_mb": round(base / MB, 1),
            "aof_commands_mb": round((current - base) / MB, 1),
            "aof_rewrites": info["aof_rewrites"], "rewrite_threshold_mb": round(threshold / MB, 1),
            "restart_s": [round(t, 2) for t in restarts], "median_s": round(median, 2),
            "base_s": round(base_s, 2), "commands_s": round(incr_s, 2),
            "worst_case_s": round(worst, 1) if worst is not None else None,
            "target_s": TARGET_S}


def _aof_setting(name: str) -> str:
    return AOF[AOF.index(f"--{name}") + 1]


def _bytes(text: str) -> int:
    """A size as redis.conf writes it; AOF uses plain bytes or mb."""
    return int(text[:-2]) * MB if text.lower().endswith("mb") else int(text)


def run(sizes: list[int], events: int, repeats: int, batch: int, out: Path, command: str,
        console, work_dir: Path | None = None) -> dict:
    results = {"command": command,
               "machine": {"python": sys.version.split()[0], "platform": platform.platform(),
                           "cpus": len(os.sched_getaffinity(0)), "load_at_start": _load()},
               "aof_settings": " ".join(AOF),
               "a_day": f"{events:,} justified writes through the event path (half "
                        "observations, half notes resting on two observations)",
               "sizes": {}}
    with tempfile.TemporaryDirectory(prefix="rescind-bench-restart-", dir=work_dir) as tmp, \
            Progress(console=console, transient=True, auto_refresh=False) as progress:
        for size in sizes:
            results["sizes"][str(size)] = measure(size, events, repeats, batch, Path(tmp),
                                                  progress)
    results["machine"]["load_at_end"] = _load()  # the machine is shared: what ran meanwhile
    write(results, out)
    return results


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def write(results: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "restart.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = ["# Restart benchmark\n", f"Command: `{results['command']}`  ",
             f"Machine: {results['machine']}  ", f"AOF: `{results['aof_settings']}`  ",
             f"A day of events: {results['a_day']}\n",
             "Each restart is timed from spawning the server until it answers graph commands; "
             "the base and commands columns are the server's own log of that start. The worst "
             "case is estimated, not measured: a restart just before the next rewrite replays "
             "commands up to the rewrite threshold, at the replay rate measured here.\n",
             "| memories | writes loaded | events | AOF base MB | AOF commands MB | rewrite at "
             "MB | restarts s | median s | base s | commands s | worst case s (est.) | "
             "target s |",
             "|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|"]
    for r in results["sizes"].values():
        worst = "–" if r["worst_case_s"] is None else r["worst_case_s"]
        lines.append(f"| {r['memories']:,} | {r['writes_loaded']:,} | {r['events']:,} | "
                     f"{r['aof_base_mb']} | {r['aof_commands_mb']} | "
                     f"{r['rewrite_threshold_mb']} | "
                     f"{', '.join(str(t) for t in r['restart_s'])} | **{r['median_s']}** | "
                     f"{r['base_s']} | {r['commands_s']} | {worst} | {r['target_s']:g} |")
    lines += ["", "Loading the data and the day of events (not part of the restart):", "",
              "| memories | load s | events s | server memory MB | AOF rewrites |",
              "|---:|---:|---:|---:|---:|"]
    for r in results["sizes"].values():
        lines.append(f"| {r['memories']:,} | {r['load_s']} | {r['events_s']} | "
                     f"{r['used_memory_mb']} | {r['aof_rewrites']} |")
    (out / "restart.md").write_text("\n".join(lines) + "\n")
