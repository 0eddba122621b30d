"""Finding 7 (issue 28): the gate counts the domains that vouch for the account. A premise
that says nothing about the account (the user's "pay INV-5", an ERP invoice) neither holds
the payment up nor brings it down; a source stating the account under a label ("IBAN GB33
…", finding 6's ERP line) states it."""

from __future__ import annotations

import uuid

from langchain_core.tools import tool
from langgraph.prebuilt import create_react_agent
from langgraph.store.memory import InMemoryStore

from rescind.middleware import ActionTool, SourceTool
from tests.support import foreign as f
from tests.support.conformance import settle, wrap
from tests.support.gate_book import IBAN, Book

PAID: list[dict] = []


def _book(falkordb, tenant_name) -> tuple[Book, dict[str, str]]:
    b = Book(falkordb, tenant_name)
    b.source("user:clerk", "user")
    b.source("contract:umbrella", "signed_contract", "signed-contracts")
    b.source("portal:umbrella", "vendor_portal")
    b.source("erp:ledger", "erp", "erp")
    o = {"said": b.observe("user:clerk", "Pay Umbrella's INV-5."),
         "contract": b.observe("contract:umbrella", f"MSA-2026-014 Umbrella Ltd\nRemit to {IBAN}"),
         "portal": b.observe("portal:umbrella", f"Umbrella portal\nBank account: {IBAN}"),
         "invoice": b.observe("erp:ledger", "INV-5 Umbrella Ltd 15,000.00 due 2026-12-01"),
         "erp": b.observe("erp:ledger", f"Vendor Umbrella Ltd IBAN {IBAN}")}
    return b, o


def test_the_users_message_and_the_contract_with_the_portal_beside_it_is_two_domains(
        falkordb, tenant_name):
    """The issue's case: the payment rests on the user's message AND the contract, or on the
    user's message AND the portal (both state the account): 2 domains, $15,000 allowed."""
    b, o = _book(falkordb, tenant_name)
    d = b.ask("pay-inv-5", (o["said"], o["contract"]), 15000, IBAN, "Umbrella Ltd",
              alternatives=((o["said"], o["contract"]), (o["said"], o["portal"])))
    assert (d.allowed, d.fragility) == (True, 2), d.reason
    assert set(d.domains) == {"signed-contracts", "portal:umbrella"}
    b.g.delete()


def test_a_premise_not_stating_the_account_does_not_bring_the_payment_down(falkordb,
                                                                           tenant_name):
    """Resting on the user's message, the ERP invoice (no account in it) and the contract:
    fragility 1 (the contract), not 0; the user's and the ERP's domains are not counted."""
    b, o = _book(falkordb, tenant_name)
    d = b.ask("pay-inv-5", (o["said"], o["invoice"], o["contract"]), 9000, IBAN, "Umbrella")
    assert (d.allowed, d.fragility, d.domains) == (True, 1, ("signed-contracts",))
    big = b.ask("pay-inv-6", (o["said"], o["invoice"], o["contract"]), 15000, IBAN, "Umbrella")
    assert (big.allowed, big.fragility) == (False, 1)
    b.g.delete()


def test_an_erp_line_with_an_iban_label_states_the_account(falkordb, tenant_name):
    """Finding 6, second half: "IBAN GB33 BUKB …" in the ERP states the account, so the ERP
    and the portal, either of them enough, are two domains; resting on both together, losing
    either brings the payment down (1); the user's word alone is no evidence (0)."""
    b, o = _book(falkordb, tenant_name)
    d = b.ask("pay-1", (o["erp"],), 15000, IBAN, "Umbrella Ltd",
              alternatives=((o["erp"],), (o["portal"],)))
    assert (d.allowed, d.fragility) == (True, 2), d.reason
    both = b.ask("pay-3", (o["erp"], o["portal"]), 15000, IBAN, "Umbrella Ltd")
    assert (both.allowed, both.fragility) == (False, 1)
    alone = b.ask("pay-2", (o["said"],), 15000, IBAN, "Umbrella Ltd")
    assert (alone.allowed, alone.fragility) == (False, 0)
    b.g.delete()


