"""The payment gate, attacked as someone who wants the money would, through the real
middleware and workers: only sources that state the account being paid count, a user's or an
agent's word never does, and a payment with no amount is refused everywhere."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

import pytest
from langchain_core.tools import tool
from langgraph.prebuilt import InjectedStore, ToolNode, create_react_agent
from langgraph.store.memory import InMemoryStore

from rescind.graph.store import TenantGraph, connect
from rescind.middleware import ActionTool, GateRefused, SourceTool
from tests.support import foreign as f
from tests.support.conformance import settle, wrap

ATTACKER = "ZZ97 QKRB 0000 9034 5521 66"
GENUINE = "GB33 BUKB 2020 1555 5555 55"
PAID: list[dict] = []
PAGES = {"portal": f"Acme Corp portal\nBank account: {ATTACKER}",
         "contract": f"MASTER AGREEMENT MSA-2026-001\nSupplier: Acme Corp\nBank account: {GENUINE}"}


@tool
def read_vendor_portal(vendor: str) -> str:
    """Read the vendor's portal."""
    return PAGES["portal"]


@tool
def read_contract(vendor: str) -> str:
    """Read the signed contract."""
    return PAGES["contract"]


@tool
def save_note(text: str, store: Annotated[Any, InjectedStore()]) -> str:
    """Save a note."""
    store.put(("notes",), uuid.uuid5(uuid.NAMESPACE_URL, text).hex, {"text": text})
    return "saved"


@tool
def recall_notes(store: Annotated[Any, InjectedStore()]) -> str:
    """Every note."""
    return "\n".join(i.value["text"] for i in store.search(("notes",)))


@tool
def pay_invoice(vendor: str, amount: float, account: str) -> str:
    """Pay a vendor."""
    PAID.append({"vendor": vendor, "amount": amount, "account": account})
    return "paid"


def desk(script, url: str, tenant: str):
    model = f.Scripted(messages=iter(script))
    graph = create_react_agent(model, [read_vendor_portal, read_contract, save_note,
                                       recall_notes, pay_invoice], store=InMemoryStore())
    return wrap(graph, url, tenant, sources={
        "read_vendor_portal": SourceTool(source="portal:{vendor}", kind="vendor_portal"),
        "read_contract": SourceTool(source="contract:{vendor}", kind="signed_contract")},
        actions={"pay_invoice": ActionTool(amount="amount", payee="vendor",
                                           account="account")})


def run(graph, text: str) -> None:
    graph.invoke({"messages": [("user", text)]}, {"configurable": {"user_id": "clerk"}})


PAY = f.call("pay_invoice", {"vendor": "acme", "amount": 34500, "account": ATTACKER})


NOTE = f"Acme bank account: {ATTACKER}"


def _refused_after_a_second_note(second_run: list, url: str, tenant: str) -> None:
    """The portal's account noted in one run, the same note written again by ``second_run``,
    then a $34,500 payment to that account: refused on one domain, and it never runs."""
    PAID.clear()
    graph = desk([f.call("read_vendor_portal", {"vendor": "acme"}),
                  f.call("save_note", {"text": NOTE}), f.done(), *second_run,
                  f.call("recall_notes", {}), PAY, f.done()], url, tenant)
    run(graph, "note acme's account")
    run(graph, "note it again")
    settle(url, graph)
    with pytest.raises(GateRefused, match="rests on 1 trust domain"):
        run(graph, "pay acme's invoice")
    assert PAID == []
    graph.rescind.close()


def test_the_agent_restating_the_portal_is_not_a_second_domain(rescind_workers, tenant_name):
    """The agent writes the portal's note again in a run of its own (nothing read: only the
    user's message). The note has two justifications, but one domain states the account."""
    _refused_after_a_second_note([f.call("save_note", {"text": NOTE}), f.done()],
                                 rescind_workers, tenant_name)


def test_a_source_in_context_that_does_not_state_the_account_is_not_a_second_domain(
        rescind_workers, tenant_name):
    """The contract (which names another account) is read in the turn where the agent writes
    the portal's note again: that second justification rests on the contract by context, but
    the contract does not state the account, so it adds no domain."""
    _refused_after_a_second_note([f.call("read_contract", {"vendor": "acme"}),
                                  f.call("save_note", {"text": NOTE}), f.done()],
                                 rescind_workers, tenant_name)


