"""The fixed wording of the notes the agents save, and how to read facts out of documents.

One wording per kind of fact, so the same fact read from two documents is the same text (and so
the same memory). The prompts quote these wordings; the deterministic policy uses the functions.
"""

from __future__ import annotations

import re

BANK = "{vendor} bank account: {account}"
REMIT = "{vendor} remit address: {address}"
CONFIRMED = "Confirmed: {vendor} bank account {account}"
PLAN = "Plan: pay {invoice} to {vendor}, {amount} to account {account}"
# recall_notes matches every word: "account:" finds BANK notes but not CONFIRMED ones
ACCOUNT_QUERY = "{vendor} bank account:"

_FIELD = r"^[ \t]*{label}:[ \t]*(?P<value>\S.*?)[ \t]*$"


def field(text: str, label: str) -> str | None:
    """The value of a ``Label: value`` line of a document, or None."""
    found = re.search(_FIELD.format(label=re.escape(label)), text, re.MULTILINE | re.IGNORECASE)
    return found.group("value") if found else None


def facts(document: str) -> list[str]:
    """The belief notes a portal page or contract supports, in a fixed order."""
    vendor = field(document, "Vendor")
    if not vendor:
        return []
    out = []
    if account := field(document, "Bank account"):
        out.append(BANK.format(vendor=vendor, account=account))
    if address := field(document, "Remit address"):
        out.append(REMIT.format(vendor=vendor, address=address))
    return out


def money(amount: float) -> str:
    return f"${amount:,.2f}"


def plan(invoice: str, vendor: str, amount: float, account: str) -> str:
    return PLAN.format(invoice=invoice, vendor=vendor, amount=money(amount), account=account)


def plan_prefix(invoice: str) -> str:
    """How every plan note for the invoice begins: ``Plan: pay INV-1002 to ``."""
    return PLAN.split("{vendor}")[0].format(invoice=invoice)


def confirmed_accounts(notes: str, vendor: str) -> list[str]:
    """The accounts a block of recalled notes says were confirmed for the vendor (by name)."""
    prefix = CONFIRMED.format(vendor=vendor, account="")
    return sorted({line[len(prefix):].strip() for line in notes.splitlines()
                   if line.startswith(prefix) and line[len(prefix):].strip()})


def noted_accounts(notes: str, vendor: str) -> list[str]:
    """The accounts a block of recalled notes records for the vendor (by name), confirmed or not."""
    prefix = BANK.format(vendor=vendor, account="")
    return sorted({line[len(prefix):].strip() for line in notes.splitlines()
                   if line.startswith(prefix) and line[len(prefix):].strip()})


WORDINGS = "\n".join(f"  {w}" for w in (BANK, REMIT, CONFIRMED, PLAN))
