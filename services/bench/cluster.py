"""`rescind bench cluster`: what a Redis Cluster costs and holds, measured side by side in one run.

- Ingest end to end (the agents' publisher in a process of its own, the writer here, until the
  graph holds every event) on one embedded server, on a local cluster of three masters, and on
  three masters with a replica each, with the writes acknowledged only once a replica has
  them (WAIT) and without that wait. One tenant's events go to one master, so each figure is
  what one master takes from one writer.
- What a tenant costs before it holds anything (its graph's schema and indexes), from the
  memory of one server before and after creating many.
- RAM per memory at 1M memories, read from the engine benchmark's results (its own command).

From these, the capacity table of docs/scaling.md: masters needed for a number of tenants of a
given size. Every node of a local cluster shares this machine's cores, so a cluster's figures
here are per master, never the sum of several.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

from rescind.bench.ingest import end_to_end
from rescind.graph import tenants
from rescind.graph.store import TenantGraph, connect
from rescind.runtime.cluster import EmbeddedCluster
from rescind.runtime.server import EmbeddedFalkorDB

GIB = 1024 ** 3


@contextmanager
def _replica_wait(ms: int):
    """RESCIND_REPLICA_WAIT_MS for this process and the publishing one it spawns."""
    before = os.environ.get("RESCIND_REPLICA_WAIT_MS")
    os.environ["RESCIND_REPLICA_WAIT_MS"] = str(ms)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("RESCIND_REPLICA_WAIT_MS", None)
        else:
            os.environ["RESCIND_REPLICA_WAIT_MS"] = before


def _ingest(url: str, events: int, batch: int, repeats: int) -> dict:
    runs = [end_to_end(url, events, batch)["writes_per_s"] for _ in range(repeats)]
    return {"writes_per_s": statistics.median(runs), "runs": runs}


def ingest_by_topology(events: int, batch: int, repeats: int,
                       say: Callable[[str], None]) -> dict:
    out = {}
    with EmbeddedFalkorDB() as server:
        out["single server"] = _ingest(server.url, events, batch, repeats)
        say(f"single server: {out['single server']}")
    with EmbeddedCluster(3) as cluster:
        out["3 masters"] = _ingest(cluster.url, events, batch, repeats)
        say(f"3 masters: {out['3 masters']}")
    with EmbeddedCluster(3, 1) as cluster:
        # Alternating, so that the machine's drift falls on both alike.
        waited, unwaited = [], []
        for _ in range(repeats):
            with _replica_wait(2_000):
                waited.append(end_to_end(cluster.url, events, batch)["writes_per_s"])
            with _replica_wait(0):
                unwaited.append(end_to_end(cluster.url, events, batch)["writes_per_s"])
        out["3 masters + 3 replicas, acknowledged after WAIT"] = {
            "writes_per_s": statistics.median(waited), "runs": waited}
        out["3 masters + 3 replicas, no WAIT"] = {
            "writes_per_s": statistics.median(unwaited), "runs": unwaited}
        say(f"with replicas: WAIT {waited}, no WAIT {unwaited}")
    return out


def tenant_overhead(count: int) -> dict:
    """Bytes a created tenant holds before its first memory (its graph, schema and indexes)."""
    with EmbeddedFalkorDB() as server:
        conn = connect(server.url)
        before = _settled(conn)
        for i in range(count):
            tenants.create(conn, f"empty-{i}", by="bench")
        after = _settled(conn)
        sample = TenantGraph(conn, "empty-0").exists()
    return {"tenants": count, "bytes_per_tenant": round((after - before) / count),
            "graph_made": sample}


def _settled(conn) -> int:
    last = conn.info("memory")["used_memory"]
    for _ in range(50):
        time.sleep(0.1)
        now = conn.info("memory")["used_memory"]
        if now == last:
            return now
        last = now
    return last


def capacity(bytes_per_memory: float, bytes_per_tenant: float, writes_per_s: float,
             tenants: int, memories: int, master_gib: float, usable: float) -> dict:
    """Masters (and their replicas) for ``tenants`` of ``memories`` each, on masters of
    ``master_gib`` of which ``usable`` is for data (the rest: fork for AOF rewrites, buffers)."""
    per_tenant = bytes_per_tenant + memories * bytes_per_memory
    budget = master_gib * GIB * usable
    per_master = int(budget // per_tenant)
    masters = -(-tenants // per_master) if per_master else None
    return {"tenants": tenants, "memories_per_tenant": memories, "master_gib": master_gib,
            "usable_fraction": usable, "gib_per_tenant": round(per_tenant / GIB, 3),
            "tenants_per_master": per_master, "masters": masters,
            "replicas": masters, "writes_per_s_per_master": writes_per_s}


def run(events: int, batch: int, repeats: int, engine_json: Path, out: Path, command: str,
        say: Callable[[str], None]) -> dict:
    engine = json.loads(engine_json.read_text())
    at_1m = engine["load"]["1000000"]
    result = {"command": command, "engine_results": {"file": str(engine_json),
                                                     "command": engine["command"],
                                                     "bytes_per_memory_at_1m":
                                                         at_1m["bytes_per_memory"],
                                                     "raw_bytes_per_memory_at_1m":
                                                         at_1m["raw_bytes_per_memory"]},
              "machine": {"cpus": os.cpu_count()}}
    result["ingest"] = ingest_by_topology(events, batch, repeats, say)
    result["tenant"] = tenant_overhead(200)
    say(f"tenant overhead: {result['tenant']}")
    per_master = result["ingest"]["3 masters + 3 replicas, acknowledged after WAIT"]["writes_per_s"]
    result["capacity"] = [
        capacity(at_1m["bytes_per_memory"], result["tenant"]["bytes_per_tenant"], per_master,
                 t, m, 64, 0.5)
        for t, m in ((10_000, 1_000_000), (10_000, 100_000), (100_000, 10_000))]
    out.mkdir(parents=True, exist_ok=True)
    (out / "cluster.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "cluster.md").write_text(_markdown(result))
    return result


def _markdown(r: dict) -> str:
    e = r["engine_results"]
    rows = ["# Cluster benchmark\n", f"Command: `{r['command']}` (on {r['machine']['cpus']} "
            "cores; every node of a local cluster shares them)\n",
            "## Ingest, end to end (publisher process -> streams -> writer -> graph), one "
            "tenant\n", "| topology | writes/s (median) | runs |", "|---|---:|---|"]
    for name, v in r["ingest"].items():
        rows.append(f"| {name} | {v['writes_per_s']:,.0f} | {v['runs']} |")
    t = r["tenant"]
    rows += ["", "## Size\n", "| figure | value |", "|---|---:|",
             f"| RAM per memory at 1M memories (from `{e['command']}`, {e['file']}) | "
             f"{e['bytes_per_memory_at_1m']:,} B (raw FalkorDB nodes and edges of the same "
             f"shape: {e['raw_bytes_per_memory_at_1m']:,} B) |",
             f"| RAM of a created tenant before its first memory ({t['tenants']} tenants) | "
             f"{t['bytes_per_tenant']:,} B |",
             "", "## Capacity (masters of 64 GiB, half of it for data)\n",
             "| tenants | memories each | GiB per tenant | tenants per master | masters "
             "(+ as many replicas) | writes/s per master |", "|---:|---:|---:|---:|---:|---:|"]
    for c in r["capacity"]:
        rows.append(f"| {c['tenants']:,} | {c['memories_per_tenant']:,} | "
                    f"{c['gib_per_tenant']} | {c['tenants_per_master']:,} | "
                    f"{c['masters']:,} | {c['writes_per_s_per_master']:,.0f} |")
    return "\n".join(rows) + "\n"


__all__ = ["capacity", "ingest_by_topology", "run", "tenant_overhead"]
