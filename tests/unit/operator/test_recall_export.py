"""The recall's files on plain data: what a vendor's page put in the payee's name cannot run as
a spreadsheet formula nor break out of the XML; a camt.056 needs the amount settled."""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET

import pytest

from rescind.contract.errors import Invalid
from rescind.core.shapes import Recall
from rescind.operator.recall_export import NS, document

HOSTILE = '=HYPERLINK("http://evil.example","Acme")</Nm><Nm>x'


def recall(**over) -> Recall:
    base = dict(action="act-1", name="pay-1", amount=6000.0, payee="acme", account="not an iban",
                state="exported", draft="", currency="EUR", payee_name=HOSTILE,
                bank_reference="PAY-0001", reference="pay-1", reason="portal hacked",
                retraction="r-1", reason_code="FRAD", approved={"by": "fran", "at": "2026-11-20T09:00:00Z"},
                exports=[{"by": "fran", "at": "2026-11-20T09:05:00Z", "format": "csv"}])
    return Recall(**{**base, **over})


def test_a_formula_in_a_csv_cell_is_quoted_and_the_rest_is_as_stored():
    f = document(recall(), "csv", 1_795_200_000_000_000, "harbor")
    [row] = list(csv.DictReader(io.StringIO(f["content"])))
    assert row["payee_name"] == "'" + HOSTILE
    assert (row["amount"], row["currency"], row["bank_reference"]) == ("6000.00", "EUR", "PAY-0001")
    assert f["filename"] == "recall-pay-1.csv" and f["media_type"].startswith("text/csv")


def test_the_camt056_keeps_hostile_text_as_text_and_names_an_account_that_is_no_iban():
    f = document(recall(), "camt.056", 1_795_200_000_000_000, "harbor")
    root = ET.fromstring(f["content"])
    ns = {"c": NS}
    tx = root.find("c:FIToFIPmtCxlReq/c:Undrlyg/c:TxInf", ns)
    assert tx.find("c:OrgnlTxRef/c:Cdtr/c:Pty/c:Nm", ns).text == HOSTILE
    assert tx.find("c:OrgnlTxRef/c:CdtrAcct/c:Id/c:Othr/c:Id", ns).text == "not an iban"
    assert tx.find("c:OrgnlIntrBkSttlmAmt", ns).get("Ccy") == "EUR"
    assert root.find("c:FIToFIPmtCxlReq/c:Assgnmt/c:CreDtTm", ns).text == "2026-11-20T18:40:00Z"


def test_a_camt056_without_an_amount_is_refused_saying_to_use_csv():
    with pytest.raises(Invalid, match="export it as csv"):
        document(recall(amount=None), "camt.056", 1_795_200_000_000_000, "harbor")
