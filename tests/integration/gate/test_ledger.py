"""The gate's ledger (``rescind.graph.gate_ledger``): the aggregate and each decision's record
kept in Redis, off FalkorDB's query threads, and copied into the gate log after the answer.
It must say what the log says, let no two concurrent payments pass under the limit, lose no
decision to a crash before the copy, and go with the tenant."""

from __future__ import annotations

import threading
import time

from rescind.contract import layout
from rescind.contract.events import action_id
from rescind.core import gate_rule
from rescind.engine import gate
from rescind.engine.gate import GateCall, GatePolicy, decisions_log, judge, record
from rescind.graph import gate_ledger, tenants
from rescind.graph.cypher import query
from rescind.graph.store import TenantGraph, connect
from rescind.middleware.gate import GateClient
from rescind.workers.app import WorkerSettings, WorkerThread
from tests.support.gate_book import ATTACKER, IBAN, Book


def _from_log(g: TenantGraph, by: str, key: str) -> float:
    """What the gate log says was allowed to ``key`` (an account's or a payee's), each
    execution once at its largest amount, as the rule adds it up."""
    rows = [gate_rule.Allowed(by, d["execution"], d["base_amount"] if d["base_amount"]
                              is not None else d["amount"])
            for d in decisions_log(g, limit=1000) if d["allowed"]
            and (gate_rule.account_key(d["account"]) if by == "account"
                 else gate_rule.payee_key(d["payee"])) == key]
    return gate_rule.already_allowed(rows)[0 if by == "account" else 1]


def _from_ledger(g: TenantGraph, by: str, key: str) -> float:
    agg = gate_ledger.aggregate(g.conn, g.tenant, key if by == "account" else None,
                                key if by == "payee" else None, 0)
    return gate_rule.already_allowed(gate_rule.Allowed(*r) for r in agg.rows)[
        0 if by == "account" else 1]


def _log_nodes(g: TenantGraph) -> list[str]:
    """The names of the Gate nodes in the gate log itself (no copy made first)."""
    key = layout.gate_log_key(g.tenant)
    if key.encode() not in g.conn.execute_command("GRAPH.LIST"):
        return []
    return sorted(r[0] for r in query(g.conn, key, "MATCH (d:Gate) RETURN d.name",
                                      read_only=True).rows)


def test_the_ledger_adds_up_what_the_gate_log_says_and_is_seeded_from_it(
        falkordb, tenant_name):
    """Payments allowed and refused, to two accounts in several spellings and three payees,
    a proposal released twice: per account and per payee the ledger's aggregate equals the
    log's; with the ledger gone (a log from before it), it is made again from the log, equal."""
    b = Book(falkordb, tenant_name)
    b.source("portal:acme", "vendor_portal")
    portal = b.observe("portal:acme", f"Acme bank account: {ATTACKER}")
    other = b.observe("portal:acme", f"Acme's other account: {IBAN}")
    b.ask("p1", (portal,), 4000, ATTACKER, "acme")
    b.ask("p2", (portal,), 3000, f"IBAN {ATTACKER.lower()} (Acme)", "ACME ")
    b.ask("p3", (portal,), 5000, ATTACKER, "acme")  # refused: 12,000 on one domain
    b.ask("p4", (other,), 2500, IBAN, "acme ltd")
    b.ask("p5", (other,), 1200, IBAN.replace(" ", ""), "globex")
    mid = b.propose("p6", (other,), amount=700.0, account=IBAN, payee="globex")
    assert b.ask("p6", None).allowed and b.ask("p6", None).allowed  # one execution
    keys = [("account", gate_rule.account_key(ATTACKER)), ("account", gate_rule.account_key(IBAN)),
            *(("payee", gate_rule.payee_key(p)) for p in ("acme", "acme ltd", "globex"))]
    expected = {("account", gate_rule.account_key(ATTACKER)): 7000.0,
                ("account", gate_rule.account_key(IBAN)): 4400.0,
                ("payee", "acme"): 7000.0}

    ledger = {k: _from_ledger(b.g, *k) for k in keys}

    assert ledger == {k: _from_log(b.g, *k) for k in keys}
    assert {k: v for k, v in ledger.items() if k in expected} == expected
    assert ledger[("payee", gate_rule.payee_key("globex"))] == 1900.0
    assert [d["allowed"] for d in decisions_log(b.g) if d["action"] == mid] == [True, True]

    # A log kept before the ledger: the ledger is seeded from it on its first use.
    gate_ledger.forget(b.g.conn, tenant_name)
    fresh = TenantGraph(connect(falkordb), tenant_name)
    gate.log_of(fresh)
    assert {k: _from_ledger(fresh, *k) for k in keys} == ledger
    d = Book(falkordb, tenant_name).ask("p7", (portal,), 3500, ATTACKER, "acme")
    assert not d.allowed and d.aggregate == 7000.0
    b.g.delete()


