"""Finding 5 (issue 28): a gated action with no amount is refused, new or stored, through the
engine, over HTTP and through the middleware, unless the operator declared it amount-free."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import tool
from langgraph.prebuilt import ToolNode, create_react_agent
from langgraph.store.memory import InMemoryStore

from rescind.middleware import ActionTool, SourceTool
from tests.support import foreign as f
from tests.support.conformance import settle, wrap
from tests.support.gate_book import ATTACKER, Book

SCHEDULED: dict[str, dict] = {}
PAID: list[dict] = []


def test_no_amount_is_refused_new_or_stored_unless_declared_amount_free(falkordb,
                                                                        tenant_name):
    """A new call with no amount, and a stored proposal with amount null (its release naming
    none either), are refused; the same declared amount-free are judged and allowed."""
    b = Book(falkordb, tenant_name)
    b.source("portal:acme", "vendor_portal")
    portal = b.observe("portal:acme", f"Acme bank account: {ATTACKER}")
    new = b.ask("pay-1", (portal,), None, ATTACKER, "acme")
    assert not new.allowed and "no amount" in new.reason
    b.propose("payment:INV-5", (portal,), amount=None, account=ATTACKER, payee="acme")
    stored = b.ask("payment:INV-5")
    assert not stored.allowed and "no amount" in stored.reason
    assert b.ask("pay-2", (portal,), None, ATTACKER, "acme", amount_free=True).allowed
    assert b.ask("payment:INV-5", amount_free=True).allowed
    b.g.delete()


def test_over_http_a_stored_action_with_amount_null_is_refused(falkordb, tenant_name):
    """``POST …/gate`` about a stored proposal with no amount, the call's amount null too:
    refused, and the refusal is kept in the gate log."""
    from tests.support.api import forget, make_story

    s = make_story(falkordb, tenant_name)
    try:
        b = Book(falkordb, tenant_name)
        b.source("portal:globex", "vendor_portal")
        portal = b.observe("portal:globex", f"Globex bank account: {ATTACKER}")
        b.propose("sched-1", (portal,), amount=None, account=ATTACKER, payee="acme")
        for body in ({"action": "sched-1"}, {"action": "sched-1", "amount": None}):
            got = s.client.post(f"{s.base}/gate", json=body, headers=s.as_("agent"))
            assert got.status_code == 200 and got.json()["allowed"] is False, got.text
            assert "no amount" in got.json()["reason"]
        log = s.client.get(f"{s.base}/gates", headers=s.as_("finance")).json()
        assert [d["allowed"] for d in log if d["name"] == "sched-1"] == [False, False]
    finally:
        forget(falkordb, tenant_name)


@tool
def read_vendor_portal(vendor: str) -> str:
    """Read the vendor's portal."""
    return f"Acme Corp portal\nBank account: {ATTACKER}"


@tool
def schedule_payment(invoice: str, vendor: str, amount: float, account: str) -> str:
    """Schedule a payment at the bank."""
    SCHEDULED[invoice] = {"vendor": vendor, "amount": amount, "account": account}
    return f"scheduled {invoice}"


@tool
def release_payment(invoice: str) -> str:
    """Release a scheduled payment: the bank pays what was scheduled."""
    PAID.append(SCHEDULED.pop(invoice))
    return f"released {invoice}"


def _released(url: str, tenant: str, **release: Any) -> str:
    """Schedule $34,500 with a tool whose configuration names no amount, release it through
    the real middleware and workers; the release tool's answer."""
    PAID.clear()
    SCHEDULED.clear()
    model = f.Scripted(messages=iter([
        f.call("read_vendor_portal", {"vendor": "acme"}),
        f.call("schedule_payment", {"invoice": "INV-9", "vendor": "acme", "amount": 34500,
                                    "account": ATTACKER}), f.done(),
        f.call("release_payment", {"invoice": "INV-9"}), f.done()]))
    tools = ToolNode([read_vendor_portal, schedule_payment, release_payment],
                     handle_tool_errors=True)
    graph = wrap(create_react_agent(model, tools, store=InMemoryStore()), url, tenant,
                 sources={"read_vendor_portal": SourceTool(source="portal:{vendor}",
                                                           kind="vendor_portal")},
                 actions={"schedule_payment": ActionTool(id="payment:{invoice}",
                                                         account="account", stage="propose"),
                          "release_payment": ActionTool(id="payment:{invoice}", stage="execute",
                                                        **release)})
    graph.invoke({"messages": [("user", "schedule INV-9")]},
                 {"configurable": {"user_id": "clerk"}})
    settle(url, graph)
    answer = graph.invoke({"messages": [("user", "release INV-9")]},
                          {"configurable": {"user_id": "clerk"}})["messages"]
    graph.rescind.close()
    [said] = [m.content for m in answer if getattr(m, "name", None) == "release_payment"]
    return said


def test_a_scheduling_tool_that_names_no_amount_cannot_release_money(rescind_workers,
                                                                     tenant_name):
    """The issue's case: $34,500 scheduled by a tool configured without an amount, then
    released: refused, and the bank pays nothing."""
    said = _released(rescind_workers, tenant_name)
    assert "no amount" in said and "not declared amount-free" in said
    assert PAID == []


def test_an_action_declared_amount_free_is_judged_without_one(rescind_workers, tenant_name):
    """The operator's declaration (``amount_free = true`` on the release) lets the same
    release be judged on its evidence and run."""
    said = _released(rescind_workers, tenant_name, amount_free=True)
    assert said == "released INV-9"
    assert [p["amount"] for p in PAID] == [34500]
