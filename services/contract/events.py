"""The event contracts: the only code the middleware and the services share.

Every event is versioned (``schema: 1``) and carries ``event_id`` (its idempotency key),
``tenant``, ``at`` and the W3C trace context of the call that caused it. How a memory's id is
derived from its kind and text is part of the contract too: the middleware cites premises by id.
"""

from __future__ import annotations

import functools
import hashlib
import operator
from datetime import UTC, datetime, timedelta
from typing import Annotated, ClassVar, Literal, get_args

from pydantic import AwareDatetime, BaseModel, BeforeValidator, ConfigDict, Field, TypeAdapter

from rescind.contract import identity
from rescind.contract import text as tx
from rescind.contract.kinds import WrittenKind

SCHEMA = 1
MAX_TEXT = 20_000

# Every text field is a ``tx.line`` (ids, names, one-line values: no control character) or a
# ``tx.text`` (free text: tab, newline and carriage return allowed): see rescind.contract.text.
Id = tx.line(200, min_length=1)
Tenant = Annotated[str, Field(pattern=r"^[a-z0-9_-]{1,64}$")]
Text = tx.text(MAX_TEXT, min_length=1)
Name = tx.line(500)  # a display name, a payee
Account = tx.line(200)
Reason = tx.text(2000)
Premises = Annotated[list[Id], Field(min_length=1, max_length=1000)]
Currency = Annotated[tx.line(3, pattern=r"^[A-Z]{3}$"), Field(description="ISO 4217 code")]
Amount = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Seq = Annotated[int, Field(ge=-2**63, lt=2**63)]  # FalkorDB clamps integers to 64 bits


def _canonical(value: object) -> object:
    """A source name (or trust domain) in canonical form (rescind.contract.identity), whoever
    built the event; one with a control character is left for the type to refuse."""
    if isinstance(value, str) and tx.problem(value, one_line=True) is None:
        return identity.source_name(value)
    return value


# A source's name, or a trust domain: every spelling of it is stored as one.
SourceName = Annotated[Id, BeforeValidator(_canonical)]

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def normalise(text: str) -> str:
    """Case-folded, runs of white space collapsed to one space, ends stripped."""
    return " ".join(text.casefold().split())


def memory_id(tenant: str, kind: str, text: str) -> str:
    """The same kind and normalised text, in one tenant, is one memory."""
    digest = hashlib.blake2b(f"{tenant}\x1f{kind}\x1f{normalise(text)}".encode(), digest_size=10)
    return f"{kind[:3]}-{digest.hexdigest()}"


@functools.lru_cache(maxsize=4096)  # a put, the read of what it replaced, the next get: one hash
def store_memory_id(tenant: str, kind: str, key: str, text: str) -> str:
    """A value an agent keeps in its store is one version of the memory at ``key``
    (namespace/key): the same text under two keys is two memories, never merged."""
    digest = hashlib.blake2b(f"{tenant}\x1fstore\x1f{key}\x1f{kind}\x1f{normalise(text)}".encode(),
                             digest_size=10)
    return f"{kind[:3]}-{digest.hexdigest()}"


def action_id(tenant: str, name: str) -> str:
    """Actions are events, not facts: each proposal is its own memory, named by its proposer."""
    digest = hashlib.blake2b(f"{tenant}\x1faction\x1f{name}".encode(), digest_size=10)
    return f"act-{digest.hexdigest()}"


def to_micros(moment: datetime) -> int:
    if moment.tzinfo is None:
        raise ValueError("a time needs a zone")
    delta = moment.astimezone(UTC) - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_micros(us: int | None) -> datetime | None:
    return None if us is None else EPOCH + timedelta(microseconds=us)


# What an event is for, declared once by each kind (``role = ...``), which says who consumes it:
#   write    what an agent did or read: the writer applies it, in batches; the API takes it
#   control  a security or finance decision: the retraction worker applies it, one at a time
#   gate     a question before an action tool runs, on the gate stream: the gate answers it
#   answer   the gate's answer, on the asker's reply list
#   status   a status a commit or a write changed, on the tenant's status stream
# The workers' handler of each kind is theirs to bind (rescind.workers.ingest); a test checks
# every kind has one. See docs/architecture.md, "How to add an event kind".
Role = Literal["write", "control", "gate", "answer", "status"]
ROLES: tuple[Role, ...] = get_args(Role)
_KINDS: list[type[Event]] = []  # every event kind, in the order declared


