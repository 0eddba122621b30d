"""Request bodies of the API, with the input limits every field carries (over them: 422)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rescind.api.auth import ROLES
from rescind.contract import events as ev
from rescind.contract import text as tx

MAX_EVENTS = 500  # events in one request
MAX_PREMISES = 1000
MAX_REV = 2**53  # revisions are counters; anything larger is not one


# Every text field is one of the shared types (rescind.contract.text): NUL, other control
# characters and lone surrogates answer 422 naming the field, before anything is stored.
Ident = tx.line(200, min_length=1)
Reason = tx.text(2000, min_length=1)
Text = tx.text(ev.MAX_TEXT, min_length=1)
When = Annotated[tx.line(64, min_length=1),
                 Field(description="ISO 8601 with a zone, e.g. 2026-11-16T08:00Z")]
Rev = Annotated[int, Field(ge=0, le=MAX_REV, description="The graph revision the preview "
                           "returned; the commit is refused (409) if the graph moved since")]
TenantName = tx.line(64, pattern=r"^[a-z0-9_-]{1,64}$")


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


_DEPRECATED = {"deprecated": True}


class Compromise(Body):
    """Security: the source is not to be trusted for what it said in [from, to]."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    source: Ident = Field(description="The source id, e.g. portal:acme")
    from_: When | None = Field(None, alias="from", description="Window start (open when absent)")
    to: When | None = Field(None, description="Window end, included (open when absent)")
    start: When | None = Field(None, json_schema_extra=_DEPRECATED, description="Deprecated "
                               "name of `from` (accepted until the next release)")
    end: When | None = Field(None, json_schema_extra=_DEPRECATED, description="Deprecated "
                             "name of `to` (accepted until the next release)")
    reason: Reason
    id: Ident | None = Field(None, description="Retraction id; a commit with a used id returns "
                             "the first result")

    @model_validator(mode="after")
    def _one_name_each(self):
        for new, old in (("from", "start"), ("to", "end")):
            if getattr(self, "from_" if new == "from" else new) is not None and \
                    getattr(self, old) is not None:
                raise ValueError(f"give `{new}` only (`{old}` is its deprecated name)")
        return self

    @property
    def window(self) -> tuple[str | None, str | None]:
        """(from, to), whichever name each came under."""
        return (self.from_ if self.from_ is not None else self.start,
                self.to if self.to is not None else self.end)

    @property
    def deprecated_names(self) -> list[str]:
        return [n for n in ("start", "end") if getattr(self, n) is not None]


class CompromiseCommit(Compromise):
    rev: Rev
    force: bool = Field(False, description="Commit even though a retraction of the same source "
                        "over an overlapping window is in force (without it: 409 naming it)")


class Withdrawal(Body):
    memory: Ident = Field(description="A memory id, or the name its writer gave it")
    reason: Reason
    id: Ident | None = None


class WithdrawalCommit(Withdrawal):
    rev: Rev


class Correction(Body):
    memory: Ident
    text: Text = Field(description="What the memory should say instead")
    reason: Reason
    reviewer: Ident | None = Field(None, description="The source vouching for the new text "
                                   "(default: the token's name)")
    name: Ident | None = None
    id: Ident | None = None


class CorrectionCommit(Correction):
    rev: Rev


class Reinstatement(Body):
    """Security: undo a retraction, withdrawal or correction (previewed first)."""

    reason: Reason | None = Field(None, description="Why it is undone: kept with the "
                                  "retraction and shown in the payments' timelines")


class ReinstatementCommit(Reinstatement):
    rev: Rev


class RecallRejection(Body):
    """Finance: this drafted recall is not to be sent, and why."""

    reason: Reason = Field(description="Why the recall is rejected: kept with it and shown in "
                           "its text")


class RecallNote(Body):
    """Finance: a free note on a recall, signed with the token's name and dated."""

    text: Reason = Field(description="The note (up to 2,000 characters; newlines kept)")


class RecallExport(Body):
    """Finance: write out an approved recall for the bank."""

    format: Literal["csv", "camt.056"] = Field(
        "camt.056", description="csv (one row, for finance's systems) or camt.056 (an ISO 20022 "
        "FIToFIPaymentCancellationRequest, version 001.12)")
    allow_placeholders: bool = Field(
        False, description="Export a camt.056 even while the tenant's settings leave "
        "placeholders in it (the tenant's id as the organisation, NOTPROVIDED as the bank); "
        "refused otherwise (409)")


class NoticeExport(Body):
    """Finance: write out an approved withdrawal notice for the bank."""

    format: Literal["text", "csv"] = Field(
        "text", description="text (the letter asking the bank to disregard our recall "
        "request, naming each message it holds) or csv (one row per such message)")


class GateAsk(Body):
    """Ask about a stored action by id or name; or, with ``premises``, about one not stored."""

    action: Ident
    premises: list[Ident] | None = Field(None, min_length=1, max_length=MAX_PREMISES)
    amount: float | None = Field(None, ge=0, le=1e15, allow_inf_nan=False, strict=True,
                                 description="Required with `premises` (a new payment); for a "
                                 "stored proposal, the call's amount, which must equal it")
    account: tx.line(200, min_length=1) | None = Field(None, description="The account "
                                "the call pays: only sources stating it count as evidence")
    payee: tx.line(500, min_length=1) | None = None
    currency: tx.line(3, pattern=r"^[A-Za-z]{3}$") | None = Field(None, description="ISO 4217 code of "
                                 "the amount; default: the gate's currency (RESCIND_GATE_CURRENCY)"
                                 ", refused when RESCIND_GATE_REQUIRE_CURRENCY is set")


class NewTenant(Body):
    name: TenantName


class TenantSettings(Body):
    """Admin: what the tenant's bank files say of it (a camt.056's parties). Only the fields
    given change; null clears one. See docs/operating.md, "Bank files"."""

    organisation_name: tx.line(140) | None = Field(
        None, description="The organisation's legal name as its bank knows it (Assgnr/Pty/Nm)")
    organisation_id: tx.line(35) | None = Field(
        None, description="The id the bank knows the organisation by, e.g. its customer "
        "number (Assgnr/Pty/Id/OrgId/Othr/Id)")
    organisation_lei: tx.line(20) | None = Field(
        None, description="The organisation's LEI, 20 characters (Assgnr/Pty/Id/OrgId/LEI)")
    bank_bic: tx.line(11) | None = Field(
        None, description="The BIC of the bank the recall goes to, 8 or 11 characters "
        "(Assgne/Agt/FinInstnId/BICFI)")
    bank_name: tx.line(140) | None = Field(None, description="That bank's name (FinInstnId/Nm)")


class NewToken(Body):
    role: Literal[ROLES]
    who: Ident = Field(description="Whose token: it signs the audit log and every decision")


# What agents may send: every write event (role "write" in rescind.contract.events).
AgentEvent = ev.one_of(ev.WRITES)


class EventBatch(Body):
    """What agents send: writes only (decisions go through the security endpoints)."""

    events: list[AgentEvent] = Field(min_length=1, max_length=MAX_EVENTS)
