"""The API's read answers (rescind.api.ops), computed from the named reads of an in-memory
graph (rescind.graph.in_memory): what each answer adds to the reads, without a server. The
same answers on FalkorDB: tests/integration/api; the reads agree: tests/integration/graph."""

from __future__ import annotations

import pytest

from rescind.api import ops
from rescind.contract.errors import NotFound
from rescind.contract.kinds import KINDS
from rescind.core.shapes import BLAST_GROUPS
from rescind.graph.in_memory import InMemoryGraph

DAY = 86_400_000_000
T0 = 1_793_577_600_000_000  # 2026-11-02T00:00Z


@pytest.fixture
def g() -> InMemoryGraph:
    """Two sources, an observation each, a belief on both, a plan and a payment on the belief;
    the portal's observation retracted (its retraction committed), the bank's memo not."""
    g = InMemoryGraph("acme")
    g.add_source("portal:northwind", "vendor_portal", "Northwind portal", "northwind")
    g.add_source("email:bank", "email", domain="bank")
    g.add_source("email:quiet", "email")
    g.add_memory("o1", "observation", "Remit to IBAN DE89", at=T0, names=["remit"])
    g.add_memory("o2", "observation", "Bank memo", at=T0 + DAY)
    g.say("portal:northwind", "o1", at=T0)
    g.say("email:bank", "o2", at=T0 + DAY)
    g.say("email:bank", "o2", at=T0 + 2 * DAY)
    g.add_memory("b1", "belief", "Northwind banks at DE89", at=T0 + 3 * DAY)
    g.justify("b1", ["o1", "o2"])
    g.add_memory("p1", "plan", "Pay INV-7", at=T0 + 4 * DAY)
    g.justify("p1", ["b1"])
    g.add_memory("a1", "action", "pay INV-7", at=T0 + 5 * DAY, amount=900, currency="EUR",
                 payee="northwind", account="DE89", executed=True, names=["pay-7"])
    g.justify("a1", ["p1"])
    g.add_retraction("r1", "retract", source="portal:northwind", start=T0, end=T0 + DAY,
                     reason="portal hacked", by="sec", at=T0 + 6 * DAY)
    g.add_retraction("r0", "retract", state="reinstated", source="email:bank", start=None,
                     end=None, reason="false alarm", by="sec", at=T0 + 6 * DAY)
    for mid, hops in (("o1", 0), ("b1", 1), ("p1", 2), ("a1", 3)):
        g.change(mid, "OUT", "r1", hops, by="r1", at=T0 + 6 * DAY)
    return g


def test_sources_say_when_each_was_read_and_which_are_retracted(g):
    """Each source with its first and last reading and how many memories it said; retracted
    only by a committed retraction (the reinstated one leaves the bank's email alone)."""
    by_id = {s["id"]: s for s in ops.sources(g)}
    assert list(by_id) == ["email:bank", "email:quiet", "portal:northwind"]
    portal, bank, quiet = by_id["portal:northwind"], by_id["email:bank"], by_id["email:quiet"]
    assert portal["retracted"] and portal["retractions"] == [
        {"id": "r1", "from": "2026-11-02T00:00:00Z", "to": "2026-11-03T00:00:00Z",
         "reason": "portal hacked"}]
    assert (portal["kind"], portal["name"], portal["domain"]) == (
        "vendor_portal", "Northwind portal", "northwind")
    assert not bank["retracted"] and bank["retractions"] == []
    assert (bank["first_read"], bank["last_read"], bank["observations"]) == (
        "2026-11-03T00:00:00Z", "2026-11-04T00:00:00Z", 1)
    assert (quiet["first_read"], quiet["observations"]) == (None, 0)


def test_a_page_of_memories_filters_and_says_where_the_next_begins(g):
    """Kind, status and a case-insensitive text fragment filter; a full page gives the next
    skip, a short one None; only payments carry payment fields; no bookkeeping leaks."""
    page = ops.memories(g, status="OUT", limit=2)
    assert [m["id"] for m in page["items"]] == ["o1", "b1"] and page["next_skip"] == 2
    rest = ops.memories(g, status="OUT", skip=2, limit=2)
    assert [m["id"] for m in rest["items"]] == ["p1", "a1"] and rest["next_skip"] == 4
    assert ops.memories(g, status="OUT", skip=4, limit=2) == {"items": [], "next_skip": None}
    assert [m["id"] for m in ops.memories(g, text="northWIND")["items"]] == ["b1"]
    [pay] = ops.memories(g, kind="action")["items"]
    assert pay == {"id": "a1", "kind": "action", "text": "pay INV-7", "status": "OUT",
                   "cause": "r1", "hops": 3, "at": "2026-11-07T00:00:00Z", "name": "pay-7",
                   "agent": None, "trace": None, "amount": 900, "currency": "EUR",
                   "payee": "northwind", "account": "DE89", "executed": True}
    [obs] = ops.memories(g, kind="observation", status="IN")["items"]
    assert obs["id"] == "o2" and "amount" not in obs and "born" not in obs


def test_counts_name_every_kind_with_zeros(g):
    """Every kind is counted, IN and OUT, zero where the graph has none."""
    counts = ops.counts(g)
    assert set(counts) == set(KINDS)
    assert counts["observation"] == {"IN": 1, "OUT": 1}
    assert counts["action"] == {"IN": 0, "OUT": 1}
    assert counts["answer"] == {"IN": 0, "OUT": 0}


