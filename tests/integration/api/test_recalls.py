"""Finance's day over HTTP, against the real server: the recall list says who the payee is and
what the bank executed, the evidence whole; reject with a reason, annotate, approve, export as
camt.056 (valid against the published schema) and CSV; clear 4xx answers to what cannot be
done; every decision audited; reinstating a payment whose recall was approved warns."""

from __future__ import annotations

import csv
import io
import re

import pytest

from tests.support.api import forget, make_story
from tests.support.recalls import (
    ATTACK,
    COMPROMISE,
    NAME,
    NS,
    PAGE,
    check_camt056,
    finance_story_text,
    record_receipts,
)


@pytest.fixture
def day(falkordb, tenant_name):
    """The finance story, a token of every role, and the portal compromised (r-fin)."""
    s = make_story(falkordb, tenant_name, text=finance_story_text())
    record_receipts(falkordb, tenant_name)
    sec = s.as_("security")
    p = s.client.post(f"{s.base}/retractions/preview", json=COMPROMISE, headers=sec).json()
    r = s.client.post(f"{s.base}/retractions", json={**COMPROMISE, "rev": p["rev"],
                                                      "id": "r-fin"}, headers=sec)
    assert r.status_code == 200, r.text
    yield s
    forget(falkordb, tenant_name)


def test_the_recall_names_the_payee_the_bank_and_the_whole_evidence(day):
    """Each recall shows the payee's name (from the signed contract, not the attacker's page,
    which is OUT), the bank's date and reference, and the portal page whole: the attacker's
    line, which a 160-character cut used to drop, is in the text and in ``evidence``."""
    fin = day.as_("finance")
    rows = day.client.get(f"{day.base}/recalls", headers=fin).json()
    assert [(r["name"], r["state"]) for r in rows] == [("pay-1042", "drafted"),
                                                       ("pay-1041", "drafted")]
    r = day.client.get(f"{day.base}/recalls/pay-1041", headers=fin).json()
    assert (r["payee"], r["payee_name"], r["payee_name_from"]) == (
        "acme", NAME, "as contract:acme states it")
    assert (r["paid_on"], r["bank_reference"], r["reference"]) == (
        "2026-11-03T09:05:00Z", "PAY-0001", "pay-1041")
    assert (r["retraction"], r["reason_code"]) == ("r-fin", "FRAD")
    lines = r["draft"].splitlines()
    assert lines[0] == "RECALL REQUEST - DRAFT: not sent until finance approves"
    for part in (f"Payee: {NAME} (vendor id acme; the name as contract:acme states it)",
                 "Account: GB33 BUKB 2020 1555 5555 55", "Amount: 6,000.00 USD",
                 "Paid on: 2026-11-03T09:05:00Z", "Bank reference: PAY-0001",
                 "Our reference: pay-1041",
                 "Reason: Acme's supplier portal was taken over (retraction r-fin)"):
        assert part in lines, part
    assert PAGE.index(ATTACK) > 160
    assert ATTACK in " ".join(r["draft"].split())  # wrapped, whole
    flat = " ".join(r["draft"].split())
    assert all(" ".join(line.split()) in flat for line in PAGE.splitlines())
    [page] = [e for e in r["evidence"] if e["kind"] == "observation"]
    assert page["text"] == PAGE and page["sources"] == ["portal:acme"]
    assert [e["kind"] for e in r["evidence"]] == ["plan", "belief", "belief", "observation"]
    assert max(len(line) for line in lines) <= 100
    assert "…" not in r["draft"]


