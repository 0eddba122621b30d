"""`rescind bench engine`, the "under live writes" rows: a retraction while justified writes run.

Security retracts a source while the agents keep writing, so a retraction is timed with the
gate bench's live load running (``rescind.bench.gate.LiveWrites``: another process sending
justified writes through the engine's write path at a steady rate) and, in alternating
blocks, with it paused. Beside each retraction the same region is flipped by raw FalkorDB
statements, measured in the same blocks: a flag on each memory's node (what a store that keeps
its statuses on nodes pays: the first node SET after nodes were created can pay a sync of
the whole graph, see docs/performance.md), and a flag on each memory's STATUS edge (where Rescind keeps them).
"""

from __future__ import annotations

import statistics
import time

from rescind.bench.gate import LiveWrites
from rescind.engine import retraction as ret
from rescind.graph.cypher import query
from rescind.graph.store import TenantGraph

BLOCK = 5  # retractions per block; blocks alternate between the load paused and running

# The raw baselines: the region's memories by node id, a flag set on each (no guard, no history).
RAW_NODE_FLAG = """
UNWIND $ids AS i
MATCH (m) WHERE ID(m) = i
SET m.bench_flag = $flag
"""
RAW_EDGE_FLAG = """
UNWIND $ids AS i
MATCH (m)-[st:STATUS]->() WHERE ID(m) = i
SET st.bench_flag = $flag
"""
_REGION_NODES = "MATCH (:Source {id: $source})-[:SAID]->(m:Mem) RETURN ID(m)"


def _timed(fn, *args) -> float:
    t = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t


def _one(graph: TenantGraph, source: str, tag: str, flag: int) -> dict[str, float]:
    """A whole-source retraction (preview + commit) and both raw flips of its seeds' nodes,
    each after the load had a moment to create nodes again (as a live system always has)."""
    ids = [r[0] for r in graph.rows(_REGION_NODES, {"source": source})]
    out = {}
    time.sleep(0.02)
    out["raw_node"] = _timed(query, graph.conn, graph.key, RAW_NODE_FLAG, {"ids": ids, "flag": flag})
    time.sleep(0.02)
    out["raw_edge"] = _timed(query, graph.conn, graph.key, RAW_EDGE_FLAG, {"ids": ids, "flag": flag})
    time.sleep(0.02)
    t = time.perf_counter()
    result = ret.run(graph, ret.Retract(tag, source, reason="bench"))
    out["retraction"] = time.perf_counter() - t
    out["region"] = sum(result.blast_radius.counts.values())
    return out


def measure(url: str, graph: TenantGraph, vendors: int, sources: list[str], rate: float) -> dict:
    """Retract each of ``sources`` (half with the load running, half paused, in alternating
    blocks); medians and p90 in ms of the retraction and of the raw flips, and the write rate
    that landed while the live ones were timed. ``vendors``: the generator's sources
    ``vendor0`` … (the live writes rest on them)."""
    times: dict[tuple[str, bool], list[float]] = {
        (what, live): [] for what in ("retraction", "raw_node", "raw_edge") for live in (False, True)}
    regions: list[int] = []
    live_s, live_writes = 0.0, 0
    block = max(1, min(BLOCK, len(sources) // 2))  # a toy run still has a block of each
    run = time.time_ns()  # retraction ids are for ever: each measure names its own
    with LiveWrites(url, graph.tenant, vendors, rate, f"rlive{run}") as load:
        for b in range(0, len(sources), block):
            live = (b // block) % 2 == 1
            if live:
                load.run()
                time.sleep(0.5)  # the load in its stride before the clock
                before, t0 = load.landed, time.perf_counter()
            for k, source in enumerate(sources[b:b + block]):
                one = _one(graph, source, f"live{run}-{b + k}", b + k)
                regions.append(one.pop("region"))
                for what, took in one.items():
                    times[what, live].append(took)
            if live:
                live_s += time.perf_counter() - t0
                live_writes += load.landed - before
                load.pause()

    def stats(xs: list[float]) -> dict:
        xs = sorted(xs)
        return {"median_ms": round(statistics.median(xs) * 1000, 2),
                "p90_ms": round(xs[int(0.9 * (len(xs) - 1))] * 1000, 2), "runs": len(xs)}

    out = {f"{what}_{'live' if live else 'quiet'}": stats(xs) for (what, live), xs in times.items()}
    out.update(median_region=statistics.median(regions), write_rate_target=rate,
               writes_per_s=round(live_writes / live_s) if live_s else 0)
    return out


def table(results: dict[str, dict]) -> list[str]:
    """The markdown rows of ``measure``'s results, by graph size."""
    lines = ["\n## A retraction while justified writes run\n",
             "A whole-source retraction (preview + commit, region ~100 memories) while another "
             "process sends justified writes through the engine's write path (*live*), and in "
             f"blocks of {BLOCK} alternating with it paused (*quiet*). Beside each, raw FalkorDB "
             "flips the same source's memories by node id in one statement: a property on each "
             "node (*raw node SET*: the first node SET after nodes were created can pay a sync of "
             "the whole graph) and on each memory's STATUS edge (*raw edge SET*, where Rescind keeps "
             "statuses).\n",
             "| graph (memories) | retraction live: median / p90 ms | quiet: median / p90 ms | "
             "raw node SET live / quiet: median ms | raw edge SET live / quiet: median ms | "
             "runs each | median region | writes/s during the live ones |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for size, r in results.items():
        if not isinstance(r, dict):
            continue
        rl, rq = r["retraction_live"], r["retraction_quiet"]
        lines.append(
            f"| {int(size):,} | **{rl['median_ms']}** / {rl['p90_ms']} | {rq['median_ms']} / "
            f"{rq['p90_ms']} | {r['raw_node_live']['median_ms']} / "
            f"{r['raw_node_quiet']['median_ms']} | {r['raw_edge_live']['median_ms']} / "
            f"{r['raw_edge_quiet']['median_ms']} | {rl['runs']} | {r['median_region']} | "
            f"{r['writes_per_s']:,} |")
    if "ratio_largest_to_smallest" in results:
        lines.append(f"\nRatio of the live medians, largest / smallest graph: "
                     f"**{results['ratio_largest_to_smallest']}**\n")
    return lines + [""]
