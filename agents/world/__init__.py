"""The fictional world of the demo week: vendors, their portals and contracts, an inbox, a bank.

Everything is in memory and driven by a simulated clock (``world.now``, aware UTC): a portal
shows the version valid at ``world.now`` and the inbox shows the invoices that have arrived by
then. The data ship in ``week.json`` beside this file.

``world.tools()`` gives the LangChain tools the agents use, bound to this world::

    read_vendor_portal(vendor)   read_contract(vendor)   list_invoices()   read_invoice(invoice)
    save_note(text, kind)        recall_notes(query)
    pay_invoice(invoice, vendor, amount, account)
    schedule_payment(invoice, vendor, amount, account, on)
    release_payment(invoice)     payment_status(invoice)

Bad input (an unknown vendor or invoice, an amount that is not a positive number, a date that is
not an ISO date) raises ``ValueError`` with a message saying what was wrong.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Annotated, Any

from langchain_core.tools import BaseTool, tool
from langgraph.prebuilt import InjectedStore

from ..notes import money

DATA = Path(__file__).with_name("week.json")
NOTES = ("notes",)  # the store namespace every agent reads and writes
NOTE_KINDS = ("belief", "plan")


def parse_time(text: str) -> datetime:
    """An ISO timestamp as an aware UTC datetime; a naive one is taken as UTC."""
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def note_key(text: str) -> str:
    """The store key of a note: the same text always lands on the same key."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _text(value: str | list[str]) -> str:
    return value if isinstance(value, str) else "\n".join(value)


@dataclass(frozen=True)
class PortalEdit:
    """A version of a portal page shown from ``start`` to ``end``, both ends included."""

    start: datetime
    end: datetime
    text: str
    by: str = ""

    def shown_at(self, when: datetime) -> bool:
        return self.start <= when <= self.end


@dataclass(frozen=True)
class Vendor:
    id: str
    name: str
    portal: str
    contract: str
    edits: tuple[PortalEdit, ...] = ()

    def portal_at(self, when: datetime) -> str:
        for edit in self.edits:
            if edit.shown_at(when):
                return edit.text
        return self.portal


@dataclass(frozen=True)
class Invoice:
    id: str
    vendor: str
    amount: float
    currency: str
    due: date
    received: datetime
    description: str


@dataclass
class Payment:
    id: str
    invoice: str
    vendor: str
    amount: float
    account: str
    status: str  # "executed" | "scheduled" | "held"
    created_at: datetime
    scheduled_for: date | None = None
    executed_at: datetime | None = None
    hold_reason: str | None = None

    def as_dict(self) -> dict:
        out = asdict(self)
        for name in ("created_at", "executed_at"):
            out[name] = iso(out[name]) if out[name] else None
        out["scheduled_for"] = self.scheduled_for.isoformat() if self.scheduled_for else None
        return out

    def describe(self) -> str:
        where = f"{money(self.amount)} to account {self.account} for {self.invoice} ({self.id})"
        if self.status == "executed":
            return f"Paid {where} at {iso(self.executed_at)}."
        if self.status == "scheduled":
            return f"Scheduled {where} for {self.scheduled_for.isoformat()}."
        return f"Held {where}: {self.hold_reason}."


