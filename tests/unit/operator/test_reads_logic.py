"""The operator's logic on the named reads (rescind.operator), run on an in-memory graph
(rescind.graph.in_memory): naming a memory, overlapping retractions, source spellings,
recalls. The same on FalkorDB: tests/integration/operator; the reads agree:
tests/integration/graph/test_reads.py."""

from __future__ import annotations

import pytest

from rescind.contract import events as ev
from rescind.contract.errors import Invalid, NotFound
from rescind.engine import retraction as ret
from rescind.graph.in_memory import InMemoryGraph
from rescind.operator import decisions, recalls, sources

T0 = 1_793_577_600_000_000  # 2026-11-02T00:00Z
DAY = 86_400_000_000


def test_a_memory_is_found_by_id_action_name_unique_name_or_store_key():
    """An id as it is; an action by its proposer's name; a name given once; a store key's
    current version (not the superseded one, even if newer); else NotFound."""
    g = InMemoryGraph("acme")
    act = ev.action_id("acme", "pay-7")
    g.add_memory(act, "action", names=["pay-7"])
    g.add_memory("m1", "belief", names=["twice", "once"])
    g.add_memory("m2", "belief", names=["twice"])
    g.add_memory("v1", "observation", key="profiles/dana", born_rev=1)
    g.add_memory("v2", "observation", key="profiles/dana", born_rev=2, replaced="superseded")
    assert decisions.resolve(g, "m2") == "m2"
    assert decisions.resolve(g, "pay-7") == act
    assert decisions.resolve(g, "once") == "m1"
    assert decisions.resolve(g, "profiles/dana") == "v1"
    for ref in ("twice", "nothing"):
        with pytest.raises(NotFound):
            decisions.resolve(g, ref)


def test_duplicates_are_overlapping_windows_of_the_same_source_in_force():
    """A retraction's duplicates: committed retractions of its source whose window overlaps
    (ends included, a missing end open), oldest first; not other sources, not withdrawals,
    not reinstated ones, not itself."""
    g = InMemoryGraph()
    g.add_retraction("old", source="s", start=0, end=10, order=1)
    g.add_retraction("open", source="s", start=20, end=None, order=2)
    g.add_retraction("edge", source="s", start=None, end=5, order=0)
    g.add_retraction("apart", source="s", start=11, end=19, order=3)
    g.add_retraction("other", source="t", start=0, end=100, order=4)
    g.add_retraction("gone", source="s", start=0, end=100, order=5, state="reinstated")
    g.add_retraction("wd", kind="withdraw", memory="m", order=6)
    g.add_retraction("me", source="s", start=0, end=100, order=7)
    g.add_retraction("touch", source="s", start=9, end=9, order=8)
    op = ret.Retract("me", "s", 5, 9, "again")
    assert decisions.duplicates(g, op) == [
        {"id": "edge", "start": None, "end": 5}, {"id": "old", "start": 0, "end": 10},
        {"id": "touch", "start": 9, "end": 9}]
    assert [d["id"] for d in decisions.duplicates(g, ret.Retract("me", "s", 12, 25, "x"))] == [
        "open", "apart"]
    assert decisions.duplicates(g, ret.Retract("x", "s", 30, 40, "later")) == [
        {"id": "open", "start": 20, "end": None}, {"id": "me", "start": 0, "end": 100}]


def test_a_source_is_resolved_from_any_spelling_or_refused_with_near_names():
    """A spelling with a space after the colon names the canonical source; an unknown one is
    refused naming the sources of the same family."""
    g = InMemoryGraph()
    for sid in ("portal:northwind", "portal:acme", "email:bank"):
        g.add_source(sid)
    assert sources.resolve(g, "portal: northwind") == "portal:northwind"
    with pytest.raises(Invalid, match=r"did you mean 'portal:northwind', 'portal:acme'"):
        sources.resolve(g, "portal:northwnd")
    with pytest.raises(Invalid, match="it has no sources yet"):
        sources.resolve(InMemoryGraph(), "portal:x")


