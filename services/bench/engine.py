"""`rescind bench engine`: retraction latency against graph size, region size, and bulk load.

Each figure is a median over repeated runs in one process, measured side by side, because
these machines are shared and noisy. Results go to a JSON file and a markdown table together
with the command that produced them.
"""

from __future__ import annotations

import json
import os
import platform
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.progress import Progress

from rescind.bench import gate as gate_bench
from rescind.bench import live as live_bench
from rescind.bench import steps
from rescind.bench.generator import Cluster, agent_like, plain_clusters
from rescind.core.shapes import Mutation
from rescind.engine import retraction as ret
from rescind.engine.writes import Write, record, record_stream
from rescind.graph.cypher import query
from rescind.graph.queries import MEMORY_TOTAL
from rescind.graph.store import TenantGraph, connect
from rescind.runtime.server import EmbeddedFalkorDB
from rescind.runtime.settings import Settings

RAW_UNWIND = """
UNWIND $rows AS r
MERGE (m:Mem {id: r.mem}) ON CREATE SET m.kind = r.kind, m.text = r.text, m.at = r.at
CREATE (j:Justification {id: r.id, at: r.at})-[:JUSTIFIES]->(m)
WITH j, r
UNWIND r.premises AS pid
MATCH (p:Mem {id: pid})
CREATE (p)-[:PREMISE_OF]->(j)
"""  # the baseline: the same shape written with no status, history or idempotency


@dataclass
class Results:
    command: str
    machine: dict
    load: dict = field(default_factory=dict)
    retraction: dict = field(default_factory=dict)
    after_write: dict = field(default_factory=dict)
    regions: dict = field(default_factory=dict)
    gate: dict = field(default_factory=dict)  # the gate's state on a server of its own
    gate_beside: dict = field(default_factory=dict)  # the same, its state beside the graph
    gate_at_0: dict = field(default_factory=dict)  # on its own server, no process lowered
    live: dict = field(default_factory=dict)


def load(graph: TenantGraph, clusters: list[Cluster], batch: int, progress, task) -> tuple[int, float]:
    """Load clusters through the engine's batched writes; returns (writes, seconds)."""
    sources = sorted({c.source for c in clusters})
    for i in range(0, len(sources), 5000):
        graph.apply(Mutation(op="source", sources=[
            {"id": s, "kind": "portal", "name": s, "domain": s} for s in sources[i:i + 5000]]),
            graph.revision())

    def batches():
        pending: list[Write] = []
        for writes in agent_like(graph.tenant, clusters):
            pending.extend(writes)
            if len(pending) >= batch:
                yield pending
                pending = []
        if pending:
            yield pending

    # Generating the writes is the benchmark's own work, not the engine's: made before the clock.
    ready = list(batches())

    def fed():
        for i, writes in enumerate(ready):
            yield writes
            progress.advance(task, len(writes))
            if i % 20 == 0:
                progress.refresh()

    t = time.perf_counter()
    n = record_stream(graph, fed())
    return n, time.perf_counter() - t


def raw_load(graph: TenantGraph, clusters: list[Cluster], batch: int) -> tuple[int, float]:
    graph.ensure_schema()
    n, spent, rows = 0, 0.0, []
    for writes in agent_like(graph.tenant, clusters):
        for w in writes:
            rows.append({"id": w.event_id, "mem": w.mem_id, "kind": w.kind, "text": w.text,
                         "at": w.at, "premises": list(w.premises)})
        if len(rows) >= batch:
            t = time.perf_counter()
            query(graph.conn, graph.key, RAW_UNWIND, {"rows": rows})
            spent += time.perf_counter() - t
            n, rows = n + len(rows), []
    if rows:
        t = time.perf_counter()
        query(graph.conn, graph.key, RAW_UNWIND, {"rows": rows})
        spent += time.perf_counter() - t
        n += len(rows)
    return n, spent


def time_retractions(graph: TenantGraph, sources: list[str], tag: str,
                     after_write: bool = False) -> dict:
    """Preview + commit of a whole-source retraction for each source; median and region sizes.

    With ``after_write`` each retraction follows one justified write, as in a live system: the
    first node update after new nodes exist pays FalkorDB's graph-wide sync.
    """
    times, regions = [], []
    for i, s in enumerate(sources):
        if after_write:
            record(graph, [Write(f"{tag}-w{i}", f"{tag}-m{i}", "belief", f"late note {i}", i,
                                 premises=(f"{s}/o0",), agent="ap")])
        t = time.perf_counter()
        result = ret.run(graph, ret.Retract(f"{tag}-{i}", s, reason="bench"))
        times.append(time.perf_counter() - t)
        regions.append(sum(result.blast_radius.counts.values()))
    return {"median_ms": round(statistics.median(times) * 1000, 2),
            "p90_ms": round(sorted(times)[int(0.9 * (len(times) - 1))] * 1000, 2),
            "runs": len(times), "median_region": statistics.median(regions)}


