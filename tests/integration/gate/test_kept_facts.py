"""The gate reads a payment's cone from the facts the writer keeps beside the graph
(``rescind.graph.gate_facts``), and never allows on a stale one: a compromise, a
reinstatement, a failed call or a new reason takes effect on the very next decision."""

from __future__ import annotations

import time
import uuid

from rescind.core.operations import Reinstate, Retract
from rescind.engine import gate, writes
from rescind.engine import retraction as ret
from rescind.engine.writes import Pipeline, Write
from rescind.graph import gate_facts
from rescind.graph import queries as q
from rescind.graph.store import TenantGraph
from tests.support.gate_book import IBAN, Book


def _kept(b: Book, targets: list[str], proposals: bool = False) -> bool:
    """Whether the cone of ``targets`` would be read from the kept facts now."""
    return isinstance(gate_facts.read(b.g.conn, b.tenant, targets, proposals), gate_facts.Hit)


def _asked(b: Book, name: str, premises, amount: float):
    """The gate asked; (the decision, whether its cone came from the kept facts)."""
    before = gate.READS["kept"]
    d = b.ask(name, premises, amount, IBAN, "acme")
    return d, gate.READS["kept"] == before + 1


def _two_domains(b: Book) -> tuple[str, str, str]:
    """A note on the account that the portal and the signed contract both state."""
    b.source("portal:acme", "vendor_portal")
    b.source("contract:acme", "signed_contract", "signed-contracts")
    portal = b.observe("portal:acme", f"Acme bank account: {IBAN}")
    contract = b.observe("contract:acme", f"MASTER AGREEMENT Acme. Bank account: {IBAN}")
    note = f"note-{uuid.uuid4().hex[:6]}"
    writes.record(b.g, [Write(f"e1:{note}", note, "belief", f"Acme's account is {IBAN}", 5,
                              premises=(portal,), agent="ap"),
                        Write(f"e2:{note}", note, "belief", f"Acme's account is {IBAN}", 5,
                              premises=(contract,), agent="ap")])
    return portal, contract, note


def test_a_cone_is_read_from_the_kept_facts_and_judged_as_from_the_graph(falkordb, tenant_name):
    """The writer keeps what it wrote: the next ask reads its cone from the kept facts, with
    no graph read, and is judged exactly as the graph alone judges it (fragility 2, both
    domains); a stored proposal's release too."""
    b = Book(falkordb, tenant_name)
    _, _, note = _two_domains(b)
    action = b.propose("inv-1", (note,), amount=12_000.0, account=IBAN, payee="acme")
    assert _kept(b, [note]) and _kept(b, [action], proposals=True)

    kept, from_kept = _asked(b, "inv-2", (note,), 12_000.0)
    released_kept = b.ask("inv-1", None, 12_000.0, IBAN, "acme")
    gate.KEPT_FACTS = False
    try:
        plain = b.ask("inv-3", (note,), 12_000.0, IBAN, "acme")
        released_plain = b.ask("inv-1", None, 12_000.0, IBAN, "acme")
    finally:
        gate.KEPT_FACTS = True
    assert from_kept
    assert (kept.allowed, kept.fragility, kept.domains) == \
        (plain.allowed, plain.fragility, plain.domains) == \
        (True, 2, ("portal:acme", "signed-contracts"))
    assert (released_kept.allowed, released_kept.fragility) == \
        (released_plain.allowed, released_plain.fragility) == (True, 2)


def test_a_compromise_takes_effect_on_the_next_decision_and_a_reinstatement_too(
        falkordb, tenant_name):
    """A payment allowed from the kept facts is refused on the very next ask once its only
    source is compromised (its observation OUT), and allowed again once the compromise is
    reinstated: the kept facts are never read across a write they do not follow."""
    b = Book(falkordb, tenant_name)
    b.source("portal:acme", "vendor_portal")
    portal = b.observe("portal:acme", f"Acme bank account: {IBAN}")
    d, from_kept = _asked(b, "inv-1", (portal,), 2_000.0)
    assert d.allowed and from_kept

    ret.run(b.g, Retract("r-1", "portal:acme", reason="hacked"))
    d = b.ask("inv-2", (portal,), 2_000.0, IBAN, "acme")
    assert not d.allowed and "OUT" in d.reason

    ret.run(b.g, Reinstate("r-1"))
    assert b.ask("inv-3", (portal,), 2_000.0, IBAN, "acme").allowed
    again, from_kept = _asked(b, "inv-4", (portal,), 2_000.0)  # kept again after the read
    assert again.allowed and from_kept