def test_variant_spellings_are_grouped_and_a_retracted_group_is_named():
    """Spellings of one canonical name form a group with what each said; a canonical source
    alone is no group; a retraction in force on a spelling is named in its group."""
    g = InMemoryGraph()
    g.add_source("portal:northwind", "vendor_portal")
    g.add_source("portal: northwind", "vendor_portal", domain="portal: northwind")
    g.add_source("email:bank")
    g.add_source("email: acme")
    for i, sid in enumerate(["portal:northwind", "portal: northwind", "portal: northwind"]):
        g.add_memory(f"o{i}", "observation")
        g.say(sid, f"o{i}")
    g.add_retraction("r1", source="email: acme")
    groups = {v["canonical"]: v for v in sources.variants(g)}
    assert set(groups) == {"portal:northwind", "email:acme"}
    north = groups["portal:northwind"]
    assert [(s["id"], s["said"]) for s in north["spellings"]] == [
        ("portal: northwind", 2), ("portal:northwind", 1)]
    assert north["retracted"] == [] and north["domain"] == "portal:northwind"
    assert groups["email:acme"]["retracted"] == ["email: acme"]
    plan = sources.merge(g)
    assert plan["committed"] is False and plan["moved"] == 2
    assert [s["canonical"] for s in plan["skipped"]] == ["email:acme"]


def _paid(g: InMemoryGraph) -> InMemoryGraph:
    """A portal's observation naming the vendor, a payment resting on it, executed, OUT."""
    g.add_source("portal:northwind", "vendor_portal")
    g.add_memory("o1", "observation", "Vendor: Northwind Supplies Ltd\nIBAN DE89", at=T0)
    g.say("portal:northwind", "o1", at=T0)
    g.add_memory("a1", "action", "pay INV-7", at=T0 + DAY, amount=900, currency="EUR",
                 payee="northwind", account="DE89", executed=True, names=["pay-7"], seq=1)
    g.justify("a1", ["o1"])
    g.add_memory("a2", "action", "pay INV-8", at=T0 + DAY, amount=5000, currency="EUR",
                 payee="acme", executed=True, names=["pay-8"], seq=2)
    g.add_memory("a3", "action", "pay INV-9", amount=99_999, executed=False, names=["pay-9"])
    g.add_retraction("r1", source="portal:northwind", start=T0, end=T0, reason="hacked")
    g.change("o1", "OUT", "r1", 0)
    g.change("a1", "OUT", "r1", 1)
    g.change("a3", "OUT", "r1", 1)
    return g


def test_the_recall_list_holds_executed_payments_that_went_out():
    """Executed and OUT: on the list, with the payee's name as its portal states it, the
    retraction's reason and code, and the retracted observation as evidence; an executed
    payment still IN and a payment never executed are not."""
    g = _paid(InMemoryGraph("acme"))
    [r] = recalls.recall_list(g)
    assert (r.action, r.name, r.amount, r.currency, r.state) == ("a1", "pay-7", 900, "EUR",
                                                                 "drafted")
    assert (r.payee_name, r.payee_name_from) == ("Northwind Supplies Ltd",
                                                 "as what the payment rested on states it")
    assert (r.reason, r.reason_code, r.retraction) == ("hacked", "FRAD", "r1")
    assert [(e["id"], e["sources"]) for e in r.evidence] == [("o1", ["portal:northwind"])]
    with pytest.raises(NotFound, match="pay-8"):
        recalls.find(g, "a2")


