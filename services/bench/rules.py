"""`rescind bench rules`: five retraction rules on the same graphs, against a separate truth.

Every scenario is loaded once, through the engine's justified writes, into one FalkorDB graph.
At each retraction every rule runs on that graph, one after another (the order rotates), timed
from its first read to its last write:

1. the compromised source's observations in the window (the seeds) are taken out;
2. the seeds and every memory whose stored vector is at least ``THRESHOLD`` (cosine) from a
   seed's (all-MiniLM-L6-v2; vectors are computed when memories are written);
3. the seeds and the memories one hop downstream of them;
4. the seeds and everything downstream of them, walked hop by hop;
5. Rescind's engine (``services.engine.retraction.run``: preview and commit).

Rules 1-4 are Cypher reads (``rules_queries``) plus, for rule 2, a brute-force scan of the
vectors in numpy; each writes what it takes out as ``out_rN`` on the memories (one query).
Each rule also judges later writes by its own definition: a write is born OUT under rule 1 if
it is an observation inside a window, under rule 2 if it is near a seed, under rule 3 if a
premise is a seed, under rule 4 if a premise is OUT under rule 4; under rule 5 the engine
decides. After each retraction (or group of retractions of one date) every rule's OUT set is
read back from the graph and scored by ``truth`` (which does not use the engine).
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from rescind.bench import rules_queries as rq
from rescind.bench import truth
from rescind.bench.scenarios import Batch, Case, Checkpoint
from rescind.bench.similarity import VectorStore
from rescind.core.shapes import Mutation
from rescind.engine import retraction as ret
from rescind.engine.writes import Write, record
from rescind.graph.store import TenantGraph, connect

RULES = ("r1", "r2", "r3", "r4", "r5")
TITLES = {
    "r1": "1. delete the source's observations",
    "r2": "2. delete similar text (embeddings)",
    "r3": "3. invalidate one hop downstream",
    "r4": "4. taint everything downstream",
    "r5": "5. Rescind (well-founded)",
}
# Rule 2's cosine threshold, chosen once on the precision scenario and held fixed for every
# other scenario: the threshold of the sweep with the best F2 (recall of the contaminated counts
# twice as much as precision: leaving contamination in service is the worse error). The fewest
# errors there is at 1.0, where rule 2 is rule 1; the README says so.
THRESHOLD = 0.75
SWEEP = [round(0.30 + 0.025 * i, 3) for i in range(29)]  # 0.300 .. 1.000


@dataclass
class Outcome:
    """What one scenario produced: timings, scored checkpoints, born-OUT counts."""

    case: Case
    times: dict[str, list[float]] = field(default_factory=lambda: {r: [] for r in RULES})
    steps: list[dict] = field(default_factory=list)
    born: dict = field(default_factory=dict)
    sweep: list[dict] = field(default_factory=list)
    loaded_s: float = 0.0


class Runner:
    """One scenario on one graph: writes through the engine, retractions by every rule."""

    def __init__(self, graph: TenantGraph, case: Case, vectors, threshold: float = THRESHOLD,
                 progress: Progress | None = None, task=None) -> None:
        self.graph, self.case, self.vectors, self.threshold = graph, case, vectors, threshold
        self.progress, self.task = progress, task
        self.facts = truth.Facts()
        self.store = VectorStore()
        self.windows: list[truth.Window] = []
        self.seeds: set[str] = set()
        self.out: dict[str, set[str]] = {r: set() for r in RULES[:4]}
        self.taken: dict[str, set[str]] = {r: set() for r in RULES}
        self.late: dict[str, bool] = {}  # memory written while retracted: truly born OUT?
        self.born_out: dict[str, set[str]] = {r: set() for r in RULES}
        self.result = Outcome(case)
        self._rotation = 0
        self._dirty = True  # nodes were created since the last node update
        self._drawn = 0.0

    # -- the run ----------------------------------------------------------------------------
    def run(self) -> Outcome:
        self.graph.delete()
        srcs = self.case.sources
        for i in range(0, len(srcs), 5000):
            self.graph.apply(Mutation(op="source", sources=srcs[i:i + 5000]),
                             self.graph.revision())
        for event in self.case.timeline():
            if isinstance(event, Batch):
                t = time.perf_counter()
                self.write(event.writes)
                self.result.loaded_s += time.perf_counter() - t
                self._advance(len(event.writes))
            else:
                self.retract(event)
                self._advance(1)
        self.result.born = self._born()
        return self.result

    def _advance(self, n: int) -> None:
        if self.progress is not None:
            self.progress.advance(self.task, n)
            now = time.monotonic()
            if now - self._drawn > 0.5:  # redrawn here, between timed steps, not by a thread
                self.progress.refresh()
                self._drawn = now

    # -- writes -----------------------------------------------------------------------------
    def write(self, writes: list[Write]) -> None:
        statuses = record(self.graph, writes)
        self._dirty = True
        new: list[Write] = []
        for w in writes:
            created = self.facts.add(w.mem_id, w.kind, w.source, w.at, w.premises,
                                     w.extra.get("executed"), w.extra.get("amount"), w.name)
            if created:
                new.append(w)
        if new:
            self.store.add([w.mem_id for w in new], self.vectors([w.text for w in new]))
        if not self.windows:
            return
        # Every rule judges what is written after a retraction by its own definition.
        fresh: dict[str, set[str]] = {r: set() for r in RULES[:4]}
        for w in writes:
            m = w.mem_id
            if w.source is not None and truth.covered((w.source, w.at), self.windows):
                self.seeds.add(m)
                for r in RULES[:4]:
                    fresh[r].add(m)
            if any(p in self.seeds for p in w.premises):
                fresh["r3"].add(m)
            if any(p in self.out["r4"] or p in fresh["r4"] for p in w.premises):
                fresh["r4"].add(m)
        new_seeds = sorted(fresh["r1"] - self.out["r1"])
        if new_seeds:  # a reading of a retracted source: rule 2 scans for its look-alikes
            fresh["r2"] |= self.store.near(new_seeds, self.threshold)
        fresh["r2"] |= self.store.near_among([w.mem_id for w in new], sorted(self.seeds),
                                             self.threshold)
        for r, ids in fresh.items():
            self._mark(r, ids)
        # Born OUT: memories new in this batch whose upstream holds a retracted observation.
        final = {w.mem_id: s for w, s in zip(writes, statuses, strict=True)}
        late = [w.mem_id for w in new if truth.upstream(self.facts, w.mem_id) & self.seeds]
        if late:
            inn = truth.trusted(self.facts, self.windows)
            for m in late:
                self.late[m] = m not in inn
                for r in RULES[:4]:
                    if m in self.out[r]:
                        self.born_out[r].add(m)
                if not final[m].is_in:
                    self.born_out["r5"].add(m)

    def _mark(self, rule: str, ids) -> list[str]:
        new = [m for m in ids if m not in self.out[rule]]
        if new:
            self.graph.rows(rq.MARK, {"ids": new, "props": {f"out_{rule}": True}},
                            read_only=False)
            self.out[rule].update(new)
        return new

    # -- retractions ------------------------------------------------------------------------
    def retract(self, cp: Checkpoint) -> None:
        if self._dirty and self.facts.kinds:
            # The first node update after nodes were created pays a sync proportional to the
            # graph (FalkorDB 4.16); pay it here, outside every rule's timing.
            self.graph.rows(rq.MARK, {"ids": [next(iter(self.facts.kinds))],
                                      "props": {"warm": True}}, read_only=False)
            self._dirty = False
        for op in cp.retractions:
            self.windows.append((op.source, op.start, op.end))
            order = RULES[self._rotation % 5:] + RULES[:self._rotation % 5]
            self._rotation += 1
            for rule in order:
                t = time.perf_counter()
                taken = getattr(self, f"_{rule}")(op, cp.at)
                self.result.times[rule].append((time.perf_counter() - t) * 1000)
                self.taken[rule] |= set(taken)
        if cp.score:
            self.result.steps.append(self.checkpoint(cp))
        self.taken = {r: set() for r in RULES}

    def _seed_ids(self, op: ret.Retract) -> list[list]:
        return self.graph.rows(rq.SEEDS, {"source": op.source, "start": op.start, "end": op.end})

    def _r1(self, op, at) -> list[str]:
        ids = [r[0] for r in self._seed_ids(op)]
        self.seeds.update(ids)
        return self._mark("r1", ids)

    def _r2(self, op, at) -> list[str]:
        ids = [r[0] for r in self._seed_ids(op)]
        return self._mark("r2", set(ids) | self.store.near(ids, self.threshold))

    def _r3(self, op, at) -> list[str]:
        ids = [r[0] for r in self._seed_ids(op)]
        hop = [r[0] for r in self.graph.rows(rq.NEXT_HOP, {"ids": ids})] if ids else []
        return self._mark("r3", ids + hop)

    def _r4(self, op, at) -> list[str]:
        frontier = [r[0] for r in self._seed_ids(op)]
        seen = set(frontier)
        while frontier:
            nxt = [r[0] for r in self.graph.rows(rq.NEXT_HOP, {"ids": frontier})]
            frontier = [m for m in nxt if m not in seen]
            seen.update(frontier)
        return self._mark("r4", seen)

    def _r5(self, op, at) -> list[str]:
        result = ret.run(self.graph, op, at)
        return [m for m, (status, _, _) in result.changed.items() if status == "OUT"]

    # -- scoring ----------------------------------------------------------------------------
    def states(self) -> dict[str, set[str]]:
        """Every rule's OUT set, as the graph holds it."""
        outs: dict[str, set[str]] = {r: set() for r in RULES}
        for mid, status, _born, *marks in self.graph.rows(rq.STATES):
            if status == "OUT":
                outs["r5"].add(mid)
            for r, mark in zip(RULES[:4], marks, strict=True):
                if mark:
                    outs[r].add(mid)
        return outs

    def checkpoint(self, cp: Checkpoint) -> dict:
        outs = self.states()
        judged = truth.judge(self.facts, self.windows)
        fresh = [(op.source, op.start, op.end) for op in cp.retractions]
        reached = truth.downstream(self.facts, fresh)
        step = {"label": cp.label, "at": cp.at, "retractions": [op.id for op in cp.retractions],
                "memories": len(self.facts.kinds), "reached": len(reached),
                "truth": {"contaminated": len(judged.contaminated),
                          "reached_contaminated": len(reached & judged.contaminated),
                          "reached_kept": len(reached & judged.after)},
                "rules": {}}
        for r in RULES:
            m = truth.score(self.facts, judged, outs[r])
            taken = self.taken[r]
            m["taken_now"] = len(taken)
            m["taken_now_collateral"] = len(taken & judged.after)
            m["reached_stays_in"] = len(reached - outs[r])
            m["reached_stays_contaminated"] = len((reached - outs[r]) & judged.contaminated)
            step["rules"][r] = m
        if self.case.name == "precision":
            self.result.sweep = self.sweep(judged)
        return step

    def sweep(self, judged: truth.Truth) -> list[dict]:
        """Rule 2's errors at every threshold, from the stored vectors (the calibration)."""
        import numpy as np

        probes = np.stack([self.store.vector(s) for s in sorted(self.seeds)])
        best = self.store.best(probes)
        rows = []
        for th in SWEEP:
            out = set(self.seeds) | {self.store.ids[i] for i in np.flatnonzero(best >= th)}
            m = truth.score(self.facts, judged, out)
            rows.append({"threshold": th, "contamination_left": m["contamination_left"],
                         "collateral": m["collateral"],
                         "errors": m["contamination_left"] + m["collateral"],
                         "f2": round(f2(m["caught"], m["out"], m["contaminated"]), 4)})
        return rows

    def _born(self) -> dict:
        late = self.late
        if not late:
            return {}
        should = {m for m, v in late.items() if v}
        return {"written_after_a_source_was_retracted": len(late),
                "truly_born_out": len(should),
                "rules": {r: {"born_out": len(self.born_out[r] & late.keys()),
                              "born_out_wrongly": len(self.born_out[r] - should),
                              "born_in_wrongly": len(should - self.born_out[r])}
                          for r in RULES}}


