"""Finding 9 (issue 28): a gate question judged after its asker stopped waiting is recorded
as expired, in the graph's gate log and in the audit alike, never as allowed: the server is
frozen (CLIENT PAUSE) while the question is on its way, as FalkorDB froze in the red team's
run."""

from __future__ import annotations

import time

import pytest

from rescind.contract.events import GateAsked
from rescind.engine.gate import decisions_log
from rescind.middleware import GateRefused
from rescind.middleware.gate import GateClient
from rescind.operator.audit import AuditLog
from rescind.transport import connection
from tests.support.gate_book import ATTACKER, Book


def _outcomes(url: str, tenant: str, b: Book) -> tuple[list, list]:
    """(name, outcome) of every gate decision: the audit's, the graph's (oldest first)."""
    audit = [(e["target"], e["result"]) for e in AuditLog(connection.connect(url))
             .entries(tenant) if e["action"] == "gate"][::-1]
    graph = [(d["name"], "allowed" if d["allowed"] else "expired" if d["expired"]
              else "blocked") for d in decisions_log(b.g)][::-1]
    return audit, graph


def test_a_question_answered_after_a_freeze_is_expired_in_the_graph_and_the_audit(
        rescind_workers, tenant_name):
    """$500 on one domain (allowed when judged in time) asked while the server is paused
    for 2 s, the asker waiting 1 s: refused to the asker, kept as expired in the Gate log
    and in the audit; a question in time before and after is allowed in both."""
    b = Book(rescind_workers, tenant_name)
    b.source("portal:acme", "vendor_portal")
    portal = b.observe("portal:acme", f"Acme bank account: {ATTACKER}")
    client = GateClient(rescind_workers, tenant_name, timeout_s=1.0)
    assert client.ask("pay-1", [portal], 500, "acme", account=ATTACKER).allowed
    admin = connection.connect(rescind_workers)
    admin.execute_command("CLIENT", "PAUSE", 2000, "ALL")  # FalkorDB frozen: fault injected
    started = time.monotonic()
    with pytest.raises(GateRefused) as refused:
        client.ask("pay-2", [portal], 500, "acme", account=ATTACKER)
    assert time.monotonic() - started >= 1.5
    assert "expired" in str(refused.value) or "did not answer" in str(refused.value)
    assert client.ask("pay-3", [portal], 500, "acme", account=ATTACKER).allowed
    deadline = time.monotonic() + 10
    while len(_outcomes(rescind_workers, tenant_name, b)[1]) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    audit, graph = _outcomes(rescind_workers, tenant_name, b)
    assert graph == [("pay-1", "allowed"), ("pay-2", "expired"), ("pay-3", "allowed")]
    assert audit == graph
    [late] = [d for d in decisions_log(b.g) if d["name"] == "pay-2"]
    assert late["allowed"] is False and late["reason"].startswith("expired: judged")
    assert "would have been allowed" in late["reason"]
    b.g.delete()


def test_a_question_whose_deadline_passed_before_it_was_read_is_never_allowed(
        rescind_workers, tenant_name):
    """A question already past its deadline when the gate reads it (an asker whose clock ran
    out, a worker that was down): expired, never allowed, in both logs."""
    b = Book(rescind_workers, tenant_name)
    b.source("portal:acme", "vendor_portal")
    portal = b.observe("portal:acme", f"Acme bank account: {ATTACKER}")
    client = GateClient(rescind_workers, tenant_name, timeout_s=0.0)
    with pytest.raises(GateRefused):
        client.ask("pay-1", [portal], 500, "acme", account=ATTACKER)
    deadline = time.monotonic() + 10
    while not _outcomes(rescind_workers, tenant_name, b)[1] and time.monotonic() < deadline:
        time.sleep(0.05)
    audit, graph = _outcomes(rescind_workers, tenant_name, b)
    assert graph == audit == [("pay-1", "expired")]
    assert GateAsked.model_fields["expires"].default is None  # older askers: no deadline
    b.g.delete()
