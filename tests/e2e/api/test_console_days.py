"""A security analyst's and a finance approver's day in the browser console (Debian's Chromium
driven by Playwright), against a real `rescind up` serving what `rescind demo` left (tenant
`demo`: Northwind's portal retracted, its 6,000 USD payment drafted for recall, its 34,500 USD
one held and refused by the gate; Acme's 12,000 USD paid on two trust domains, Globex's 2,400
USD on one). What is asserted is what a person reads: each role lands on its work, the Gate
and Recalls tables name payments, payees and sources in words (no ids, no ISO times, nothing
wrapped mid-reference), the gate's decisions say why in words, an executed payment's fragility
now, the attack window filled from the source's reads, typed times without a zone read as UTC,
a picked time in the viewer's zone, confirmations restating amounts, the audit log paged."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect, sync_playwright

from rescind.runtime.server import free_port
from tests.support.console import CHROMIUM_ARGS, chromium, shot, sign_in

BIN = Path(sys.executable).parent
ADMIN = "d" * 64
TENANT = "demo"
# What a person must not have to read in the Gate and Recalls tables: a payment's memory name,
# an action id, an ISO time, a vendor id where the payee's name is known.
RAW = re.compile(r"payment:INV-|act-[0-9a-f]{20}|\d{4}-\d\d-\d\dT\d\d:|\b(northwind|globex|acme)\b"
                 r"|fragility \d|Would fall")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """`rescind demo` into a data directory, `rescind up` serving it, a token per person."""
    work = tmp_path_factory.mktemp("days")
    data = str(work / ".rescind" / "data")  # named: another shell's `rescind up` is not it
    res = subprocess.run([str(BIN / "rescind"), "demo", "--data-dir", data], cwd=work, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    api_port = free_port()
    up = subprocess.Popen([str(BIN / "rescind"), "up", "--api-port", str(api_port), "--data-dir", data],
                          cwd=work,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env={**os.environ, "RESCIND_ADMIN_TOKEN": ADMIN})
    base = f"http://127.0.0.1:{api_port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{base}/api/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert up.poll() is None and time.monotonic() < deadline, "rescind up did not start"
            time.sleep(0.2)
        tokens = {}
        for role, who in [("security", "sam@harborfinch.example"),
                          ("finance", "fran@harborfinch.example")]:
            r = httpx.post(f"{base}/api/v1/tenants/{TENANT}/tokens", json={"role": role, "who": who},
                           headers={"Authorization": f"Bearer {ADMIN}"})
            assert r.status_code == 201, r.text
            tokens[role] = r.json()["token"]
        yield base, tokens
    finally:
        up.terminate()
        up.wait(60)


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        yield b
        b.close()


def tab(page: Page, name: str) -> None:
    page.get_by_role("navigation").get_by_role("button", name=name).click()


def in_words(page: Page, table: str) -> str:
    """The table's text, checked: no raw ids or times, and no reference or payee wrapped
    across lines (each reference and each payee cell's text lies on one line)."""
    text = page.locator(table).inner_text()
    raw = RAW.search(text)
    assert raw is None, f"{raw.group(0)!r} shown in {table}: {text[:600]}"
    broken = page.evaluate("""(sel) => {
      const bad = [];
      const oneLine = (node) => { const r = document.createRange(); r.selectNodeContents(node);
        const tops = new Set([...r.getClientRects()].map((x) => Math.round(x.top)));
        return tops.size <= 1; };
      for (const n of document.querySelectorAll(`${sel} .nowrap, ${sel} td.payee, ${sel} td.account`)) {
        if (!oneLine(n)) bad.push(n.textContent);
      }
      return bad; }""", table)
    assert broken == [], f"wrapped mid-reference in {table}: {broken}"
    return text


def test_the_security_analysts_day(demo, browser):
    """Security lands on what needs a decision (built from the graph: the refusal, a payment
    made on one source, the source that alone vouches for money, finance's wait); the Gate
    table tells payments, payees, sources and why in words; an executed payment's fragility
    now; the attack window from the source's reads; zone-less times read as UTC and said so; a
    picked time in the viewer's zone; the commit's confirmation restates the amounts."""
    base, tokens = demo
    page = sign_in(browser, base, tokens["security"], timezone_id="Europe/Berlin")

    # -- Landing: what needs security, from real data ------------------------------------------
    expect(page.locator("nav button[data-tab=todo]")).to_have_class(re.compile("active"))
    todo = page.locator("#todo-list")
    expect(todo).to_contain_text("1 payment was refused by the gate")
    expect(todo).to_contain_text("Pay Northwind Supplies 34,500.00 USD for INV-1002: Refused: "
                                 "34,500.00 USD is above 10,000 USD and confirmed by only 1 "
                                 "independent source; 2 needed.")
    expect(todo).to_contain_text("1 payment was made on fewer than 2 independent sources")
    expect(todo).to_contain_text("Pay Globex 2,400.00 USD to account ZZ31 GLBX 0000 2250 8841 19: "
                                 "confirmed by 1 independent source (Globex vendor portal)")
    expect(todo).to_contain_text("Globex vendor portal: 2,400.00 USD in 1 payment")
    expect(todo).to_contain_text("Waiting for finance, not for you: 1 recall to decide (Pay "
                                 "Northwind Supplies 6,000.00 USD for INV-1001)")
    # The scheduled INV-1002, OUT since the compromise, is held (its release was refused, but
    # the payment is scheduled at the bank): security's first item.
    expect(todo).to_contain_text("1 payment is held, totalling 34,500.00 USD")
    expect(page.locator("#todo-badge")).to_have_text("4")
    assert not RAW.search(todo.inner_text())
    shot(page, "days-01-security-landing", docs=False)

    # -- The Gate: words, not ids --------------------------------------------------------------
    tab(page, "Gate")
    rows = page.locator("#gate-list tbody tr")
    expect(rows).to_have_count(4)
    headers = page.locator("#gate-list thead").inner_text()
    assert "Sources an attacker would need" in headers and "Would fall" not in headers
    text = in_words(page, "#gate-list")
    refused = page.locator("#gate-list tbody tr[data-allowed=false]")
    expect(refused.locator("td.name")).to_have_text("Pay Northwind Supplies 34,500.00 USD for INV-1002")
    expect(refused.locator("td.payee")).to_have_text("Northwind Supplies")
    expect(refused.locator("td.when")).to_have_text("2026-11-19 09:00 GMT+1")
    expect(refused.locator("td.domains")).to_have_text("Northwind vendor portal")
    expect(refused.locator("td.reason")).to_have_text(
        "Refused: 34,500.00 USD is above 10,000 USD and confirmed by only 1 independent source; "
        "2 needed.")
    globex = page.locator("#gate-list tbody tr", has_text="INV-3001")
    expect(globex.locator("td.reason")).to_have_text(
        "Allowed: confirmed by 1 independent source; 2 needed above 10,000 USD, and 2,400.00 "
        "USD is not above it.")
    acme = page.locator("#gate-list tbody tr", has_text="INV-2001")
    expect(acme.locator("td.name")).to_have_text("Pay Acme Industrial Parts 12,000.00 USD for INV-2001")
    expect(acme.locator("td.domains")).to_have_text(
        "Acme vendor portal and Acme signed contract (signed contracts)")
    expect(acme.locator("td.reason")).to_have_text(
        "Allowed: confirmed by 2 independent sources; 2 needed above 10,000 USD.")
    assert "allowed: fragility" not in text
    shot(page, "days-02-gate", docs=False)

    # -- An executed payment's fragility now ---------------------------------------------------
    tab(page, "Payments")
    made = page.locator("#executed-list tbody tr")
    expect(made).to_have_count(3)
    acme_now = made.filter(has_text="Pay Acme 12,000.00 USD")
    expect(acme_now.locator("td.confirmed")).to_have_text("confirmed by 2 independent sources now")
    expect(acme_now.locator("td.needs")).to_have_text(
        "Acme vendor portal and Acme signed contract (signed contracts)")
    expect(made.filter(has_text="Pay Globex 2,400.00 USD").locator("td.confirmed")).to_have_text(
        "confirmed by 1 independent source now")
    expect(made.filter(has_text="Pay Northwind 6,000.00 USD").locator("td.confirmed")).to_have_text(
        "none now: it rests on what was retracted (see Recalls)")

    # -- The attack window: the source's reads to now; typed without a zone; picked ------------
    tab(page, "Retractions")
    page.get_by_label("Source").select_option(label="Globex vendor portal — trust domain portal:globex")
    page.get_by_role("button", name="Use these read times as the window").click()
    expect(page.get_by_label("From", exact=True)).to_have_value("2026-11-16T10:20Z")
    to = page.get_by_label("To", exact=True).input_value()
    until = datetime.fromisoformat(to.replace("Z", "+00:00"))
    assert timedelta(0) <= until - datetime.now(UTC) <= timedelta(minutes=2), to  # now
    expect(page.locator("#message")).to_contain_text("Window: from the source's first read "
                                                     "(2026-11-16 11:20 GMT+1) to now")
    expect(page.locator("#from-pick").locator("xpath=..")).to_contain_text("Europe/Berlin, GMT+1")
    page.locator("#from-pick").fill("2026-11-16T09:00")
    expect(page.get_by_label("From", exact=True)).to_have_value("2026-11-16T09:00+01:00")
    page.get_by_label("From", exact=True).fill("2026-11-16 08:00")
    page.get_by_label("To", exact=True).fill("2026-11-21")
    page.get_by_label("Reason", exact=True).fill("Globex portal credentials phished")
    page.get_by_role("button", name="Preview blast radius").click()
    expect(page.locator("#window-zone")).to_have_text(
        "No time zone given: read as UTC (2026-11-16 08:00 as 2026-11-16T08:00Z, 2026-11-21 as "
        "2026-11-21T00:00Z).")
    expect(page.locator("#to-recall")).to_have_text("Pay Globex 2,400.00 USD to account ZZ31 "
                                                    "GLBX 0000 2250 8841 19")
    page.locator("#commit-btn").click()
    dialog = page.locator("#confirm")
    expect(dialog).to_contain_text("from 2026-11-16 09:00 GMT+1 to 2026-11-21 01:00 GMT+1")
    expect(dialog).to_contain_text("Payments to recall1, totalling 2,400.00 USD")
    dialog.get_by_role("button", name="Confirm and commit").click()
    expect(page.locator("#message")).to_contain_text("1 drafted for recall")

    # -- What needs security now, and the recalls as a reader sees them -------------------------
    tab(page, "What needs you")
    expect(todo).to_contain_text("2 recalls to decide")
    expect(todo).not_to_contain_text("Globex vendor portal: 2,400.00 USD")  # retracted now
    tab(page, "Recalls")
    expect(page.locator("#recall-list tbody tr")).to_have_count(2)
    in_words(page, "#recall-list")

    # -- The audit log: who, what, why, counts and amounts, a page at a time --------------------
    sec = {"Authorization": f"Bearer {tokens['security']}"}
    body = {"source": "portal:acme", "from": "2026-11-16T00:00Z", "to": "2026-11-17T00:00Z",
            "reason": "checking Acme's portal"}
    for _ in range(50):  # previews are audited: more than one page of entries
        r = httpx.post(f"{base}/api/v1/tenants/{TENANT}/retractions/preview", json=body, headers=sec)
        assert r.status_code == 200, r.text
    tab(page, "Audit log")
    entries = page.locator("#audit-list tbody tr")
    expect(entries).to_have_count(50)
    count = page.locator("#audit-count")
    expect(count).to_contain_text(re.compile(r"^50 of \d+ entries shown; older ones"))
    total = int(re.search(r"of (\d+)", count.inner_text()).group(1))
    assert total > 50
    page.get_by_role("button", name="Older entries").click()
    expect(entries).to_have_count(total)
    expect(count).to_have_text(f"{total} of {total} entries shown.")
    committed = entries.filter(has_text="declared portal:globex compromised")
    expect(committed).to_have_count(1)
    expect(committed.locator("td.who")).to_have_text("sam@harborfinch.example (security, via api)")
    expect(committed.locator("td.what")).to_contain_text("why: Globex portal credentials phished")
    detail = committed.locator("td.detail")
    expect(detail).to_contain_text("recalled")
    expect(detail).to_contain_text("payment:INV-3001 2,400.00 USD to Globex")
    expect(detail).to_contain_text("counts")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? GMT\+1",
                        committed.locator("td.when").inner_text())
    assert page.errors == []