def test_a_payees_name_prefers_what_its_own_sources_say_in():
    """The payee's own source, IN, names it first; what the payment rested on next; what its
    source said that is OUT last; else the payee as recorded."""
    g = InMemoryGraph()
    g.add_source("contract:northwind", "contract")
    g.add_memory("c1", "observation", "Supplier: Northwind GmbH", at=2)
    g.add_memory("c0", "observation", "Supplier: Old Northwind", at=1, status="OUT")
    g.say("contract:northwind", "c1")
    g.say("contract:northwind", "c0")
    upstream = [{"kind": "observation", "text": "Payee: From The Invoice"}]
    assert recalls.payee_name(g, "northwind", upstream) == (
        "Northwind GmbH", "as contract:northwind states it")
    g.change("c1", "OUT", "r")
    assert recalls.payee_name(g, "northwind", upstream) == (
        "From The Invoice", "as what the payment rested on states it")
    assert recalls.payee_name(g, "northwind") == (
        "Northwind GmbH", "as contract:northwind stated it (now OUT)")
    assert recalls.payee_name(g, "acme") == ("acme", "as the payment recorded it")
    assert recalls.payee_name(g, None) == (None, None)


def test_reinstating_names_the_approved_recalls_in_the_outbox():
    """Of the payments a reinstatement brings back, those whose recall was approved are
    named with their outbox entry and who approved it; a drafted one is not."""
    g = _paid(InMemoryGraph("acme"))
    g.mems["a1"].update(recall_state="approved", approved_by="fran", approved_at=T0)
    g.add_outbox("recall:a1", "a1", "fran", T0 + 2 * DAY)
    [found] = recalls.in_the_outbox(g, ["a1", "a2"])
    assert found == {"outbox": "recall:a1", "action": "a1", "name": "pay-7", "amount": 900,
                     "currency": "EUR", "approved_by": "fran",
                     "approved_at": "2026-11-04T00:00:00Z", "sent": False, "exported": []}
    assert [w["state"] for w in recalls.withdrawals(g, ["a1", "a3"])] == ["approved"]


def test_explain_draws_the_tree_down_to_the_sources_with_what_still_counts():
    """A payment's tree: each memory once (a second path says see_above), each premise set
    once with how often it was recorded and the rule that chose it, each source with its
    domain and whether a retraction in force covers what it said."""
    g = InMemoryGraph("acme")
    g.add_source("portal:northwind", "vendor_portal", domain="northwind")
    g.add_source("email:bank", "email", domain="bank")
    g.add_memory("o1", "observation", "IBAN DE89", at=T0)
    g.say("portal:northwind", "o1", at=T0)
    g.add_memory("o2", "observation", "Memo", at=T0 + DAY)
    g.say("email:bank", "o2", at=T0 + DAY)
    g.add_memory("b1", "belief", "Banks at DE89", names=["bank"])
    g.justify("b1", ["o1", "o2"], rule="matched")
    g.justify("b1", ["o2", "o1"], rule="matched")  # the same reasons, recorded again
    g.add_memory("p1", "plan", "Pay")
    g.justify("p1", ["b1"], rule="agent")
    g.justify("p1", ["b1", "o2"], rule="declared")
    g.add_memory("a1", "action", "pay", amount=900, payee="northwind", executed=True)
    g.justify("a1", ["p1"])
    g.add_retraction("r1", source="portal:northwind", start=T0, end=T0)
    tree = decisions.explain(g, "a1")
    assert (tree["kind"], tree["amount"], tree["executed"]) == ("action", 900, True)
    [[plan]] = tree["justifications"]
    assert plan["justification_rules"] == ["agent", "declared"]
    [[belief], [again, memo]] = plan["justifications"]
    assert belief["name"] == "bank" and "see_above" not in belief
    assert again == {"id": "b1", "kind": "belief", "text": "Banks at DE89", "status": "IN",
                     "cause": None, "name": "bank", "see_above": True}
    assert belief["justification_counts"] == [2] and belief["justification_rules"] == ["matched"]
    [[iban, first_memo]] = belief["justifications"]
    assert [(s["source"], s["domain"], s["valid"]) for s in iban["said_by"]] == [
        ("portal:northwind", "northwind", False)]
    assert [(s["source"], s["valid"]) for s in first_memo["said_by"]] == [("email:bank", True)]
    assert memo["see_above"] and "said_by" not in memo
    shallow = decisions.explain(g, "a1", depth=1)
    assert "justifications" not in shallow["justifications"][0][0]