def test_concurrent_payments_to_one_account_never_pass_the_limit_together(
        falkordb, tenant_name):
    """Sixteen $3,000 payments on one trust domain to one account, asked at once from sixteen
    threads (each its own connection, as gate workers and the API would be): exactly three
    are allowed ($9,000; a fourth would make $12,000, above $10,000), and the log agrees;
    so too when all sixteen are judged before any is recorded (the worst interleaving)."""
    b = Book(falkordb, tenant_name)
    b.source("portal:acme", "vendor_portal")
    portal = b.observe("portal:acme", f"Acme bank account: {ATTACKER}")
    policy = GatePolicy()
    for account, judged_first in ((ATTACKER, False), (IBAN, True)):
        start, judged, got = threading.Barrier(16), threading.Barrier(16), []

        def pay(k: int, account: str = account, judged_first: bool = judged_first,
                start: threading.Barrier = start, judged: threading.Barrier = judged,
                got: list = got) -> None:
            g = TenantGraph(connect(falkordb), tenant_name)
            name = f"split-{account[:2]}-{k}"
            call = GateCall(action_id(tenant_name, name), (portal,), 3000.0, account,
                            f"payee {k}", 5_000_000, None, False, f"ask-{k}")
            start.wait()
            d = judge(g, call, policy)
            if judged_first:
                judged.wait()
            got.append(record(g, call, d, name))

        threads = [threading.Thread(target=pay, args=(k,)) for k in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)

        assert len(got) == 16
        assert sum(d.allowed for d in got) == 3
        refused = [d for d in got if not d.allowed]
        assert all("above 10,000" in d.reason and d.aggregate == 9000.0 for d in refused)
        log = [d for d in decisions_log(b.g, limit=100) if d["account"] == account]
        assert sum(d["amount"] for d in log if d["allowed"]) == 9000.0
        assert [d["allowed"] for d in log].count(False) == 13
        assert _from_ledger(b.g, "account", gate_rule.account_key(account)) == 9000.0
    b.g.delete()


def test_a_decision_left_uncopied_by_a_dead_gate_is_copied_by_the_next(falkordb, tenant_name):
    """A gate that answered and died before copying its decision into the log: the decision
    is in the ledger only; the next gate worker, at its first answer (another tenant's), copies
    it into the log, and reads of the log see it meanwhile."""
    b = Book(falkordb, tenant_name)
    b.source("portal:acme", "vendor_portal")
    portal = b.observe("portal:acme", f"Acme bank account: {ATTACKER}")
    b.ask("answered-then-died", (portal,), 500, ATTACKER, "acme")  # judged and recorded only
    assert _log_nodes(b.g) == [] and gate_ledger.uncopied(b.g.conn, tenant_name) == 1
    other = f"{tenant_name}-b"
    tenants.create(b.g.conn, other, "test")
    o = Book(falkordb, other)
    o.source("portal:acme", "vendor_portal")
    o_portal = o.observe("portal:acme", f"Acme bank account: {ATTACKER}")

    with WorkerThread(WorkerSettings(url=falkordb, worker_id="gate-after-crash"),
                      ("writer", "gate")):
        assert GateClient(falkordb, other).ask("later", [o_portal], 500, "acme",
                                               account=ATTACKER).allowed
        deadline = time.monotonic() + 10
        while _log_nodes(b.g) == [] and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _log_nodes(b.g) == ["answered-then-died"]
        assert gate_ledger.uncopied(b.g.conn, tenant_name) == 0
        while _log_nodes(o.g) == [] and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _log_nodes(o.g) == ["later"]

    b.ask("read-before-copy", (portal,), 500, ATTACKER, "acme")
    assert [d["name"] for d in decisions_log(b.g)] == ["read-before-copy", "answered-then-died"]
    assert gate_ledger.uncopied(b.g.conn, tenant_name) == 0
    tenants.drop(b.g.conn, other)
    b.g.delete()


def test_a_tenant_deleted_takes_its_ledger_with_it(falkordb, tenant_name):
    """Deleting a tenant's graph deletes its gate ledger: the aggregate's sets and versions,
    the decisions not yet copied, and the mark that it was seeded; none of its keys is left."""
    b = Book(falkordb, tenant_name)
    b.source("portal:acme", "vendor_portal")
    portal = b.observe("portal:acme", f"Acme bank account: {ATTACKER}")
    b.ask("p1", (portal,), 4000, ATTACKER, "acme")
    b.ask("p2", (portal,), 9000, ATTACKER, "globex")  # refused, still recorded
    conn = b.g.conn
    pattern = f"{layout.gate_allowed_versions_key(tenant_name)}*"
    assert len(list(conn.scan_iter(match=pattern))) == 4  # versions, 2 sets, the ready mark
    assert conn.exists(layout.gate_decisions_key(tenant_name),
                       layout.gate_uncopied_key(tenant_name)) == 2

    b.g.delete()

    assert list(conn.scan_iter(match=pattern)) == []
    assert conn.exists(layout.gate_decisions_key(tenant_name),
                       layout.gate_uncopied_key(tenant_name)) == 0