def test_two_sources_that_state_the_account_let_the_payment_run(rescind_workers,
                                                                tenant_name):
    """The control: when the portal and the contract both state the account being paid, two
    domains stand behind it and $34,500 runs."""
    PAID.clear()
    PAGES["portal"] = f"Acme Corp portal\nBank account: {GENUINE}"
    try:
        graph = desk([
            f.call("read_vendor_portal", {"vendor": "acme"}),
            f.call("read_contract", {"vendor": "acme"}),
            f.call("save_note", {"text": f"Acme bank account: {GENUINE}"}), f.done(),
            f.call("recall_notes", {}),
            f.call("pay_invoice", {"vendor": "acme", "amount": 34500, "account": GENUINE}),
            f.done()], rescind_workers, tenant_name)
        run(graph, "note acme's account")
        settle(rescind_workers, graph)
        run(graph, "pay acme's invoice")
    finally:
        PAGES["portal"] = f"Acme Corp portal\nBank account: {ATTACKER}"
    assert PAID == [{"vendor": "acme", "amount": 34500, "account": GENUINE}]
    graph.rescind.close()


def test_the_http_gate_refuses_what_the_middleware_refuses(falkordb, tenant_name):
    """``POST …/gate``: a new payment with no amount is refused; ``true`` is not an amount
    (422); a premise of another tenant is unknown here."""
    from tests.support.api import forget, make_story

    s = make_story(falkordb, tenant_name)
    try:
        [[memory]] = s.graph.rows("MATCH (m:Mem) WHERE m.kind = 'belief' RETURN m.id LIMIT 1")
        ask = lambda body: s.client.post(f"{s.base}/gate", json=body,  # noqa: E731
                                         headers=s.as_("agent"))
        no_amount = ask({"action": "pay-1", "premises": [memory]})
        assert no_amount.status_code == 200 and no_amount.json()["allowed"] is False
        assert "needs an amount" in no_amount.json()["reason"]
        assert ask({"action": "pay-1", "premises": [memory], "amount": True}).status_code == 422
        foreign = ask({"action": "pay-1", "premises": ["bel-00000000000000000000"],
                       "amount": 5}).json()
        assert foreign["allowed"] is False and "unknown premise" in foreign["reason"]
        # Every decision is kept and listed, newest first, with why (the story's own `gate`
        # line, replayed, is the oldest).
        log = s.client.get(f"{s.base}/gates", headers=s.as_("finance")).json()
        assert [(d["name"], d["allowed"]) for d in log] == [
            ("pay-1", False), ("pay-1", False), ("pay-1042", False)]
        assert "unknown premise" in log[0]["reason"] and "needs an amount" in log[1]["reason"]
        # A stored payment asked about is in its own history, with the gate's answer.
        stored = ask({"action": "pay-1041"}).json()
        history = s.client.get(f"{s.base}/memories/pay-1041/history",
                               headers=s.as_("viewer")).json()
        assert [(d["name"], d["allowed"], d["reason"]) for d in history["gate"]] == [
            ("pay-1041", stored["allowed"], stored["reason"])]
    finally:
        forget(falkordb, tenant_name)


def test_splitting_a_payment_does_not_get_it_under_the_threshold(rescind_workers,
                                                                 tenant_name):
    """Five payments of $9,999 to the attacker's account, each under the threshold: the first
    runs; the second would bring what was allowed to that account to $19,998 on one domain,
    so it and the rest are refused. Every decision is kept in the tenant's graph."""
    PAID.clear()
    split = f.call("pay_invoice", {"vendor": "acme", "amount": 9999, "account": ATTACKER})
    graph = desk([
        f.call("read_vendor_portal", {"vendor": "acme"}),
        f.call("save_note", {"text": f"Acme bank account: {ATTACKER}"}), f.done(),
        f.call("recall_notes", {}), split, f.done(),
        *[m for _ in range(4) for m in (f.call("recall_notes", {}), split)]],  # each refused
        rescind_workers, tenant_name)
    run(graph, "note acme's account")
    refused = 0
    for _ in range(5):
        settle(rescind_workers, graph)
        try:
            run(graph, "pay the next instalment")
        except GateRefused as exc:
            assert "already allowed to the same account" in str(exc)
            refused += 1
    assert refused == 4 and [p["amount"] for p in PAID] == [9999]
    g = TenantGraph(connect(rescind_workers), tenant_name)
    from rescind.engine.gate import decisions_log

    kept = [(d["allowed"], d["amount"], d["aggregate"]) for d in decisions_log(g)]
    assert kept == [(False, 9999, 9999.0)] * 4 + [(True, 9999, 0.0)]  # newest first
    graph.rescind.close()


