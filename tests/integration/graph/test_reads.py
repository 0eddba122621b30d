"""The named reads (rescind.graph.reads.GraphReads) answer the same on FalkorDB as on the
in-memory graph the unit tests use, for a real tenant's graph: the shipped example replayed
whole (a retraction committed, a recall approved into the outbox)."""

from __future__ import annotations

import pytest

from rescind.graph.in_memory import InMemoryGraph
from rescind.graph.reads import GraphReads
from rescind.graph.store import TenantGraph, connect
from rescind.operator import recalls
from rescind.scenario.replay import replay_text
from tests.support.graph_snapshot import snapshot
from tests.support.paths import ROOT

# After the example: a withdrawal reinstated (a record no longer in force), a store version
# replaced, a correction, a later word from the payee's contract.
MORE = """
{"op": "observe", "id": "o-renewed", "source": "contract:acme", "text": "Acme renewed", \
"at": "2026-11-05T09:00:00Z"}
{"op": "withdraw", "id": "wd-remit", "memory": "a-remit", "reason": "sent twice", "by": "ops"}
{"op": "reinstate", "retraction": "wd-remit"}
{"op": "update", "id": "n-remit-2", "memory": "n-remit-contract", "agent": "ap-agent", \
"text": "Acme remit address is 2 Dock Road, Leeds", "premises": ["o-remit-contract"], \
"at": "2026-11-04T09:00:00Z"}
{"op": "correct", "id": "cor-1", "memory": "n-remit", "text": "Acme remits to 3 Dock Road", \
"by": "ops"}
"""


@pytest.fixture(scope="module")
def pair(falkordb):
    """The example's graph on the server, and its copy in memory."""
    from rescind.graph import tenants

    name = "reads-conformance"
    tenants.drop(connect(falkordb), name)
    replay_text((ROOT / "examples/vendor-portal.jsonl").read_text() + MORE, falkordb, name)
    real = TenantGraph(connect(falkordb), name)
    assert [r.state for r in recalls.recall_list(real)] == ["approved"]
    yield real, snapshot(real)
    tenants.drop(connect(falkordb), name)


