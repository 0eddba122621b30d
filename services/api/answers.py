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


class Source(Answer):
    id: str
    kind: str | None = None
    name: str | None = None
    domain: str | None = Field(None, description="Its trust domain")
    first_read: str | None = None
    last_read: str | None = None
    observations: int | None = Field(None, description="How many memories it said")
    retracted: bool | None = Field(None, description="A retraction of it is in force")
    retractions: list[dict[str, Any]] = Field([], description="Those in force: id, from, to, "
                                              "reason")


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


class Explanation(Answer):
    memory: dict[str, Any]
    tree: dict[str, Any] = Field(description="The justification tree down to the sources")


class History(Answer):
    id: str
    history: list[dict[str, Any]]
    gate: list[dict[str, Any]] = []
    timeline: list[dict[str, Any]] = []


class MemoryAsOf(Answer):
    id: str
    as_of: dict[str, Any]
    existed: bool
    why: Any = None
    tree: dict[str, Any] | None = None


class AsOf(Answer):
    as_of: dict[str, Any]
    items: list[dict[str, Any]]
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


class BlastGraph(Answer):
    nodes: list[dict[str, Any]]
    edges: list[dict[str, str]]


class BlastRadius(Answer):
    """A retraction, withdrawal, correction or reinstatement, previewed or committed."""

    committed: bool
    retraction: str
    op: str | None = None
    rev: int = Field(description="The revision to commit at (a preview's) or reached")
    direction: str = Field(description="OUT, or IN for a reinstatement")
    counts: dict[str, int]
    reason: str | None = None
    to_hold: list[dict[str, Any]] = []
    to_recall: list[dict[str, Any]] = []
    kept: list[dict[str, Any]] = []
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


class ExportedRecall(Recall):
    file: dict[str, Any] = Field(description="content, media_type, filename")


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
