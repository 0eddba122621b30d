"""One scenario on one graph under the five retraction rules of `rescind bench rules`.

Every scenario is loaded once, through the engine's justified writes, into one FalkorDB graph.
At each retraction every rule runs on that graph, one after another (the order rotates), timed
from its first read to its last write:

1. the compromised source's observations in the window (the seeds) are taken out;
2. the seeds and every memory whose stored vector is at least ``THRESHOLD`` (cosine) from a
   seed's (all-MiniLM-L6-v2; vectors are computed when memories are written);
3. the seeds and the memories one hop downstream of them;
4. the seeds and everything downstream of them, walked hop by hop;
5. Rescind's engine (``rescind.engine.retraction.run``: preview and commit).

Rules 1-4 are Cypher reads (``rules_queries``) plus, for rule 2, a brute-force scan of the
vectors in numpy; each writes what it takes out as ``out_rN`` on the memories (one query).
Each rule also judges later writes by its own definition: a write is born OUT under rule 1 if
it is an observation inside a window, under rule 2 if it is near a seed, under rule 3 if a
premise is a seed, under rule 4 if a premise is OUT under rule 4; under rule 5 the engine
decides. After each retraction (or group of retractions of one date) every rule's OUT set is
read back from the graph and scored by ``truth`` (which does not use the engine).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from rich.progress import Progress

from rescind.bench import rules_queries as rq
from rescind.bench import truth
from rescind.bench.rules_common import RULES, SWEEP, THRESHOLD
from rescind.bench.scenarios import Batch, Case, Checkpoint
from rescind.bench.similarity import VectorStore
from rescind.core.shapes import Mutation
from rescind.engine import retraction as ret
from rescind.engine.writes import Write, record
from rescind.graph.store import TenantGraph


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