def f2(caught: int, out: int, contaminated: int) -> float:
    """F-beta with beta 2: recall of the contaminated weighs twice precision."""
    if not caught:
        return 0.0
    precision, recall = caught / out, caught / contaminated
    return 5 * precision * recall / (4 * precision + recall)


# -- the whole benchmark ------------------------------------------------------------------------
SCENARIOS = ("demo", "precision", "real", "scale")
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
    from rescind.bench.scenarios import demo_case, load_json, precision_case, real_cases, scale_case
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
                                  f"not the {THRESHOLD} in use (services/bench/rules.py)")
            elif name == "real":
                cases, mapping = real_cases(data)
                entry["mapping"] = mapping
                entry["data"] = str(data)
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


# -- output -------------------------------------------------------------------------------------
def rows(results: dict, only: str | None = None) -> list[tuple[str, str, dict | None, dict]]:
    """(scenario label, rule, final metrics or None, times) for the tables."""
    out = []
    sc = results.get("scenarios", {})
    for name in SCENARIOS:
        if name not in sc or (only and name != only):
            continue
        e = sc[name]
        parts = []
        if name == "real":
            parts = [(f"real: {k}", v) for k, v in e.get("readings", {}).items()]
        elif name == "scale":
            parts = [(f"scale {int(k):,}", v) for k, v in e.get("sizes", {}).items()]
        else:
            parts = [(name, e)]
        for label, v in parts:
            final = v.get("final")
            for r in RULES:
                m = final["rules"][r] if final else None
                if m is not None and r == "r2" and not v.get("rule2_scored", True):
                    m = None
                out.append((label, r, m, v["times"].get(r, {})))
    return out


