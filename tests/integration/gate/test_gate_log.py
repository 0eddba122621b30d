"""The gate's decisions are kept in a graph of their own beside the tenant's (its gate log):
decisions the tenant's graph kept before it still count, and it goes with the graph."""

from __future__ import annotations

import uuid

from rescind.contract import layout
from rescind.contract.events import action_id
from rescind.core import gate_rule
from rescind.engine.gate import decisions_log, last_decisions
from rescind.graph import queries as q
from rescind.graph.store import TenantGraph, connect
from tests.support.gate_book import ATTACKER, Book


def _kept_in_the_graph(g: TenantGraph, name: str, amount: float, at: int) -> None:
    """An allowed decision written as the gate wrote them before its log existed."""
    g.rows(q.GATE_RECORD, {
        "id": uuid.uuid4().hex, "action": action_id(g.tenant, name), "name": name, "at": at,
        "amount": amount, "currency": None, "base_amount": amount, "account": ATTACKER,
        "account_key": gate_rule.account_key(ATTACKER), "payee": "acme",
        "payee_key": gate_rule.payee_key("acme"),
        "allowed": True, "reason": "allowed", "fragility": 1, "domains": ["portal:acme"],
        "would_fall": ["portal:acme"], "execution": f"{name}#1", "expired": False,
        "aggregate": 0.0, "trace": None}, read_only=False)


def test_decisions_kept_in_the_graph_before_the_log_count_toward_the_aggregate(
        falkordb, tenant_name):
    """A $9,000 payment allowed before the gate log existed (a Gate node in the tenant's
    graph) is copied into the log on its first use: a $5,000 payment to the same account is
    refused on the aggregate, and the log lists both decisions."""
    b = Book(falkordb, tenant_name)
    b.source("portal:acme", "vendor_portal")
    portal = b.observe("portal:acme", f"Acme bank account: {ATTACKER}")
    _kept_in_the_graph(b.g, "inv-old", 9000.0, 500_000)

    d = b.ask("inv-new", (portal,), 5000, ATTACKER, "acme")

    assert not d.allowed and d.aggregate == 9000.0
    log = decisions_log(b.g)
    assert [e["name"] for e in log] == ["inv-new", "inv-old"]
    assert last_decisions(b.g, [action_id(tenant_name, "inv-old")])[
        action_id(tenant_name, "inv-old")]["allowed"] is True
    b.g.delete()


def test_a_decision_is_kept_beside_the_graph_and_goes_with_it(falkordb, tenant_name):
    """A decision is a Gate node of the gate log, not of the tenant's graph; deleting the
    graph deletes the log, so a tenant made again under the name starts with no decisions
    and nothing already allowed."""
    b = Book(falkordb, tenant_name)
    b.source("portal:acme", "vendor_portal")
    portal = b.observe("portal:acme", f"Acme bank account: {ATTACKER}")
    assert b.ask("inv-1", (portal,), 6000, ATTACKER, "acme").allowed
    assert b.g.rows("MATCH (d:Gate) RETURN count(d)")[0][0] == 0
    assert len(decisions_log(b.g)) == 1
    conn = b.g.conn
    assert layout.gate_log_key(tenant_name).encode() in conn.execute_command("GRAPH.LIST")

    b.g.delete()

    assert layout.gate_log_key(tenant_name).encode() not in conn.execute_command("GRAPH.LIST")
    assert not conn.exists(layout.gate_log_ready_key(tenant_name))
    again = Book(falkordb, tenant_name)
    again.source("portal:acme", "vendor_portal")
    portal = again.observe("portal:acme", f"Acme bank account: {ATTACKER}")
    assert decisions_log(again.g) == []
    d = again.ask("inv-2", (portal,), 6000, ATTACKER, "acme")
    assert d.allowed and d.aggregate == 0.0
    # A graph object that made the log ready before another deleted it reads no decisions.
    stale = TenantGraph(connect(falkordb), tenant_name)
    assert len(decisions_log(stale)) == 1
    again.g.delete()
    assert decisions_log(stale) == []
    assert last_decisions(stale, [action_id(tenant_name, "inv-2")]) == {}


def test_a_log_made_again_keeps_what_it_holds_and_copies_no_decision_twice(
        falkordb, tenant_name):
    """A log whose making was cut short (its ready mark gone) is made again: the decisions it
    holds stay, and one kept in the tenant's graph before it is in it once."""
    b = Book(falkordb, tenant_name)
    b.source("portal:acme", "vendor_portal")
    portal = b.observe("portal:acme", f"Acme bank account: {ATTACKER}")
    _kept_in_the_graph(b.g, "inv-old", 2000.0, 500_000)
    assert b.ask("inv-new", (portal,), 3000, ATTACKER, "acme").allowed
    b.g.conn.delete(layout.gate_log_ready_key(tenant_name))

    again = TenantGraph(connect(falkordb), tenant_name)

    assert sorted(e["name"] for e in decisions_log(again)) == ["inv-new", "inv-old"]
    assert again.conn.exists(layout.gate_log_ready_key(tenant_name))
    b.g.delete()