PAGES = {"contract": f"MASTER AGREEMENT MSA-2026-014\nSupplier: Umbrella Ltd\nRemit to: {IBAN}",
         "portal": f"Umbrella Ltd supplier portal\nBank account: {IBAN}"}


@tool
def read_contract(vendor: str) -> str:
    """Read the signed contract."""
    return PAGES["contract"]


@tool
def read_vendor_portal(vendor: str) -> str:
    """Read the vendor's portal."""
    return PAGES["portal"]


@tool
def pay_invoice(vendor: str, invoice: str, amount: float, account: str) -> str:
    """Pay an invoice."""
    PAID.append({"invoice": invoice, "amount": amount, "account": account})
    return "paid"


def test_an_honest_payment_backed_by_the_contract_and_the_portal_runs(rescind_workers,
                                                                      tenant_name):
    """Through the real middleware and gate worker: the user asks to pay INV-5 (the invoice
    number only the user states), the contract and the portal state the account: $15,000
    runs on the first ask."""
    PAID.clear()
    model = f.Scripted(messages=iter([
        f.call("read_contract", {"vendor": "umbrella"}),
        f.call("read_vendor_portal", {"vendor": "umbrella"}),
        f.call("pay_invoice", {"vendor": "umbrella", "invoice": "INV-5", "amount": 15000,
                               "account": IBAN}), f.done()]))
    graph = wrap(create_react_agent(model, [read_contract, read_vendor_portal, pay_invoice],
                                    store=InMemoryStore()), rescind_workers, tenant_name,
                 sources={"read_contract": SourceTool(source="contract:{vendor}",
                                                      kind="signed_contract",
                                                      domain="signed-contracts"),
                          "read_vendor_portal": SourceTool(source="portal:{vendor}",
                                                           kind="vendor_portal")},
                 actions={"pay_invoice": ActionTool(amount="amount", payee="vendor",
                                                    account="account")})
    graph.invoke({"messages": [("user", "Pay Umbrella's INV-5.")]},
                 {"configurable": {"user_id": f"clerk-{uuid.uuid4().hex[:6]}"}})
    settle(rescind_workers, graph)
    graph.rescind.close()
    assert PAID == [{"invoice": "INV-5", "amount": 15000, "account": IBAN}]


@tool
def read_erp(vendor: str) -> str:
    """Read the vendor's ERP record."""
    return f"Vendor Umbrella Ltd   IBAN {IBAN}   terms 30 days"


def test_an_erp_record_with_an_iban_label_and_the_portal_let_the_payment_run(rescind_workers,
                                                                             tenant_name):
    """Finding 6's second half through the middleware: the ERP's "IBAN GB33 …" line and the
    portal both state the account; either justifies the call, so $15,000 runs at once."""
    PAID.clear()
    model = f.Scripted(messages=iter([
        f.call("read_erp", {"vendor": "umbrella"}),
        f.call("read_vendor_portal", {"vendor": "umbrella"}),
        f.call("pay_invoice", {"vendor": "umbrella", "invoice": "INV-6", "amount": 15000,
                               "account": IBAN}), f.done()]))
    graph = wrap(create_react_agent(model, [read_erp, read_vendor_portal, pay_invoice],
                                    store=InMemoryStore()), rescind_workers, tenant_name,
                 sources={"read_erp": SourceTool(source="erp:{vendor}", kind="erp",
                                                 domain="erp"),
                          "read_vendor_portal": SourceTool(source="portal:{vendor}",
                                                           kind="vendor_portal")},
                 actions={"pay_invoice": ActionTool(amount="amount", payee="vendor",
                                                    account="account")})
    graph.invoke({"messages": [("user", "Pay Umbrella's INV-6.")]},
                 {"configurable": {"user_id": f"clerk-{uuid.uuid4().hex[:6]}"}})
    settle(rescind_workers, graph)
    graph.rescind.close()
    assert PAID == [{"invoice": "INV-6", "amount": 15000, "account": IBAN}]
