"""Moving a loaded tenant between masters of a local cluster: what MIGRATE costs a graph.

``python -m rescind.bench.move SIZE [ROUNDS] [NODE_TIMEOUT_MS]`` starts a 3-master
EmbeddedCluster, loads SIZE memories into one tenant through the engine's batched writes (as
``rescind bench engine`` does), and moves the tenant ROUNDS times to another master
(``rescind.runtime.move``) while three readers and one writer run: a reader of a bystander
tenant on the source master, one on the target master, one of the moving tenant itself (through
a cluster client that follows ASK and MOVED), and a writer creating one node of the moving
tenant every 2 ms (through a cluster client). Each round prints one JSON line: the MIGRATE's
time, the DUMP payload, memory used, each reader's longest wait during the move, whether every
acknowledged write is on the new master, and whether indexes, constraints, counts and revision
are the same after. NODE_TIMEOUT_MS, when given, is set as every node's cluster-node-timeout
first (the local cluster's is 2 s). Then a retraction runs on the moved tenant.
"""

from __future__ import annotations

import json
import statistics
import sys
import threading
import time

import redis
from redis.cluster import RedisCluster
from rich.console import Console
from rich.progress import Progress

from rescind.bench.engine import load
from rescind.bench.generator import plain_clusters
from rescind.contract import layout
from rescind.engine import retraction as ret
from rescind.graph import tenants
from rescind.graph.store import TenantGraph, connect
from rescind.runtime import move
from rescind.runtime.cluster import EmbeddedCluster
from rescind.transport import connection

PROBE = "MATCH (m:Meta) RETURN count(m)"


def port(client: redis.Redis) -> int:
    return client.connection_pool.connection_kwargs["port"]


def fingerprint(g: TenantGraph) -> dict:
    idx = sorted(tuple(r) for r in g.rows("CALL db.indexes() YIELD label, properties, status "
                                          "RETURN label, properties, status"))
    con = sorted(tuple(map(str, r)) for r in g.rows("CALL db.constraints()"))
    counts = g.rows("MATCH (m:Mem) WITH count(m) AS m MATCH ()-[s:STATUS]->() "
                    "WITH m, count(s) AS s MATCH (j:Justification) RETURN m, s, count(j)")[0]
    return {"indexes": idx, "constraints": con, "counts": counts, "rev": g.revision()}


