"""The shapes that cross layers, named once: a reader learns each from its definition here.

- ``WriteBatch``: the justified writes one guarded query sends (planned by
  ``rescind.core.planning``).
- ``Mutation``: everything one atomic graph write changes (planned by the engine, written by
  ``rescind.graph``).
- The rows inside those two (``MemRow``, ``Update``, ``GroundingRow``, ...): ``TypedDict``s,
  plain dicts at run time, as the queries take them as parameters.
- ``Region``: the memories downstream of some seeds, as the belief rule needs them (read by
  ``rescind.graph.region``, settled by ``rescind.core.operations``).
- ``BlastRadius``: what an operation takes OUT (or brings back IN), by kind, nearest first.
- ``RetractionResult``: what a committed operation did: its status changes and blast radius.
  It is stored with the operation (as JSON) and returned again when the operation repeats.
- ``Recall``: a drafted bank recall of an executed payment, for finance.
- ``GateDecision``: the payment gate's answer about one action.

Plain dataclasses with slots: a 10k-memory retraction builds 10k ``BlastItem``s, and orjson
encodes dataclasses natively; ``to_dict``/``from_dict`` give the stored and published form.
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, TypedDict

import orjson

from rescind.core.belief import Node, Status

# The blast radius's groups, in the order people read them.
BLAST_GROUPS = ("observations", "beliefs", "plans", "answers", "executed_actions",
                "pending_actions")


# -- the rows inside a WriteBatch and a Mutation ----------------------------------------------
# Typed dicts: each is sent to FalkorDB as a query parameter as it is, so a row stays a plain
# dict (no copy of a 10k-memory write); the field names are those the queries read
# (rescind.graph.queries.writes, whose field tuples a test compares with these). A row's
# required fields are declared in a base of its own: annotations are strings in this module,
# and ``Required`` inside a string is not seen by ``__required_keys__``.


class SourceRow(TypedDict):
    """A source to make (``Mutation.sources``)."""

    id: str
    kind: str
    name: str
    domain: str


class _Named(TypedDict):
    id: str
    kind: str


class MemRow(_Named, total=False):
    """A new memory (``Mutation.mems``, ``WriteBatch.new``): ``queries.MEM_FIELDS`` and its
    status (``queries.STATUS_FIELDS``); a field left out is not set on the node."""

    text: str
    at: int
    agent: str
    run: str
    names: list[str]
    born: str  # the status it was born with, and why
    born_rev: int
    born_cause: str
    born_hops: int
    grounded: bool
    amount: float
    currency: str
    payee: str
    account: str
    reference: str
    executed: bool
    executed_at: int
    seq: int
    key: str  # a store memory's namespace/key, shared by its versions
    withdrawn_by: list[str]
    trace: str
    replaced: str | None
    ungrounded: list[str]  # the high-value identifiers no premise states
    status: str  # its status now (the STATUS edge)
    cause: str | None
    hops: int | None


class Update(TypedDict):
    """Properties set on an existing memory (``updates``) or retraction
    (``Mutation.retraction_updates``), found by its id."""

    id: str
    props: dict[str, Any]


class _Said(TypedDict):
    id: str
    source: str
    mem: str
    at: int


class GroundingRow(_Said, total=False):
    """A source said a memory (a SAID edge); ``via``: the correction that made it (a
    ``Mutation``'s only; a ``WriteBatch``'s groundings have none)."""

    via: str | None


class JustificationRow(TypedDict):
    """A reason for a memory: the premises it rests on (``WriteBatch.justifications``)."""

    id: str
    mem: str
    premises: list[str]
    agent: str | None
    run: str | None
    at: int
    rule: str  # how the premises were chosen: declared, matched, lineage, ...


class IdentRow(TypedDict):
    """A new observation states the identifier ``key`` (``WriteBatch.idents``)."""

    key: str
    mem: str


class _Decided(_Named):
    state: str


class RetractionRow(_Decided, total=False):
    """A new retraction, withdrawal or correction (``Mutation.retractions``):
    ``queries.RETRACTION_FIELDS``."""

    order: int
    reason: str | None
    by: str | None
    at: int
    source: str  # a retraction's: the source and its window
    start: int | None
    end: int | None
    memory: str  # a withdrawal's or correction's memory
    new_memory: str  # a correction's new memory and its text
    text: str
    result: str  # RetractionResult.stored(), set on commit


class SupersedeRow(TypedDict):
    """A correction's new memory replaces the old (a SUPERSEDES edge)."""

    new: str
    old: str
    by: str


class StatusGroup(TypedDict):
    """Status changes of existing memories that set one status (``core.changes``): ``ids``
    are node ids in a ``Mutation``, memory ids in a ``WriteBatch``."""

    status: str
    cause: str | None
    hops: int | None
    entry: str  # the JSON history line appended to each
    ids: list[Any]


