"""Retract a source over a window, withdraw or correct one memory, reinstate any of them.

Each is previewed first: the region downstream of what changed is found one hop at a time,
settled in memory (``rescind.core.operations``, on plain facts), and described as a blast
radius; nothing is written. Commit writes every status change of the preview in one atomic
query, guarded by the revision the preview saw.
"""

from __future__ import annotations

import time

from rescind.contract.errors import IdInUse, Invalid, NotFound
from rescind.contract.events import memory_id
from rescind.core.belief import Grounding, Node, Window
from rescind.core.operations import (
    Correct,
    Operation,
    Preview,
    Reinstate,
    Retract,
    Withdraw,
    drop,
    same,
    settle_preview,
)
from rescind.core.shapes import Mutation, RetractionResult, RetractionRow, stored_result
from rescind.engine import collector
from rescind.graph.store import TenantGraph, linearised
from rescind.runtime.telemetry import retraction_ms, tracer


def preview(graph: TenantGraph, op: Operation, at: int = 0) -> Preview:
    target = op.retraction if isinstance(op, Reinstate) else op.id
    # Read the revision first: anything written after it makes the commit stale.
    window = (op.source, op.start, op.end) if isinstance(op, Retract) else None
    with tracer.start_as_current_span("rescind.context"):
        rev, stored, rules, source_known, window_facts = graph.context(target, window)
    seed_facts = None
    order = rev + 1
    mutation = Mutation(op=op.kind, at=at)
    extra: dict[str, Node] = {}

    if isinstance(op, Reinstate):
        if stored is None:
            raise NotFound(f"no retraction {op.retraction!r} to reinstate")
        if stored["state"] == "reinstated":
            return _repeat(op, rev, stored["undo_result"])
        seeds = _seeds(graph, stored)
        drop(rules, op.retraction)
        mutation.retraction_updates.append({"id": op.retraction, "props": {
            "state": "reinstated", "reinstated_by": op.by, "reinstated_at": at}})
    else:
        if stored is not None:
            if stored["state"] == "reinstated" or not same(stored, op):
                raise IdInUse(f"retraction id {op.id!r} is already used")
            return _repeat(op, rev, stored["result"])
        props: RetractionRow = {"id": op.id, "kind": op.kind, "state": "committed",
                                "order": order,
                 "reason": op.reason, "by": op.by, "at": at}
        if isinstance(op, Retract):
            if not source_known:
                raise Invalid(f"unknown source {op.source!r}")
            if op.start is not None and op.end is not None and op.start > op.end:
                raise Invalid("the window ends before it starts")
            props.update(source=op.source, start=op.start, end=op.end)
            rules.windows.append(Window(op.id, op.source, op.start, op.end, order))
            seeds, seed_facts = [], window_facts
        else:
            old = graph.nodes([op.memory]).get(op.memory)
            if old is None:
                raise NotFound(f"unknown memory {op.memory!r}")
            rules.withdrawal_order[op.id] = order
            props["memory"] = op.memory
            seeds = [op.memory]
            mutation.updates.append(
                {"id": op.memory, "props": {"withdrawn_by": old.withdrawn_by + [op.id]}})
            if isinstance(op, Correct):
                new_id = memory_id(graph.tenant, old.kind, op.text)
                if new_id == op.memory:
                    raise Invalid("the correction says the same as the memory it corrects")
                props.update(new_memory=new_id, text=op.text)
                rules.corrections[op.id] = order
                extra = _correction_parts(graph, op, old, new_id, at, rev, mutation)
                seeds = [op.memory, new_id]
        mutation.retractions.append(props)

    with tracer.start_as_current_span("rescind.walk") as span:
        region = graph.region(seeds, seed_facts)  # a new correction's memory is not in it yet
        span.set_attribute("rescind.region", len(region.nodes))
    with tracer.start_as_current_span("rescind.settle"):
        return settle_preview(op, rev, region, extra, mutation, rules, at)


def commit(graph: TenantGraph, p: Preview) -> RetractionResult:
    """Apply a preview atomically; StalePreview if the graph moved since; a repeat is a no-op."""
    if p.repeated is not None:
        return p.repeated
    with tracer.start_as_current_span("rescind.result"):
        result = p.result()
        if isinstance(p.op, Reinstate):
            p.mutation.retraction_updates[-1]["props"]["undo_result"] = result.stored()
        else:
            p.mutation.retractions[-1]["result"] = result.stored()
    with tracer.start_as_current_span("rescind.apply"):
        graph.apply(p.mutation, p.rev)
    return result


def run(graph: TenantGraph, op: Operation, at: int = 0) -> RetractionResult:
    """Preview and commit, previewing again whenever a concurrent write made it stale."""

    def attempt() -> RetractionResult:
        with tracer.start_as_current_span("rescind.preview", attributes={"rescind.op": op.kind}):
            p = preview(graph, op, at)
        with tracer.start_as_current_span("rescind.commit", attributes={
                "rescind.changed": len(p.changed) if p.repeated is None else 0}):
            return commit(graph, p)

    started = time.perf_counter()
    with (tracer.start_as_current_span("rescind.retraction", attributes={"rescind.op": op.kind}),
          collector.paused()):
        result = linearised(graph, attempt, free_tries=0)  # a decision: the writers wait
    retraction_ms.record((time.perf_counter() - started) * 1000, {"op": op.kind})
    return result


def _repeat(op: Operation, rev: int, stored: str) -> Preview:
    return Preview(op, rev, {}, {}, {}, set(), Mutation(op=op.kind),
                   repeated=RetractionResult.from_dict(stored_result(stored)))


def _seeds(graph: TenantGraph, stored: dict) -> list[str]:
    if stored["kind"] == "retract":
        return graph.window_seeds(stored["source"], stored.get("start"), stored.get("end"))
    if stored["kind"] == "correct":
        return [stored["memory"], stored["new_memory"]]
    return [stored["memory"]]


def _correction_parts(graph, op: Correct, old: Node, new_id: str, at: int, rev: int,
                      mutation: Mutation):
    """The reviewer source, the new memory and its grounding: written only on commit."""
    if graph.source(op.by) is None:
        mutation.sources.append({"id": op.by, "kind": "reviewer", "name": op.by, "domain": op.by})
    if graph.statuses([new_id]):  # the correction restates a memory the graph already holds
        mutation.updates.append({"id": new_id, "props": {"grounded": True}})
    else:
        mutation.mems.append({"id": new_id, "kind": old.kind, "text": op.text, "at": at,
                              "agent": op.by, "status": "OUT", "born": "OUT",
                              "born_rev": rev + 1, "names": [op.name or op.id], "grounded": True})
    mutation.groundings.append(
        {"id": f"{op.id}~grounding", "source": op.by, "mem": new_id, "at": at, "via": op.id})
    mutation.supersedes.append({"new": new_id, "old": op.memory, "by": op.id})
    node = Node(id=new_id, kind=old.kind, groundings=[Grounding(op.by, at, op.id)])
    return {new_id: node}


# The operations are defined with their pure half in rescind.core.operations; callers name them
# here, beside preview, commit and run.
__all__ = ["Correct", "Operation", "Preview", "Reinstate", "Retract", "Withdraw", "commit",
           "preview", "run"]
