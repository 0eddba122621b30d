"""Justified writes: observations, memories and actions, in batches, idempotent by event id.

A batch is computed in Python against one graph revision and written in one atomic query
guarded by that revision, so a write that races a retraction is recomputed, never stale.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from services.graph.store import TenantGraph, linearised, status_change

from .belief import IN, Grounding, Node, Status, settle

MEMORY_KINDS = ("observation", "belief", "plan", "answer", "action")


class UnknownPremise(LookupError):
    """A write names a premise that is not in the graph (yet)."""

    def __init__(self, missing: list[str]) -> None:
        self.missing = missing
        super().__init__(f"unknown premise(s): {', '.join(missing)}")


class UnknownSource(LookupError):
    """An observation names a source that was never declared."""


@dataclass
class Write:
    """One justified write. ``mem_id`` is derived by the caller from kind and text."""

    event_id: str
    mem_id: str
    kind: str
    text: str
    at: int
    name: str | None = None  # the scenario's or agent's own name for the memory
    premises: tuple[str, ...] = ()
    source: str | None = None  # observations: who said it
    agent: str | None = None
    run: str | None = None
    rule: str = "declared"  # how the premises were chosen (scenario, model-input, run)
    extra: dict = field(default_factory=dict)  # action fields: amount, payee, executed, ...


def record(graph: TenantGraph, writes: list[Write]) -> list[Status]:
    """Apply ``writes`` in order; returns the status each written memory has afterwards."""

    def attempt() -> list[Status]:
        rev, batch, statuses = _plan(graph, writes)
        if batch is not None:
            graph.write_batch(batch, rev)
        return statuses

    return linearised(graph, attempt)


def _plan(graph: TenantGraph, writes: list[Write]) -> tuple[int, dict | None, list[Status]]:
    """The batch to write, planned against the revision it returns, and the final statuses."""
    batch_ids = {w.mem_id for w in writes}
    premise_ids = {p for w in writes for p in w.premises}
    rev, seen, known, rules = graph.write_context(
        [w.event_id for w in writes if w.source is None],
        [{"id": w.event_id, "mem": w.mem_id} for w in writes if w.source is not None],
        batch_ids | premise_ids)
    missing = sorted(p for p in premise_ids if p not in known and p not in batch_ids)
    if missing:
        raise UnknownPremise(missing)
    fresh, once = [], set()
    for w in writes:  # an event delivered twice in one batch is applied once
        if w.event_id not in seen and w.event_id not in once:
            once.add(w.event_id)
            fresh.append(w)
    if not fresh:
        return rev, None, [known[w.mem_id] for w in writes]

    # Existing memories that were OUT may come IN with a new reason; their dependents with them.
    revived = {w.mem_id for w in fresh if w.mem_id in known and not known[w.mem_id].is_in}
    region: dict[str, Node] = graph.region(revived).nodes if revived else {}
    new: dict[str, dict] = {}
    groundings, justifications = [], []
    flagged: set[str] = set()
    for w in fresh:
        if w.mem_id not in known and w.mem_id not in new:
            region[w.mem_id] = Node(id=w.mem_id, kind=w.kind)
            props = {"id": w.mem_id, "kind": w.kind, "text": w.text, "at": w.at,
                     "agent": w.agent, "run": w.run, "names": [w.name or w.event_id],
                     "born_rev": rev + 1, **w.extra}
            new[w.mem_id] = {k: v for k, v in props.items() if v is not None}
        if w.source is not None and w.mem_id in new:
            new[w.mem_id]["grounded"] = True
        elif w.source is not None:
            flagged.add(w.mem_id)  # an existing memory gains its first (or another) grounding
        elif w.mem_id in new:
            names = new[w.mem_id]["names"]
            if (w.name or w.event_id) not in names:
                names.append(w.name or w.event_id)
        node = region.get(w.mem_id)
        if w.source is not None:
            if node is not None:
                node.groundings.append(Grounding(w.source, w.at, None))
            groundings.append({"id": w.event_id, "source": w.source, "mem": w.mem_id, "at": w.at})
        else:
            if node is not None:
                node.justifications.append(tuple(sorted(w.premises)))
            justifications.append({"id": w.event_id, "mem": w.mem_id, "premises": list(w.premises),
                                   "agent": w.agent, "run": w.run, "at": w.at, "rule": w.rule})
    boundary_ids = {p for n in region.values() for j in n.justifications for p in j} - set(region)
    if boundary_ids - known.keys():  # premises of revived memories' other justifications
        known.update(graph.statuses(boundary_ids - known.keys()))
    boundary = {p: known[p] for p in boundary_ids if p in known}
    result = settle(region, boundary, rules)
    max_at = max(w.at for w in fresh)
    changes = []
    for mid, st in result.items():
        if mid in new:
            new[mid].update(status=st.status, born=st.status)
            if st.cause is not None:
                new[mid].update(cause=st.cause, hops=st.hops, born_cause=st.cause,
                                born_hops=st.hops)
        elif known.get(mid) != st:
            changes.append(status_change(mid, st, rev + 1, "write", None, max_at))
    updates = [{"id": m, "props": {"grounded": True}} for m in sorted(flagged)]
    batch = {"new": list(new.values()), "updates": updates, "changes": changes,
             "groundings": groundings, "justifications": justifications,
             "at": max_at}
    final = {**known, **result}
    return rev, batch, [final[w.mem_id] for w in writes]


def execute(graph: TenantGraph, action: str, at: int) -> None:
    """Record that a proposed action was carried out."""
    batch = {"new": [], "changes": [], "groundings": [], "justifications": [],
             "updates": [{"id": action, "props": {"executed": True, "executed_at": at}}], "at": at}
    linearised(graph, lambda: graph.write_batch(batch, graph.revision()))


__all__ = ["IN", "MEMORY_KINDS", "UnknownPremise", "UnknownSource", "Write", "execute", "record"]
