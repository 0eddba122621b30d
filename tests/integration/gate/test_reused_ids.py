"""Finding 3 (issue 28): every execution counts toward the aggregate, however its name is
reused: an instalment re-proposed under one action id, a new action asked about again under
one tool-call id, a proposal released after being proposed again."""

from __future__ import annotations

from rescind.engine.gate import decisions_log
from tests.support.gate_book import ATTACKER, Book


def _book(falkordb, tenant_name) -> tuple[Book, str]:
    b = Book(falkordb, tenant_name)
    b.source("portal:acme", "vendor_portal")
    return b, b.observe("portal:acme", f"Acme bank account: {ATTACKER}")


def test_one_tool_call_id_asked_six_times_counts_six_executions(falkordb, tenant_name):
    """Six $5,000 calls reusing tool-call id ``call_1`` (a new action each time, one domain):
    two fit under $10,000, the other four are refused; $10,000 out, not $30,000."""
    b, portal = _book(falkordb, tenant_name)
    got = [b.ask("call_1", (portal,), 5000, ATTACKER, "acme").allowed for _ in range(6)]
    assert got == [True, True, False, False, False, False]
    assert [d["aggregate"] for d in decisions_log(b.g)][:1] == [10000.0]
    b.g.delete()


def test_an_instalment_proposed_again_under_one_id_counts_again(falkordb, tenant_name):
    """``payment:INV-77`` proposed and released three times ($5,000 each, payees spelled
    otherwise every time): each release is another execution; the third is refused."""
    b, portal = _book(falkordb, tenant_name)
    got = []
    for payee in ("Acme", "ACME Corp", "acme  corp."):
        b.propose("payment:INV-77", (portal,), amount=5000, account=ATTACKER, payee=payee)
        got.append(b.ask("payment:INV-77").allowed)
    assert got == [True, True, False]
    b.g.delete()


def test_the_same_proposal_asked_again_counts_once(falkordb, tenant_name):
    """Finding 8: a $9,000 proposal released, then asked about again (it was paid, someone
    checks): not counted twice, so the re-ask is allowed with nothing else already allowed."""
    b, portal = _book(falkordb, tenant_name)
    b.propose("payment:INV-8", (portal,), amount=9000, account=ATTACKER, payee="acme")
    first, again = b.ask("payment:INV-8"), b.ask("payment:INV-8")
    assert first.allowed and again.allowed and again.aggregate == 0.0
    # Another proposal to the same account now sees the $9,000 once.
    b.propose("payment:INV-9", (portal,), amount=1000, account=ATTACKER, payee="acme")
    other = b.ask("payment:INV-9")
    assert other.allowed and other.aggregate == 9000.0
    b.g.delete()


def test_a_new_action_and_its_stored_proposal_are_two_executions(falkordb, tenant_name):
    """A call paid at once (stage both) and then released again as a stored proposal under
    the same name: two executions, $6,000 each: the release is refused."""
    b, portal = _book(falkordb, tenant_name)
    b.propose("inv-5", (portal,), amount=6000, account=ATTACKER, payee="acme")
    assert b.ask("inv-5", (portal,), 6000, ATTACKER, "acme").allowed
    assert not b.ask("inv-5").allowed
    b.g.delete()
