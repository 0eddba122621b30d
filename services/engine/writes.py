"""Justified writes: observations, memories and actions, in batches, idempotent by event id.

A batch is computed in Python against one graph revision and written in one atomic query
guarded by that revision, so a write that races a retraction is recomputed, never stale.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from services.graph.store import Mutation, StalePreview, TenantGraph

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


def record(graph: TenantGraph, writes: list[Write], retries: int = 20) -> list[Status]:
    """Apply ``writes`` in order; returns the status each written memory has afterwards."""
    for _ in range(retries):
        rev = graph.revision()
        mutation, statuses = _plan(graph, writes)
        if mutation is None:
            return statuses
        try:
            graph.apply(mutation, rev)
            return statuses
        except StalePreview:
            continue
    raise StalePreview(f"gave up after {retries} attempts: the graph kept changing")


def _plan(graph: TenantGraph, writes: list[Write]) -> tuple[Mutation | None, list[Status]]:
    seen = graph.existing_events(
        [w.event_id for w in writes if w.source is None],
        [{"id": w.event_id, "mem": w.mem_id} for w in writes if w.source is not None],
    )
    batch_ids = {w.mem_id for w in writes}
    premise_ids = {p for w in writes for p in w.premises}
    known = graph.statuses(batch_ids | premise_ids)
    missing = sorted(p for p in premise_ids if p not in known and p not in batch_ids)
    if missing:
        raise UnknownPremise(missing)
    fresh = [w for w in writes if w.event_id not in seen]
    if not fresh:
        return None, [known[w.mem_id] for w in writes]

    rules = graph.rules()
    new_ids = [w.mem_id for w in fresh if w.mem_id not in known]
    # Existing memories that were OUT may come IN with a new reason; their dependents with them.
    revived = {w.mem_id for w in fresh if w.mem_id in known and not known[w.mem_id].is_in}
    region: dict[str, Node] = graph.region(revived).nodes if revived else {}
    for mid in new_ids:
        region.setdefault(mid, Node(id=mid))
    mutation = Mutation(op="write", at=max(w.at for w in fresh))
    created: set[str] = set()
    for w in fresh:
        node = region.get(w.mem_id)
        if node is not None:
            node.kind = w.kind
        if w.source is not None:
            g = Grounding(w.source, w.at, None)
            if node is not None:
                node.groundings.append(g)
            mutation.groundings.append(
                {"id": w.event_id, "source": w.source, "mem": w.mem_id, "at": w.at, "via": None}
            )
        else:
            if node is not None:
                node.justifications.append(tuple(sorted(w.premises)))
            mutation.justifications.append({
                "id": w.event_id, "mem": w.mem_id, "premises": list(w.premises),
                "agent": w.agent, "run": w.run, "at": w.at, "rule": w.rule,
            })
        if w.mem_id not in known and w.mem_id not in created:
            created.add(w.mem_id)
            props = {"id": w.mem_id, "kind": w.kind, "text": w.text, "at": w.at,
                     "agent": w.agent, "run": w.run, "status": "OUT", **w.extra}
            mutation.mems.append({"id": w.mem_id, "name": w.name or w.event_id, "props": props})
        else:
            mutation.mems.append({"id": w.mem_id, "name": w.name or w.event_id, "props": {}})
    boundary_ids = {p for n in region.values() for j in n.justifications for p in j} - set(region)
    known.update(graph.statuses(boundary_ids - known.keys()))
    boundary = {p: known[p] for p in boundary_ids if p in known}
    result = settle(region, boundary, rules)
    for mid, st in result.items():
        before = known.get(mid)
        if before is None or before != st:
            mutation.changes.append({"id": mid, "status": st.status, "cause": st.cause,
                                     "hops": st.hops})
    final = {**known, **result}
    return mutation, [final[w.mem_id] for w in writes]


def execute(graph: TenantGraph, action: str, at: int) -> None:
    """Record that a proposed action was carried out."""
    mutation = Mutation(op="execute", at=at,
                        updates=[{"id": action, "props": {"executed": True, "executed_at": at}}])
    for _ in range(20):
        try:
            graph.apply(mutation, graph.revision())
            return
        except StalePreview:
            continue
    raise StalePreview("gave up: the graph kept changing")


__all__ = ["IN", "MEMORY_KINDS", "UnknownPremise", "UnknownSource", "Write", "execute", "record"]
