"""The browser console end to end, in headless Chromium (Debian's, driven by Playwright),
against a real `rescind up` (embedded FalkorDB, workers, API) with a seeded tenant: security
previews and commits a compromise, the payment moves to recalls, finance approves, security
reinstates, and a page left open follows live. Screenshots are kept as test artifacts."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime

import httpx
import pytest
from playwright.sync_api import Page, expect, sync_playwright

from rescind.contract import events as ev
from rescind.graph.store import TenantGraph, connect
from rescind.runtime.server import free_port
from rescind.scenario.replay import replay_text
from tests.support.api import ADMIN, story_text
from tests.support.console import CHROMIUM_ARGS, chromium, shot, sign_in
from tests.support.paths import ROOT
from tests.support.recalls import (
    ATTACK,
    COMPROMISE,
    NAME,
    NS,
    check_camt056,
    finance_story_text,
    record_receipts,
)

TENANT = "harbor"
SCRIPT = '<img src=x onerror="window.__pwned=1">Northwind <script>window.__pwned=2</script>'
CYPHER = "Note: '}) MATCH (n) DETACH DELETE n // \" RETURN 1"
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"  # the trace the hostile note was written in
TRACE_UI = "http://traces.example/trace/{trace_id}"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`rescind up` on free ports, with a bootstrap admin token; stopped with Ctrl-C."""
    port, api_port = free_port(), free_port()
    env = {**os.environ, "RESCIND_ADMIN_TOKEN": ADMIN, "RESCIND_GATE_RATES": '{"EUR": 1.08}',
           "RESCIND_TRACE_URL": TRACE_UI}
    proc = subprocess.Popen(
        [sys.executable, "-m", "rescind.cli", "up", "--port", str(port), "--api-port",
         str(api_port), "--data-dir", str(tmp_path_factory.mktemp("up"))],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{api_port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{base}/api/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0]
        time.sleep(0.1)
    yield f"redis://127.0.0.1:{port}", base
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, out


@pytest.fixture(scope="module")
def seeded(server):
    """The vendor-portal story, tokens made by the admin over HTTP, and two memories with
    hostile text sent by an agent through the API and the workers."""
    url, base = server
    replay_text(story_text(), url, TENANT)
    admin = {"Authorization": f"Bearer {ADMIN}"}
    assert httpx.post(f"{base}/api/v1/tenants", json={"name": TENANT}, headers=admin).is_success
    tokens = {}
    for role, who in [("security", "sam@harborfinch.example"),
                      ("finance", "fran@harborfinch.example"), ("agent", "ap-agent")]:
        r = httpx.post(f"{base}/api/v1/tenants/{TENANT}/tokens", headers=admin,
                       json={"role": role, "who": who})
        tokens[role] = r.json()["token"]
    at = datetime(2026, 11, 4, 9, tzinfo=UTC)
    obs = ev.ObservationRecorded(event_id="hostile-1", tenant=TENANT, at=at, source="inbox:ap",
                                 text=SCRIPT, name="o-hostile")
    note = ev.MemoryWritten(event_id="hostile-2", tenant=TENANT, at=at, kind="belief",
                            text=CYPHER, agent="ap-agent", name="n-hostile",
                            premises=[ev.memory_id(TENANT, "observation", SCRIPT)],
                            traceparent=f"00-{TRACE}-00f067aa0ba902b7-01")
    r = httpx.post(f"{base}/api/v1/tenants/{TENANT}/events",
                   headers={"Authorization": f"Bearer {tokens['agent']}"},
                   json={"events": [obs.model_dump(mode="json", by_alias=True),
                                    note.model_dump(mode="json", by_alias=True)]})
    assert r.json()["accepted"] == 2
    graph = TenantGraph(connect(url), TENANT)
    deadline = time.monotonic() + 20
    while len(graph.rows("MATCH (m:Mem {id: $id}) RETURN m.text",
                         {"id": ev.memory_id(TENANT, "belief", CYPHER)})) == 0:
        assert time.monotonic() < deadline, "the workers did not write the agent's events"
        time.sleep(0.05)
    return url, base, tokens, graph


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        yield b
        b.close()


def card(page: Page, name: str):
    return page.locator(f"#overview .card[data-name='{name}']")


def test_security_and_finance_do_the_whole_flow_in_the_console(seeded, browser):
    """Sign in as security, see hostile text shown as text and the fragility of the pending
    payment; preview a compromise (counts and graph, nothing changed), commit; the executed
    payment shows OUT and lands on the recall list, the pending one held; finance (no
    retraction controls) opens the draft and approves; security reinstates and the finance
    page, left open, turns the payment IN by itself."""
    url, base, tokens, graph = seeded
    before = {r[0]: r[1] for r in graph.rows("MATCH (m:Mem)-[st:STATUS]->() RETURN m.id, st.status")}

    wrong = browser.new_page()
    wrong.goto(f"{base}/console/")
    wrong.fill("#token", "rsc_not-a-token")
    wrong.click("#signin-btn")
    expect(wrong.locator("#signin-error")).to_have_text("Unknown or revoked token.")
    wrong.close()

    sec = sign_in(browser, base, tokens["security"])
    expect(sec.locator("#who")).to_have_text("sam@harborfinch.example")
    expect(sec.locator("nav button[data-tab=todo]")).to_have_class(re.compile("active"))
    sec.click("nav button[data-tab=overview]")
    expect(card(sec, "pay-1041")).to_have_attribute("data-status", "IN")
    expect(card(sec, "o-hostile").locator(".text")).to_have_text(SCRIPT)
    expect(card(sec, "n-hostile").locator(".text")).to_have_text(CYPHER)
    assert sec.locator("img, #overview script").count() == 0
    assert sec.evaluate("window.__pwned") is None
    card(sec, "n-hostile").click()
    expect(sec.locator("#tree")).to_contain_text(SCRIPT)  # the tree shows it as text too
    assert sec.locator("#detail img").count() == 0
    shot(sec, "01-security-overview", docs=False)
    sec.click("#close-detail")
    sec.click("nav button[data-tab=payments]")
    big = sec.locator("#payment-list tr[data-name=pay-1042] td")
    expect(big.nth(4)).to_have_text("1")  # fragility: one trust domain could fake it
    expect(big.nth(5)).to_have_text("Acme supplier portal")  # trust domain acme-portal

    sec.click("nav button[data-tab=retract]")
    sec.select_option("#src", "portal:acme")
    sec.fill("#from", "2026-11-01T00:00Z")
    sec.fill("#to", "2026-11-03T00:00Z")
    sec.fill("#reason", "Acme's supplier portal was taken over")
    rev = graph.revision()
    sec.click("#preview-btn")
    expect(sec.locator("#counts tr[data-kind=executed_actions] td.n")).to_have_text("1")
    counts = {row.get_attribute("data-kind"): int(row.locator("td.n").inner_text())
              for row in sec.locator("#counts tbody tr").all()}
    assert counts == {"observations": 1, "beliefs": 2, "plans": 2, "answers": 0,
                      "executed_actions": 1, "pending_actions": 1}
    assert sec.locator("#blast g.node[data-fate=OUT]").count() == 7
    assert sec.locator("#blast g.node[data-fate=kept]").count() == 3
    assert sec.locator("#blast line.edge").count() >= 8
    expect(sec.locator("#to-recall")).to_have_text("Pay Acme Ltd 6,000.00 USD")
    expect(sec.locator("#to-hold")).to_have_text("Pay Acme Ltd 34,500.00 USD")
    expect(sec.locator("#commit-btn")).to_have_text(f"Commit at revision {rev}…")
    assert graph.revision() == rev  # a preview writes nothing
    shot(sec, "02-security-preview", docs=False)

    sec.click("#commit-btn")
    expect(sec.locator("#confirm")).to_be_visible()  # the commit waits for a confirmation
    restated = dict(zip(sec.locator("#confirm dt").all_inner_texts(),
                        sec.locator("#confirm dd").all_inner_texts(), strict=True))
    assert restated["Payments to hold"] == "1, totalling 34,500.00 USD"
    assert restated["Payments to recall"] == "1, totalling 6,000.00 USD"
    assert graph.revision() == rev
    sec.click("#confirm-ok")
    expect(sec.locator("#message")).to_contain_text("7 memories went OUT")
    expect(sec.locator("#retractions tr[data-state=committed]")).to_have_count(1)
    assert sec.locator("#blast g.node[data-fate=OUT]").count() == 7
    shot(sec, "03-security-committed", docs=False)
    sec.click("nav button[data-tab=overview]")
    expect(card(sec, "pay-1041")).to_have_attribute("data-status", "OUT")
    expect(card(sec, "pay-1041").locator(".tag")).to_have_text("to recall")
    expect(card(sec, "pay-1042").locator(".tag")).to_have_text("held")
    card(sec, "pay-1042").click()  # a held payment says what happens next
    expect(sec.locator("#detail-facts")).to_contain_text("the gate refuses it while it stays "
                                                         "OUT. Next: review the retraction")
    sec.click("#close-detail")
    sec.click("nav button[data-tab=payments]")
    held = sec.locator("#payment-list tr[data-name=pay-1042] td")
    expect(held.nth(4)).to_have_text("—")  # no "fragility 0" for what is held
    expect(held.nth(6)).to_contain_text("security reinstates it (preview, then confirm)")
    sec.click("nav button[data-tab=overview]")
    expect(card(sec, "n-remit")).to_have_attribute("data-status", "IN")
    sec.click("nav button[data-tab=recalls]")
    expect(sec.locator("#recall-list tr[data-name=pay-1041]")).to_have_attribute(
        "data-state", "drafted")
    sec.click("#recall-list tr[data-name=pay-1041]")
    expect(sec.locator("#approve-btn")).to_be_hidden()
    expect(sec.locator("#approve-note")).to_have_text("Only finance can approve a recall.")
    shot(sec, "04-security-recalls", docs=False)

    fin = sign_in(browser, base, tokens["finance"])
    expect(fin.locator("nav button[data-tab=retract]")).to_be_hidden()
    # Finance lands on Recalls, with what waits for a decision counted and the outbox explained.
    expect(fin.locator("nav button[data-tab=recalls]")).to_have_class(re.compile("active"))
    expect(fin.locator("#recalls")).to_be_visible()
    expect(fin.locator("#recall-counts")).to_have_text(
        "Waiting for finance: 1 recall to decide (approve or reject) · 0 withdrawal notices to "
        "approve · 0 approved, to export for the bank.")
    expect(fin.locator("#recalls-badge")).to_have_text("1")
    expect(fin.locator("#outbox-help")).to_contain_text("Rescind sends nothing to the bank")
    fin.click("#recall-list tr[data-name=pay-1041]")
    expect(fin.locator("#draft")).to_contain_text("RECALL REQUEST")
    expect(fin.locator("#draft")).to_contain_text("Reason: Acme's supplier portal was taken over")
    # Approve is the primary action; Reject does not outweigh it.
    expect(fin.locator("#approve-btn")).to_have_class("primary")
    expect(fin.locator("#reject-btn")).to_have_class("secondary")
    rev = graph.revision()
    fin.fill("#reject-reason", "the vendor confirmed by phone")
    fin.click("#reject-btn")  # a rejection waits for its confirmation too; cancelled here
    expect(fin.locator("#confirm")).to_be_visible()
    expect(fin.locator("#confirm-title")).to_have_text("Reject the recall of 6,000.00 USD?")
    expect(fin.locator("#confirm-ok")).to_have_text("Reject recall of 6,000.00 USD")
    fin.click("#confirm-cancel")
    expect(fin.locator("#message")).to_have_text("Not rejected: nothing has changed.")
    fin.fill("#reject-reason", "")
    fin.click("#approve-btn")
    expect(fin.locator("#confirm")).to_be_visible()  # approval cannot be undone: confirmed first
    expect(fin.locator("#confirm-title")).to_have_text("Approve the recall of 6,000.00 USD?")
    expect(fin.locator("#confirm-lead")).to_contain_text(
        "This cannot be undone. Approving writes the request to claw back 6,000.00 USD")
    restated = dict(zip(fin.locator("#confirm dt").all_inner_texts(),
                        fin.locator("#confirm dd").all_inner_texts(), strict=True))
    assert re.fullmatch(r"Pay .+ 6,000\.00 USD \(pay-1041\)", restated["Payment"]), restated
    expect(fin.locator("#confirm-ok")).to_have_class("primary")
    expect(fin.locator("#confirm-ok")).to_have_text("Approve recall of 6,000.00 USD")
    assert graph.revision() == rev  # nothing decided yet
    shot(fin, "05-finance-approve-confirm", full_page=False, docs=False)
    fin.click("#confirm-ok")
    expect(fin.locator("#recall-list tr[data-name=pay-1041]")).to_have_attribute(
        "data-state", "approved")
    expect(fin.locator("#approve-note")).to_contain_text("Approved: the recall is in the outbox.")
    expect(fin.locator("#recalls-badge")).to_be_hidden()
    assert graph.rows("MATCH (o:Outbox) RETURN o.by") == [["fran@harborfinch.example"]]
    shot(fin, "05-finance-approved", docs=False)
    fin.click("nav button[data-tab=overview]")
    expect(card(fin, "pay-1041")).to_have_attribute("data-status", "OUT")

    sec.click("nav button[data-tab=retract]")
    rev = graph.revision()
    sec.locator("#retractions tr[data-state=committed] button.reinstate").click()
    # Reinstating moves money: a preview, restated in a confirmation, before anything changes.
    expect(sec.locator("#confirm-title")).to_have_text(re.compile(r"^Reinstate cmp-"))
    restated = dict(zip(sec.locator("#confirm dt").all_inner_texts(),
                        sec.locator("#confirm dd").all_inner_texts(), strict=True))
    assert restated["Held payments released"] == "1, totalling 34,500.00 USD: Pay Acme Ltd " \
        "34,500.00 USD", restated
    assert restated["Recalls withdrawn"].startswith("pay-1041: 6,000.00 USD (approved)"), restated
    assert restated["Recalls to pull from the outbox"] == "pay-1041 (6,000.00 USD)"
    assert "would be released" in restated["What follows"]
    assert graph.revision() == rev  # the preview changed nothing
    shot(sec, "06-security-reinstate-confirm", full_page=False, docs=False)
    sec.click("#confirm-cancel")
    expect(sec.locator("#message")).to_have_text("Not reinstated: nothing has changed.")
    assert graph.revision() == rev
    sec.locator("#retractions tr[data-state=committed] button.reinstate").click()
    sec.click("#confirm-ok")
    expect(sec.locator("#message")).to_contain_text("7 memories came back IN")
    expect(sec.locator("#message")).to_contain_text("1 held payment(s) released")
    # The API's warnings stay on the page after the commit: what to pull from the outbox.
    expect(sec.locator("#warnings-box")).to_be_visible()
    expect(sec.locator("#warnings")).to_contain_text("pay-1041 is IN again, but its recall was "
                                                     "approved by fran@harborfinch.example")
    expect(sec.locator("#retractions tr[data-state=reinstated]")).to_have_count(1)
    shot(sec, "06-security-reinstated", docs=False)
    # The finance page was not touched: it learns of the change by itself.
    expect(card(fin, "pay-1041")).to_have_attribute("data-status", "IN")
    expect(fin.locator("#rev")).to_have_text(str(graph.revision()))
    shot(fin, "07-finance-live-update", docs=False)
    fin.click("nav button[data-tab=recalls]")  # the approved recall is withdrawn, not sendable
    expect(fin.locator("#recall-list tr[data-name=pay-1041]")).to_have_attribute(
        "data-state", "withdrawn")
    fin.click("#recall-list tr[data-name=pay-1041]")
    expect(fin.locator("#approve-note")).to_contain_text("Withdrawn: the payment is IN again")
    expect(fin.locator("#export-box")).to_be_hidden()
    expect(fin.locator("#approve-btn")).to_be_hidden()

    after = {r[0]: r[1] for r in graph.rows("MATCH (m:Mem)-[st:STATUS]->() RETURN m.id, st.status")}
    assert after == before
    assert sec.errors == [] and fin.errors == []


PAYEE = '<img src=x onerror="window.__pwned=3">Acme Ltd'
ACCOUNT = '<img src=x onerror="window.__pwned=4">GB33 BUKB 2020'


def test_the_gate_tab_lists_decisions_and_opens_each_payment(seeded, browser):
    """The agent asks the gate over HTTP: an allowed small payment, the one-domain 34,500
    refused, the same call with an attacker's payee refused, and (page open) an allowed call
    not in the graph yet. The Gate tab lists them newest first with their badges, fragility,
    domains and aggregate; hostile payee, account and reason show as text; "refused only"
    filters; a row opens the payment's card with its gate decisions (or, not in the graph, the
    decisions alone)."""
    url, base, tokens, graph = seeded
    agent = {"Authorization": f"Bearer {tokens['agent']}"}
    ask = f"{base}/api/v1/tenants/{TENANT}/gate"

    def gate(body: dict) -> dict:
        r = httpx.post(ask, headers=agent, json=body)
        assert r.status_code == 200, r.text
        return r.json()

    small = gate({"action": "pay-1041", "amount": 6000, "payee": "Acme Ltd"})
    big = gate({"action": "pay-1042", "amount": 34500})
    forged = gate({"action": "pay-1042", "amount": 34500, "payee": PAYEE})
    assert small["allowed"] and not big["allowed"] and not forged["allowed"]
    assert big["fragility"] == 1 and PAYEE in forged["reason"]

    page = sign_in(browser, base, tokens["finance"])
    page.click("nav button[data-tab=gate]")
    rows = page.locator("#gate-list tbody tr")
    expect(rows).to_have_count(4)  # with the story's own `gate` line, replayed: the oldest
    [bank] = httpx.get(f"{base}/api/v1/tenants/{TENANT}/memories", params={"q": "Confirmed"},
                       headers={"Authorization": f"Bearer {tokens['security']}"}).json()["items"]
    new = gate({"action": "pay-new", "premises": [bank["id"]], "amount": 900,
                "payee": "Acme Ltd", "account": ACCOUNT})
    assert new["allowed"] and new["aggregate"] == 6000  # pay-1041 was allowed to Acme Ltd
    expect(rows).to_have_count(5)  # the page asks for decisions by itself (no revision moves)
    expect(page.locator("#gate-count")).to_have_text("5 decision(s), 3 refused")

    def cells(i: int) -> list[str]:
        return [c.inner_text() for c in rows.nth(i).locator("td").all()]

    names = [r.get_attribute("data-name") for r in rows.all()]
    assert names == ["pay-new", "pay-1042", "pay-1042", "pay-1041", "pay-1042"]  # newest first
    assert [r.get_attribute("data-allowed") for r in rows.all()] == [
        "true", "false", "false", "true", "false"]
    assert [r.locator("td.decision").inner_text() for r in rows.all()] == [
        "allowed", "refused", "refused", "allowed", "refused"]
    assert rows.nth(1).locator(".badge.out").count() == 1
    assert rows.nth(0).locator(".badge.in").count() == 1
    when, name, amount, payee, account, _, fragility, domains, aggregate, reason = cells(0)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? UTC", when)  # the viewer's zone
    assert (name, amount, payee, account) == ("Pay Acme Ltd 900.00 USD (pay-new)", "900.00 USD",
                                              "Acme Ltd", ACCOUNT)
    by_name = {"acme-portal": "Acme supplier portal", "legal": "Acme master services agreement",
               "ap-inbox": "Accounts-payable inbox"}
    assert (fragility, domains, aggregate) == (
        str(new["fragility"]), " and ".join(by_name[d] for d in new["would_fall"]), "6,000.00 USD")
    assert reason.startswith(f"Allowed: confirmed by {new['fragility']} independent source")
    assert rows.nth(0).locator("td.reason").get_attribute("title") == f"recorded: {new['reason']}"
    _, _, amount, payee, _, _, fragility, domains, aggregate, reason = cells(1)
    refusal = ("Refused: 34,500.00 USD is above 10,000 USD and confirmed by only 1 independent "
               "source; 2 needed.")
    # A refusal the typed fields do not explain (the call's payee is not the proposal's) is
    # told by the recorded reason.
    mismatch = "Refused: " + forged["reason"].removeprefix("blocked: ")
    assert (amount, payee, reason) == ("34,500.00 USD", PAYEE, mismatch)
    _, _, amount, payee, account, _, fragility, domains, aggregate, reason = cells(2)
    logged = httpx.get(f"{base}/api/v1/tenants/{TENANT}/gates", params={"action": "pay-1042"},
                       headers={"Authorization": f"Bearer {tokens['finance']}"}).json()[-1]
    assert logged["payee"] == "Acme Ltd"  # a release keeps the proposal's values
    assert (amount, payee, account, fragility) == ("34,500.00 USD", "Acme Ltd", "—", "1")
    assert big["would_fall"] == ["acme-portal"] and domains == "Acme supplier portal"
    assert aggregate == "6,000.00 USD" == f"{big['aggregate']:,.2f} USD"  # pay-1041, to Acme Ltd
    assert reason == refusal
    assert page.locator("img").count() == 0
    assert page.evaluate("window.__pwned") is None
    shot(page, "08-gate-decisions", docs=False)

    page.check("#refused-only")
    expect(rows).to_have_count(3)
    assert {r.get_attribute("data-allowed") for r in rows.all()} == {"false"}
    page.uncheck("#refused-only")
    expect(rows).to_have_count(5)

    # The refused payment's card carries its three gate decisions, oldest first.
    page.locator("#gate-list tr[data-name=pay-1042]").last.click()
    expect(page.locator("#detail-title")).to_contain_text("Payment: Pay Acme Ltd 34,500.00 USD")
    expect(page.locator("#detail-memory")).to_be_visible()
    decisions = page.locator("#gate-history li")
    expect(decisions).to_have_count(3)
    assert [d.get_attribute("data-allowed") for d in decisions.all()] == ["false"] * 3
    expect(decisions.nth(1).locator(".reason")).to_have_text(refusal)
    expect(decisions.nth(2).locator(".reason")).to_have_text(mismatch)
    expect(decisions.nth(2)).to_contain_text(f"to {PAYEE}")
    assert page.locator("#detail img").count() == 0
    shot(page, "09-gate-refused-payment", docs=False)
    page.locator("#gate-list tr[data-name=pay-1041]").click()
    expect(page.locator("#detail-title")).to_contain_text("Payment: Pay Acme Ltd 6,000.00 USD")
    expect(decisions).to_have_count(1)
    expect(decisions.nth(0).locator(".badge")).to_have_text("allowed")
    assert page.errors == []

    # Not in the graph: the memory lookup answers 404 and the decisions are shown alone.
    page.locator("#gate-list tr[data-name=pay-new]").click()
    expect(page.locator("#detail-title")).to_have_text("Payment: Pay Acme Ltd 900.00 USD (pay-new)")
    expect(page.locator("#detail-facts")).to_contain_text("Not in the graph")
    expect(page.locator("#detail-memory")).to_be_hidden()
    expect(decisions).to_have_count(1)
    expect(decisions.nth(0)).to_contain_text(f"account {ACCOUNT}")
    expect(page.locator("#error")).to_have_text("")
    assert page.locator("img").count() == 0 and page.evaluate("window.__pwned") is None
    assert page.errors and all("404" in e for e in page.errors)


def test_the_gate_tab_shows_a_foreign_amount_and_its_conversion(seeded, browser):
    """The server converts EUR at 1.08 (RESCIND_GATE_RATES) and has no rate for JPY: a
    EUR 6,000 payment shows with its 6,480 dollars; a JPY one is refused, and says why."""
    url, base, tokens, graph = seeded
    agent = {"Authorization": f"Bearer {tokens['agent']}"}
    [bank] = httpx.get(f"{base}/api/v1/tenants/{TENANT}/memories", params={"q": "Confirmed"},
                       headers={"Authorization": f"Bearer {tokens['security']}"}).json()["items"]
    ask = f"{base}/api/v1/tenants/{TENANT}/gate"
    eur = httpx.post(ask, headers=agent, json={"action": "pay-eur", "premises": [bank["id"]],
                                               "amount": 6000, "currency": "EUR",
                                               "payee": "Euro GmbH"}).json()
    yen = httpx.post(ask, headers=agent, json={"action": "pay-yen", "premises": [bank["id"]],
                                               "amount": 2_000_000, "currency": "JPY",
                                               "payee": "Yen KK"}).json()
    assert eur["allowed"] and eur["base_amount"] == 6480 and not yen["allowed"]
    page = sign_in(browser, base, tokens["finance"])
    page.click("nav button[data-tab=gate]")
    rows = page.locator("#gate-list tbody tr")
    expect(rows.first.locator("td.name")).to_have_text("Pay Yen KK 2,000,000.00 JPY (pay-yen)")
    expect(rows.first.locator("td.reason")).to_contain_text("no rate from JPY to USD")
    expect(rows.nth(1).locator("td.amount")).to_have_text("6,000.00 EUR (6,480.00 USD)")
    assert page.errors == []


def test_a_memory_links_to_the_trace_of_the_run_that_wrote_it(seeded, browser):
    """With RESCIND_TRACE_URL set, a memory written in a traced run links to that trace; one
    written without a trace (the replayed story) shows no link."""
    url, base, tokens, graph = seeded
    page = sign_in(browser, base, tokens["security"])
    page.click("nav button[data-tab=overview]")
    card(page, "n-hostile").click()
    link = page.locator("#detail-facts a.trace")
    expect(link).to_have_attribute("href", TRACE_UI.replace("{trace_id}", TRACE))
    expect(link).to_have_attribute("rel", "noopener noreferrer")
    page.click("#close-detail")
    card(page, "o-hostile").click()
    expect(page.locator("#detail-title")).to_contain_text(f"Observation: {SCRIPT}")
    expect(page.locator("#detail-facts a.trace")).to_have_count(0)
    assert page.errors == []


FINANCE_TENANT = "harbor-fin"


@pytest.fixture(scope="module")
def recalls_day(server):
    """Finance's story (both payments executed, the bank's receipts, a long portal page) in a
    tenant of its own, the portal compromised by security over HTTP."""
    url, base = server
    replay_text(finance_story_text(), url, FINANCE_TENANT)
    record_receipts(url, FINANCE_TENANT)
    admin = {"Authorization": f"Bearer {ADMIN}"}
    assert httpx.post(f"{base}/api/v1/tenants", json={"name": FINANCE_TENANT},
                      headers=admin).is_success
    tokens = {}
    for role, who in [("security", "sam@harborfinch.example"),
                      ("finance", "fran@harborfinch.example")]:
        tokens[role] = httpx.post(f"{base}/api/v1/tenants/{FINANCE_TENANT}/tokens", headers=admin,
                                  json={"role": role, "who": who}).json()["token"]
    api = f"{base}/api/v1/tenants/{FINANCE_TENANT}"
    sec = {"Authorization": f"Bearer {tokens['security']}"}
    p = httpx.post(f"{api}/retractions/preview", json=COMPROMISE, headers=sec).json()
    assert httpx.post(f"{api}/retractions", json={**COMPROMISE, "rev": p["rev"], "id": "r-fin"},
                      headers=sec).is_success
    return url, base, tokens, TenantGraph(connect(url), FINANCE_TENANT)


def test_the_approvers_day_review_reject_approve_export(recalls_day, browser, tmp_path):
    """Finance reviews both recalls (the payee's name, the bank's date and reference, the
    attacker's line whole in the evidence), rejects the $34,500 one with a reason, notes and
    approves the $6,000 one, and exports it as camt.056 (the downloaded file is valid against
    the published schema) and as CSV; the list says who decided; the rejected recall is not in
    the outbox. Security sees the decisions but has no finance controls."""
    url, base, tokens, graph = recalls_day
    fin = sign_in(browser, base, tokens["finance"])
    fin.click("nav button[data-tab=recalls]")
    rows = fin.locator("#recall-list tbody tr")
    expect(rows).to_have_count(2)
    assert [r.get_attribute("data-name") for r in rows.all()] == ["pay-1042", "pay-1041"]
    big = fin.locator("#recall-list tr[data-name=pay-1042]")
    expect(big.locator("td.payee")).to_have_text(NAME)
    expect(big.locator("td").nth(4)).to_have_text("PAY-0002")

    big.click()
    draft = fin.locator("#draft")
    expect(draft).to_contain_text("RECALL REQUEST - DRAFT: not sent until finance approves")
    expect(draft).to_contain_text(f"Payee: {NAME} (vendor id acme")
    expect(draft).to_contain_text("Bank reference: PAY-0002")
    assert ATTACK in " ".join(draft.inner_text().split())  # the whole page, not cut
    expect(fin.locator("#export-box")).to_be_hidden()  # a draft is not exported
    fin.click("#reject-btn")  # no reason: refused in the page, nothing sent
    expect(fin.locator("#error")).to_have_text("Say why the recall is rejected.")
    fin.fill("#reject-reason", "Acme confirmed INV-1042 reached its own account")
    fin.click("#reject-btn")
    restated = dict(zip(fin.locator("#confirm dt").all_inner_texts(),
                        fin.locator("#confirm dd").all_inner_texts(), strict=True))
    assert restated["Payment"] == f"Pay {NAME} 34,500.00 USD (pay-1042)"
    assert restated["Why rejected"] == "Acme confirmed INV-1042 reached its own account"
    expect(fin.locator("#confirm-ok")).to_have_class("danger")
    fin.click("#confirm-ok")
    expect(big).to_have_attribute("data-state", "rejected")
    expect(draft).to_contain_text("RECALL REQUEST - REJECTED by fran@harborfinch.example")
    expect(draft).to_contain_text("Rejected because: Acme confirmed INV-1042 reached its own")
    expect(fin.locator("#approve-btn")).to_be_hidden()
    expect(big.locator("td.by")).to_contain_text("fran@harborfinch.example")

    small = fin.locator("#recall-list tr[data-name=pay-1041]")
    small.click()
    expect(draft).to_contain_text("Paid on: 2026-11-03T09:05:00Z")
    fin.fill("#note-text", "Called Acme AP: they never changed banks. Bank case C-778.")
    fin.click("#note-btn")
    expect(draft).to_contain_text("Notes (1):")
    expect(draft).to_contain_text("Called Acme AP: they never changed banks. Bank case C-778.")
    expect(fin.locator("#note-text")).to_have_value("")
    fin.click("#approve-btn")
    expect(fin.locator("#confirm-title")).to_have_text("Approve the recall of 6,000.00 USD?")
    fin.click("#confirm-ok")
    expect(small).to_have_attribute("data-state", "approved")
    expect(fin.locator("#approve-note")).to_contain_text("Approved: the recall is in the outbox.")
    expect(draft).to_contain_text("RECALL REQUEST - APPROVED by fran@harborfinch.example")

    fin.select_option("#export-format", "camt.056")
    with fin.expect_download() as got:
        fin.click("#export-btn")
    xml = got.value
    assert xml.suggested_filename == "recall-pay-1041.xml"
    saved = tmp_path / xml.suggested_filename
    xml.save_as(saved)
    tx = check_camt056(saved.read_text())
    assert tx.find("c:OrgnlTxId", NS).text == "PAY-0001"
    expect(small).to_have_attribute("data-state", "exported")
    fin.select_option("#export-format", "csv")
    with fin.expect_download() as got:
        fin.click("#export-btn")
    sheet = tmp_path / got.value.suggested_filename
    got.value.save_as(sheet)
    assert sheet.read_text().splitlines()[1].startswith("pay-1041,")
    expect(draft).to_contain_text("EXPORTED as csv by fran@harborfinch.example")
    expect(fin.locator("#message")).to_contain_text(f"Exported the recall of Pay {NAME} 6,000.00 "
                                                    "USD (pay-1041) as csv")
    shot(fin, "recalls")
    assert graph.rows("MATCH (o:Outbox) RETURN o.by") == [["fran@harborfinch.example"]]

    sec = sign_in(browser, base, tokens["security"])
    sec.click("nav button[data-tab=recalls]")
    sec.click("#recall-list tr[data-name=pay-1042]")
    expect(sec.locator("#draft")).to_contain_text("REJECTED by fran@harborfinch.example")
    expect(sec.locator("#recall-actions")).to_be_hidden()

    # Security reinstates (previewed, confirmed): the exported recall is withdrawn and finance
    # approves, then exports, the withdrawal notice for the bank.
    sec.click("nav button[data-tab=retract]")
    sec.locator("#retractions tr[data-id=r-fin] button.reinstate").click()
    expect(sec.locator("#confirm-title")).to_have_text("Reinstate r-fin?")
    restated = dict(zip(sec.locator("#confirm dt").all_inner_texts(),
                        sec.locator("#confirm dd").all_inner_texts(), strict=True))
    assert "pay-1041: 6,000.00 USD (exported)" in restated["Recalls withdrawn"], restated
    assert "withdrawal notice" in restated["Recalls withdrawn"]
    sec.click("#confirm-ok")
    expect(sec.locator("#warnings")).to_contain_text("tell the bank to disregard that request")
    fin.click("nav button[data-tab=overview]")
    fin.click("nav button[data-tab=recalls]")
    expect(small).to_have_attribute("data-state", "withdrawn")
    expect(fin.locator("#recall-counts")).to_contain_text("1 withdrawal notice to approve")
    small.click()
    expect(fin.locator("#export-box")).to_be_hidden()  # a withdrawn recall is not exported
    expect(fin.locator("#notice")).to_contain_text("WITHDRAWAL OF RECALL REQUEST - DRAFT")
    fin.click("#notice-approve-btn")
    expect(fin.locator("#confirm-title")).to_have_text(
        "Approve the withdrawal notice for 6,000.00 USD?")
    fin.click("#confirm-ok")
    expect(fin.locator("#notice")).to_contain_text("APPROVED by fran@harborfinch.example")
    with fin.expect_download() as got:
        fin.click("#notice-export-btn")
    letter = tmp_path / got.value.suggested_filename
    got.value.save_as(letter)
    assert letter.name == "recall-withdrawal-pay-1041.txt"
    assert "Please disregard our request to recall" in letter.read_text()
    assert fin.errors == [] and sec.errors == []


def test_times_show_in_the_viewers_zone_and_typed_times_without_one_are_utc(seeded, browser):
    """A viewer in Berlin sees the gate's times in Berlin time with the zone named; "as of"
    typed as people type it ("2026-11-03 08:00", no zone) is read as UTC, the page says so,
    and the answer is shown in the viewer's zone."""
    url, base, tokens, graph = seeded
    page = sign_in(browser, base, tokens["security"], timezone_id="Europe/Berlin")
    page.click("nav button[data-tab=gate]")
    first = page.locator("#gate-list tbody tr").first.locator("td.when")
    expect(first).to_have_text(re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? GMT\+1$"))
    page.click("nav button[data-tab=asof]")
    page.fill("#asof-at", "2026-11-03 08:00")
    page.click("#asof-btn")
    expect(page.locator("#asof-zone")).to_have_text(
        "No time zone given: read as UTC (2026-11-03 08:00 as 2026-11-03T08:00Z).")
    expect(page.locator("#asof-title")).to_have_text("Believed at 2026-11-03 09:00 GMT+1")
    expect(page.locator("#error")).to_have_text("")
    page.fill("#asof-at", "2026-11-03T08:00+01:00")  # a zone given: kept, nothing said
    page.click("#asof-btn")
    expect(page.locator("#asof-zone")).to_have_text("")
    expect(page.locator("#asof-title")).to_have_text("Believed at 2026-11-03 08:00 GMT+1")
    assert page.errors == []
