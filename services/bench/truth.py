"""Ground truth for `rescind bench rules`, computed apart from the engine under test.

Plain Python data in, sets out; nothing here imports ``services.engine`` or touches FalkorDB.
Status is recomputed from scratch by naive iteration (pass over every memory until nothing
changes), which is slow but hard to get wrong, so the benchmark's figures and its tests do not
rest on the code they judge.

"Contaminated" means: the memory was IN before the retractions, and every reason it has now
rests on sources no longer trusted (observations read inside a retraction window). It says
nothing about whether the memory is false: a retracted paper may be right, an attacker's page
may repeat a true address. "Kept" (an independent reason) means: still IN once the retractions
are applied.

The simpler rules are defined here too, as standing sets over the whole graph (for the tests):
1. ``seeds``: the compromised source's observations inside the windows;
2. ``similar``: the seeds, and every memory whose vector is at least ``threshold`` (cosine)
   from a seed's;
3. ``one_hop``: the seeds, and every memory with a justification that has a seed as premise;
4. ``downstream``: everything reachable from the seeds along premises.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

Window = tuple[str, "int | None", "int | None"]  # (source, start, end); None is an open end


@dataclass
class Facts:
    """What was written so far: kinds, groundings (source, at), justifications, payments."""

    kinds: dict[str, str] = field(default_factory=dict)
    groundings: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    justifications: dict[str, list[tuple[str, ...]]] = field(default_factory=dict)
    executed: set[str] = field(default_factory=set)
    pending: set[str] = field(default_factory=set)
    amounts: dict[str, float] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)

    def add(self, mem: str, kind: str, source: str | None = None, at: int = 0,
            premises: Iterable[str] = (), executed: bool | None = None,
            amount: float | None = None, name: str | None = None) -> bool:
        """Record one write; True when it created the memory."""
        new = mem not in self.kinds
        if new:
            self.kinds[mem] = kind
            self.groundings[mem] = []
            self.justifications[mem] = []
        if source is not None:
            self.groundings[mem].append((source, at))
        else:
            self.justifications[mem].append(tuple(premises))
        if kind == "action":
            if executed:
                self.executed.add(mem)
                self.pending.discard(mem)
            elif mem not in self.executed:
                self.pending.add(mem)
            if amount is not None:
                self.amounts[mem] = float(amount)
        if name and new:
            self.names[mem] = name
        return new


def covered(grounding: tuple[str, int], windows: Iterable[Window]) -> bool:
    source, at = grounding
    return any(s == source and (a is None or at >= a) and (b is None or at <= b)
               for s, a, b in windows)


def trusted(facts: Facts, windows: list[Window]) -> set[str]:
    """The IN memories: least fixpoint by naive passes, starting from nothing IN."""
    inn: set[str] = set()
    grounded = {m for m, gs in facts.groundings.items()
                if any(not covered(g, windows) for g in gs)}
    changed = True
    while changed:
        changed = False
        for m, justs in facts.justifications.items():
            if m in inn:
                continue
            if m in grounded or any(all(p in inn for p in j) for j in justs):
                inn.add(m)
                changed = True
    return inn


def seeds(facts: Facts, windows: list[Window]) -> set[str]:
    """Rule 1: observations with a grounding inside a window."""
    return {m for m, gs in facts.groundings.items() if any(covered(g, windows) for g in gs)}


def one_hop(facts: Facts, windows: list[Window]) -> set[str]:
    """Rule 3: the seeds and every memory with a seed among the premises of a justification."""
    s = seeds(facts, windows)
    return s | {m for m, justs in facts.justifications.items()
                if any(p in s for j in justs for p in j)}


def downstream(facts: Facts, windows: list[Window]) -> set[str]:
    """Rule 4: everything reachable from the seeds, whatever other reasons it has."""
    out = seeds(facts, windows)
    changed = True
    while changed:
        changed = False
        for m, justs in facts.justifications.items():
            if m not in out and any(p in out for j in justs for p in j):
                out.add(m)
                changed = True
    return out


def similar(facts: Facts, windows: list[Window], vectors: Mapping[str, list[float]],
            threshold: float) -> set[str]:
    """Rule 2 (for tests, plain Python): seeds, and memories near a seed by cosine."""
    s = seeds(facts, windows)
    out = set(s)
    for m in facts.kinds:
        if m not in out and any(_cos(vectors[m], vectors[x]) >= threshold for x in s):
            out.add(m)
    return out


def _cos(a: list[float], b: list[float]) -> float:
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(x * x for x in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / (na * nb) if na and nb else 0.0


def upstream(facts: Facts, mem: str) -> set[str]:
    """``mem`` and everything its justifications rest on, transitively."""
    seen, todo = {mem}, [mem]
    while todo:
        for j in facts.justifications.get(todo.pop(), ()):
            for p in j:
                if p not in seen:
                    seen.add(p)
                    todo.append(p)
    return seen


@dataclass
class Truth:
    """The reading of one moment: IN with no retraction, and IN with the active ones."""

    before: set[str]
    after: set[str]

    @property
    def contaminated(self) -> set[str]:
        return self.before - self.after


def judge(facts: Facts, windows: list[Window]) -> Truth:
    return Truth(before=trusted(facts, []), after=trusted(facts, windows))


def score(facts: Facts, truth: Truth, out: set[str]) -> dict:
    """How one rule's OUT set compares with the truth, over the memories written so far."""
    existing = facts.kinds.keys()
    out = out & existing
    bad = truth.contaminated
    left = bad - out
    executed, pending = facts.executed, facts.pending

    def money(ids: set[str]) -> float:
        return round(sum(facts.amounts.get(m, 0.0) for m in ids), 2)

    return {
        "out": len(out),
        "contaminated": len(bad),
        "caught": len(bad & out),
        "contamination_left": len(left),
        "contamination_left_by_kind": _by_kind(facts, left),
        "collateral": len(truth.after & out),
        "collateral_by_kind": _by_kind(facts, truth.after & out),
        "recalled": len(executed & out),
        "recalled_wrongly": len(executed & truth.after & out),
        "recalls_missed": len(executed & left),
        "recalled_amount": money(executed & bad & out),
        "missed_amount": money(executed & left),
        "held": len(pending & out),
        "held_wrongly": len(pending & truth.after & out),
        "holds_missed": len(pending & left),
    }


def _by_kind(facts: Facts, ids: set[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for m in ids:
        counts[facts.kinds[m]] = counts.get(facts.kinds[m], 0) + 1
    return dict(sorted(counts.items()))
