"""The gate judges what the agent saw (issue 28, finding 6): an agent that reads an ERP record
and a vendor portal, both stating the account, then pays $15,000 at once, is allowed on the
first ask, every time, however far behind the writer is; what the agent published before it
asked is applied before the gate judges (``GateAsked.seen``), or the gate refuses saying so."""

from __future__ import annotations

import itertools

import pytest
from langchain_core.tools import tool
from langgraph.prebuilt import create_react_agent
from schwifty import IBAN

from rescind.middleware import ActionTool, SourceTool
from rescind.workers.app import WorkerSettings, WorkerThread
from tests.support import foreign as f
from tests.support.conformance import settle, wrap

PAID: list[dict] = []
_n = itertools.count(10)


def _account(i: int) -> str:
    """A valid IBAN of its own for each agent (its check digits right)."""
    return IBAN.generate("GB", bank_code="BUKB202015", account_code=f"{i:08d}").formatted


@tool
def read_erp(vendor: str) -> str:
    """The vendor's master record in the ERP."""
    return f"Vendor master record: {vendor}\nIBAN {_account(int(vendor.split('-')[1]))}"


@tool
def read_portal(vendor: str) -> str:
    """The vendor's own portal."""
    return f"Supplier portal\nVendor: {vendor}\nBank account: {_account(int(vendor.split('-')[1]))}"


@tool
def pay_invoice(vendor: str, amount: float, account: str) -> str:
    """Pay a vendor."""
    PAID.append({"vendor": vendor, "amount": amount, "account": account})
    return "paid"


def _pay_once(url: str, tenant: str) -> None:
    """A fresh agent: reads both sources and pays at once (nothing settled in between)."""
    i = next(_n)
    vendor = f"vendor-{i}"
    script = [f.call("read_erp", {"vendor": vendor}), f.call("read_portal", {"vendor": vendor}),
              f.call("pay_invoice", {"vendor": vendor, "amount": 15000,
                                     "account": _account(i)}), f.done()]
    graph = wrap(create_react_agent(f.Scripted(messages=iter(script)),
                                    [read_erp, read_portal, pay_invoice]), url, tenant,
                 sources={"read_erp": SourceTool(source="erp:{vendor}", kind="erp",
                                                 domain="erp"),
                          "read_portal": SourceTool(source="portal:{vendor}",
                                                    kind="vendor_portal")},
                 actions={"pay_invoice": ActionTool(amount="amount", payee="vendor",
                                                    account="account")})
    try:
        graph.invoke({"messages": [("user", f"pay {vendor}'s invoice")]})
    finally:
        graph.rescind.close()


@tool
def read_contract(vendor: str) -> str:
    """The signed contract with the vendor."""
    return f"MASTER AGREEMENT\nSupplier: {vendor}\nBank account: {_account(int(vendor.split('-')[1]))}"


SCHEDULED: dict[str, dict] = {}


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


def _scheduler(script: list, url: str, tenant: str):
    graph = create_react_agent(f.Scripted(messages=iter(script)),
                               [read_portal, read_contract, schedule_payment, release_payment])
    return wrap(graph, url, tenant,
                sources={"read_portal": SourceTool(source="portal:{vendor}",
                                                   kind="vendor_portal"),
                         "read_contract": SourceTool(source="contract:{vendor}",
                                                     kind="signed_contract",
                                                     domain="signed-contracts")},
                actions={"schedule_payment": ActionTool(id="payment:{invoice}", stage="propose",
                                                        amount="amount", payee="vendor",
                                                        account="account"),
                         "release_payment": ActionTool(id="payment:{invoice}",
                                                       stage="execute")})


@pytest.fixture
def slow_writer(falkordb):
    """A writer that polls its streams only every 0.4 s, beside a quick gate: a gate that
    judged what happened to be written would judge before the agent's last events landed."""
    writer = WorkerSettings(url=falkordb, worker_id="slow", polling_ms=400)
    gate = WorkerSettings(url=falkordb, worker_id="quick-gate")
    with WorkerThread(writer, ("writer", "retraction")), WorkerThread(gate, ("gate",)):
        yield falkordb


def test_a_release_is_judged_on_the_proposal_the_agent_just_made(slow_writer, tenant_name):
    """Run 1 schedules $15,000 on the portal alone (one domain) and settles. Run 2 reads the
    signed contract, schedules the invoice again (now on two domains) and releases it at
    once: the stored proposal exists already, so only waiting for what the agent published
    makes the gate judge the second proposal, not the first. Five times over."""
    PAID.clear()
    for _ in range(5):
        i = next(_n)
        vendor, invoice = f"vendor-{i}", f"INV-{i}"
        pay = {"invoice": invoice, "vendor": vendor, "amount": 15000, "account": _account(i)}
        first = _scheduler([f.call("read_portal", {"vendor": vendor}),
                            f.call("schedule_payment", pay), f.done()], slow_writer, tenant_name)
        first.invoke({"messages": [("user", f"schedule {invoice}")]})
        settle(slow_writer, first)
        first.rescind.close()
        second = _scheduler([f.call("read_contract", {"vendor": vendor}),
                             f.call("schedule_payment", pay),
                             f.call("release_payment", {"invoice": invoice}), f.done()],
                            slow_writer, tenant_name)
        try:
            second.invoke({"messages": [("user", f"check {invoice} and release it")]})
        finally:
            second.rescind.close()
    assert [p["amount"] for p in PAID] == [15000] * 5


def test_the_honest_payment_passes_the_first_time_200_times(rescind_workers, tenant_name):
    """Asked 200 times, by 200 fresh agents, with the workers as `rescind up` runs them:
    never refused."""
    PAID.clear()
    for _ in range(200):
        _pay_once(rescind_workers, tenant_name)
    assert len(PAID) == 200
