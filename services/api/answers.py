"""The answers of the API's routes and the MCP tools, typed: each job of ``rescind.api.jobs``
names one of these (or a list of one) as its answer. A route declares it as its response model
(the OpenAPI document shows its schema; the answer is validated against it and keeps only the
fields the job gave); a tool as its return type (the MCP server publishes an ``outputSchema``
and answers ``structuredContent``; a list comes as ``{"result": [...]}``, as the SDK wraps it).

The fields a client relies on are typed; an answer keeps every other field the job gives
(``extra="allow"``), so these models name the contract without narrowing what is answered.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Answer(BaseModel):
    model_config = ConfigDict(extra="allow")


class GateRule(Answer):
    """The gate's rule that its decisions are told against."""

    threshold: float = Field(description="Above this amount a payment needs min_domains")
    min_domains: int = Field(description="Trust domains that must fall to fake such a payment")
    currency: str


class Me(Answer):
    """Who a token is."""

    tenant: str | None = Field(description="The tenant it acts on")
    role: str = Field(description="viewer, security, finance or agent")
    who: str = Field(description="The name that signs its decisions")
    token: str | None = Field(None, description="The token's id (never its secret)")
    trace_url: str | None = None
    currency: str = Field(description="The currency of an amount that names none")
    gate: GateRule | None = None


class Revision(Answer):
    revision: int = Field(description="The graph revision; it moves with every change")


class Window(Answer):
    """A retraction of a source in force; its ``from`` and ``to`` (ISO, null for open) bound
    the read times it covers (names Python cannot give a field, so kept as given)."""

    id: str
    reason: str | None = None


class Source(Answer):
    id: str
    kind: str | None = None
    name: str | None = None
    domain: str | None = Field(None, description="Its trust domain")
    first_read: str | None = None
    last_read: str | None = None
    observations: int | None = Field(None, description="How many memories it said")
    retracted: bool | None = Field(None, description="A retraction of it is in force")
    retractions: list[Window] = Field([], description="Those in force")


class Memory(Answer):
    id: str
    kind: str | None = None
    text: str | None = None
    status: str | None = Field(None, description="IN or OUT")
    cause: str | None = Field(None, description="What took it OUT")
    name: str | None = None
    at: str | None = None
    hops: int | None = Field(None, description="How far from what took it OUT")
    agent: str | None = None
    trace: str | None = None


class MemoryPage(Answer):
    """A page of memories; ``next_skip`` is where the next page starts (null on the last)."""

    items: list[Memory]
    next_skip: int | None = None


class Overview(Answer):
    """The console's picture: sources, each kind's memories (a column each) and the links."""

    revision: int
    counts: dict[str, dict[str, int]] = Field(description="Per kind: IN and OUT")
    sources: list[Source]
    columns: dict[str, list[Memory]]
    links: list[dict[str, str]] = Field(description="from and to: a source or a premise, and "
                                        "the memory that rests on it")
    truncated: bool = Field(description="A column holds only its first `limit` memories")


class Payment(Memory):
    amount: float | None = None
    currency: str | None = None
    payee: str | None = None
    held: bool = Field(False, description="OUT: the gate refuses it until reinstated")
    refused: bool = Field(False, description="The gate refused it when it was tried")
    fragility: int | None = Field(None, description="Trust domains that must fall to fake it")


class SaidBy(Answer):
    """An observation's source, as a justification tree shows it."""

    source: str
    domain: str | None = Field(None, description="Its trust domain")
    at: str | None = Field(None, description="When it was read (ISO)")
    valid: bool | None = Field(None, description="No retraction in force covers this read")


class TreeNode(Answer):
    """A memory in a justification tree, with the reasons it rests on."""

    id: str
    kind: str | None = None
    text: str | None = None
    status: str | None = Field(None, description="IN or OUT (at the point, in an as-of tree)")
    cause: str | None = None
    name: str | None = None
    amount: float | None = None
    payee: str | None = None
    executed: bool | None = None
    ungrounded: list[str] | None = Field(None, description="Identifiers it states that no "
                                         "observation states")
    existed: bool | None = Field(None, description="In an as-of tree: it existed at the point")
    see_above: bool | None = Field(None, description="Its reasons are shown where first met")
    said_by: list[SaidBy] = []
    justifications: list[list[TreeNode]] = Field([], description="Each a set of premises, "
                                                 "all needed; any one set suffices")
    justification_rules: list[str | None] = Field([], description="How each was chosen: "
                                                  "matched, turn-context, agent, declared, "
                                                  "lineage")
    justification_counts: list[int] = Field([], description="How often each was recorded")


class Explanation(Answer):
    memory: Memory
    tree: TreeNode = Field(description="The justification tree down to the sources")


class StatusChange(Answer):
    """A status a memory took, and what gave it that status."""

    status: str | None = None
    op: str | None = Field(None, description="write, retract, reinstate, withdraw…")
    cause: str | None = None
    hops: int | None = None
    by: str | None = None
    rev: int | None = None
    at: str | None = None


class Step(Answer):
    """A step of a payment's life, in words."""

    at: str | None = None
    step: str = Field(description="proposed, gate, executed, held, released, recall…")
    text: str
    by: str | None = None
    allowed: bool | None = None


