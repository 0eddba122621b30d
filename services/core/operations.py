"""The operations people decide on (retract a source over a window, withdraw or correct a
memory, reinstate any of them), and the pure half of previewing one: settling the region the
engine read and planning the status changes its commit will write.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from rescind.contract.kinds import IN, OUT, MemoryKind
from rescind.core.belief import Node, Rules, Status, settle
from rescind.core.changes import status_changes
from rescind.core.shapes import BlastItem, BlastRadius, Mutation, Region, RetractionResult


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
    before: dict[str, Status]  # as read: the region's and its boundary's
    after: dict[str, Status]  # the region's
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
        before, kinds, executed, changed = self.before, self.kinds, self.executed, self.changed
        by_hops: dict[int, list[str]] = {}
        for mid, st in changed.items():
            if st.status == going:
                was = before.get(mid)
                if was is None or was.status != going:
                    by_hops.setdefault(st.hops or 0, []).append(mid)
        listed = {_OBSERVATION: radius.observations, _PLAN: radius.plans,
                  _ANSWER: radius.answers}
        for hops in sorted(by_hops):  # nearest first, then by id
            for mid in sorted(by_hops[hops]):
                kind = kinds.get(mid)
                if kind == _ACTION:
                    into = radius.executed_actions if mid in executed else radius.pending_actions
                else:
                    into = listed.get(kind, radius.beliefs)
                into.append(BlastItem(mid, changed[mid].hops))
        return radius

    def result(self) -> RetractionResult:
        changed = self.changed
        return RetractionResult(self.op.kind, self.op.id, self.rev,
                                {m: changed[m] for m in sorted(changed)}, self.blast_radius())


# Plain strings: a 10k-memory blast radius compares each memory's kind with them.
_OBSERVATION, _PLAN, _ANSWER, _ACTION = (str(k) for k in (
    MemoryKind.OBSERVATION, MemoryKind.PLAN, MemoryKind.ANSWER, MemoryKind.ACTION))


def settle_preview(op: Operation, rev: int, region: Region, extra: dict[str, Node],
                   mutation: Mutation, rules: Rules, at: int) -> Preview:
    """The preview of ``op`` at ``rev``: ``region`` (what the engine read downstream of the
    seeds) settled under ``rules``, with ``extra`` (a correction's new memory) added and the
    withdrawal the operation adds applied; the status changes go into ``mutation``."""
    for mid, node in extra.items():
        if mid in region.nodes:
            region.nodes[mid].groundings.extend(node.groundings)
        else:
            region.nodes[mid], region.kinds[mid], region.hops[mid] = node, node.kind, 0
    for w in mutation.updates:  # the withdrawal this operation adds, as the region will see it
        if w["id"] in region.nodes and "withdrawn_by" in w["props"]:
            region.nodes[w["id"]].withdrawn_by = list(w["props"]["withdrawn_by"])
    after = settle(region.nodes, region.boundary, rules)
    # Before: the statuses read, the region's and its boundary's (a copy of the region's alone
    # cost a millisecond for 10k; every reader looks up the region's memories).
    p = Preview(op, rev, region.status, after, region.kinds, region.executed, mutation)
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


def same(stored: dict, op: Retract | Withdraw | Correct) -> bool:
    """Whether a stored record is this operation again (a repeat), not another under its id."""
    if stored["kind"] != op.kind:
        return False
    if isinstance(op, Retract):
        return (stored.get("source"), stored.get("start"), stored.get("end")) == \
            (op.source, op.start, op.end)
    if isinstance(op, Correct):
        return (stored.get("memory"), stored.get("text")) == (op.memory, op.text)
    return stored.get("memory") == op.memory


def drop(rules: Rules, rid: str) -> None:
    rules.windows = [w for w in rules.windows if w.id != rid]
    rules.withdrawal_order.pop(rid, None)
    rules.corrections.pop(rid, None)