def run(url: str, sizes: list[int], samples: int, batch: int, out: Path, command: str,
        console, gate_samples: int = 400, write_rate: float = 1000.0,
        live_samples: int = 30) -> Results:
    db = connect(url)
    res = Results(command=command, machine={"python": sys.version.split()[0],
                                            "platform": platform.platform(),
                                            "cpus": _cpus(), "load_at_start": _load()})
    rng = random.Random(11)
    nice = Settings().worker_nice.get("writer", 0)  # as `rescind worker writer` runs
    # No refresh thread: redrawing ten times a second took a core from the server and slowed
    # a 10k-memory retraction from about 290 to 400 ms. The bar is redrawn between steps.
    with Progress(console=console, transient=False, auto_refresh=False) as progress, \
            EmbeddedFalkorDB() as gate_server:  # the gate's state, on a server of its own
        for size in sizes:
            clusters = plain_clusters(size)
            extra = [Cluster(f"big1k-{i}", 1_000) for i in range(5)] + \
                    [Cluster(f"big10k-{i}", 10_000) for i in range(5)] if size == 100_000 else []
            graph = TenantGraph(db, f"bench-engine-{size}")
            graph.delete()
            total = size + sum(c.size for c in extra)
            task = progress.add_task(f"load {total:,} memories", total=int(total * 1.04))
            before = _settled_memory(graph.conn)  # on a cluster: the graph's master
            n, spent = load(graph, clusters + extra, batch, progress, task)
            memories = graph.rows(MEMORY_TOTAL)[0][0]
            res.load[str(size)] = {"writes": n, "seconds": round(spent, 2),
                                   "writes_per_s": round(n / spent), "memories": memories,
                                   "bytes_per_memory": round((_used_memory(graph.conn) - before)
                                                             / memories),
                                   "graph_memory_mb": _graph_memory(graph.conn, graph.key)}
            targets = rng.sample([c.source for c in clusters], 2 * samples + live_samples)
            res.retraction[str(size)] = time_retractions(graph, targets[:samples], "r")
            res.after_write[str(size)] = time_retractions(graph, targets[samples:2 * samples],
                                                          "rw", after_write=True)
            progress.console.print(f"{size:,}: {res.retraction[str(size)]}; after a write: "
                                   f"{res.after_write[str(size)]}")
            if extra:
                for label in ("big1k", "big10k"):
                    with steps.recording() as took:  # where the time goes, from the spans
                        res.regions[label] = time_retractions(
                            graph, [c.source for c in extra if c.source.startswith(label)],
                            label)
                    res.regions[label]["steps_ms"] = took
                    progress.console.print(f"{label}: {res.regions[label]}")
            if live_samples:
                res.live[str(size)] = live_bench.measure(url, graph, len(clusters),
                                                         targets[2 * samples:], write_rate)
                progress.console.print(f"retraction under live writes at {size:,}: "
                                       f"{res.live[str(size)]}")
            if gate_samples:
                # The gate's state on a server of its own (RESCIND_GATE_STATE_URL), then
                # beside the graph, on the graph's server. The writer process at the writer
                # worker's CPU priority (RESCIND_WORKER_NICE); with the gate's state on its
                # own server, the graph's server too (the gate asks nothing of it).
                res.gate[str(size)] = gate_bench.measure(url, graph, len(clusters), gate_samples,
                                                         write_rate, state_url=gate_server.url,
                                                         writer_nice=nice, server_nice=nice)
                progress.console.print(f"gate at {size:,}: {res.gate[str(size)]}")
                res.gate_beside[str(size)] = gate_bench.measure(
                    url, graph, len(clusters), gate_samples, write_rate, writer_nice=nice)
                progress.console.print(f"gate, its state beside the graph, at {size:,}: "
                                       f"{res.gate_beside[str(size)]}")
                if nice:  # the twin: its state on its own server, every process at 0
                    res.gate_at_0[str(size)] = gate_bench.measure(
                        url, graph, len(clusters), gate_samples, write_rate,
                        state_url=gate_server.url)
                    progress.console.print(f"gate, every process at niceness 0, at {size:,}: "
                                           f"{res.gate_at_0[str(size)]}")
            graph.delete()
            # The baseline, same size and same writes, loaded right after: raw UNWIND writes
            # slow down as the graph grows too, so each size is compared with its own.
            raw = TenantGraph(db, f"bench-raw-{size}")
            raw.delete()
            before = _settled_memory(raw.conn)  # the deleted graph is freed in the background
            rn, rspent = raw_load(raw, clusters + extra, batch)
            raw_bytes = (_used_memory(raw.conn) - before) / raw.rows(MEMORY_TOTAL)[0][0]
            raw.delete()
            res.load[str(size)].update(raw_writes=rn, raw_seconds=round(rspent, 2),
                                       raw_bytes_per_memory=round(raw_bytes),
                                       raw_writes_per_s=round(rn / rspent),
                                       ratio_to_raw=round((n / spent) / (rn / rspent), 2))
            progress.console.print(f"load {size:,}: {res.load[str(size)]}")
    res.machine["load_at_end"] = _load()  # the machine is shared: what else ran meanwhile
    small, large = str(min(sizes)), str(max(sizes))
    if small != large:
        for table in (res.retraction, res.after_write):
            table["ratio_largest_to_smallest"] = round(
                table[large]["median_ms"] / table[small]["median_ms"], 2)
        if res.live:
            res.live["ratio_largest_to_smallest"] = round(
                res.live[large]["retraction_live"]["median_ms"]
                / res.live[small]["retraction_live"]["median_ms"], 2)
    write(res, out)
    return res