class Event(BaseModel):
    """Fields every event has. Each kind declares its ``role`` (one of ROLES); declaring the
    class registers it (EVENTS, AnyEvent)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    role: ClassVar[Role]

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if cls.__dict__.get("role") not in ROLES:
            raise TypeError(f"event {cls.__name__} declares no role (one of {', '.join(ROLES)})")
        tag = cls.model_fields["type"].default
        if any(k.model_fields["type"].default == tag for k in _KINDS):
            raise TypeError(f"event {cls.__name__}: type {tag!r} is taken")
        _KINDS.append(cls)

    schema_: Literal[1] = Field(SCHEMA, alias="schema", description="Contract version")
    event_id: Id = Field(description="Idempotency key: the same id is applied once")
    tenant: Tenant
    at: AwareDatetime = Field(description="When it happened, in the agent's world")
    traceparent: tx.line(55) | None = Field(None, description="W3C trace context")
    tracestate: tx.line(512) | None = None


class SourceDeclared(Event):
    """A source and its trust domain, named before (or without) anything it says."""

    type: Literal["source_declared"] = "source_declared"
    role = "write"
    source: SourceName
    source_kind: Id
    name: Name | None = None
    source_domain: SourceName | None = Field(None, description="Trust domain; defaults to the "
                                             "source id")


class ObservationRecorded(Event):
    """A source tool returned something: what the source said, read at ``at``."""

    type: Literal["observation_recorded"] = "observation_recorded"
    role = "write"
    source: SourceName
    source_kind: Id = "tool"
    source_domain: SourceName | None = Field(None, description="Trust domain; defaults to the "
                                             "source id")
    text: Text
    name: Id | None = Field(None, description="The producer's own name for the memory")


# How a write's premises were chosen: ``matched`` (the delivered items whose facts it uses),
# ``turn-context`` (nothing matched: what was delivered in the model's current turn),
# ``agent`` (nothing delivered: the agent's own say-so), ``declared`` (named by the writer:
# scenarios, the API); ``lineage`` (set by the writer, never sent: the write states a
# high-value identifier none of its premises states, and rests on an observation that does).
Rule = Literal["matched", "turn-context", "agent", "declared", "lineage"]
StoreKey = tx.line(1000, min_length=1)


class MemoryWritten(Event):
    """An agent wrote a memory; ``premises`` were in its context when it did."""

    type: Literal["memory_written"] = "memory_written"
    role = "write"
    kind: WrittenKind
    text: Text
    premises: Premises
    agent: Id
    run: Id | None = None
    rule: Rule = Field("declared", description="How the premises were chosen")
    name: Id | None = None
    key: StoreKey | None = Field(None, description="A store item: its namespace/key. The memory "
                                 "is then identified by key and text (store_memory_id), and its "
                                 "versions share the key")
    supersedes: Id | None = Field(None, description="The memory id of the value this one "
                                  "replaced at the same key: it is no longer current, and "
                                  "keeps its status (a valid premise of what rests on it)")

    def memory(self) -> str:
        if self.key is not None:
            return store_memory_id(self.tenant, self.kind, self.key, self.text)
        return memory_id(self.tenant, self.kind, self.text)


class MemoryDeleted(Event):
    """An agent deleted a store item: the version it held is no longer current (never served
    again unless written again) and keeps its status."""

    type: Literal["memory_deleted"] = "memory_deleted"
    role = "write"
    memory: Id
    key: StoreKey
    agent: Id
    run: Id | None = None


class MemoryAdopted(Event):
    """A store item that predates the wrapper, first seen on read: it becomes a memory grounded
    on the source ``store:preexisting`` (its own trust domain), unless the graph knows it."""

    type: Literal["memory_adopted"] = "memory_adopted"
    role = "write"
    kind: WrittenKind
    key: StoreKey
    text: Text

    def memory(self) -> str:
        return store_memory_id(self.tenant, self.kind, self.key, self.text)


class ActionProposed(Event):
    """An agent asked to run an action tool; amount and payee come from its arguments."""

    type: Literal["action_proposed"] = "action_proposed"
    role = "write"
    action: Id = Field(description="The proposer's name for the action; unique per tenant")
    text: Text
    premises: Premises
    agent: Id
    run: Id | None = None
    rule: Rule = "declared"
    amount: Amount | None = None
    currency: Currency | None = Field(None, description="Of the amount; None: the gate's")
    payee: Name | None = None
    account: Account | None = None
    executed: bool = False
    seq: Seq | None = Field(None, description="Orders proposals made at the same moment")


class ActionExecuted(Event):
    """The action tool ran. What the bank says it executed (read from the tool's result) is what
    a recall asks back, whatever was proposed."""

    type: Literal["action_executed"] = "action_executed"
    role = "write"
    action: Id = Field(description="The action's name, as in ActionProposed")
    receipt: Reason | None = Field(None, description="The tool's result")
    amount: Amount | None = Field(None, description="The amount executed, from the receipt")
    currency: Currency | None = None
    account: Account | None = Field(None, description="The account paid")
    reference: tx.line(200) | None = Field(None, description="The bank's reference")
    value_date: tx.line(100) | None = Field(None, description="When it was paid, as "
                                   "the receipt says")


class ActionFailed(Event):
    """The action tool raised: the proposal did not happen, and is never released."""

    type: Literal["action_failed"] = "action_failed"
    role = "write"
    action: Id = Field(description="The action's name, as in ActionProposed")
    reason: Reason = ""
    seq: Seq | None = Field(None, description="The `seq` of the proposal that failed: once the "
                            "action was proposed again, the failure of the earlier try is "
                            "ignored, whatever order the two arrive in")


class SourceCompromised(Event):
    """Security: the source is not to be trusted for reads in [start, end] (open when None)."""

    type: Literal["source_compromised"] = "source_compromised"
    role = "control"
    retraction: Id
    source: SourceName
    start: AwareDatetime | None = None
    end: AwareDatetime | None = None
    reason: Reason = ""
    by: Id


class MemoryWithdrawn(Event):
    type: Literal["memory_withdrawn"] = "memory_withdrawn"
    role = "control"
    retraction: Id
    memory: Id = Field(description="A memory id, or an action's name")
    reason: Reason = ""
    by: Id


class MemoryCorrected(Event):
    type: Literal["memory_corrected"] = "memory_corrected"
    role = "control"
    retraction: Id
    memory: Id
    text: Text
    by: Id = Field(description="The reviewer, a source of its own")
    name: Id | None = None


class RetractionReinstated(Event):
    type: Literal["retraction_reinstated"] = "retraction_reinstated"
    role = "control"
    retraction: Id
    by: Id


class StatusChanged(Event):
    """Emitted for every memory whose status a commit changed (the retraction worker, the API,
    the CLI), and by the writer for every memory a write brought back IN or that was born OUT;
    on the tenant's own status stream."""

    type: Literal["status_changed"] = "status_changed"
    role = "status"
    memory: Id
    status: Literal["IN", "OUT"]
    cause: Id | None = None
    hops: int | None = None
    revision: int


class RecallApproved(Event):
    type: Literal["recall_approved"] = "recall_approved"
    role = "control"
    action: Id = Field(description="The action's name, as in ActionProposed")
    by: Id


class GateAsked(Event):
    """Before an action tool runs: may it? Answered on ``reply_to`` as a GateAnswered."""

    type: Literal["gate_asked"] = "gate_asked"
    role = "gate"
    action: Id
    premises: Premises
    amount: Amount | None = None
    currency: Currency | None = Field(None, description="Of the amount; None: the gate's")
    payee: Name | None = None
    account: Account | None = Field(None, description="The account the call pays: "
                                "only sources stating it count as evidence")
    reply_to: Id
    seen: dict[tx.line(200), tx.line(64)] | None = Field(
        None, max_length=64, description="What the asker published before asking: for each "
        "events stream, the id of its last entry there. The gate judges once the writer has "
        "applied them, or refuses")
    proposed: bool = Field(False, description="The action was proposed earlier (a scheduled "
                           "payment being released): judge it by its stored amount and status; "
                           "the call's own amount, currency, account and payee, when given, "
                           "must equal the proposal's")
    amount_free: bool = Field(False, description="The operator declared the action "
                              "amount-free: without an amount it is judged, not refused")
    expires: datetime | None = Field(None, description="When the asker stops waiting: judged "
                                     "later, the question is recorded as expired, never allowed")
    alternatives: list[Premises] | None = Field(None, max_length=64, description="Every "
                                                "justification the call was proposed with "
                                                "(``premises`` is the first): a new action is "
                                                "judged as resting on any of them")


class GateAnswered(Event):
    type: Literal["gate_answered"] = "gate_answered"
    role = "answer"
    allowed: bool
    reason: tx.text(MAX_TEXT)
    fragility: int


EVENTS: tuple[type[Event], ...] = tuple(_KINDS)  # the registry: every kind, once


def of_role(role: Role) -> tuple[type[Event], ...]:
    """The event kinds that declare ``role``."""
    return tuple(k for k in EVENTS if k.role == role)


def one_of(kinds: tuple[type[Event], ...]) -> object:
    """The type of an event of one of ``kinds`` (for pydantic), told apart by its ``type``."""
    return Annotated[functools.reduce(operator.or_, kinds), Field(discriminator="type")]


AnyEvent = one_of(EVENTS)
EVENT = TypeAdapter(AnyEvent)

WRITES = of_role("write")
CONTROL = of_role("control")
PREEXISTING = "store:preexisting"  # the source of adopted store items

__all__ = [
    "CONTROL", "EVENT", "EVENTS", "PREEXISTING", "ROLES", "SCHEMA", "WRITES", "ActionExecuted",
    "ActionFailed", "ActionProposed", "AnyEvent", "Event", "Role", "of_role", "one_of",
    "GateAnswered", "GateAsked", "MemoryAdopted", "MemoryCorrected", "MemoryDeleted",
    "MemoryWithdrawn", "MemoryWritten", "ObservationRecorded", "RecallApproved",
    "RetractionReinstated", "SourceCompromised", "SourceDeclared", "StatusChanged", "action_id",
    "from_micros", "memory_id", "normalise", "store_memory_id", "to_micros",
]