def console_table(results: dict, only: str | None = None):
    from rich.table import Table

    from rescind.bench.rules_report import SHORT

    t = Table(title="retraction rules: final state", title_justify="left")
    for col in ("scenario", "rule", "contam. left", "collateral", "recalled/missed",
                "held/wrongly", "ms"):
        t.add_column(col, justify="left" if col in ("scenario", "rule") else "right")
    for label, r, m, tm in rows(results, only):
        ms = f"{tm['median_ms']:.1f}" if tm else ""
        if m is None:
            t.add_row(label, SHORT[r], "", "", "", "", ms)
        else:
            t.add_row(label, SHORT[r], f"{m['contamination_left']} of {m['contaminated']}",
                      str(m["collateral"]),
                      f"{m['recalled'] - m['recalled_wrongly']}/{m['recalls_missed']}",
                      f"{m['held'] - m['held_wrongly']}/{m['held_wrongly']}", ms)
    return t


def table_text(results: dict, only: str | None = None) -> str:
    lines = ["| scenario | rule | contamination left | collateral | recalled / missed | "
             "held / wrongly held | ms per retraction (median) |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for label, r, m, t in rows(results, only):
        ms = f"{t['median_ms']:.1f}" if t else ""
        if m is None:
            lines.append(f"| {label} | {TITLES[r]} | | | | | {ms} |")
            continue
        lines.append(
            f"| {label} | {TITLES[r]} | {m['contamination_left']} of {m['contaminated']} | "
            f"{m['collateral']} | {m['recalled'] - m['recalled_wrongly']} / {m['recalls_missed']} |"
            f" {m['held'] - m['held_wrongly']} / {m['held_wrongly']} | {ms} |")
    return "\n".join(lines)


def write(results: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "rules.json").write_text(json.dumps(results, indent=1) + "\n")
    from rescind.bench.rules_report import markdown, plots

    (out / "rules.md").write_text(markdown(results, table_text(results)))
    plots(results, out)