SCHEDULED: dict[str, dict] = {}
BANK_DOWN = {"once": True}


@tool
def schedule_payment(invoice: str, vendor: str, amount: float, account: str) -> str:
    """Schedule a payment at the bank."""
    if BANK_DOWN.pop("once", False):
        raise ValueError("the bank refused the date")
    SCHEDULED[invoice] = {"vendor": vendor, "amount": amount, "account": account}
    return f"scheduled {invoice}"


@tool
def release_payment(invoice: str) -> str:
    """Release a scheduled payment: the bank pays what was scheduled."""
    PAID.append(SCHEDULED.pop(invoice))
    return f"released {invoice}"


def test_a_failed_first_try_does_not_leave_its_smaller_amount_to_be_judged(rescind_workers,
                                                                           tenant_name):
    """Scheduling $3,450 fails at the bank; the retry schedules $34,500 for the same invoice.
    The gate judges the release on what was proposed last ($34,500, one domain): refused, and
    the bank pays nothing. Before, the action kept the first try's $3,450 and was allowed."""
    PAID.clear()
    SCHEDULED.clear()
    BANK_DOWN["once"] = True
    model = f.Scripted(messages=iter([
        f.call("read_vendor_portal", {"vendor": "acme"}),
        f.call("save_note", {"text": f"Acme bank account: {ATTACKER}"}),
        f.call("schedule_payment", {"invoice": "INV-1002", "vendor": "acme", "amount": 3450,
                                    "account": ATTACKER}),
        f.call("schedule_payment", {"invoice": "INV-1002", "vendor": "acme", "amount": 34500,
                                    "account": ATTACKER}), f.done(),
        f.call("release_payment", {"invoice": "INV-1002"}), f.done()]))
    tools = ToolNode([read_vendor_portal, save_note, schedule_payment, release_payment],
                     handle_tool_errors=True)  # the bank's refusal goes back to the model
    graph = create_react_agent(model, tools, store=InMemoryStore())
    payment = {"id": "payment:{invoice}", "amount": "amount", "payee": "vendor",
               "account": "account"}
    graph = wrap(graph, rescind_workers, tenant_name, sources={
        "read_vendor_portal": SourceTool(source="portal:{vendor}", kind="vendor_portal")},
        actions={"schedule_payment": ActionTool(**payment, stage="propose"),
                 "release_payment": ActionTool(id="payment:{invoice}", stage="execute")})
    run(graph, "schedule INV-1002")
    settle(rescind_workers, graph)
    answer = graph.invoke({"messages": [("user", "release INV-1002")]})["messages"]
    [refusal] = [m.content for m in answer if getattr(m, "name", None) == "release_payment"]
    assert "34,500.00 is above 10,000" in refusal  # the tool never ran: its error is the refusal
    assert PAID == [] and SCHEDULED["INV-1002"]["amount"] == 34500
    g = TenantGraph(connect(rescind_workers), tenant_name)
    [[amount, failed]] = g.rows("MATCH (m:Mem {kind: 'action'}) RETURN m.amount, m.failed")
    assert amount == 34500 and not failed  # the first try failed; the retry replaced it
    graph.rescind.close()


