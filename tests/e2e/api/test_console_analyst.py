"""The security analyst's day in the browser console, in Debian's Chromium driven by Playwright,
against a real `rescind up` serving the data `rescind demo` left (tenant `demo`: Northwind's
portal retracted, Acme's $12,000 paid on two trust domains): the sources and what the agents
wrote in words, a search, a compromise of Acme's portal previewed, confirmed with a restatement
of source, window, counts and amounts, committed; what stayed IN and why; reinstated; "as of"
before and after the Northwind retraction; the gate's decisions; a payment's timeline; a memory
withdrawn and another corrected. Each screen is checked by its human-readable text; the
screenshots are the run's artifacts, and docs/console/analyst-*.png with `make screenshots`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect, sync_playwright

from rescind.contract import events as ev
from rescind.graph.store import TenantGraph, connect
from rescind.runtime.readiness import running_url
from rescind.runtime.server import free_port
from tests.support.console import CHROMIUM_ARGS, chromium, shot, sign_in

BIN = Path(sys.executable).parent
ADMIN = "b" * 64
TENANT = "demo"
HOSTILE = '<img src=x onerror="window.__pwned=1">Invoice INV-9 <b>urgent</b>'
ACME_ACCOUNT = "ZZ45 ACMP 0000 7730 1164 08"
NORTHWIND_ACCOUNT = "ZZ97 QKRB 0000 9034 5521 66"
REASON = "Acme portal phishing report"


@pytest.fixture(scope="module")
def day(tmp_path_factory):
    """`rescind demo` into a data directory, `rescind up` serving it, a token per person made
    by the admin over HTTP, and one observation with hostile text sent by an agent."""
    work = tmp_path_factory.mktemp("analyst")
    res = subprocess.run([str(BIN / "rescind"), "demo"], cwd=work, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    api_port = free_port()
    up = subprocess.Popen([str(BIN / "rescind"), "up", "--api-port", str(api_port)], cwd=work,
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
        admin = {"Authorization": f"Bearer {ADMIN}"}
        tokens = {}
        for role, who in [("security", "sam@harborfinch.example"),
                          ("finance", "fran@harborfinch.example"), ("agent", "ap-intake")]:
            r = httpx.post(f"{base}/api/v1/tenants/{TENANT}/tokens", headers=admin,
                           json={"role": role, "who": who})
            assert r.status_code == 201, r.text
            tokens[role] = r.json()["token"]
        graph = TenantGraph(connect(running_url(work / ".rescind" / "data")), TENANT)
        obs = ev.ObservationRecorded(event_id="hostile-1", tenant=TENANT,
                                     at=datetime(2026, 11, 16, 9, tzinfo=UTC),
                                     source="inbox:accounts-payable", source_kind="inbox",
                                     text=HOSTILE)
        r = httpx.post(f"{base}/api/v1/tenants/{TENANT}/events",
                       headers={"Authorization": f"Bearer {tokens['agent']}"},
                       json={"events": [obs.model_dump(mode="json", by_alias=True)]})
        assert r.json()["accepted"] == 1
        deadline = time.monotonic() + 20
        while not graph.rows("MATCH (m:Mem) WHERE m.text = $t RETURN m.id", {"t": HOSTILE}):
            assert time.monotonic() < deadline, "the workers did not write the agent's event"
            time.sleep(0.05)
        yield base, tokens, graph
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
    page.get_by_role("navigation").get_by_role("button", name=name, exact=True).click()


def no_ids(text: str) -> None:
    """What an analyst reads names things, it does not show ids or recorded tool calls."""
    for raw in ("pay_invoice(", "schedule_payment(", "notes/", "act-", "bel-", "obs-", "pla-"):
        assert raw not in text, f"{raw!r} shown: {text[:400]}"


def test_the_analysts_day(day, browser):
    base, tokens, graph = day
    fin = {"Authorization": f"Bearer {tokens['finance']}"}
    page = sign_in(browser, base, tokens["security"])
    tab(page, "Overview")  # security lands on what needs it; the overview is a click away

    # -- Overview: sources with trust domain, read times, the retracted badge; labels ----------
    acme = page.locator("#overview .card.source", has_text="Acme vendor portal")
    expect(acme).to_contain_text("trust domain portal:acme")
    expect(acme).to_contain_text("read 2026-11-16 10:10 UTC – 2026-11-16 15:10 UTC")
    expect(acme.locator(".badge")).to_have_count(0)
    northwind = page.locator("#overview .card.source", has_text="Northwind vendor portal")
    expect(northwind.locator(".badge")).to_have_text("retracted")
    expect(northwind).to_contain_text("retracted 2026-11-16 08:00 UTC → 2026-11-18 12:00 UTC")
    paid = page.get_by_role("button", name=f"Payment: Pay Acme 12,000.00 USD to account {ACME_ACCOUNT}")
    expect(paid).to_contain_text("invoice INV-2001 · tool pay_invoice · by payments agent")
    expect(paid.locator(".tag")).to_have_text("executed")
    out = page.get_by_role("button", name="Payment: Pay Northwind 6,000.00 USD", exact=False)
    expect(out.locator(".tag")).to_have_text("to recall")
    expect(out).to_contain_text("OUT because: Northwind's supplier portal was taken over")
    expect(page.get_by_role("button", name="Note: Northwind Supplies bank account: "
                            f"{NORTHWIND_ACCOUNT}")).to_contain_text("noted by AP agent")
    no_ids(page.locator("#overview").inner_text())
    shot(page, "analyst-01-overview")

    # -- Search: IN and OUT memories whose text contains a fragment; hostile text as text ------
    tab(page, "Search")
    search = page.locator("#search")
    search.get_by_label("Text contains").fill("bank account")
    search.get_by_label("Kind").select_option(label="notes")
    search.get_by_role("button", name="Search").click()
    results = page.locator("#search-results .card")
    expect(page.locator("#search-count")).to_have_text("6 memories found")
    expect(results.filter(has_text="Northwind Supplies bank account:")).to_have_attribute(
        "data-status", "OUT")
    expect(results.filter(has_text=f"Acme Industrial Parts bank account: {ACME_ACCOUNT}")
           ).to_have_attribute("data-status", "IN")
    no_ids(page.locator("#search").inner_text())
    search.get_by_label("Kind").select_option(label="any")
    search.get_by_label("Text contains").fill("INV-9")
    search.get_by_role("button", name="Search").click()
    expect(results).to_have_count(1)
    expect(results.locator(".text")).to_have_text(HOSTILE)
    expect(results).to_contain_text("read from Accounts payable inbox")
    assert page.locator("img, #search b").count() == 0
    assert page.evaluate("window.__pwned") is None
    search.get_by_label("Text contains").fill("bank account")
    search.get_by_label("Kind").select_option(label="notes")
    search.get_by_role("button", name="Search").click()
    expect(page.locator("#search-count")).to_have_text("6 memories found")
    shot(page, "analyst-02-search")

    # -- Compromise: an open window is refused unless "all time" is ticked ---------------------
    tab(page, "Retractions")
    page.get_by_label("Source", exact=True).select_option(
        label="Acme vendor portal — trust domain portal:acme")
    expect(page.locator("#src-reads")).to_have_text(
        "Acme vendor portal: read 2026-11-16 10:10 UTC – 2026-11-16 15:10 UTC · 1 observation(s)")
    page.get_by_label("Reason", exact=True).fill(REASON)
    rev = graph.revision()
    page.get_by_role("button", name="Preview blast radius").click()
    expect(page.locator("#error")).to_contain_text("Give the window's From and To")
    expect(page.locator("#preview")).to_be_hidden()
    page.get_by_label("All time (no window)").check()
    expect(page.get_by_label("From", exact=True)).to_be_disabled()
    page.get_by_role("button", name="Preview blast radius").click()
    page.get_by_role("button", name=f"Commit at revision {rev}…").click()
    dialog = page.get_by_role("dialog", name="Retract Acme vendor portal?")
    expect(dialog).to_contain_text("all time: every observation it ever gave")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    expect(page.locator("#message")).to_have_text("Not committed: nothing has changed.")
    assert graph.revision() == rev

    # The window the analyst chooses from the source's read times.
    page.get_by_label("All time (no window)").uncheck()
    page.get_by_role("button", name="Use these read times as the window").click()
    expect(page.get_by_label("From", exact=True)).to_have_value("2026-11-16T10:10Z")  # 1st read
    expect(page.get_by_label("To", exact=True)).to_have_value(re.compile(r"^20\d\d-.*Z$"))  # now
    page.get_by_label("From", exact=True).fill("2026-11-16T00:00:00Z")
    page.get_by_label("To", exact=True).fill("2026-11-20T00:00:00Z")
    page.get_by_role("button", name="Preview blast radius").click()
    expect(page.locator("#counts tr[data-kind=observations] td.n")).to_have_text("1")
    counts = {row.get_attribute("data-kind"): int(row.locator("td.n").inner_text())
              for row in page.locator("#counts tbody tr").all()}
    assert sum(counts.values()) == 1
    kept = page.locator("#kept li")
    expect(kept).to_have_count(5)
    payment = kept.filter(has_text="Pay Acme 12,000.00 USD")
    expect(payment).to_contain_text("kept IN by: Acme signed contract, through: Plan: pay "
                                    "INV-2001 to Acme Industrial Parts")
    expect(page.locator("#to-recall")).to_have_text("Nothing to recall.")
    no_ids(page.locator("#preview").inner_text())
    assert graph.revision() == rev  # a preview writes nothing
    shot(page, "analyst-03-preview")

    page.get_by_role("button", name=f"Commit at revision {rev}…").click()
    expect(dialog).to_be_visible()
    facts = dict(zip(dialog.locator("dt").all_inner_texts(), dialog.locator("dd").all_inner_texts(),
                     strict=True))
    assert facts["Source"] == "Acme vendor portal (portal:acme), trust domain portal:acme"
    assert facts["Window"] == "from 2026-11-16 00:00 UTC to 2026-11-20 00:00 UTC"
    assert facts["Reason"] == REASON
    assert facts["What goes OUT"] == (
        "1 memories: 1 observations, 0 notes (beliefs), 0 plans, 0 answers, "
        "0 executed payments (to recall), 0 pending payments (to hold)")
    assert facts["Payments to hold"] == "0, totalling none"
    assert facts["Payments to recall"] == "0, totalling none"
    assert facts["Reached but kept IN"] == (
        "5 memories, of which 1 payment(s) totalling 12,000.00 USD")
    assert facts["At revision"].startswith(f"{rev} ")
    shot(page, "analyst-04-confirm", full_page=False)
    dialog.get_by_role("button", name="Confirm and commit").click()
    expect(page.locator("#message")).to_contain_text("1 memories went OUT; 0 payment(s) held, "
                                                     "0 drafted for recall")
    row = page.locator("#retractions tbody tr", has_text=REASON)
    expect(row).to_contain_text("Acme vendor portal")
    expect(row).to_contain_text("2026-11-16 00:00 UTC → 2026-11-20 00:00 UTC")
    expect(row.locator(".state")).to_have_text("committed")
    expect(page.locator("#retractions tbody tr", has_text="Northwind's supplier portal was taken "
                        "over")).to_contain_text("Northwind vendor portal")
    assert graph.revision() == rev + 1

    # -- What was kept IN, and why -------------------------------------------------------------
    tab(page, "Overview")
    expect(acme.locator(".badge")).to_have_text("retracted")
    expect(paid.locator(".badge.in")).to_have_text("IN")
    paid.click()
    drawer = page.get_by_role("complementary")
    expect(drawer.locator("#detail-title")).to_have_text(
        f"IN Payment: Pay Acme 12,000.00 USD to account {ACME_ACCOUNT}")
    why = page.locator("#detail-why li")
    expect(why).to_have_count(1)
    expect(why.first).to_have_text(
        "Kept IN by: Acme signed contract (trust domain signed-contracts), through: Plan: pay "
        f"INV-2001 to Acme Industrial Parts, $12,000.00 to account {ACME_ACCOUNT}")
    tree = page.locator("#tree")
    expect(tree.locator(".justification.fell").first).to_contain_text("fell: a premise is OUT")
    expect(tree.locator(".said.invalid").first).to_contain_text(
        "fell: said by Acme vendor portal (trust domain portal:acme)")
    expect(tree.locator(".said.holds").first).to_contain_text(
        "kept IN by: said by Acme signed contract (trust domain signed-contracts)")
    no_ids(" ".join(page.locator("#detail-title, #detail-facts, #detail-why, #tree")
                    .all_inner_texts()))
    shot(page, "analyst-05-kept-in", full_page=False)
    expect(page.locator("#ids-box")).not_to_have_attribute("open", "")
    expect(page.locator("#ids")).to_be_hidden()
    page.get_by_text("Ids and details").click()
    expect(page.locator("#ids")).to_contain_text("payment:INV-2001")
    expect(page.locator("#ids")).to_contain_text('pay_invoice({"account"')
    page.get_by_role("button", name="Close").click()

    # -- Reinstate: a false alarm --------------------------------------------------------------
    tab(page, "Retractions")
    row.get_by_role("button", name="Reinstate").click()
    expect(page.locator("#confirm-title")).to_have_text(re.compile(r"^Reinstate "))
    page.locator("#confirm-ok").click()  # reinstating moves money: confirmed first
    expect(page.locator("#message")).to_contain_text("1 memories came back IN")
    expect(row.locator(".state")).to_have_text("reinstated")
    tab(page, "Overview")
    expect(acme.locator(".badge")).to_have_count(0)
    shot(page, "analyst-06-reinstated")

    # -- As of: just before and right after the Northwind retraction ----------------------------
    tab(page, "As of")
    page.get_by_role("button", name="Just before Northwind vendor portal retracted "
                                    "(2026-11-19 09:00 UTC)").click()
    expect(page.locator("#asof-title")).to_have_text("Believed at 2026-11-19 08:59:59 UTC")
    then = page.locator("#asof-list tbody tr", has_text="Pay Northwind 6,000.00 USD")
    expect(then.locator(".then")).to_have_text("IN")
    expect(then.locator(".why")).to_contain_text("written · 2026-11-17 10:00 UTC")
    held = page.locator("#asof-list tbody tr", has_text="Schedule paying Northwind 34,500.00 USD")
    expect(held.locator(".then")).to_have_text("IN")
    no_ids(page.locator("#asof").inner_text())
    then.click()
    expect(page.locator("#detail-title")).to_have_text(
        "IN As of 2026-11-19 08:59:59 UTC: Payment: Pay Northwind 6,000.00 USD to account "
        f"{NORTHWIND_ACCOUNT}")
    expect(page.locator("#detail-why li").first).to_contain_text(
        "Kept IN by: Northwind vendor portal (trust domain portal:northwind)")
    shot(page, "analyst-07-as-of-before", full_page=False)
    page.get_by_role("button", name="Close").click()
    page.get_by_role("button", name="Right after Northwind vendor portal retracted "
                                    "(2026-11-19 09:00 UTC)").click()
    expect(page.locator("#asof-title")).to_have_text("Believed at 2026-11-19 09:00 UTC")
    expect(then.locator(".then")).to_have_text("OUT")
    expect(then.locator(".why")).to_contain_text(
        "taken OUT by a retraction: Northwind's supplier portal was taken over")
    expect(held.locator(".then")).to_have_text("OUT")
    page.locator("#asof").get_by_label("Status then").select_option("OUT")
    page.get_by_role("button", name="Show what was believed").click()
    expect(page.locator("#asof-list tbody tr")).to_have_count(7)  # the demo's 7 went OUT
    shot(page, "analyst-08-as-of-after")

    # -- The gate's decisions -----------------------------------------------------------------
    tab(page, "Gate")
    refused = page.locator("#gate-list tbody tr[data-allowed=false]")
    expect(refused).to_have_count(1)
    expect(refused.locator(".reason")).to_have_text(
        "Refused: 34,500.00 USD is above 10,000 USD and confirmed by only 1 independent source; "
        "2 needed.")
    expect(page.locator("#gate-count")).to_have_text("4 decision(s), 1 refused")
    shot(page, "analyst-09-gate")

    # -- A payment's timeline: proposed, gate, executed, recall drafted, approved --------------
    r = httpx.post(f"{base}/api/v1/tenants/{TENANT}/recalls/payment:INV-1001/approve", headers=fin)
    assert r.status_code == 200, r.text
    refused.click()  # the held one first
    expect(page.locator("#detail-title")).to_have_text(
        f"OUT Payment: Schedule paying Northwind 34,500.00 USD to account {NORTHWIND_ACCOUNT}, "
        "on 2026-11-20")
    steps = page.locator("#timeline li")
    expect(steps).to_have_count(3)
    assert steps.all_inner_texts() == [
        "2026-11-18 10:00 UTC Proposed proposed by payments agent",
        "2026-11-19 08:00 UTC Gate refused blocked: 34,500.00 is above 10,000 and rests on 1 "
        "trust domain(s) that could fake it; 2 needed",
        "2026-11-19 09:00 UTC Held went OUT before it was paid: held — Northwind vendor portal: "
        "Northwind's supplier portal was taken over: the bank details on it were the attacker's",
    ]
    page.get_by_role("button", name="Close").click()
    tab(page, "Overview")
    out.click()
    expect(page.locator("#detail-title")).to_have_text(
        f"OUT Payment: Pay Northwind 6,000.00 USD to account {NORTHWIND_ACCOUNT}")
    expect(page.locator("#timeline-title")).to_have_text("Timeline of the payment")
    expect(steps).to_have_count(5)
    assert [s.get_attribute("data-step") for s in steps.all()] == [
        "proposed", "gate", "executed", "recall drafted", "recall approved"]
    expect(steps.nth(1)).to_have_text("2026-11-17 10:00 UTC Gate allowed allowed: fragility 1")
    expect(steps.nth(2)).to_have_text("2026-11-17 10:00 UTC Executed executed, bank reference "
                                      "PAY-0001")
    expect(steps.nth(3)).to_contain_text("Recall drafted went OUT after it was paid: a recall is "
                                         "drafted for finance — Northwind vendor portal")
    expect(steps.nth(4)).to_contain_text("Recall approved recall approved by "
                                         "fran@harborfinch.example")
    shot(page, "analyst-10-payment-timeline", full_page=False)
    assert page.errors == []


def test_the_analyst_withdraws_a_note_and_corrects_another(day, browser):
    """From a memory's details: withdraw it behind a confirmation that restates it and its
    blast radius; correct another (the new text is IN, the old OUT); both are in the
    retractions table with their reason, and a withdrawal can be undone."""
    base, tokens, graph = day
    page = sign_in(browser, base, tokens["security"])
    tab(page, "Search")
    search = page.locator("#search")
    search.get_by_label("Text contains").fill("Globex Logistics remit address")
    search.get_by_role("button", name="Search").click()
    note = page.locator("#search-results .card")
    expect(note).to_have_count(1)
    note.click()
    page.get_by_label("Reason for withdrawing").fill("the remit address moved in October")
    rev = graph.revision()
    page.get_by_role("button", name="Preview withdrawal").click()
    dialog = page.get_by_role("dialog", name="Withdraw this memory?")
    expect(dialog).to_be_visible()
    facts = dict(zip(dialog.locator("dt").all_inner_texts(), dialog.locator("dd").all_inner_texts(),
                     strict=True))
    assert facts["Memory"] == ("Note: Globex Logistics remit address: 12 Quayside Park, Tacoma, "
                               "WA 98421, USA")
    assert facts["Reason"] == "the remit address moved in October"
    assert facts["What goes OUT"].startswith("1 memories: 0 observations, 1 notes (beliefs)")
    assert facts["At revision"].startswith(f"{rev} ")
    shot(page, "analyst-11-withdraw-confirm", full_page=False)
    dialog.get_by_role("button", name="Confirm and withdraw").click()
    expect(page.locator("#message")).to_contain_text(
        "Withdrew \u201cGlobex Logistics remit address: 12 Quayside Park, Tacoma, WA 98421, USA\u201d")
    expect(page.locator("#detail-title .badge")).to_have_text("OUT")
    expect(page.locator("#detail-why")).to_contain_text("OUT because: the remit address moved in "
                                                        "October")
    expect(page.locator("#detail-decide")).to_be_hidden()  # an OUT memory: nothing to withdraw
    page.get_by_role("button", name="Close").click()

    search.get_by_label("Text contains").fill("Acme Industrial Parts remit address")
    search.get_by_role("button", name="Search").click()
    expect(note).to_have_count(1)
    expect(note).to_contain_text("77 Foundry Road")
    note.click()
    new = "Acme Industrial Parts remit address: 78 Foundry Road, Dayton, OH 45402, USA"
    page.get_by_label("Corrected text").fill(new)
    page.get_by_label("Reason for the correction").fill("Acme's letter of 2 November")
    page.get_by_role("button", name="Preview correction").click()
    dialog = page.get_by_role("dialog", name="Correct this memory?")
    expect(dialog).to_contain_text(new)
    dialog.get_by_role("button", name="Confirm and correct").click()
    expect(page.locator("#message")).to_contain_text("Corrected \u201cAcme Industrial Parts remit")
    page.get_by_role("button", name="Close").click()
    search.get_by_label("Text contains").fill("Foundry Road")
    search.get_by_label("Kind").select_option(label="notes")
    search.get_by_role("button", name="Search").click()
    expect(page.locator("#search-count")).to_have_text("2 memories found")
    expect(note).to_have_count(2)
    expect(note.filter(has_text="78 Foundry Road")).to_have_attribute("data-status", "IN")
    expect(note.filter(has_text="77 Foundry Road")).to_have_attribute("data-status", "OUT")

    tab(page, "Retractions")
    withdrawal = page.locator("#retractions tbody tr", has_text="the remit address moved in October")
    expect(withdrawal).to_contain_text("withdrawal")
    expect(withdrawal.locator(".of")).to_have_text(
        "Note: Globex Logistics remit address: 12 Quayside Park, Tacoma, WA 98421, USA")
    correction = page.locator("#retractions tbody tr", has_text="Acme's letter of 2 November")
    expect(correction).to_contain_text("correction")
    expect(correction.locator(".of")).to_have_text(
        f"Note: Acme Industrial Parts remit address: 77 Foundry Road, Dayton, OH 45402, USA → {new}")
    no_ids(" ".join(page.locator("#retractions .of").all_inner_texts()))
    shot(page, "analyst-12-withdrawn-and-corrected")
    withdrawal.get_by_role("button", name="Reinstate").click()
    page.locator("#confirm-ok").click()
    expect(withdrawal.locator(".state")).to_have_text("reinstated")
    assert json.dumps(page.errors) == "[]"