class OutboxRow(TypedDict):
    """A message for the outside, sent once the mutation is in (``Mutation.outbox``)."""

    id: str
    action: str
    by: str
    at: int
    payload: str


@dataclass
class WriteBatch:
    """Justified writes, sent in one guarded query (``queries.WRITE_BATCH``)."""

    at: int  # the latest moment among the writes
    new: list[MemRow] = field(default_factory=list)  # new memories, with their born status
    updates: list[Update] = field(default_factory=list)  # of existing memories
    changes: list[StatusGroup] = field(default_factory=list)  # of existing memories
    groundings: list[GroundingRow] = field(default_factory=list)  # without ``via``
    justifications: list[JustificationRow] = field(default_factory=list)
    idents: list[IdentRow] = field(default_factory=list)  # of new observations

    def params(self, rev: int) -> dict[str, Any]:
        return {"rev": rev, "at": self.at, "new": self.new, "updates": self.updates,
                "changes": self.changes, "groundings": self.groundings,
                "justifications": self.justifications, "idents": self.idents}


@dataclass
class Mutation:
    """Everything one atomic write changes; each list may be empty."""

    op: str
    at: int | None = None
    sources: list[SourceRow] = field(default_factory=list)
    mems: list[MemRow] = field(default_factory=list)  # new memories
    updates: list[Update] = field(default_factory=list)  # of existing memories
    groundings: list[GroundingRow] = field(default_factory=list)
    retractions: list[RetractionRow] = field(default_factory=list)  # new ones
    retraction_updates: list[Update] = field(default_factory=list)  # of existing ones
    supersedes: list[SupersedeRow] = field(default_factory=list)
    changes: list[StatusGroup] = field(default_factory=list)  # of existing memories
    outbox: list[OutboxRow] = field(default_factory=list)

    def params(self, rev: int) -> dict[str, Any]:
        return {
            "rev": rev, "sources": self.sources, "mems": self.mems,
            "updates": self.updates, "groundings": self.groundings,
            "retractions": self.retractions, "retraction_updates": self.retraction_updates,
            "supersedes": self.supersedes, "changes": self.changes, "outbox": self.outbox,
        }


@dataclass
class Region:
    """A downstream-closed set of memories as the belief rule needs them, read hop by hop."""

    hops: dict[str, int] = field(default_factory=dict)
    nodes: dict[str, Node] = field(default_factory=dict)
    status: dict[str, Status] = field(default_factory=dict)  # region and premises outside it
    kinds: dict[str, str] = field(default_factory=dict)
    executed: set[str] = field(default_factory=set)
    grounded: set[str] = field(default_factory=set)
    withdrawn: set[str] = field(default_factory=set)  # ever withdrawn: their lists are read last
    mid: dict[int, str] = field(default_factory=dict)  # FalkorDB node id -> memory id
    premises: dict[tuple[int, int], list[int]] = field(default_factory=dict)  # (node, just.)

    @property
    def boundary(self) -> dict[str, Status]:
        ids = {p for n in self.nodes.values() for j in n.justifications for p in j}
        return {p: self.status[p] for p in ids - self.nodes.keys() if p in self.status}


@dataclass(slots=True)
class BlastItem:
    """One memory in a blast radius, ``hops`` from what the operation changed itself."""

    id: str
    hops: int | None


@dataclass(slots=True)
class BlastRadius:
    """Memories an operation takes OUT (``direction`` "OUT") or brings back IN, by group."""

    direction: str
    observations: list[BlastItem] = field(default_factory=list)
    beliefs: list[BlastItem] = field(default_factory=list)
    plans: list[BlastItem] = field(default_factory=list)
    answers: list[BlastItem] = field(default_factory=list)
    executed_actions: list[BlastItem] = field(default_factory=list)  # to recall
    pending_actions: list[BlastItem] = field(default_factory=list)  # to hold

    def groups(self) -> Iterator[tuple[str, list[BlastItem]]]:
        """Each group's name and items, in ``BLAST_GROUPS`` order."""
        for name in BLAST_GROUPS:
            yield name, getattr(self, name)

    @property
    def counts(self) -> dict[str, int]:
        return {name: len(items) for name, items in self.groups()}

    def items(self) -> Iterator[BlastItem]:
        for _, group in self.groups():
            yield from group

    def to_dict(self) -> dict:
        return {"direction": self.direction, "counts": self.counts,
                **{name: [{"id": i.id, "hops": i.hops} for i in items]
                   for name, items in self.groups()}}

    @classmethod
    def from_dict(cls, d: dict) -> BlastRadius:
        return cls(d["direction"], **{name: [BlastItem(i["id"], i["hops"]) for i in d[name]]
                                      for name in BLAST_GROUPS})


