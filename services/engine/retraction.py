"""Retract a source over a window, withdraw or correct one memory, reinstate any of them.

Each is previewed first: the region downstream of what changed is found one hop at a time,
settled in memory, and described as a blast radius; nothing is written. Commit writes every
status change of the preview in one atomic query, guarded by the revision the preview saw.
"""

from __future__ import annotations

import functools
import json
import operator
import time
from dataclasses import dataclass, field

import orjson

from rescind.contract.errors import IdInUse, Invalid, NotFound
from rescind.contract.events import memory_id
from rescind.contract.kinds import IN, OUT, MemoryKind
from rescind.core.belief import Grounding, Node, Rules, Status, Window, settle
from rescind.core.changes import status_changes
from rescind.core.shapes import BlastItem, BlastRadius, Change, Mutation, RetractionResult
from rescind.engine import collector
from rescind.graph.store import TenantGraph, linearised
from rescind.runtime.telemetry import retraction_ms, tracer


@dataclass(frozen=True)
class Retract:
    id: str
    source: str
    start: int | None = None
    end: int | None = None
    reason: str = ""
    by: str = ""
    kind: str = "retract"


@dataclass(frozen=True)
class Withdraw:
    id: str
    memory: str
    reason: str = ""
    by: str = ""
    kind: str = "withdraw"


@dataclass(frozen=True)
class Correct:
    """Replace ``memory`` by ``text``, which rests on the reviewer ``by`` as a source of its own."""

    id: str
    memory: str
    text: str
    by: str
    reason: str = ""
    name: str | None = None  # what the caller calls the new memory
    kind: str = "correct"


@dataclass(frozen=True)
class Reinstate:
    retraction: str
    by: str = ""
    kind: str = "reinstate"

    @property
    def id(self) -> str:
        return f"{self.retraction}~reinstated"


Operation = Retract | Withdraw | Correct | Reinstate



@dataclass
class Preview:
    """What an operation would change, computed at graph revision ``rev``; nothing written."""

    op: Operation
    rev: int
    before: dict[str, Status]
    after: dict[str, Status]
    kinds: dict[str, str]
    executed: set[str]
    mutation: Mutation = field(repr=False)
    repeated: RetractionResult | None = None  # stored, when this operation was committed already

    @functools.cached_property
    def changed(self) -> dict[str, Status]:
        return {m: s for m, s in self.after.items() if self.before.get(m) != s}

    def blast_radius(self) -> BlastRadius:
        """Memories this operation takes OUT (or brings IN), by kind, with hop distances."""
        going = IN if isinstance(self.op, Reinstate) else OUT
        radius = BlastRadius(going)
        before, kinds, executed = self.before, self.kinds, self.executed
        by_hops: dict[int, list[tuple[str, int | None]]] = {}
        for mid, st in self.changed.items():
            if st.status == going and (mid not in before or before[mid].status != going):
                by_hops.setdefault(st.hops or 0, []).append((mid, st.hops))
        listed = {MemoryKind.OBSERVATION: radius.observations, MemoryKind.PLAN: radius.plans,
                  MemoryKind.ANSWER: radius.answers}
        for hops in sorted(by_hops):  # nearest first, then by id
            for mid, h in sorted(by_hops[hops], key=_first):
                kind = kinds.get(mid, MemoryKind.BELIEF)
                if kind == MemoryKind.ACTION:
                    into = radius.executed_actions if mid in executed else radius.pending_actions
                else:
                    into = listed.get(kind, radius.beliefs)
                into.append(BlastItem(mid, h))
        return radius

    def result(self) -> RetractionResult:
        changed = {m: Change(*s) for m, s in sorted(self.changed.items())}
        return RetractionResult(self.op.kind, self.op.id, self.rev, changed, self.blast_radius())

_first = operator.itemgetter(0)