def _used_memory(db) -> int:
    """The server's memory in bytes (the bench's own server: nothing else is in it)."""
    return db.info("memory")["used_memory"]


def _settled_memory(db, timeout_s: float = 60.0) -> int:
    """``used_memory`` once it stops falling (FalkorDB frees a deleted graph in a thread)."""
    last, deadline = _used_memory(db), time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now = _used_memory(db)
        if abs(now - last) < 64 * 1024:
            return now
        last = now
    return last


def _graph_memory(db, key: str) -> dict:
    """FalkorDB's own account of a graph's memory, by part (MB)."""
    def plain(x):
        if isinstance(x, dict):
            return {plain(k): plain(v) for k, v in x.items()}
        return x.decode() if isinstance(x, bytes) else x

    return plain(db.execute_command("GRAPH.MEMORY", "USAGE", key))


def _load() -> list[float]:
    """The 1, 5 and 15 minute load averages."""
    return [round(x, 2) for x in os.getloadavg()]


def _cpus() -> int:
    return len(os.sched_getaffinity(0))


def write(res: Results, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    data = {"command": res.command, "machine": res.machine, "load": res.load,
            "retraction_region_100": res.retraction,
            "retraction_region_100_after_a_write": res.after_write,
            "regions_in_100k": res.regions, "retraction_under_live_writes": res.live,
            "gate_decision": res.gate, "gate_decision_state_beside_the_graph": res.gate_beside,
            "gate_decision_no_process_lowered": res.gate_at_0}
    (out / "engine.json").write_text(json.dumps(data, indent=2) + "\n")
    lines = ["# Engine benchmark\n", f"Command: `{res.command}`  ", f"Machine: {res.machine}\n"]
    for title, table in (
        ("Commit of a retraction whose region is ~100 memories (preview + commit), back to back",
         res.retraction),
        ("The same, each retraction right after one justified write", res.after_write),
    ):
        lines += [f"## {title}\n", "| graph (memories) | median ms | p90 ms | runs | median region |",
                  "|---:|---:|---:|---:|---:|"]
        for k, v in table.items():
            if isinstance(v, dict):
                lines.append(f"| {int(k):,} | {v['median_ms']} | {v['p90_ms']} | {v['runs']} | "
                             f"{v['median_region']} |")
        if "ratio_largest_to_smallest" in table:
            lines.append(f"\nRatio largest / smallest graph: "
                         f"**{table['ratio_largest_to_smallest']}**\n")
    if res.regions:
        lines += ["## Larger regions in the 100k graph\n", "| region | median ms | runs | region |",
                  "|---|---:|---:|---:|"]
        for k, v in res.regions.items():
            lines.append(f"| {k} | {v['median_ms']} | {v['runs']} | {v['median_region']} |")
        lines += steps.table(res.regions)
    if res.live:
        lines += live_bench.table(res.live)
    if res.gate:
        lines += gate_bench.table(res.gate, res.gate_beside, res.gate_at_0)
    lines += ["\n## Bulk load of justified writes, from an empty graph\n",
              "Each size is loaded twice, one after the other: through the engine's batched "
              "writes, then as raw batched UNWIND writes of the same memories and edges (no "
              "status, history or idempotency).\n",
              "RAM per memory: the server's `used_memory` grown by the load, over the memories "
              "loaded; the raw graph has the same memories and justification edges, written by "
              "plain UNWIND on the same schema, with no status edges, history or groundings.\n",
              "| graph (memories) | writes | seconds | writes/s | raw UNWIND writes/s | ratio | "
              "bytes per memory | raw bytes per memory |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for k, v in res.load.items():
        lines.append(f"| {int(k):,} | {v['writes']:,} | {v['seconds']} | {v['writes_per_s']:,} | "
                     f"{v['raw_writes_per_s']:,} | {v['ratio_to_raw']} | "
                     f"{v['bytes_per_memory']:,} | {v['raw_bytes_per_memory']:,} |")
    (out / "engine.md").write_text("\n".join(lines) + "\n")