@dataclass
class Bank:
    """Payments, in order; the clock is the world's. (Recalls are drafted by Rescind and
    approved by finance; the fictional bank only pays.)"""

    clock: Any  # a callable returning the current aware datetime
    payments: list[Payment] = field(default_factory=list)

    def payment_for(self, invoice: str) -> Payment | None:
        return next((p for p in self.payments if p.invoice == invoice), None)

    def _new(self, invoice: str, vendor: str, amount: float, account: str, status: str,
             on: date | None = None) -> Payment:
        amount = _amount(amount)
        account = str(account).strip()
        if not account:
            raise ValueError("account is empty: give the bank account to pay")
        if (earlier := self.payment_for(invoice)) is not None:
            raise ValueError(f"{invoice} already has a payment: {earlier.describe()}")
        now = self.clock()
        payment = Payment(id=f"PAY-{len(self.payments) + 1:04d}", invoice=invoice, vendor=vendor,
                          amount=amount, account=account, status=status, created_at=now,
                          scheduled_for=on, executed_at=now if status == "executed" else None)
        self.payments.append(payment)
        return payment

    def pay(self, invoice: str, vendor: str, amount: float, account: str) -> Payment:
        """Send the money now."""
        return self._new(invoice, vendor, amount, account, "executed")

    def schedule(self, invoice: str, vendor: str, amount: float, account: str,
                 on: date) -> Payment:
        """A pending payment, sent when released."""
        if on < self.clock().date():
            raise ValueError(f"cannot schedule a payment in the past ({on.isoformat()})")
        return self._new(invoice, vendor, amount, account, "scheduled", on)

    def _pending(self, invoice: str) -> Payment:
        payment = self.payment_for(invoice)
        if payment is None:
            raise ValueError(f"no payment for {invoice}")
        if payment.status == "held":
            raise ValueError(f"the payment for {invoice} is held: {payment.hold_reason}")
        if payment.status != "scheduled":
            raise ValueError(f"the payment for {invoice} is not pending: {payment.describe()}")
        return payment

    def release(self, invoice: str) -> Payment:
        """Send a scheduled payment now."""
        payment = self._pending(invoice)
        payment.status, payment.executed_at = "executed", self.clock()
        return payment

    def hold(self, invoice: str, reason: str) -> Payment:
        """Stop a scheduled payment from being released (for whoever runs security)."""
        payment = self._pending(invoice)
        payment.status, payment.hold_reason = "held", reason
        return payment

    def status(self, invoice: str) -> str:
        payment = self.payment_for(invoice)
        return f"{invoice}: no payment yet." if payment is None else f"{invoice}: {payment.describe()}"

    def snapshot(self) -> dict:
        return {"payments": [p.as_dict() for p in self.payments]}


def _amount(value: Any) -> float:
    try:
        amount = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"amount must be a number, got {value!r}") from None
    if not math.isfinite(amount) or amount <= 0:
        raise ValueError(f"amount must be a positive number, got {value!r}")
    return round(amount, 2)