def test_a_failed_call_is_refused_on_release_at_once(falkordb, tenant_name):
    """A proposal released from the kept facts, then marked failed: its next release is
    refused because the call failed, not allowed on the proposal as it was kept."""
    b = Book(falkordb, tenant_name)
    _, _, note = _two_domains(b)
    action = b.propose("inv-1", (note,), amount=12_000.0, account=IBAN, payee="acme")
    assert b.ask("inv-1", None, 12_000.0, IBAN, "acme").allowed
    assert _kept(b, [action], proposals=True)

    writes.fail(b.g, action, 10_000_000, "the bank refused it")
    d = b.ask("inv-1", None, 12_000.0, IBAN, "acme")
    assert not d.allowed and "failed" in d.reason


def test_a_new_reason_for_a_kept_memory_counts_on_the_next_decision(falkordb, tenant_name):
    """A note resting on the portal alone holds $12,000 up (one domain); once the agent
    writes the same note again on the signed contract, the next ask sees both domains, and
    the note's facts read before that batch can no longer be kept."""
    b = Book(falkordb, tenant_name)
    b.source("portal:acme", "vendor_portal")
    b.source("contract:acme", "signed_contract", "signed-contracts")
    portal = b.observe("portal:acme", f"Acme bank account: {IBAN}")
    contract = b.observe("contract:acme", f"MASTER AGREEMENT Acme. Bank account: {IBAN}")
    writes.record(b.g, [Write("e1:note", "note", "belief", f"Acme's account is {IBAN}", 5,
                              premises=(portal,), agent="ap")])
    d, from_kept = _asked(b, "inv-1", ("note",), 12_000.0)
    assert not d.allowed and d.fragility == 1 and from_kept

    before = gate_facts.tags(b.g.conn, b.tenant)[0]  # a gate's graph read, taken before
    stale = b.g.rows(q.GATE_FACTS, {"ids": ["note"]})[0][:9]
    pipeline = Pipeline()  # the writer worker's path
    pipeline.record(b.g, [Write("e2:note", "note", "belief", f"Acme's account is {IBAN}", 6,
                                premises=(contract,), agent="ap")])
    pipeline.close()
    assert not gate_facts.fill(b.g.conn, b.tenant, before, [stale])  # lands too late
    d, from_kept = _asked(b, "inv-2", ("note",), 12_000.0)
    assert d.allowed and d.fragility == 2 and from_kept


def test_a_fill_read_before_a_write_is_not_kept(falkordb, tenant_name):
    """Facts read from the graph are kept only if nothing that may change them was written
    since the tags were taken: a mutation (a source added) or a batch's touch refuses them."""
    b = Book(falkordb, tenant_name)
    b.source("portal:acme", "vendor_portal")
    portal = b.observe("portal:acme", f"Acme bank account: {IBAN}")
    conn, row = b.g.conn, ["x", "belief", "IN", None, 0, None, None, [[1, portal]], []]

    at = gate_facts.tags(conn, b.tenant)[0]
    b.source("portal:other", "vendor_portal")
    assert not gate_facts.fill(conn, b.tenant, at, [row])
    at = gate_facts.tags(conn, b.tenant)[0]
    token, _ = gate_facts.touch(conn, b.tenant, ["y"])
    assert not gate_facts.fill(conn, b.tenant, at, [row])  # while the write runs
    gate_facts.touch(conn, b.tenant, ["y"], token)
    assert not gate_facts.fill(conn, b.tenant, at, [row])  # read before it
    assert gate_facts.fill(conn, b.tenant, gate_facts.tags(conn, b.tenant)[0], [row])


def test_a_write_that_never_ends_gives_every_fact_up(falkordb, tenant_name):
    """A touch whose write never says it is done (its process died) keeps anything from
    being kept while it lasts, and once it expires every fact kept before is given up: the
    next read goes to the graph."""
    b = Book(falkordb, tenant_name)
    b.source("portal:acme", "vendor_portal")
    portal = b.observe("portal:acme", f"Acme bank account: {IBAN}")
    assert _kept(b, [portal])

    gate_facts.touch(b.g.conn, b.tenant, ["x"], ttl_ms=50)  # begun, never ended
    assert _kept(b, [portal])  # what it does not name stays valid while it runs
    at = gate_facts.tags(b.g.conn, b.tenant)[0]
    row = ["x", "belief", "IN", None, 0, None, None, [[1, portal]], []]
    assert not gate_facts.fill(b.g.conn, b.tenant, at, [row])  # nothing kept meanwhile
    time.sleep(0.1)
    after = gate_facts.read(b.g.conn, b.tenant, [portal])
    assert isinstance(after, gate_facts.Tags) and int(after.m) > int(at.m)


def test_the_facts_go_with_the_graph(falkordb, tenant_name):
    """Deleting the tenant's graph deletes its kept facts: a graph made again under the name
    is never judged on the old one's."""
    b = Book(falkordb, tenant_name)
    b.source("portal:acme", "vendor_portal")
    portal = b.observe("portal:acme", f"Acme bank account: {IBAN}")
    assert _kept(b, [portal])
    b.g.delete()
    TenantGraph(b.g.conn, tenant_name).ensure_schema()
    assert not _kept(b, [portal])
