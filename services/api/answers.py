"""The MCP tools' answers, typed: each tool declares one of these as its return type, so the
MCP server publishes an ``outputSchema`` for it and answers ``structuredContent`` validated
against it (a list comes as ``{"result": [...]}``, as the MCP SDK wraps it).

The fields an assistant relies on are typed; an answer keeps every other field the API gives
(``extra="allow"``), so these models name the contract without narrowing what the API answers.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Answer(BaseModel):
    model_config = ConfigDict(extra="allow")


class Me(Answer):
    """Who a token is."""

    tenant: str | None = Field(description="The tenant it acts on")
    role: str = Field(description="viewer, security, finance or agent")
    who: str = Field(description="The name that signs its decisions")
    token: str | None = Field(None, description="The token's id (never its secret)")
    trace_url: str | None = None
    currency: str = Field(description="The currency of an amount that names none")


class Revision(Answer):
    revision: int = Field(description="The graph revision; it moves with every change")


class Source(Answer):
    id: str
    kind: str | None = None
    name: str | None = None
    domain: str | None = Field(None, description="Its trust domain")
    first_read: str | None = None
    last_read: str | None = None


class Memory(Answer):
    id: str
    kind: str | None = None
    text: str | None = None
    status: str | None = Field(None, description="IN or OUT")
    cause: str | None = Field(None, description="What took it OUT")
    name: str | None = None
    at: str | None = None


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


class GateAnswer(Answer):
    action: str
    allowed: bool
    reason: str
    fragility: int | None = None


class Accepted(Answer):
    accepted: int = Field(description="Events written to the tenant's stream")


class ExportedRecall(Recall):
    file: dict[str, Any] = Field(description="content, media_type, filename")
