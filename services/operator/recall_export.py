"""An approved recall written out for the bank: a CSV row for finance's systems, or an ISO 20022
camt.056 message (FIToFIPaymentCancellationRequest, version 001.12).

Both are built from the ``Recall`` alone (no graph), with the standard library: the CSV with
``csv`` (cells that a spreadsheet would run as a formula are quoted with a leading ``'``:
payee names come from vendors' pages), the XML with ``xml.etree`` (user text is only ever an
element's text, never formatted into markup).

What the camt.056 says, and where each part comes from:

- ``Assgnmt``: a fresh id, our organisation as assigner (its name, and its LEI or the id the
  bank knows it by, from the tenant's settings: ``rescind.graph.tenant_settings``), our bank as
  assignee (its BIC from the same settings), the time of the export. Without settings the
  tenant's id stands for the name and the bank is ``Othr/Id`` NOTPROVIDED: placeholders, which
  ``rescind.operator.recalls.export`` refuses to write unless asked;
- ``Case``: the recall's outbox id, created by the approver;
- ``Undrlyg/TxInf``: our reference (``OrgnlEndToEndId``), the bank's (``OrgnlTxId``), the
  amount and date the bank settled, the reason (``FRAD`` for a compromised source, else
  ``CUST``) with the retraction's own words, and the creditor's name and account as paid.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
import textwrap
import xml.etree.ElementTree as ET
from datetime import date
from decimal import Decimal

from rescind.contract import events as ev
from rescind.contract.errors import Invalid
from rescind.core.shapes import Recall
from rescind.graph.tenant_settings import BankFile

NS = "urn:iso:std:iso:20022:tech:xsd:camt.056.001.12"
MEDIA = {"csv": "text/csv; charset=utf-8", "camt.056": "application/xml"}
SUFFIX = {"csv": "csv", "camt.056": "xml"}
CSV_COLUMNS = ("payment", "payment_id", "state", "payee_name", "payee_id", "account", "amount",
               "currency", "paid_on", "bank_reference", "our_reference", "reason",
               "retraction", "approved_by", "approved_at", "exported_by", "exported_at",
               "evidence_items", "notes")
_IBAN = re.compile(r"^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$")
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def document(r: Recall, fmt: str, at: int, organisation: str,
             default_currency: str = "USD", bank: BankFile | None = None) -> dict:
    """The file for ``fmt`` (csv or camt.056): its text, media type and a file name."""
    text = _csv(r, default_currency) if fmt == "csv" else \
        camt056(r, at, organisation, default_currency, bank)
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", r.name).strip("-") or "recall"
    return {"format": fmt, "media_type": MEDIA[fmt], "filename": f"recall-{stem}.{SUFFIX[fmt]}",
            "content": text}


# -- CSV ----------------------------------------------------------------------------------------
def _cell(value) -> str:
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA) else text


def _csv(r: Recall, default_currency: str) -> str:
    last = r.exports[-1] if r.exports else {}
    row = {
        "payment": r.name, "payment_id": r.action, "state": r.state,
        "payee_name": r.payee_name, "payee_id": r.payee, "account": r.account,
        "amount": "" if r.amount is None else f"{Decimal(str(r.amount)):.2f}",
        "currency": r.currency or default_currency, "paid_on": r.paid_on,
        "bank_reference": r.bank_reference, "our_reference": r.reference, "reason": r.reason,
        "retraction": r.retraction, "approved_by": (r.approved or {}).get("by"),
        "approved_at": (r.approved or {}).get("at"), "exported_by": last.get("by"),
        "exported_at": last.get("at"), "evidence_items": len(r.evidence),
        "notes": "\n".join(f"{n['by']} at {n['at']}: {n['text']}" for n in r.notes),
    }
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerow([_cell(row[c]) for c in CSV_COLUMNS])
    return out.getvalue()


# -- the withdrawal notice -----------------------------------------------------------------------
NOTICE_COLUMNS = ("payment", "payment_id", "payee_name", "account", "amount", "currency",
                  "paid_on", "bank_reference", "our_reference", "disregard_format",
                  "disregard_exported_at", "disregard_message_id", "disregard_case_id",
                  "disregard_cancellation_id", "withdrawn_at", "withdrawn_by", "why",
                  "approved_by", "approved_at")


def notice_document(r: Recall, fmt: str) -> dict:
    """An approved withdrawal notice as a file for the bank. ISO 20022 has no message that
    takes back a camt.056 (its answer, camt.029, comes from the bank), so the notice is a
    letter (``text``: what a bank's portal or investigations desk takes as a free-form
    message) or a CSV (one row per request the bank holds, with the camt.056's Assgnmt/Id,
    Case/Id and CxlId, for finance's own systems)."""
    n, w = r.notice or {}, r.withdrawn or {}
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", r.name).strip("-") or "recall"
    if fmt == "text":
        return {"format": fmt, "media_type": "text/plain; charset=utf-8",
                "filename": f"recall-withdrawal-{stem}.txt", "content": n.get("text", "") + "\n"}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(NOTICE_COLUMNS)
    ok = n.get("approved") or {}
    for e in n.get("disregard") or [{}]:
        ids = e.get("ids") or {}
        row = {"payment": r.name, "payment_id": r.action, "payee_name": r.payee_name,
               "account": r.account,
               "amount": "" if r.amount is None else f"{Decimal(str(r.amount)):.2f}",
               "currency": r.currency, "paid_on": r.paid_on, "bank_reference": r.bank_reference,
               "our_reference": r.reference, "disregard_format": e.get("format"),
               "disregard_exported_at": e.get("at"), "disregard_message_id": ids.get("message"),
               "disregard_case_id": ids.get("case"),
               "disregard_cancellation_id": ids.get("cancellation"),
               "withdrawn_at": w.get("at"), "withdrawn_by": w.get("by"), "why": w.get("why"),
               "approved_by": ok.get("by"), "approved_at": ok.get("at")}
        writer.writerow([_cell(row[c]) for c in NOTICE_COLUMNS])
    return {"format": fmt, "media_type": MEDIA["csv"], "filename":
            f"recall-withdrawal-{stem}.csv", "content": out.getvalue()}


# -- camt.056 -----------------------------------------------------------------------------------
def _el(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    node = ET.SubElement(parent, tag, attrs)
    if text is not None:
        node.text = text
    return node


def _id35(text: str) -> str:
    """An identifier of at most 35 characters (Max35Text): itself, or a digest of it."""
    return text if 0 < len(text) <= 35 else "R" + hashlib.sha256(text.encode()).hexdigest()[:34]


def _party(parent: ET.Element, tag: str, name: str) -> None:
    _el(_el(_el(parent, tag), "Pty"), "Nm", name[:140])


def _assigner(parent: ET.Element, bank: BankFile, organisation: str) -> None:
    """``Assgnr/Pty``: the organisation's name (else the tenant's id), and its LEI or the id its
    bank knows it by, when set (``Id/OrgId``, LEI before Othr as the schema orders them)."""
    party = _el(_el(parent, "Assgnr"), "Pty")
    _el(party, "Nm", (bank.organisation_name or organisation)[:140])
    if bank.organisation_lei or bank.organisation_id:
        org = _el(_el(party, "Id"), "OrgId")
        if bank.organisation_lei:
            _el(org, "LEI", bank.organisation_lei)
        if bank.organisation_id:
            _el(_el(org, "Othr"), "Id", bank.organisation_id[:35])


def _settled_on(paid_on: str | None) -> str | None:
    try:
        return date.fromisoformat((paid_on or "")[:10]).isoformat()
    except ValueError:
        return None


def message_ids(action: str, at: int, organisation: str, outbox: str | None = None) -> dict:
    """The identifiers a camt.056 exported at ``at`` carried (``Assgnmt/Id``, ``Case/Id``,
    ``CxlId``): what a withdrawal notice names for the bank to find the request."""
    return {"message": _id35(f"RSC-{organisation}-{action}-{at}"),
            "case": _id35(outbox or f"recall:{action}"),
            "cancellation": _id35(f"CXL-{action}-{at}")}


def camt056(r: Recall, at: int, organisation: str, default_currency: str = "USD",
            bank: BankFile | None = None) -> str:
    """The recall as a camt.056.001.12 FIToFIPaymentCancellationRequest (UTF-8 XML).
    ``organisation`` (the tenant) makes the message's ids; ``bank`` names the organisation and
    its bank (placeholders where it names nothing)."""
    bank = bank or BankFile()
    if r.amount is None:
        raise Invalid(f"the bank's receipt for {r.name!r} gives no amount: a camt.056 names the "
                      "amount settled; export it as csv")
    created = ev.from_micros(at).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    amount = f"{Decimal(str(r.amount)):.2f}"
    approver = (r.approved or {}).get("by") or "finance"
    root = ET.Element("Document", xmlns=NS)  # every element in it is in camt.056's namespace
    req = _el(root, "FIToFIPmtCxlReq")
    assignment = _el(req, "Assgnmt")
    ids = message_ids(r.action, at, organisation, r.outbox)
    _el(assignment, "Id", ids["message"])
    _assigner(assignment, bank, organisation)
    agent = _el(_el(_el(assignment, "Assgne"), "Agt"), "FinInstnId")
    if bank.bank_bic:
        _el(agent, "BICFI", bank.bank_bic)
    if bank.bank_name:
        _el(agent, "Nm", bank.bank_name[:140])
    if not bank.bank_bic:
        _el(_el(agent, "Othr"), "Id", "NOTPROVIDED")
    _el(assignment, "CreDtTm", created)
    case = _el(req, "Case")
    _el(case, "Id", ids["case"])
    _party(case, "Cretr", approver)
    control = _el(req, "CtrlData")
    _el(control, "NbOfTxs", "1")
    _el(control, "CtrlSum", amount)
    tx = _el(_el(req, "Undrlyg"), "TxInf")
    _el(tx, "CxlId", ids["cancellation"])
    _el(tx, "OrgnlEndToEndId", _id35(r.reference or r.name))
    extra = []
    if r.bank_reference and len(r.bank_reference) <= 35:
        _el(tx, "OrgnlTxId", r.bank_reference)
    elif r.bank_reference:
        extra.append(f"Bank reference: {r.bank_reference}")
    _el(tx, "OrgnlIntrBkSttlmAmt", amount, Ccy=(r.currency or default_currency).upper())
    if settled := _settled_on(r.paid_on):
        _el(tx, "OrgnlIntrBkSttlmDt", settled)
    why = _el(tx, "CxlRsnInf")
    _el(why, "Orgtr").append(_name(approver))
    _el(_el(why, "Rsn"), "Cd", r.reason_code or "CUST")
    said = f"{r.reason or 'recalled'}" + (f" (retraction {r.retraction})" if r.retraction else "")
    for chunk in [*textwrap.wrap(" ".join(said.split()), 105), *extra]:
        _el(why, "AddtlInf", chunk[:105])
    ref = _el(tx, "OrgnlTxRef")
    if r.payee_name or r.payee:
        _party(ref, "Cdtr", r.payee_name or r.payee)
    if r.account:
        _account(_el(ref, "CdtrAcct"), r.account)
    ET.indent(root)
    out = io.BytesIO()
    ET.ElementTree(root).write(out, encoding="UTF-8", xml_declaration=True)
    return out.getvalue().decode("utf-8")


def _name(name: str) -> ET.Element:
    node = ET.Element("Nm")
    node.text = name[:140]
    return node


def _account(parent: ET.Element, account: str) -> None:
    """An IBAN in its compact form when it looks like one; else the account as given."""
    ident = _el(parent, "Id")
    compact = re.sub(r"[^A-Za-z0-9]", "", account).upper()
    if _IBAN.match(compact):
        _el(ident, "IBAN", compact)
    else:
        _el(_el(ident, "Othr"), "Id", account.strip()[:34] or "NOTPROVIDED")