class Load:
    """Readers timing a one-row query in a loop, and a writer counting what was acknowledged."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.lat: dict[str, list[tuple[float, float]]] = {}
        self.errors: dict[str, list[str]] = {}
        self.acked: list[int] = []
        self.threads: list[threading.Thread] = []

    def reader(self, name: str, client, key: str) -> None:
        self.lat[name], self.errors[name] = [], []

        def run() -> None:
            while not self.stop.is_set():
                t = time.perf_counter()
                try:
                    client.execute_command("GRAPH.RO_QUERY", key, PROBE)
                except Exception as exc:  # noqa: BLE001 - counted and reported
                    self.errors[name].append(f"{type(exc).__name__}: {str(exc)[:60]}")
                self.lat[name].append((t, time.perf_counter() - t))
                time.sleep(0.002)
        self.threads.append(threading.Thread(target=run, daemon=True))

    def writer(self, client, key: str) -> None:
        def run() -> None:
            i = 0
            while not self.stop.is_set():
                try:
                    client.execute_command("GRAPH.QUERY", key, f"CREATE (:Probe {{n: {i}}})")
                    self.acked.append(i)
                except Exception as exc:  # noqa: BLE001 - counted and reported
                    self.errors.setdefault("writer", []).append(f"{type(exc).__name__}: {exc}")
                i += 1
                time.sleep(0.002)
        self.threads.append(threading.Thread(target=run, daemon=True))

    def worst(self, name: str, start: float, end: float) -> dict:
        during = [d for t, d in self.lat[name] if t + d >= start and t <= end]
        before = [d for t, d in self.lat[name] if t + d < start]
        return {"max_ms_during": round(max(during) * 1000, 1) if during else None,
                "median_ms_before": round(statistics.median(before) * 1000, 2) if before else None,
                "errors": sorted(set(self.errors[name]))[:5], "n_errors": len(self.errors[name])}


def one_round(c: EmbeddedCluster, conn, t: str, bystanders: dict[int, str]) -> dict:
    g = TenantGraph(conn, t)
    before = fingerprint(g)
    src = connection.node_for(conn, g.key)
    target = next(n.port for n in c.nodes if n.port != port(src))
    dst = redis.Redis(port=target)
    t0 = time.perf_counter()
    payload = len(src.dump(g.key))
    dump_s = time.perf_counter() - t0
    used_src, used_dst = src.info("memory")["used_memory"], dst.info("memory")["used_memory"]
    src.config_resetstat()
    dst.config_resetstat()
    cluster_client = lambda: RedisCluster(host="127.0.0.1", port=c.nodes[0].port)  # noqa: E731
    work = Load()
    work.reader("source_bystander", redis.Redis(port=port(src)),
                layout.graph_key(bystanders[port(src)]))
    work.reader("target_bystander", dst, layout.graph_key(bystanders[target]))
    work.reader("tenant_reader", cluster_client(), g.key)
    work.writer(cluster_client(), g.key)
    for th in work.threads:
        th.start()
    time.sleep(0.5)
    start = time.perf_counter()
    try:
        report = move.move_tenant(conn, t, f"127.0.0.1:{target}", max_pause_s=3600)
    finally:
        end = time.perf_counter()
        if sys.exc_info()[0] is not None:
            work.stop.set()
            print(json.dumps({"failed_after_s": round(end - start, 2), "cluster_state": [
                redis.Redis(port=n.port).execute_command("CLUSTER", "INFO").decode().split()[0]
                for n in c.nodes]}), flush=True)
    time.sleep(0.5)
    work.stop.set()
    for th in work.threads:
        th.join()
    peak_src = src.info("memory")["used_memory_peak"] - used_src
    peak_dst = dst.info("memory")["used_memory_peak"] - used_dst
    probes = cluster_client().execute_command("GRAPH.RO_QUERY", g.key, "MATCH (p:Probe) RETURN p.n")
    landed = {int(row[0]) for row in probes[1]}
    cluster_client().execute_command("GRAPH.QUERY", g.key, "MATCH (p:Probe) DELETE p")
    moved = TenantGraph(conn, t)
    after = fingerprint(moved)
    return {"memories": before["counts"][0], "move": report.as_dict(), "dump_bytes": payload,
            "dump_s": round(dump_s, 3), "src_peak_over_used_mb": round(peak_src / 2**20, 1),
            "dst_peak_over_used_mb": round(peak_dst / 2**20, 1),
            "src_used_mb": round(used_src / 2**20, 1),
            **{name: work.worst(name, start, end) for name in work.lat},
            "writes_acked": len(work.acked),
            "writes_lost": len([i for i in work.acked if i not in landed]),
            "write_errors": sorted(set(work.errors.get("writer", [])))[:5],
            "same_after": {k: before[k] == after[k] for k in before}, "on": port(moved.conn)}


def main(size: int, rounds: int = 1, node_timeout_ms: int = 0) -> None:
    with EmbeddedCluster(3) as c:
        conn = connect(c.url)
        t = "moving"
        tenants.create(conn, t, "bench")
        g = TenantGraph(conn, t)
        bystanders: dict[int, str] = {}  # a tenant on each master, in other slots
        for i in range(1000):
            p = port(connection.node_for(conn, layout.graph_key(f"by{i}")))
            if p not in bystanders:
                bystanders[p] = f"by{i}"
                tenants.create(conn, f"by{i}", "bench")
        with Progress(console=Console(file=sys.stderr), auto_refresh=False) as progress:
            n, spent = load(g, plain_clusters(size), 500, progress,
                            progress.add_task("load", total=size))
        print(f"loaded {n} writes in {spent:.1f}s", file=sys.stderr)
        if node_timeout_ms:
            for node in c.nodes:
                redis.Redis(port=node.port).config_set("cluster-node-timeout", node_timeout_ms)
        for r in range(rounds):
            print(json.dumps({"round": r, **one_round(c, conn, t, bystanders)}), flush=True)
        g = TenantGraph(conn, t)
        out = g.rows("MATCH (m:Mem {kind: 'observation'}) RETURN m.id LIMIT 1")[0][0]
        result = ret.run(g, ret.Retract("after-move", out.split("/")[0], reason="bench"))
        print(json.dumps({"retraction_after_move": dict(result.blast_radius.counts),
                          "rev": g.revision(), "status": str(g.statuses([out]))}), flush=True)


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:4]))