def preview(graph: TenantGraph, op: Operation, at: int = 0) -> Preview:
    target = op.retraction if isinstance(op, Reinstate) else op.id
    # Read the revision first: anything written after it makes the commit stale.
    window = (op.source, op.start, op.end) if isinstance(op, Retract) else None
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
        _drop(rules, op.retraction)
        mutation.retraction_updates.append({"id": op.retraction, "props": {
            "state": "reinstated", "reinstated_by": op.by, "reinstated_at": at}})
    else:
        if stored is not None:
            if stored["state"] == "reinstated" or not _same(stored, op):
                raise IdInUse(f"retraction id {op.id!r} is already used")
            return _repeat(op, rev, stored["result"])
        props = {"id": op.id, "kind": op.kind, "state": "committed", "order": order,
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

    region = graph.region(seeds, seed_facts)  # a new correction's memory is not in the graph yet
    for mid, node in extra.items():
        if mid in region.nodes:
            region.nodes[mid].groundings.extend(node.groundings)
        else:
            region.nodes[mid], region.kinds[mid], region.hops[mid] = node, node.kind, 0
    for w in mutation.updates:  # the withdrawal this operation adds, as the region will see it
        if w["id"] in region.nodes and "withdrawn_by" in w["props"]:
            region.nodes[w["id"]].withdrawn_by = list(w["props"]["withdrawn_by"])
    after = settle(region.nodes, region.boundary, rules)
    before = {m: region.status[m] for m in region.nodes if m in region.status}
    p = Preview(op, rev, before, after, region.kinds, region.executed, mutation)
    born = {m["id"]: m for m in mutation.mems}
    node = {mid: n for n, mid in region.mid.items()}
    moved = []
    for mid, st in p.changed.items():
        if mid in born:  # created by this commit: its status goes in with it
            born[mid].update(status=st.status, cause=st.cause, hops=st.hops, born=st.status,
                             born_cause=st.cause, born_hops=st.hops)
        else:
            moved.append((node[mid], st))
    mutation.changes = status_changes(moved, rev + 1, op.kind, op.id, at)
    return p


def _same(stored: dict, op: Retract | Withdraw | Correct) -> bool:
    """Whether a stored record is this operation again (a repeat), not another under its id."""
    if stored["kind"] != op.kind:
        return False
    if isinstance(op, Retract):
        return (stored.get("source"), stored.get("start"), stored.get("end")) == \
            (op.source, op.start, op.end)
    if isinstance(op, Correct):
        return (stored.get("memory"), stored.get("text")) == (op.memory, op.text)
    return stored.get("memory") == op.memory


def commit(graph: TenantGraph, p: Preview) -> RetractionResult:
    """Apply a preview atomically; StalePreview if the graph moved since; a repeat is a no-op."""
    if p.repeated is not None:
        return p.repeated
    result = p.result()
    if isinstance(p.op, Reinstate):
        p.mutation.retraction_updates[-1]["props"]["undo_result"] = _dumps(result)
    else:
        p.mutation.retractions[-1]["result"] = _dumps(result)
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
    with collector.paused():
        result = linearised(graph, attempt)
    retraction_ms.record((time.perf_counter() - started) * 1000, {"op": op.kind})
    return result


def _dumps(result: RetractionResult) -> str:
    return orjson.dumps(result.to_dict()).decode()


def _repeat(op: Operation, rev: int, stored: str) -> Preview:
    return Preview(op, rev, {}, {}, {}, set(), Mutation(op=op.kind),
                   repeated=RetractionResult.from_dict(json.loads(stored)))


def _seeds(graph: TenantGraph, stored: dict) -> list[str]:
    if stored["kind"] == "retract":
        return graph.window_seeds(stored["source"], stored.get("start"), stored.get("end"))
    if stored["kind"] == "correct":
        return [stored["memory"], stored["new_memory"]]
    return [stored["memory"]]


def _drop(rules: Rules, rid: str) -> None:
    rules.windows = [w for w in rules.windows if w.id != rid]
    rules.withdrawal_order.pop(rid, None)
    rules.corrections.pop(rid, None)


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