class GateLogRow(Answer):
    """One decision of the gate, as its log keeps it."""

    at: str
    action: str | None = None
    name: str | None = None
    amount: float | None = None
    currency: str | None = None
    account: str | None = None
    payee: str | None = None
    allowed: bool | None = None
    reason: str | None = None
    fragility: int | None = None
    domains: list[str] | None = None


class History(Answer):
    id: str
    history: list[StatusChange]
    gate: list[GateLogRow] = []
    timeline: list[Step] = []


class Point(Answer):
    at: str | None = None
    rev: int | None = None


class MemoryAsOf(Answer):
    id: str
    as_of: Point
    existed: bool
    why: StatusChange | None = None
    tree: TreeNode | None = None


class MemoryThen(Memory):
    """A memory as it was at a point, with why it had its status then."""

    amount: float | None = None
    payee: str | None = None
    account: str | None = None
    currency: str | None = None
    executed: bool | None = None
    why: StatusChange | None = None


class AsOf(Answer):
    as_of: Point
    items: list[MemoryThen]
    next_skip: int | None = None


class Fragility(Answer):
    id: str
    name: str | None = None
    text: str | None = None
    status: str | None = None
    amount: float | None = None
    fragility: int
    would_fake_it: list[str]
    domains: list[str]


class AuditOrderRow(Answer):
    source: str
    value_at_risk: float
    payments: int
    memories: int


class Retraction(Answer):
    id: str
    kind: str | None = None
    state: str | None = None
    source: str | None = None
    reason: str | None = None
    by: str | None = None
    at: str | None = None


class GateDecision(Answer):
    action: str
    allowed: bool
    reason: str
    fragility: int | None = None
    amount: float | None = None
    currency: str | None = None
    at: str | None = None


class Recall(Answer):
    action: str
    name: str | None = None
    amount: float | None = None
    currency: str | None = None
    payee: str | None = None
    state: str = Field(description="drafted, approved, exported, rejected, withdrawn…")
    draft: str | None = None


class AuditEntry(Answer):
    id: str
    tenant: str | None = None
    who: str
    role: str
    via: str
    action: str
    target: str
    result: str = Field(description="ok, refused, error; allowed or blocked for the gate")
    status: str
    detail: dict[str, Any] | None = Field(None, description="Counts, amounts, why")
    at: str
    summary: str = Field(description="The entry as a sentence")
    count: int | None = Field(None, description="A counted refusal: how many times")


class BlastNode(Answer):
    id: str
    kind: str | None = None
    text: str | None = None
    name: str | None = None
    hops: int | None = Field(None, description="-1: the source; null: kept")
    fate: str = Field(description="OUT, IN, kept or retracted")


class BlastGraph(Answer):
    nodes: list[BlastNode]
    edges: list[dict[str, str]]


class Affected(Answer):
    """A memory a decision reaches."""

    id: str
    kind: str | None = None
    text: str | None = None
    name: str | None = None
    hops: int | None = Field(None, description="How far from the source")
    amount: float | None = None
    payee: str | None = None
    account: str | None = None
    executed: bool | None = None


class KeptReason(Answer):
    """What still holds a memory IN: a source that vouches for it, or premises all still IN
    with the sources under them."""

    source: str | None = None
    name: str | None = None
    domain: str | None = None
    premises: list[Affected] | None = None
    sources: list[KeptReason] | None = None


class Kept(Affected):
    kept_by: list[KeptReason] = []


class BlastRadius(Answer):
    """A retraction, withdrawal, correction or reinstatement, previewed or committed."""

    committed: bool
    retraction: str
    op: str | None = None
    rev: int = Field(description="The revision to commit at (a preview's) or reached")
    direction: str = Field(description="OUT, or IN for a reinstatement")
    counts: dict[str, int]
    reason: str | None = None
    to_hold: list[Affected] = []
    to_recall: list[Affected] = []
    kept: list[Kept] = []
    graph: BlastGraph | None = Field(None, description="The console's drawing of it (not in "
                                     "the MCP tools' answers)")


class GateAnswer(Answer):
    action: str
    allowed: bool
    reason: str
    fragility: int | None = None


class Accepted(Answer):
    accepted: int = Field(description="Events written to the tenant's stream")
    stream: str | None = Field(None, description="That stream")
    ids: list[str] = Field([], description="The entries' ids in it")


class ExportedFile(Answer):
    content: str
    media_type: str
    filename: str


class ExportedRecall(Recall):
    file: ExportedFile


# -- the admin's (tenants, tokens, settings) --------------------------------------------------
class Tenant(Answer):
    name: str
    created_at: str | None = None
    created_by: str | None = None


class TenantCreated(Answer):
    name: str
    created: bool = Field(description="False when it existed already")


class BankFile(Answer):
    """A tenant's settings: what its bank files (camt.056) say of it."""

    organisation_name: str | None = None
    organisation_id: str | None = None
    organisation_lei: str | None = None
    bank_bic: str | None = None
    bank_name: str | None = None
    placeholders: list[str] = Field(description="What a camt.056 would fill with a "
                                    "placeholder today")


class Token(Answer):
    """A token's public record (never the secret)."""

    id: str
    tenant: str | None
    role: str
    who: str
    created_at: str | None = None
    created_by: str | None = None


class NewToken(Token):
    token: str = Field(description="The secret, shown this once")


class Revoked(Answer):
    id: str
    tenant: str
    revoked: bool