def test_finance_rejects_annotates_approves_and_exports(day):
    """Reject pay-1042 with a reason (not in the outbox; approving it afterwards is 409),
    annotate and approve pay-1041, export it as camt.056 (schema-valid, the bank's reference,
    amount and date, FRAD, the creditor's name and IBAN) and as CSV; the text says exported,
    by whom, when and how. Each decision is in the audit log with who and what."""
    c, base, fin = day.client, day.base, day.as_("finance")
    reason = "Acme confirmed by phone that INV-1042 reached its own account"
    r = c.post(f"{base}/recalls/pay-1042/reject", json={"reason": reason}, headers=fin)
    assert r.status_code == 200, r.text
    rejected = r.json()
    assert rejected["state"] == "rejected" and rejected["rejected"]["reason"] == reason
    assert rejected["rejected"]["by"] == f"finance@{day.tenant}.example"
    assert re.fullmatch(r"RECALL REQUEST - REJECTED by finance@\S+ at \d{4}-\d\d-\d\d \d\d:\d\d "
                        r"UTC: not sent", rejected["draft"].splitlines()[0])
    assert f"Rejected because: {reason}" in rejected["draft"]
    again = c.post(f"{base}/recalls/pay-1042/approve", headers=fin)
    assert again.status_code == 409 and "rejected by finance@" in again.json()["detail"]

    for text in ("Called Acme AP: they never changed banks", "Bank case opened: C-778"):
        r = c.post(f"{base}/recalls/pay-1041/notes", json={"text": text}, headers=fin)
        assert r.status_code == 200, r.text
    notes = r.json()["notes"]
    assert [n["text"] for n in notes] == ["Called Acme AP: they never changed banks",
                                          "Bank case opened: C-778"]
    assert all(n["by"] == f"finance@{day.tenant}.example" and n["at"].endswith("Z")
               for n in notes)
    assert "Notes (2):" in r.json()["draft"] and "Bank case opened: C-778" in r.json()["draft"]
    early = c.post(f"{base}/recalls/pay-1041/export", json={"format": "csv"}, headers=fin)
    assert early.status_code == 409 and "only an approved recall" in early.json()["detail"]
    approved = c.post(f"{base}/recalls/pay-1041/approve", headers=fin).json()
    assert approved["draft"].startswith(f"RECALL REQUEST - APPROVED by finance@{day.tenant}")
    assert "in the outbox for the bank" in approved["draft"].splitlines()[0]

    xml = c.post(f"{base}/recalls/pay-1041/export", json={"format": "camt.056"}, headers=fin)
    assert xml.status_code == 200 and xml.headers["content-type"] == "application/xml"
    assert xml.headers["content-disposition"] == 'attachment; filename="recall-pay-1041.xml"'
    tx = check_camt056(xml.text)
    assert tx.find("c:OrgnlEndToEndId", NS).text == "pay-1041"
    assert tx.find("c:OrgnlTxId", NS).text == "PAY-0001"
    amount = tx.find("c:OrgnlIntrBkSttlmAmt", NS)
    assert (amount.text, amount.get("Ccy")) == ("6000.00", "USD")
    assert tx.find("c:OrgnlIntrBkSttlmDt", NS).text == "2026-11-03"
    assert tx.find("c:CxlRsnInf/c:Rsn/c:Cd", NS).text == "FRAD"
    assert "taken over" in tx.find("c:CxlRsnInf/c:AddtlInf", NS).text
    assert tx.find("c:OrgnlTxRef/c:Cdtr/c:Pty/c:Nm", NS).text == NAME
    assert tx.find("c:OrgnlTxRef/c:CdtrAcct/c:Id/c:IBAN", NS).text == "GB33BUKB20201555555555"

    sheet = c.post(f"{base}/recalls/pay-1041/export", json={"format": "csv"}, headers=fin)
    assert sheet.headers["content-type"].startswith("text/csv")
    [row] = list(csv.DictReader(io.StringIO(sheet.text)))
    assert (row["payment"], row["payee_name"], row["bank_reference"], row["amount"],
            row["state"], row["exported_by"]) == (
        "pay-1041", NAME, "PAY-0001", "6000.00", "exported", f"finance@{day.tenant}.example")
    assert "Bank case opened: C-778" in row["notes"]

    now = c.get(f"{base}/recalls/pay-1041", headers=day.as_("viewer")).json()
    assert now["state"] == "exported" and [e["format"] for e in now["exports"]] == [
        "camt.056", "csv"]
    head = now["draft"].splitlines()
    assert re.match(r"RECALL REQUEST - APPROVED by finance@\S+ at .+ UTC; EXPORTED as csv by "
                    r"finance@\S+ at .+ UTC$", head[0])
    assert head[1].startswith("Exports: camt.056 by finance@")
    late = c.post(f"{base}/recalls/pay-1041/reject", json={"reason": "x"}, headers=fin)
    assert late.status_code == 409 and "cannot be rejected now" in late.json()["detail"]
    assert day.graph.rows("MATCH (o:Outbox) RETURN o.action") == [[approved["action"]]]

    audit = c.get(f"{base}/audit", headers=day.as_("security"), params={"limit": 20}).json()
    done = [(e["action"], e["target"], e["result"]) for e in reversed(audit)
            if e["action"].startswith("recall.")]
    assert done == [("recall.reject", "pay-1042", "ok"), ("recall.approve", "pay-1042", "refused"),
                    ("recall.annotate", "pay-1041", "ok"), ("recall.annotate", "pay-1041", "ok"),
                    ("recall.export", "pay-1041", "refused"), ("recall.approve", "pay-1041", "ok"),
                    ("recall.export", "pay-1041", "ok"), ("recall.export", "pay-1041", "ok"),
                    ("recall.reject", "pay-1041", "refused")]

    # Each payment's timeline tells finance's decisions too, in order, with who and how.
    def timeline(name: str) -> list[dict]:
        r = c.get(f"{base}/memories/{name}/history", headers=day.as_("viewer"))
        return r.json()["timeline"]

    rejected_steps = [s for s in timeline("pay-1042") if s["step"] == "recall rejected"]
    assert [(s["text"], s["by"], s["reason"]) for s in rejected_steps] == [
        (f"recall rejected by finance@{day.tenant}.example: {reason}",
         f"finance@{day.tenant}.example", reason)]
    paid = timeline("pay-1041")
    assert [s["step"] for s in paid][-3:] == ["recall approved", "recall exported",
                                              "recall exported"]
    assert [s["text"] for s in paid[-2:]] == [
        f"recall exported for the bank as {fmt} by finance@{day.tenant}.example"
        for fmt in ("camt.056", "csv")]
    assert [s["at"] for s in paid] == sorted(s["at"] for s in paid)


