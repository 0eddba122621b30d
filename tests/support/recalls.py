"""Finance's story for the recall tests (no tests here): the vendor-portal story with both
payments executed, the bank's receipts recorded as the workers record them, Acme's portal page
a long page whose attacker's line lies far past 160 characters, and the payee a vendor id whose
name only the signed contract states. And the checks of an exported camt.056 message."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

import camt_exceptions
import xmlschema

from rescind.contract import events as ev
from rescind.engine.writes import execute
from rescind.graph.store import TenantGraph, connect
from rescind.scenario.replay import replay_text
from rescind.workers.ingest import paid_as
from tests.support.api import story_text

# The attacker's line is the page's seventh: cut at 160 characters, the old draft ended before it.
ATTACK = "NOTICE: we have moved to a new bank. Please update your records before paying."
PAGE = "\n".join([
    "Acme Industrial Parts - supplier portal",
    "Vendor: ACME PARTS (NEW BANK DETAILS)",
    "Products: fasteners, bearings, machined brackets, shaft collars, precision washers",
    "Customer service: +1 937 555 0100, Monday to Friday, 08:00 to 17:00 Eastern",
    "Accounts receivable: receivables@acme-parts.example",
    "Payment details",
    ATTACK,
    "  Acme bank account: IBAN GB33 BUKB 2020 1555 5555 55",
    "Page last edited: 2026-11-02 by billing-update@acme-parts.example",
])
NAME = "Acme Industrial Parts"  # what the signed contract calls the vendor
RECEIPTS = {  # what the bank answered each payment
    "pay-1041": {"amount": 6000, "account": "GB33 BUKB 2020 1555 5555 55", "reference": "PAY-0001",
                 "value_date": "2026-11-03T09:05:00Z", "receipt": "Paid $6,000.00 to account "
                 "GB33 BUKB 2020 1555 5555 55 for INV-1041 (PAY-0001) at 2026-11-03T09:05:00Z."},
    "pay-1042": {"amount": 34500, "account": "GB33 BUKB 2020 1555 5555 55",
                 "reference": "PAY-0002", "value_date": "2026-11-03T09:12:00Z",
                 "receipt": "Paid $34,500.00 (PAY-0002)"},
}
COMPROMISE = {"source": "portal:acme", "from": "2026-11-01T00:00Z", "to": "2026-11-03T00:00Z",
              "reason": "Acme's supplier portal was taken over"}
XSD = Path(camt_exceptions.__file__).parent / "templates/camt.056.001.12/camt.056.001.12.xsd"
NS = {"c": "urn:iso:std:iso:20022:tech:xsd:camt.056.001.12"}


def finance_story_text() -> str:
    lines = []
    for line in story_text().splitlines():
        if line.startswith("#"):
            lines.append(line)
            continue
        d = json.loads(line)
        if d.get("id") == "o-bank":
            d["text"] = PAGE
        if d.get("op") == "act":
            d.update(payee="acme", executed=True)
        lines.append(json.dumps(d))
        if d.get("id") == "o-remit-contract":
            lines.append(json.dumps({"op": "observe", "id": "o-contract-party",
                                     "source": "contract:acme", "at": "2026-03-01T12:00:00Z",
                                     "text": f"MASTER SERVICES AGREEMENT\nVendor: {NAME}"}))
    return "\n".join(lines)


def replay_finance_story(url: str, tenant: str) -> TenantGraph:
    """The story, then the bank's receipts."""
    replay_text(finance_story_text(), url, tenant)
    return record_receipts(url, tenant)


BANK_FILE = {"organisation_name": "Harbor & Finch Ltd", "organisation_id": "HF-0042",
             "bank_bic": "HBUKGB4B", "bank_name": "HSBC UK Bank plc"}


def record_receipts(url: str, tenant: str) -> TenantGraph:
    """The bank's receipts, recorded as the writer records an ActionExecuted; and the tenant's
    bank-file settings, as an admin sets them before finance exports a camt.056."""
    from rescind.graph import tenant_settings

    graph = TenantGraph(connect(url), tenant)
    tenant_settings.update(graph.server, tenant, BANK_FILE)
    for name, paid in RECEIPTS.items():
        e = ev.ActionExecuted(event_id=f"paid-{name}", tenant=tenant, action=name,
                              at=datetime(2026, 11, 3, 9, 30, tzinfo=UTC), currency="USD",
                              **paid)
        execute(graph, ev.action_id(tenant, name), ev.to_micros(e.at), paid_as(e))
    return graph


def check_camt056(text: str) -> ET.Element:
    """A camt.056.001.12 message valid against the published schema (the XSD the
    camt-exceptions package ships), and holding what a bank needs to find the payment; its
    transaction (``Undrlyg/TxInf``) is returned."""
    xmlschema.XMLSchema(str(XSD)).validate(text)
    root = ET.fromstring(text)
    assert root.tag == f"{{{NS['c']}}}Document"
    req = root.find("c:FIToFIPmtCxlReq", NS)
    for path in ("c:Assgnmt/c:Id", "c:Assgnmt/c:CreDtTm", "c:Assgnmt/c:Assgnr",
                 "c:Assgnmt/c:Assgne"):
        assert (req.find(path, NS) is not None), path
    datetime.fromisoformat(req.find("c:Assgnmt/c:CreDtTm", NS).text)
    [tx] = req.findall("c:Undrlyg/c:TxInf", NS)
    for path in ("c:OrgnlEndToEndId", "c:OrgnlTxId", "c:OrgnlIntrBkSttlmAmt",
                 "c:CxlRsnInf/c:Rsn/c:Cd"):
        assert tx.find(path, NS) is not None and tx.find(path, NS).text, path
    assert tx.find("c:OrgnlIntrBkSttlmAmt", NS).get("Ccy")
    return tx