def test_a_proposal_whose_call_failed_is_never_released(rescind_workers, tenant_name):
    """Scheduling fails at the bank and is not retried: the proposal is marked failed, and a
    release of it (even a small one) is refused."""
    PAID.clear()
    SCHEDULED.clear()
    BANK_DOWN["once"] = True
    model = f.Scripted(messages=iter([
        f.call("read_vendor_portal", {"vendor": "acme"}),
        f.call("schedule_payment", {"invoice": "INV-7", "vendor": "acme", "amount": 500,
                                    "account": ATTACKER}), f.done(),
        f.call("release_payment", {"invoice": "INV-7"}), f.done()]))
    tools = ToolNode([read_vendor_portal, schedule_payment, release_payment],
                     handle_tool_errors=True)
    graph = wrap(create_react_agent(model, tools, store=InMemoryStore()), rescind_workers,
                 tenant_name, sources={"read_vendor_portal": SourceTool(source="portal:{vendor}")},
                 actions={"schedule_payment": ActionTool(id="payment:{invoice}", amount="amount",
                                                         account="account", stage="propose"),
                          "release_payment": ActionTool(id="payment:{invoice}", stage="execute")})
    run(graph, "schedule INV-7")
    settle(rescind_workers, graph)
    answer = graph.invoke({"messages": [("user", "release INV-7")]})["messages"]
    [refusal] = [m.content for m in answer if getattr(m, "name", None) == "release_payment"]
    assert "the proposal's call failed (ValueError: the bank refused the date)" in refusal
    assert PAID == []
    graph.rescind.close()


def test_with_falkordb_down_the_gate_fails_closed(tmp_path):
    """The server goes away after the agent has read the portal: the payment cannot be judged,
    so it does not run, and the refusal comes at once, not after a long wait."""
    import time

    from rescind.runtime.server import EmbeddedFalkorDB
    from rescind.workers.app import WorkerSettings, WorkerThread

    PAID.clear()
    script = [f.call("read_vendor_portal", {"vendor": "acme"}),
              f.call("save_note", {"text": f"Acme bank account: {ATTACKER}"}), f.done(),
              f.call("recall_notes", {}),
              f.call("pay_invoice", {"vendor": "acme", "amount": 50, "account": ATTACKER}),
              f.done()]
    server = EmbeddedFalkorDB(data_dir=tmp_path)
    with server, WorkerThread(WorkerSettings(url=server.url, worker_id="down"),
                              ("writer", "retraction", "gate")):  # workers stop first
        graph = desk(script, server.url, "down-tenant")
        run(graph, "note acme's account")
        settle(server.url, graph)
    started = time.monotonic()
    with pytest.raises(GateRefused, match="could not be (asked|sent)|did not answer"):
        run(graph, "pay acme's invoice")
    assert PAID == [] and time.monotonic() - started < 8
    graph.rescind.close()


@tool
def pay_in(vendor: str, account: str, amount: float | None = None,
           currency: str | None = None) -> str:
    """Pay a vendor in a currency."""
    PAID.append({"vendor": vendor, "amount": amount, "currency": currency, "account": account})
    return "paid"


def _payer(script: list, url: str, tenant: str):
    """A desk whose payment tool names the currency; amounts in it count converted."""
    model = f.Scripted(messages=iter(script))
    graph = create_react_agent(model, [read_vendor_portal, save_note, recall_notes, pay_in],
                               store=InMemoryStore())
    return wrap(graph, url, tenant, sources={
        "read_vendor_portal": SourceTool(source="portal:{vendor}", kind="vendor_portal")},
        actions={"pay_in": ActionTool(amount="amount", currency="currency", payee="vendor",
                                      account="account")})


@pytest.mark.parametrize(("args", "refusal"), [
    ({"amount": 2_000_000, "currency": "JPY"}, "no rate from JPY to USD"),
    ({"amount": 9_999}, "no currency in argument 'currency'"),
    ({"currency": "USD"}, "is not a number"),
    ({"amount": 9_999, "currency": "dollars"}, "is not a currency code"),
])
def test_an_amount_the_gate_cannot_read_in_dollars_is_refused(rescind_workers, tenant_name,
                                                             args, refusal):
    """A JPY 2,000,000 invoice (no rate configured), 9,999 with the currency left out, no
    amount at all, a currency that is no ISO code: each refused before the bank is called."""
    PAID.clear()
    graph = _payer([f.call("read_vendor_portal", {"vendor": "acme"}),
                    f.call("save_note", {"text": NOTE}), f.done(), f.call("recall_notes", {}),
                    f.call("pay_in", {"vendor": "acme", "account": ATTACKER, **args}), f.done()],
                   rescind_workers, tenant_name)
    run(graph, "note acme's account")
    settle(rescind_workers, graph)
    with pytest.raises(GateRefused, match=refusal):
        run(graph, "pay acme's invoice")
    assert PAID == []
    graph.rescind.close()