def test_the_overview_links_only_what_it_shows(g):
    """The product view's links: each source to what it said, each premise to what rests on
    it, only among memories shown; a full column marks the view truncated."""
    view = ops.overview(g, per_kind=5)
    assert view["revision"] == 4 and not view["truncated"]
    assert sorted((lk["from"], lk["to"]) for lk in view["links"]) == [
        ("b1", "p1"), ("email:bank", "o2"), ("o1", "b1"), ("o2", "b1"), ("p1", "a1"),
        ("portal:northwind", "o1")]
    small = ops.overview(g, per_kind=1)
    assert small["truncated"] and [m["id"] for m in small["columns"]["observation"]] == ["o1"]
    assert ("o2", "b1") not in {(lk["from"], lk["to"]) for lk in small["links"]}


def test_retractions_are_listed_in_order_with_their_window_and_times(g):
    """Every record, oldest decision first, its window as from/to (start/end beside them),
    times in ISO; one retraction by id, and NotFound for an unknown id."""
    listed = ops.retractions(g)
    assert [r["id"] for r in listed] == ["r1", "r0"] and "order" not in listed[0]
    assert (listed[0]["from"], listed[0]["to"], listed[0]["at"]) == (
        "2026-11-02T00:00:00Z", "2026-11-03T00:00:00Z", "2026-11-08T00:00:00Z")
    assert listed[1]["state"] == "reinstated" and listed[1]["from"] is None
    assert ops.retraction(g, "r1")["reason"] == "portal hacked"
    with pytest.raises(NotFound):
        ops.retraction(g, "r9")


def test_as_of_a_revision_shows_each_memory_as_it_was_then(g):
    """At revision 0 everything written was IN; at revision 2 the retraction had reached the
    observation and the belief only; a memory born later did not exist yet."""
    g.rev += 1
    g.add_memory("b2", "belief", "Later", at=T0 + 9 * DAY)
    then = {i["id"]: i["why"] for i in ops.as_of(g, None, 0)["items"]}
    assert set(then) == {"o1", "o2", "b1", "p1", "a1"}
    assert {w["status"] for w in then.values()} == {"IN"}
    mid = {i["id"]: i["why"]["status"] for i in ops.as_of(g, None, 2)["items"]}
    assert mid == {"o1": "OUT", "o2": "IN", "b1": "OUT", "p1": "IN", "a1": "IN"}
    [pay] = ops.as_of(g, "2026-11-10T00:00Z", None, kind="action")["items"]
    assert pay["why"] == {"status": "OUT", "op": "retract", "cause": "r1", "hops": 3,
                          "by": "r1", "rev": 4, "at": "2026-11-08T00:00:00Z"}
    assert pay["amount"] == 900 and pay["name"] == "pay-7"
    assert [i["id"] for i in ops.as_of(g, None, 9, status="IN")["items"]] == ["o2", "b2"]


def test_a_blast_radius_is_drawn_with_the_links_among_what_it_shows(g):
    """The preview's graph: what goes OUT and what is kept as nodes, premise links only
    between them, and a retracted source first, linked to the observations it takes."""
    item = {"text": "t", "name": None, "hops": 1}
    d = {"direction": "OUT", **{k: [] for k in BLAST_GROUPS},
         "observations": [{**item, "id": "o1", "kind": "observation", "hops": 0}],
         "beliefs": [{**item, "id": "b1", "kind": "belief"}],
         "kept": [{**item, "id": "p1", "kind": "plan"}]}
    drawn = ops._blast_graph(g, d, "portal:northwind")
    assert [(n["id"], n["fate"], n["hops"]) for n in drawn["nodes"]] == [
        ("portal:northwind", "retracted", -1), ("o1", "OUT", 0), ("b1", "OUT", 1),
        ("p1", "kept", None)]
    assert [(e["from"], e["to"]) for e in drawn["edges"]] == [
        ("portal:northwind", "o1"), ("b1", "p1"), ("o1", "b1")]
    assert ops._blast_graph(g, {**d, "observations": []}, None)["edges"] == [
        {"from": "b1", "to": "p1"}]


def test_a_memory_comes_with_its_tree_and_as_of_a_revision_with_each_status_then(g):
    """One memory by its name, public fields and its tree; as of revision 1 (the observation
    already OUT, the belief still IN) each node of the tree has its status then, and a
    source's validity under today's retractions is left out."""
    got = ops.memory(g, "pay-7")
    assert got["memory"]["id"] == "a1" and got["memory"]["status"] == "OUT"
    [[plan]] = got["tree"]["justifications"]
    assert plan["id"] == "p1"
    then = ops.memory_as_of(g, "pay-7", None, 1)
    assert then["existed"] and then["why"]["status"] == "IN"
    [[plan]] = then["tree"]["justifications"]
    [[belief]] = plan["justifications"]
    assert (plan["status"], belief["status"]) == ("IN", "IN")
    remit, memo = belief["justifications"][0]
    assert (remit["id"], remit["status"], remit["cause"]) == ("o1", "OUT", "r1")
    assert memo["status"] == "IN" and "valid" not in memo["said_by"][0]
    with pytest.raises(NotFound):
        ops.memory(g, "nothing")


def test_recalls_list_executed_payments_that_went_out(g):
    """The payment executed and taken OUT by the portal's retraction is on the recall list,
    as a dict, with the retraction's reason; found again by its name."""
    [r] = ops.recalls(g)
    assert (r["action"], r["name"], r["amount"], r["state"], r["reason"]) == (
        "a1", "pay-7", 900, "drafted", "portal hacked")
    assert ops.recall(g, "pay-7") == r