def test_bad_requests_are_clear_4xx_and_change_nothing(day):
    """An empty or blank reason or note, an unknown format: 422; an unknown payment or one
    with no recall: 404; other roles: 403. Nothing is stored."""
    c, base, fin = day.client, day.base, day.as_("finance")
    rev = day.graph.revision()
    cases = [
        ("/recalls/pay-1042/reject", {"reason": ""}, fin, 422, "reason"),
        ("/recalls/pay-1042/reject", {"reason": "   "}, fin, 422, "say why the recall is rejected"),
        ("/recalls/pay-1042/reject", {}, fin, 422, "reason"),
        ("/recalls/pay-1042/notes", {"text": " \n "}, fin, 422, "the note is empty"),
        ("/recalls/pay-1041/export", {"format": "pdf"}, fin, 422, "format"),
        ("/recalls/pay-9999/reject", {"reason": "x"}, fin, 404, "no memory or action 'pay-9999'"),
        ("/recalls/n-bank/notes", {"text": "x"}, fin, 404, "no recall for 'n-bank'"),
        ("/recalls/pay-1042/reject", {"reason": "x"}, day.as_("security"), 403, "may not"),
        ("/recalls/pay-1042/notes", {"text": "x"}, day.as_("viewer"), 403, "may not"),
    ]
    for path, body, headers, status, says in cases:
        r = c.post(base + path, json=body, headers=headers)
        assert r.status_code == status and says in r.json()["detail"], (path, body, r.text)
    assert day.graph.revision() == rev


def test_reinstating_a_payment_whose_recall_was_approved_says_what_to_pull(day):
    """Security reinstates the retraction after finance approved pay-1041's recall: the answer
    lists the outbox entry to pull and warns in words; the rejected one is not listed."""
    fin = day.as_("finance")
    day.client.post(f"{day.base}/recalls/pay-1042/reject", json={"reason": "paid right"},
                    headers=fin)
    ok = day.client.post(f"{day.base}/recalls/pay-1041/approve", headers=fin).json()
    back = day.reinstate("r-fin").json()
    assert back["direction"] == "IN"
    assert [(p["name"], p["outbox"], p["approved_by"]) for p in back["recalls_to_pull"]] == [
        ("pay-1041", f"recall:{ok['action']}", f"finance@{day.tenant}.example")]
    [warning] = [w for w in back["warnings"] if " is IN again" in w]
    assert warning.startswith("pay-1041 is IN again, but its recall was approved by finance@")
    assert f"pull recall:{ok['action']} from the outbox" in warning
    # The approved recall stays listed, withdrawn (the payment is IN); the rejected one is gone.
    rows = day.client.get(f"{day.base}/recalls", headers=fin).json()
    assert [(r["name"], r["state"]) for r in rows] == [("pay-1041", "withdrawn")]
