"""Issue 28, finding 1: a source is named by the configuration, in canonical form, not by how
the model typed its arguments. The hacked portal read as ``northwind``, ``Northwind``,
`` northwind``, full-width and with a zero-width space is one source and one trust domain (the
$34,500 is refused), and a compromise of any spelling takes what rests on it OUT. Through the
real middleware, workers and gate."""

from __future__ import annotations

import pytest
from langchain_core.tools import tool
from langgraph.prebuilt import create_react_agent
from langgraph.store.memory import InMemoryStore

from rescind.contract.errors import Invalid
from rescind.graph import queries as q
from rescind.graph.store import TenantGraph, connect
from rescind.middleware import ActionTool, GateRefused, SourceTool
from rescind.operator import decisions
from tests.support import foreign as f
from tests.support.conformance import settle, wrap

ATTACKER = "ZZ97 QKRB 0000 9034 5521 66"
SPELLINGS = ["northwind", "Northwind", " northwind", "ｎｏｒｔｈｗｉｎｄ", "north\u200bwind",
             "NORTHWIND\u202c", "\u2066Northwind\u2069",
             "n\u043erthwind", "NORT\u041dW\u0406ND"]  # Cyrillic о; Н and І
PAID: list[dict] = []


@tool
def read_vendor_portal(vendor: str) -> str:
    """Read the vendor's portal."""
    return f"Northwind Traders supplier portal\nBank account: {ATTACKER}"


@tool
def pay_invoice(vendor: str, amount: float, account: str) -> str:
    """Pay a vendor."""
    PAID.append({"vendor": vendor, "amount": amount, "account": account})
    return "paid"


def desk(script: list, url: str, tenant: str):
    model = f.Scripted(messages=iter(script))
    graph = create_react_agent(model, [read_vendor_portal, pay_invoice], store=InMemoryStore())
    return wrap(graph, url, tenant, sources={
        "read_vendor_portal": SourceTool(source="portal:{vendor}", kind="vendor_portal")},
        actions={"pay_invoice": ActionTool(amount="amount", payee="vendor", account="account")})


def reads(*spellings: str) -> list:
    return [f.call("read_vendor_portal", {"vendor": s}) for s in spellings]


def portal_sources(url: str, tenant: str) -> list[list]:
    g = TenantGraph(connect(url), tenant)
    return [[sid, domain] for sid, _kind, _name, domain in g.rows(q.SOURCES)
            if sid.startswith("portal")]


def test_a_portal_read_under_many_spellings_is_one_source_and_its_payment_is_refused(
        rescind_workers, tenant_name):
    """Seven spellings of the vendor, one run: one source ``portal:northwind`` in one trust
    domain; the $34,500 to the portal's account rests on 1 domain and never runs."""
    PAID.clear()
    graph = desk([*reads(*SPELLINGS),
                  f.call("pay_invoice", {"vendor": "Northwind", "amount": 34500,
                                         "account": ATTACKER}), f.done()],
                 rescind_workers, tenant_name)
    with pytest.raises(GateRefused, match="rests on 1 trust domain"):
        graph.invoke({"messages": [("user", "pay northwind")]},
                     {"configurable": {"user_id": "clerk"}})
    settle(rescind_workers, graph)
    assert PAID == []
    assert portal_sources(rescind_workers, tenant_name) == [["portal:northwind",
                                                             "portal:{vendor}"]]
    graph.rescind.close()


@pytest.mark.parametrize("asked", ["portal:Northwind", "  PORTAL:north\u200bwind ",
                                   "portal:ｎｏｒｔｈｗｉｎｄ", "portal: northwind"])
def test_a_compromise_of_any_spelling_takes_the_payment_out(rescind_workers, tenant_name,
                                                             asked):
    """A $500 payment (under the threshold: allowed and paid) resting on the portal read as
    ``Northwind`` and full-width: a compromise spelled any other way resolves to
    ``portal:northwind``, says so, and takes the executed payment OUT onto the recall list."""
    PAID.clear()
    graph = desk([*reads("Northwind", "ｎｏｒｔｈｗｉｎｄ"),
                  f.call("pay_invoice", {"vendor": "Northwind", "amount": 500,
                                         "account": ATTACKER}), f.done()],
                 rescind_workers, tenant_name)
    graph.invoke({"messages": [("user", "pay northwind")]}, {"configurable": {"user_id": "c"}})
    settle(rescind_workers, graph)
    assert len(PAID) == 1
    g = TenantGraph(connect(rescind_workers), tenant_name)
    done = decisions.compromise(g, asked, None, None, "the portal was taken over", "security",
                                commit=True)
    assert done["source"] == "portal:northwind"
    assert g.rows("MATCH (m:Mem {kind: 'action'})-[st:STATUS]->() RETURN st.status") == [["OUT"]]
    graph.rescind.close()


def test_a_compromise_of_an_unknown_source_names_the_near_ones(rescind_workers, tenant_name):
    """A misspelt source is refused before anything is decided, naming the known source it is
    near, and the canonical form it was looked up as."""
    graph = desk([*reads("Northwind"), f.done()], rescind_workers, tenant_name)
    graph.invoke({"messages": [("user", "read it")]}, {"configurable": {"user_id": "c"}})
    settle(rescind_workers, graph)
    g = TenantGraph(connect(rescind_workers), tenant_name)
    with pytest.raises(Invalid, match=r"unknown source 'Portal:Northwnd' \(canonical form "
                       r"'portal:northwnd'\).*did you mean 'portal:northwind'\?"):
        decisions.compromise(g, "Portal:Northwnd", None, None, "hacked", "security")
    graph.rescind.close()