class World:
    """The week's data, a simulated clock and a bank; ``tools()`` binds the agents' tools to it."""

    def __init__(self, data: dict) -> None:
        self.buyer: str = data["buyer"]
        self.vendors: dict[str, Vendor] = {
            vid: Vendor(id=vid, name=v["name"], portal=_text(v["portal"]),
                        contract=_text(v["contract"]),
                        edits=tuple(PortalEdit(start=parse_time(e["from"]), end=parse_time(e["to"]),
                                               text=_text(e["text"]), by=e.get("by", ""))
                                    for e in v.get("portal_edits", [])))
            for vid, v in data["vendors"].items()}
        self.invoices: dict[str, Invoice] = {
            i["id"]: Invoice(id=i["id"], vendor=i["vendor"], amount=float(i["amount"]),
                             currency=i.get("currency", "USD"), due=date.fromisoformat(i["due"]),
                             received=parse_time(i["received"]), description=i["description"])
            for i in data["invoices"]}
        for inv in self.invoices.values():
            if inv.vendor not in self.vendors:
                raise ValueError(f"{inv.id} names an unknown vendor {inv.vendor!r}")
        self.now: datetime = parse_time(data["start"])
        self.bank = Bank(clock=lambda: self.now)

    @classmethod
    def load(cls, path: str | Path | None = None) -> World:
        """The world described by a JSON file; the shipped demo week by default."""
        return cls(json.loads(Path(path or DATA).read_text(encoding="utf-8")))

    # the clock
    def advance_to(self, when: datetime) -> None:
        """Move the clock forward (never back)."""
        if when.tzinfo is None:
            raise ValueError("give an aware datetime (UTC)")
        if when < self.now:
            raise ValueError(f"the clock does not go back: it is {iso(self.now)}, asked {iso(when)}")
        self.now = when.astimezone(UTC)

    # what the tools show
    def vendor(self, vendor: str) -> Vendor:
        key = str(vendor).strip().lower()
        if key not in self.vendors:
            raise ValueError(f"unknown vendor {vendor!r}; known vendors: {', '.join(sorted(self.vendors))}")
        return self.vendors[key]

    def portal(self, vendor: str) -> str:
        return self.vendor(vendor).portal_at(self.now)

    def contract(self, vendor: str) -> str:
        return self.vendor(vendor).contract

    def arrived(self) -> list[Invoice]:
        return sorted((i for i in self.invoices.values() if i.received <= self.now),
                      key=lambda i: (i.received, i.id))

    def invoice(self, invoice: str) -> Invoice:
        key = str(invoice).strip().upper()
        found = self.invoices.get(key)
        if found is None or found.received > self.now:
            known = ", ".join(i.id for i in self.arrived()) or "none"
            raise ValueError(f"no invoice {invoice!r} in the inbox; invoices received: {known}")
        return found

    def invoice_text(self, invoice: str) -> str:
        inv = self.invoice(invoice)
        vendor = self.vendors[inv.vendor]
        return "\n".join([
            f"Invoice {inv.id}",
            f"Vendor: {vendor.name} ({vendor.id})",
            f"Amount: {inv.currency} {inv.amount:,.2f}",
            f"Due date: {inv.due.isoformat()}",
            f"Description: {inv.description}",
            f"Received: {iso(inv.received)}",
            "Payment details: see the vendor's records; invoices do not carry bank details.",
        ])

    def _payable(self, invoice: str, vendor: str) -> Invoice:
        inv = self.invoice(invoice)
        ven = self.vendor(vendor)
        if inv.vendor != ven.id:
            raise ValueError(f"{inv.id} is from {inv.vendor}, not {ven.id}")
        return inv

    def snapshot(self) -> dict:
        return {"now": iso(self.now), **self.bank.snapshot()}

    # the tools
    def tools(self) -> dict[str, BaseTool]:
        """The agents' tools bound to this world, by name."""
        world = self

        @tool
        def read_vendor_portal(vendor: str) -> str:
            """Read the vendor's web portal page as it is now (the vendor id, e.g. 'northwind')."""
            return world.portal(vendor)

        @tool
        def read_contract(vendor: str) -> str:
            """Read the signed contract with the vendor (the vendor id, e.g. 'northwind')."""
            return world.contract(vendor)

        @tool
        def list_invoices() -> str:
            """List the invoices in the inbox that are not paid yet, one per line."""
            lines = []
            for inv in world.arrived():
                payment = world.bank.payment_for(inv.id)
                if payment is not None and payment.status == "executed":
                    continue
                state = f" [{payment.status}]" if payment else ""
                lines.append(f"{inv.id} {inv.vendor} {inv.currency} {inv.amount:,.2f} "
                             f"due {inv.due.isoformat()}{state}")
            return "\n".join(lines) or "No unpaid invoices."

        @tool
        def read_invoice(invoice: str) -> str:
            """Read an invoice from the inbox (its id, e.g. 'INV-1001')."""
            return world.invoice_text(invoice)

        @tool
        def save_note(text: str, store: Annotated[Any, InjectedStore()], kind: str = "belief") -> str:
            """Save a note to the shared memory. kind is 'belief' (a fact) or 'plan' (an intention)."""
            if kind not in NOTE_KINDS:
                raise ValueError(f"kind must be one of {', '.join(NOTE_KINDS)}, got {kind!r}")
            if not text.strip():
                raise ValueError("the note is empty")
            store.put(NOTES, note_key(text), {"kind": kind, "text": text})
            return "saved"

        @tool
        def recall_notes(store: Annotated[Any, InjectedStore()], query: str = "") -> str:
            """Recall saved notes, one per line: those with every word of query (any case); all if empty."""
            words = query.lower().split()
            texts = sorted({str(item.value.get("text", "")) for item in store.search(NOTES, limit=100)})
            found = [t for t in texts if t and all(w in t.lower() for w in words)]
            return "\n".join(found) or "No matching notes."

        @tool
        def pay_invoice(invoice: str, vendor: str, amount: float, account: str) -> str:
            """Pay an invoice now: send amount (USD) to the vendor's bank account."""
            inv = world._payable(invoice, vendor)
            return world.bank.pay(inv.id, inv.vendor, amount, account).describe()

        @tool
        def schedule_payment(invoice: str, vendor: str, amount: float, account: str, on: str) -> str:
            """Schedule a payment of an invoice for a date (ISO, e.g. '2026-11-20'); pending till released."""
            inv = world._payable(invoice, vendor)
            try:
                day = date.fromisoformat(str(on).strip())
            except ValueError:
                raise ValueError(f"on must be an ISO date such as 2026-11-20, got {on!r}") from None
            return world.bank.schedule(inv.id, inv.vendor, amount, account, day).describe()

        @tool
        def release_payment(invoice: str) -> str:
            """Release a scheduled payment of an invoice: the money is sent now."""
            return world.bank.release(world.invoice(invoice).id).describe()

        @tool
        def payment_status(invoice: str) -> str:
            """The state of the payment of an invoice."""
            return world.bank.status(world.invoice(invoice).id)

        found = [read_vendor_portal, read_contract, list_invoices, read_invoice, save_note,
                 recall_notes, pay_invoice, schedule_payment, release_payment, payment_status]
        return {t.name: t for t in found}


__all__ = ["DATA", "NOTES", "Bank", "Invoice", "Payment", "PortalEdit", "Vendor", "World",
           "iso", "money", "note_key", "parse_time"]
