"""The gate judges what the agent saw (issue 28, finding 6): an agent that reads an ERP record
and a vendor portal, both stating the account, then pays $15,000 at once, is allowed on the
first ask, every time, however far behind the writer is; what the agent published before it
asked is applied before the gate judges (``GateAsked.seen``), or the gate refuses saying so."""

from __future__ import annotations

import itertools

import pytest
from langchain_core.tools import tool
from langgraph.prebuilt import create_react_agent

from rescind.middleware import ActionTool, GateRefused, SourceTool
from rescind.workers.app import WorkerSettings, WorkerThread
from tests.support import foreign as f
from tests.support.conformance import wrap

PAID: list[dict] = []
_n = itertools.count(10)


def _account(i: int) -> str:
    return f"GB{i % 90 + 10:02d} BUKB 2020 1555 {i:04d} 55"


@tool
def read_erp(vendor: str) -> str:
    """The vendor's master record in the ERP."""
    return f"Vendor master record: {vendor}\nBank account {_account(int(vendor.split('-')[1]))}"


@tool
def read_portal(vendor: str) -> str:
    """The vendor's own portal."""
    return f"{vendor} portal. Bank account: {_account(int(vendor.split('-')[1]))}"


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


def test_what_is_not_applied_in_time_is_refused_with_the_reason(falkordb, tenant_name):
    """With no writer at all, the gate waits its bound and refuses, saying what it waited for
    (never judging on a graph that lacks what the agent read)."""
    PAID.clear()
    gate = WorkerSettings(url=falkordb, worker_id="lonely-gate", applied_wait_s=0.5)
    with WorkerThread(gate, ("gate",)), pytest.raises(GateRefused, match="not applied yet"):
        _pay_once(falkordb, tenant_name)
    assert PAID == []
