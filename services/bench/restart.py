"""`rescind bench restart`: how long the embedded FalkorDB takes to come back on a data directory
holding N memories and a day of events.

For each size, on a fresh data directory with the AOF settings `rescind up` uses
(``rescind.runtime.server.AOF``): the memories are loaded with the engine's batched writes (the
generator of `rescind bench engine`), then a day of justified writes goes through the event path
(publisher, stream, writer worker) while the AOF rewrites itself as configured. The server is
stopped, then started again ``repeats`` times on the directory, each start timed from spawn
until it answers graph commands; the server's log splits each start into the RDB base and the
replayed commands. Then the worst case: with rewrites off, more events of the same kind are
sent until the AOF's commands reach the size at which a rewrite would have started (the most a
restart can find), and the restarts are timed again.
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
from rescind.graph import tenants
from rescind.graph.store import TenantGraph, connect
from rescind.middleware.publisher import Publisher
from rescind.runtime.server import AOF, EmbeddedFalkorDB
from rescind.scenario.via_streams import wait_idle
from rescind.workers.app import WorkerSettings, WorkerThread

TARGET_S = 15.0  # issue 15: 1M memories and a day of events back in at most 15 s
MB = 1024 * 1024
DAY_STARTS = datetime(2026, 11, 16, tzinfo=UTC)


def day_of_events(tenant: str, sources: list[str], n: int, first: int = 0) -> Iterator[ev.Event]:
    """``n`` justified writes over a day (from the ``first``): half observations of the graph's
    sources, half notes resting on such an observation and on one the graph already held of the
    same source."""
    step = timedelta(days=1) / max(n, 1)
    for i in range(first // 2, (first + n) // 2):
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
                            spool: Path, first: int = 0) -> float:
    """Publish the events and wait until the writer has acknowledged every one."""
    started = time.perf_counter()
    with WorkerThread(WorkerSettings(url=url, worker_id="bench-restart"), ("writer",)):
        pub = Publisher(url, capacity=n + 1, spool_dir=spool)
        for event in day_of_events(tenant, sources, n, first):
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


def _fill_to_threshold(url: str, tenant: str, sources: list[str], first: int,
                       spool: Path) -> int:
    """With rewrites off, send more events until the AOF's commands reach the size at which a
    rewrite would have started; how many were sent."""
    conn = redis.Redis.from_url(url)
    conn.config_set("auto-aof-rewrite-percentage", 0)
    info = conn.info("persistence")
    goal = _threshold(info["aof_base_size"])
    sent, chunk = 0, 2_000
    while (grown := info["aof_current_size"] - info["aof_base_size"]) < goal:
        _through_the_event_path(url, tenant, sources, chunk, spool, first + sent)
        sent += chunk
        info = conn.info("persistence")
        per_event = max((info["aof_current_size"] - info["aof_base_size"] - grown) / chunk, 1)
        chunk = max(2, 2 * round((goal - info["aof_current_size"] + info["aof_base_size"])
                                 / per_event / 2 + 1))
    conn.close()
    return sent


class _Kept(EmbeddedFalkorDB):
    """The embedded server with automatic rewrites off, so that each timed start finds the same
    files (loading does not depend on that setting; what follows it would)."""

    def command(self) -> list[str]:
        return [*super().command(), "--auto-aof-rewrite-percentage", "0"]


def _restarts(data: Path, tenant: str, memories: int, repeats: int, label: str,
              progress) -> dict:
    """Start the server on ``data`` ``repeats`` times: the AOF it found, each start's seconds,
    their median, and the server's own split between the base and the replayed commands."""
    restarts, phases = [], []
    for _ in range(repeats):
        server = _Kept(data_dir=data)
        started = time.perf_counter()
        server.start(on_progress=lambda status: None)  # timed here, told below
        restarts.append(time.perf_counter() - started)
        phases.append(_phases(server.log_file))
        conn = connect(server.url)
        info = conn.info("persistence")
        found = TenantGraph(conn, tenant).memory_total()
        server.stop()
        if found != memories:
            raise RuntimeError(f"{memories:,} memories before the restart, {found:,} after")
        progress.console.print(f"{label}: restarted in {restarts[-1]:.1f} s")
    base = info["aof_base_size"]
    return {"aof_base_mb": round(base / MB, 1),
            "aof_commands_mb": round((info["aof_current_size"] - base) / MB, 1),
            "rewrite_at_mb": round(_threshold(base) / MB, 1),
            "restart_s": [round(t, 2) for t in restarts],
            "median_s": round(statistics.median(restarts), 2),
            "base_s": round(statistics.median(p["base"] for p in phases), 2),
            "commands_s": round(statistics.median(p["incr"] for p in phases), 2)}