def _norm(value):
    """Rows compared without an order the read does not promise; history lines as a set."""
    if isinstance(value, dict):
        return {k: sorted(v) if k == "history" and v else _norm(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_norm(v) for v in value]
    return value


def _same(real, mem, name: str, *args, ordered: bool = True) -> object:
    got, want = getattr(mem, name)(*args), getattr(real, name)(*args)
    got, want = _norm(got), _norm(want)
    if not ordered:
        got, want = sorted(got, key=repr), sorted(want, key=repr)
    assert got == want, f"{name}{args}"
    return want


def test_both_graphs_are_graph_reads(pair):
    """The concrete graph and the in-memory one are both the one interface."""
    real, mem = pair
    assert isinstance(real, GraphReads) and isinstance(mem, GraphReads)
    assert not isinstance(object(), GraphReads)


def test_memory_reads_answer_alike(pair):
    """Statuses, facts, names, pages, counts and totals: the same answers, the example's
    retraction and recall included (so OUT memories and a recall state are compared)."""
    real, mem = pair
    ids = sorted(mem.mems)
    assert len(ids) >= 10 and {m["status"] for m in mem.mems.values()} == {"IN", "OUT"}
    _same(real, mem, "revision")
    _same(real, mem, "statuses", [*ids, "nope"])
    _same(real, mem, "memories", ids, ordered=False)
    for mid in ids:
        _same(real, mem, "upstream", mid)
        _same(real, mem, "history", mid)
    names = {n for m in mem.mems.values() for n in m.get("names") or []}
    assert names
    for n in [*sorted(names), "nobody"]:
        _same(real, mem, "named", n)
    for key in [*sorted({m["key"] for m in mem.mems.values() if m.get("key")}), "no/key"]:
        _same(real, mem, "current_of_key", key)
    for args in [(), ("action",), (None, "OUT"), ("observation", "IN"), (None, None, "LEEDS"),
                 (None, None, "zzz"), (None, None, None, 2, 3), (None, None, None, 0, 1)]:
        _same(real, mem, "memory_page", *args)
    assert real.memory_page(None, None, "LEEDS") and real.memory_page(None, "OUT")
    _same(real, mem, "first_pages", ["observation", "belief", "plan", "action"], 2)
    _same(real, mem, "memory_counts", ordered=False)
    _same(real, mem, "memory_total")
    plans = [m.get("text") or "" for m in mem.mems.values() if m["kind"] == "plan"]
    assert plans
    for needle in [plans[0].split()[-1], "no such invoice"]:
        _same(real, mem, "latest_plan_naming", needle)
    assert real.latest_plan_naming(plans[0].split()[-1])


def test_justification_and_source_reads_answer_alike(pair):
    """Premises and rules, sources, what each said and when, domains, and what a payee's
    sources said: the same answers."""
    real, mem = pair
    ids = sorted(mem.mems)
    assert _same(real, mem, "premises_of", ids, ordered=False)
    _same(real, mem, "justification_rules", ids, ordered=False)
    real_nodes, mem_nodes = real.nodes([*ids, "nope"]), mem.nodes([*ids, "nope"])
    assert sorted(real_nodes) == sorted(mem_nodes) == ids
    for mid in ids:
        a, b = real_nodes[mid], mem_nodes[mid]
        assert (a.kind, sorted(a.justifications), sorted(a.groundings, key=repr), a.withdrawn_by) == (
            b.kind, sorted(b.justifications), sorted(b.groundings, key=repr), b.withdrawn_by), mid
    assert any(n.groundings for n in mem_nodes.values())
    assert any(len(j) > 1 for n in mem_nodes.values() for j in n.justifications)
    sources = _same(real, mem, "sources")
    assert len(sources) >= 2
    for s in [*(s["id"] for s in sources), "no:source"]:
        _same(real, mem, "source", s)
    assert _same(real, mem, "source_reads")
    _same(real, mem, "sources_said")
    assert _same(real, mem, "said_by", ids, ordered=False)
    _same(real, mem, "domains", [*(s["id"] for s in sources), "no:source"])
    payees = {a.get("payee") for a in mem.actions()} - {None}
    assert payees
    said = [_same(real, mem, "payee_said", payee) for payee in [*sorted(payees), "acme", "nobody"]]
    assert any(said)


def test_retraction_payment_and_history_reads_answer_alike(pair):
    """Retractions (in force, whole, listed), payments, the outbox an approval filled and
    each memory's history, whole and paged: the same answers."""
    real, mem = pair
    ids = sorted(mem.mems)
    assert _same(real, mem, "active_retractions", ordered=False)
    for rid in [*mem.retractions, "no-such"]:
        _same(real, mem, "retraction", rid)
    _same(real, mem, "retraction_list")
    assert real.rules() == mem.rules() and real.rules().windows
    assert _same(real, mem, "actions", ordered=False)
    _same(real, mem, "actions_in", [*ids, "nope"], ordered=False)
    assert _same(real, mem, "outbox", [*mem.outbox_entries, "recall:nope"], ordered=False)
    histories = _same(real, mem, "histories", ids)
    assert any(h[-1] for h in histories.values())  # the retraction left history lines
    for args in [(), ("action",), (None, 1, 4)]:
        _same(real, mem, "history_page", *args)


def test_a_wrong_in_memory_answer_is_caught(pair):
    """The comparison itself: an in-memory graph that lost one source's name differs."""
    real, mem = pair
    broken = InMemoryGraph(**{**mem.__dict__, "source_nodes": {
        k: {**v, "name": "?"} for k, v in mem.source_nodes.items()}})
    with pytest.raises(AssertionError):
        _same(real, broken, "sources")