def test_the_finance_approvers_day(demo, browser):
    """Finance lands on Recalls with counts; the table names each payment and payee in words;
    approving and rejecting are confirmed by dialogs that restate the amount, and the messages
    after say it again; the counts follow; the executed payments' fragility is in words."""
    base, tokens = demo
    page = sign_in(browser, base, tokens["finance"], timezone_id="UTC")
    expect(page.locator("nav button[data-tab=recalls]")).to_have_class(re.compile("active"))
    expect(page.locator("nav button[data-tab=todo]")).to_be_hidden()
    counts = page.locator("#recall-counts")
    expect(counts).to_contain_text(re.compile(r"Waiting for finance: [12] recalls? to decide"))
    waiting = int(re.search(r"(\d+) recall", counts.inner_text()).group(1))
    expect(page.locator("#recalls-badge")).to_have_text(str(waiting))
    text = in_words(page, "#recall-list")
    assert "Pay Northwind Supplies 6,000.00 USD for INV-1001" in text
    assert "2026-11-17 10:00 UTC" in text  # paid on, in the viewer's zone with the zone shown

    northwind = page.locator("#recall-list tbody tr", has_text="INV-1001")
    northwind.click()
    expect(page.locator("#recall-title")).to_have_text(
        "Recall: Pay Northwind Supplies 6,000.00 USD for INV-1001 (drafted)")
    page.get_by_role("button", name="Approve recall…").click()
    dialog = page.locator("#confirm")
    expect(page.locator("#confirm-title")).to_have_text("Approve the recall of 6,000.00 USD?")
    expect(dialog).to_contain_text("Pay Northwind Supplies 6,000.00 USD for INV-1001")
    expect(dialog).to_contain_text("claw back 6,000.00 USD from Northwind Supplies")
    shot(page, "days-03-finance-approve", full_page=False, docs=False)
    dialog.get_by_role("button", name="Approve recall of 6,000.00 USD").click()
    expect(page.locator("#message")).to_have_text(
        "Approved the recall of 6,000.00 USD (Pay Northwind Supplies 6,000.00 USD for INV-1001): "
        "it is in the outbox. Export it to send it to the bank.")
    expect(northwind.locator("td.state")).to_have_text("approved")
    expect(counts).to_contain_text("1 approved, to export for the bank")

    if waiting == 2:  # the analyst's day drafted Globex's recall: reject it, with a reason
        globex = page.locator("#recall-list tbody tr", has_text="INV-3001")
        globex.click()
        page.get_by_label("Reason to reject").fill("Globex confirmed the account by phone")
        page.get_by_role("button", name="Reject recall…").click()
        expect(page.locator("#confirm-title")).to_have_text("Reject the recall of 2,400.00 USD?")
        expect(dialog).to_contain_text("Pay Globex Logistics 2,400.00 USD for INV-3001")
        dialog.get_by_role("button", name="Reject recall of 2,400.00 USD").click()
        expect(page.locator("#message")).to_have_text(
            "Rejected the recall of 2,400.00 USD (Pay Globex Logistics 2,400.00 USD for "
            "INV-3001): it will not be sent.")
    expect(counts).to_contain_text("0 recalls to decide")
    expect(page.locator("#recalls-badge")).to_be_hidden()
    in_words(page, "#recall-list")

    tab(page, "Payments")
    acme = page.locator("#executed-list tbody tr", has_text="Pay Acme 12,000.00 USD")
    expect(acme.locator("td.confirmed")).to_have_text("confirmed by 2 independent sources now")
    tab(page, "Gate")
    in_words(page, "#gate-list")
    assert page.errors == []