# A memory's new status, the operation that caused it, and how far from it the memory is:
# the belief rule's Status itself, so that a 10k-memory result is built without a copy of each.
Change = Status


@dataclass(slots=True)
class RetractionResult:
    """What one committed operation (retract, withdraw, correct, reinstate) did."""

    op: str  # its kind
    id: str
    rev: int  # the revision it was committed at; the graph is at rev + 1 after it
    changed: dict[str, Change]
    blast_radius: BlastRadius

    def to_dict(self) -> dict:
        return {"op": self.op, "id": self.id, "rev": self.rev,
                "changed": {m: list(c) for m, c in self.changed.items()},
                "blast_radius": self.blast_radius.to_dict()}

    @classmethod
    def from_dict(cls, d: dict) -> RetractionResult:
        return cls(d["op"], d["id"], d["rev"],
                   {m: Change(*c) for m, c in d["changed"].items()},
                   BlastRadius.from_dict(d["blast_radius"]))

    def stored(self) -> str:
        """The form kept with the operation: ``to_dict``'s JSON, deflated, in base64.

        FalkorDB parses a parameter as query text, and a large result is a long JSON text with
        a quote to escape every few characters; deflated it is a fraction of that, with none
        (sizes and times: docs/performance.md)."""
        return base64.b64encode(zlib.compress(orjson.dumps(self.to_dict()), 1)).decode()


def stored_result(text: str) -> dict:
    """``RetractionResult.to_dict`` of a stored result: deflated, or plain JSON as it was
    kept before (base64 never starts with a brace)."""
    return orjson.loads(text if text.startswith("{") else zlib.decompress(base64.b64decode(text)))


@dataclass(frozen=True)
class Recall:
    """A drafted bank recall of an executed payment that went OUT; nothing leaves before finance
    approves it. ``state`` is "drafted", then "approved" (in the outbox) or "rejected" (never
    sent), and "exported" once an approved recall was written out for the bank (CSV, camt.056);
    "withdrawn" when the payment of an approved or exported recall is IN again.
    Times are ISO 8601 (UTC); who is the name that signed the decision."""

    action: str
    name: str
    amount: float | None
    payee: str | None  # as the payment recorded it (often the vendor's id)
    account: str | None
    state: str
    draft: str  # the text of the request to the bank, its state first
    currency: str | None = None  # of the amount; None: the gate's currency
    payee_name: str | None = None  # the payee's name for people and the bank
    payee_name_from: str | None = None  # where that name was read
    paid_on: str | None = None  # the bank's date, from its receipt
    bank_reference: str | None = None  # the bank's reference, from its receipt
    reference: str | None = None  # ours: the payment's name
    reason: str | None = None  # why it is recalled: the retraction's reason
    retraction: str | None = None  # the retraction that took the payment OUT
    reason_code: str | None = None  # ISO 20022's: FRAD (a compromised source), else CUST
    approved: dict | None = None  # {by, at}
    rejected: dict | None = None  # {by, at, reason}
    exports: list[dict] = field(default_factory=list)  # {by, at, format}, oldest first
    notes: list[dict] = field(default_factory=list)  # {by, at, text}, oldest first
    evidence: list[dict] = field(default_factory=list)  # what it rested on that went OUT
    outbox: str | None = None  # the outbox entry written on approval
    withdrawn: dict | None = None  # {by, at, why, retraction, change}: the payment is IN again
    notice: dict | None = None  # an exported recall's withdrawal notice for the bank

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class GateDecision:
    """The payment gate's answer: may ``action`` run, why, and how many trust domains an
    attacker would have to control to fake what it rests on."""

    action: str
    allowed: bool
    reason: str
    fragility: int
    domains: tuple[str, ...] = ()
    aggregate: float = 0.0  # already allowed to the same account or payee in the window
    base_amount: float | None = None  # the amount in the threshold's currency, when judged
    would_fall: tuple[str, ...] = ()  # one smallest set of domains that would fake it
    # what was judged: the call's values, or a released proposal's (kept with the decision)
    amount: float | None = None
    currency: str | None = None
    account: str | None = None
    payee: str | None = None
    execution: str | None = None  # what the aggregate counts once (rescind.core.gate_rule)


__all__ = ["BLAST_GROUPS", "BlastItem", "BlastRadius", "Change", "GateDecision", "GroundingRow",
           "IdentRow", "JustificationRow", "MemRow", "Mutation", "OutboxRow", "Recall", "Region",
           "RetractionResult", "RetractionRow", "SourceRow", "StatusGroup", "SupersedeRow",
           "Update", "WriteBatch", "stored_result"]
