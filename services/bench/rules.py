"""`rescind bench rules`: five retraction rules on the same graphs, against a separate truth.

The rules and how each is run and scored are described in ``rules_runner``; the scenarios in
``scenarios``. This module runs the scenarios asked for, one graph each, summarises every
outcome, and merges the summaries into the results (``rules.json``, with the markdown report
and the plots of ``rules_report``).
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from rescind.bench.rules_common import RULES, SCENARIOS, THRESHOLD
from rescind.bench.rules_report import write
from rescind.bench.rules_runner import Outcome, Runner
from rescind.bench.rules_tables import console_table
from rescind.bench.scenarios import Batch, Case
from rescind.graph.store import TenantGraph, connect

__all__ = ["SCENARIOS", "load_json", "run", "summary"]

STEP_KEYS = ("out", "contaminated", "contamination_left", "collateral", "recalls_missed",
             "holds_missed", "taken_now", "taken_now_collateral", "reached_stays_in",
             "reached_stays_contaminated")


def summary(o: Outcome) -> dict:
    times = {}
    for r, ts in o.times.items():
        if ts:
            s = sorted(ts)
            times[r] = {"median_ms": round(statistics.median(s), 2),
                        "p90_ms": round(s[int(0.9 * (len(s) - 1))], 2), "runs": len(s)}
    final = o.steps[-1] if o.steps else None
    d = {"params": o.case.params, "notes": o.case.notes, "times": times,
         "load_s": round(o.loaded_s, 2), "final": final, "born": o.born,
         "rule2_scored": o.case.scored_rule2}
    if len(o.steps) > 1:  # by column: one list per figure, one entry per checkpoint
        d["steps"] = {
            **{k: [s[k] for s in o.steps] for k in ("label", "at", "retractions", "memories",
                                                     "reached")},
            "truth": {k: [s["truth"][k] for s in o.steps] for k in o.steps[0]["truth"]},
            "rules": {r: {k: [s["rules"][r][k] for s in o.steps] for k in STEP_KEYS}
                      for r in RULES}}
        d["worst_along_the_way"] = {r: {k: max(s["rules"][r][k] for s in o.steps)
                                        for k in ("contamination_left", "collateral")}
                                    for r in RULES}
    if o.sweep:
        d["threshold_sweep"] = o.sweep
    return d


def run(url: str, scenarios: list[str], data: Path, sizes: list[int], samples: int,
        out: Path, command: str, console) -> dict:
    from rescind.bench.scenario_demo import demo_case
    from rescind.bench.scenario_precision import precision_case
    from rescind.bench.scenario_real import real_cases, shown
    from rescind.bench.scenario_scale import scale_case
    from rescind.bench.similarity import Embedder, RandomVectors

    db = connect(url)
    results = load_json(out / "rules.json")
    results.update({"machine": {"python": sys.version.split()[0], "platform": platform.platform(),
                                "cpus": len(os.sched_getaffinity(0))},
                    "threshold": THRESHOLD, "embedder": Embedder.name})
    results.setdefault("scenarios", {})
    embed = Embedder()
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    # No refresh thread: it took a core from the server in the middle of timed retractions.
    with Progress(*columns, console=console, transient=False, auto_refresh=False) as progress:

        def play(case: Case, tenant: str, vectors) -> Outcome:
            if case.events is not None:
                total = sum(len(e.writes) if isinstance(e, Batch) else 1 for e in case.events)
            else:  # streamed: ~4% of the generator's writes are second justifications
                total = int(case.size * 1.04) + case.params.get("retractions", 0)
            if case.events is not None and hasattr(vectors, "prefetch"):
                texts = [w.text for e in case.events if isinstance(e, Batch) for w in e.writes]
                with console.status(f"{case.name}: embedding {len(set(texts)):,} texts…"):
                    vectors.prefetch(texts)
            task = progress.add_task(case.name, total=total)
            graph = TenantGraph(db, tenant)
            outcome = Runner(graph, case, vectors, progress=progress, task=task).run()
            done = next(t.completed for t in progress.tasks if t.id == task)
            progress.update(task, total=done, completed=done)  # stops its clock
            graph.delete()
            return outcome

        for name in scenarios:
            started = time.perf_counter()
            entry: dict = {"command": command}
            if name == "demo":
                with console.status("running the demo week (agents, streams, workers)…"):
                    case = demo_case(url)
                entry.update(summary(play(case, "bench-rules-demo", embed)))
            elif name == "precision":
                entry.update(summary(play(precision_case(), "bench-rules-precision", embed)))
                sweep = entry["threshold_sweep"]
                best = max(sweep, key=lambda r: (r["f2"], r["threshold"]))["threshold"]
                fewest = min(sweep, key=lambda r: (r["errors"], -r["threshold"]))["threshold"]
                entry["threshold_choice"] = {
                    "criterion": "best F2 (recall weighs twice precision) on this scenario",
                    "best_f2": best, "fewest_errors": fewest, "in_use": THRESHOLD}
                if best != THRESHOLD:
                    console.print(f"[yellow]note: on this run the best F2 threshold is {best}, "
                                  f"not the {THRESHOLD} in use (services/bench/rules_common.py)")
            elif name == "real":
                cases, mapping = real_cases(data)
                entry["mapping"] = mapping
                entry["data"] = shown(data)
                entry["readings"] = {}
                for case in cases:
                    reading = case.params["reading"]
                    entry["readings"][reading] = summary(play(case, f"bench-rules-{reading}",
                                                              embed))
            elif name == "scale":
                entry["sizes"] = {}
                for size in sizes:
                    case = scale_case(size, samples)
                    entry["sizes"][str(size)] = summary(play(case, f"bench-rules-scale-{size}",
                                                             RandomVectors()))
            entry["seconds"] = round(time.perf_counter() - started, 1)
            results["scenarios"][name] = entry
            write(results, out)  # after each scenario: a later failure keeps the earlier ones
            console.print(console_table(results, only=name))
    return results


def load_json(path: Path) -> dict:
    """Earlier results the new ones are merged into; none yet is an empty start (the command
    refuses a file that is not JSON before it runs, rather than write over it)."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return {}
