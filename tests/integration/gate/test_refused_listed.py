"""Finding 8 (issue 28): asking the gate again about a payment never counts it twice (see
test_reused_ids.py), and a proposal the gate refused is listed as refused, never among the
pending payments to hold when what it rests on goes OUT."""

from __future__ import annotations

from rescind.api.ops import pending_payments
from rescind.contract.events import action_id
from rescind.operator.decisions import compromise
from tests.support.gate_book import ATTACKER, Book


def test_a_refused_proposal_is_listed_as_refused_not_held(falkordb, tenant_name):
    """$34,500 on the portal alone is refused when asked as the call it is (the tool never
    ran); $500 allowed but not yet paid; a third never asked; and a fourth, scheduled (its
    proposing tool ran), whose release was refused. The portal is compromised: the refused
    call is listed as refused (with the gate's reason); the other three as held: a refused
    release leaves the payment scheduled at the bank."""
    b = Book(falkordb, tenant_name)
    b.source("portal:acme", "vendor_portal")
    portal = b.observe("portal:acme", f"Acme bank account: {ATTACKER}")
    for name, amount in (("big", 34500), ("small", 500), ("later", 700),
                         ("scheduled", 34500)):
        b.propose(name, (portal,), amount=amount, account=ATTACKER, payee="acme")
    assert not b.ask("big", (portal,), amount=34500, account=ATTACKER, payee="acme").allowed
    assert b.ask("small").allowed
    assert not b.ask("scheduled").allowed  # the release of a stored proposal
    done = compromise(b.g, "portal:acme", None, None, "taken over", "security", commit=True)
    named = {action_id(tenant_name, n): n for n in ("big", "small", "later", "scheduled")}
    # The compromise's own list of payments to hold agrees: not the call that never ran.
    assert sorted(named[p["id"]] for p in done["to_hold"]) == ["later", "scheduled", "small"]
    rows = {named[r["id"]]: r for r in pending_payments(b.g)}
    got = {n: (r["held"], r["refused"]) for n, r in rows.items()}
    assert got == {"big": (False, True), "small": (True, False), "later": (True, False),
                   "scheduled": (True, False)}
    assert "above 10,000" in rows["big"]["gate"]["reason"]
    assert rows["later"]["gate"] is None
    b.g.delete()


def test_a_proposal_allowed_after_a_refusal_is_no_longer_refused(falkordb, tenant_name):
    """The gate's last word counts: refused, then (the contract read too) allowed."""
    b = Book(falkordb, tenant_name)
    b.source("portal:acme", "vendor_portal")
    b.source("contract:acme", "signed_contract", "signed-contracts")
    portal = b.observe("portal:acme", f"Acme bank account: {ATTACKER}")
    contract = b.observe("contract:acme", f"Remit to {ATTACKER}")
    b.propose("pay", (portal,), amount=34500, account=ATTACKER, payee="acme")
    assert not b.ask("pay").allowed
    b.propose("pay", (portal,), (contract,), amount=34500, account=ATTACKER, payee="acme")
    assert b.ask("pay").allowed
    [row] = pending_payments(b.g)
    assert (row["held"], row["refused"], row["gate"]["allowed"]) == (False, False, True)
    b.g.delete()