def measure(size: int, events: int, repeats: int, batch: int, work: Path, progress,
            threshold: bool = True) -> dict:
    """Load, append a day of events, restart; fill the commands to the threshold, restart."""
    data = work / f"data-{size}"
    shutil.rmtree(data, ignore_errors=True)
    tenant = f"bench-restart-{size}"
    clusters = plain_clusters(size)
    sources = [c.source for c in clusters]
    with EmbeddedFalkorDB(data_dir=data) as server:
        tenants.create(connect(server.url), tenant, by="bench")  # the writer applies its events only then
        graph = TenantGraph(connect(server.url), tenant)
        task = progress.add_task(f"load {size:,} memories", total=int(size * 1.04))
        writes, load_s = load(graph, clusters, batch, progress, task)
        progress.console.print(f"{size:,}: {writes:,} writes loaded in {load_s:.0f} s; "
                               f"{events:,} events through the event path…")
        events_s = _through_the_event_path(server.url, tenant, sources, events, work / "spool")
        memories = graph.memory_total()
        if memories < size + events:  # dead-lettered or still held: the figures would lie
            raise RuntimeError(f"{size + events:,} memories expected, {memories:,} in the graph")
        info = _settle(graph.conn)
        used = graph.conn.info("memory")["used_memory"]
    after_day = _restarts(data, tenant, memories, repeats, f"{size:,} after a day", progress)
    more, worst = 0, None
    if threshold:
        with _Kept(data_dir=data) as server:
            more = _fill_to_threshold(server.url, tenant, sources, events, work / "spool")
        worst = _restarts(data, tenant, memories + more, repeats, f"{size:,} at the threshold",
                          progress)
    shutil.rmtree(data, ignore_errors=True)
    return {"memories": memories, "writes_loaded": writes, "load_s": round(load_s, 1),
            "events": events, "events_s": round(events_s, 1), "used_memory_mb": round(used / MB),
            "aof_rewrites": info["aof_rewrites"], "after_a_day": after_day,
            "events_to_threshold": more, "at_the_rewrite_threshold": worst, "target_s": TARGET_S}


def _threshold(base: int) -> int:
    """How large the AOF's commands grow before the server rewrites them into a new base."""
    return max(_bytes(_aof_setting("auto-aof-rewrite-min-size")) - base,
               base * int(_aof_setting("auto-aof-rewrite-percentage")) // 100)


def _aof_setting(name: str) -> str:
    return AOF[AOF.index(f"--{name}") + 1]


def _bytes(text: str) -> int:
    """A size as redis.conf writes it; AOF uses plain bytes or mb."""
    return int(text[:-2]) * MB if text.lower().endswith("mb") else int(text)


def run(sizes: list[int], events: int, repeats: int, batch: int, out: Path, command: str,
        console, work_dir: Path | None = None, threshold: bool = True) -> dict:
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
                                                  progress, threshold)
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
             "the base and commands columns are the server's own log of that start. *After a "
             "day*: the files as the day left them. *At the rewrite threshold*: more events of "
             "the same kind, with rewrites off, until the commands reach (or just pass, by part "
             "of a chunk of events) the size at which a rewrite would start: the most a restart "
             "can find.\n",
             "| memories | AOF | base MB | commands MB | rewrite at MB | restarts s | "
             "median s | base s | commands s | target s |",
             "|---:|---|---:|---:|---:|---|---:|---:|---:|---:|"]
    for r in results["sizes"].values():
        for label, key, extra in (("after a day", "after_a_day", 0),
                                  ("at the rewrite threshold", "at_the_rewrite_threshold",
                                   r["events_to_threshold"])):
            t = r[key]
            if t is None:
                continue
            lines.append(f"| {r['memories'] + extra:,} | {label} | {t['aof_base_mb']} | "
                         f"{t['aof_commands_mb']} | {t['rewrite_at_mb']} | "
                         f"{', '.join(str(x) for x in t['restart_s'])} | **{t['median_s']}** | "
                         f"{t['base_s']} | {t['commands_s']} | {r['target_s']:g} |")
    lines += ["", "Building each data directory (not part of the restart): the memories loaded "
              "with the engine's batched writes, then the day of events through the event path, "
              "then the events that took the commands to the threshold.", "",
              "| memories | writes loaded | load s | events | events s | events to the "
              "threshold | server memory MB | AOF rewrites |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results["sizes"].values():
        lines.append(f"| {r['memories']:,} | {r['writes_loaded']:,} | {r['load_s']} | "
                     f"{r['events']:,} | {r['events_s']} | {r['events_to_threshold']:,} | "
                     f"{r['used_memory_mb']} | {r['aof_rewrites']} |")
    (out / "restart.md").write_text("\n".join(lines) + "\n")