def test_a_foreign_amount_is_judged_converted(falkordb, tenant_name):
    """With a rate table, JPY 2,000,000 is 13,400 dollars: above the threshold on one domain,
    refused; JPY 1,000,000 (6,700) is allowed, and then counts, converted, in the next one's
    aggregate. The engine's own gate, on a real graph."""
    from rescind.contract.events import memory_id
    from rescind.core.shapes import Mutation
    from rescind.engine.gate import GateCall, GatePolicy, judge, record
    from rescind.engine.writes import Write
    from rescind.engine.writes import record as write

    g = TenantGraph(connect(falkordb), tenant_name)
    g.ensure_schema()
    g.apply(Mutation(op="source", sources=[{"id": "portal:acme", "kind": "vendor_portal",
                                            "name": "portal", "domain": "portal:acme"}]),
            g.revision())
    text = f"Acme bank account: {ATTACKER}"
    oid = memory_id(tenant_name, "observation", text)
    write(g, [Write("e1", oid, "observation", text, 1, source="portal:acme")])
    policy = GatePolicy(rates={"JPY": 0.0067})

    def ask(action: str, amount: float, at: int):
        call = GateCall(action, (oid,), amount, ATTACKER, "acme", at, "JPY")
        d = judge(g, call, policy)
        record(g, call, d)
        return d

    big = ask("a-big", 2_000_000, 10)
    assert not big.allowed and "JPY 2,000,000.00 (USD 13,400.00) is above 10,000" in big.reason
    small = ask("a-small", 1_000_000, 20)
    assert small.allowed and small.base_amount == pytest.approx(6700)
    again = ask("a-next", 1_000_000, 30)
    assert not again.allowed and again.aggregate == pytest.approx(6700)
    g.delete()


@pytest.mark.parametrize("attempt", range(3))
def test_a_payment_racing_a_retraction_is_refused_or_recalled(rescind_workers, tenant_name,
                                                              attempt):
    """Security retracts the portal while the agent pays $500 on it (under the threshold, so
    one domain would do). Whichever lands first, nothing is lost: either the gate saw the
    payment OUT and it never ran, or it ran and then went OUT with a recall drafted."""
    import threading

    from rescind.operator.recalls import recall_list
    from tests.support.conformance import retract

    PAID.clear()
    small = f.call("pay_invoice", {"vendor": "acme", "amount": 500, "account": ATTACKER})
    graph = desk([f.call("read_vendor_portal", {"vendor": "acme"}),
                  f.call("save_note", {"text": NOTE}), f.done(), f.call("recall_notes", {}),
                  small, f.done()], rescind_workers, tenant_name)
    run(graph, "note acme's account")
    settle(rescind_workers, graph)
    start, refused = threading.Barrier(2), []

    def pay() -> None:
        start.wait()
        try:
            run(graph, "pay acme's invoice")
        except GateRefused as exc:
            refused.append(str(exc))

    payer = threading.Thread(target=pay)
    payer.start()
    start.wait()
    retract(rescind_workers, tenant_name, "portal:acme")
    payer.join(30)
    settle(rescind_workers, graph)
    g = TenantGraph(connect(rescind_workers), tenant_name)
    [[status, executed]] = g.rows(
        "MATCH (m:Mem {kind: 'action'})-[st:STATUS]->() RETURN st.status, m.executed")
    assert status == "OUT"
    if PAID:
        assert executed and not refused
        assert [(r.amount, r.state) for r in recall_list(g)] == [(500, "drafted")]
    else:
        assert refused and "OUT" in refused[0] and not executed and recall_list(g) == []
    graph.rescind.close()
