"""The engine against the real FalkorDB: graph model, preview/commit, history, bad input."""

import json

import pytest

from rescind.api import ops
from rescind.contract.errors import BadTenantName, IdInUse, Invalid, NotFound, StalePreview
from rescind.contract.events import memory_id
from rescind.core.shapes import BlastItem, BlastRadius, Mutation
from rescind.engine import retraction as ret
from rescind.engine.writes import UnknownPremise, Write, record
from rescind.graph.store import TenantGraph, connect
from rescind.operator import decisions
from rescind.scenario.format import ScenarioError
from rescind.scenario.replay import replay_text
from tests.support.texts import APPROVE_WITHOUT_DRAFT

T0 = 1_000_000


def seed_world(g: TenantGraph) -> dict[str, str]:
    """portal -> o1 -> belief -> plan -> action; contract -> o2 -> belief2 (also on o1)."""
    g.apply(Mutation(op="source", sources=[
        {"id": "portal", "kind": "portal", "name": "portal", "domain": "d-portal"},
        {"id": "contract", "kind": "contract", "name": "contract", "domain": "d-legal"},
    ]), g.revision())
    ids = {k: memory_id(g.tenant, kind, k) for k, kind in [
        ("o1", "observation"), ("o2", "observation"), ("b1", "belief"), ("b2", "belief"),
        ("p1", "plan")]}
    ids["a1"] = "act-1"
    record(g, [
        Write("e1", ids["o1"], "observation", "o1", T0, source="portal"),
        Write("e2", ids["o2"], "observation", "o2", T0, source="contract"),
        Write("e3", ids["b1"], "belief", "b1", T0 + 1, premises=(ids["o1"],)),
        Write("e4", ids["b2"], "belief", "b2", T0 + 1, premises=(ids["o1"],)),
        Write("e5", ids["b2"], "belief", "b2", T0 + 1, premises=(ids["o2"],)),
        Write("e6", ids["p1"], "plan", "p1", T0 + 2, premises=(ids["b1"], ids["b2"])),
        Write("e7", ids["a1"], "action", "a1", T0 + 3, premises=(ids["p1"],),
              extra={"amount": 500.0, "payee": "Acme", "executed": True}),
    ])
    return ids


def count_nodes(g: TenantGraph) -> int:
    return g.rows("MATCH (n) RETURN count(n)")[0][0]


@pytest.mark.parametrize("bad", ["", "Acme", "a b", "a:b", "x" * 65, "a}b", "ü"])
def test_bad_tenant_names_are_refused(falkordb, bad):
    """Only [a-z0-9_-]{1,64} may become part of a key."""
    with pytest.raises(BadTenantName, match="bad tenant name"):
        TenantGraph(connect(falkordb), bad)


def test_awkward_text_is_stored_and_returned_exactly(falkordb, tenant_name):
    """Quotes, backslashes, newlines, Cypher and non-Latin scripts survive unchanged."""
    texts = ["it's \"quoted\" \\ back\\slash", "line one\nline two\ttab",
             "'}) MATCH (n) DETACH DELETE n //", "Счёт поставщика 供应商 مورد 🚀"]
    lines = ['{"op":"source","id":"s","kind":"portal"}']
    for i, t in enumerate(texts):
        lines.append(json.dumps({"op": "observe", "id": f"o{i}", "source": "s", "text": t,
                                 "at": "2026-01-01T00:00:00Z"}))
    replay_text("\n".join(lines), falkordb, tenant_name)
    g = TenantGraph(connect(falkordb), tenant_name)
    stored = {m["text"] for m in g.memories(g.rows("MATCH (m:Mem) RETURN collect(m.id)")[0][0])}
    assert stored == set(texts)
    g.delete()


def test_restatement_converges_on_one_memory_with_two_justifications(graph):
    """The same kind and normalised text is one node; each statement adds a justification."""
    ids = seed_world(graph)
    assert memory_id(graph.tenant, "belief", "  B2 ") == ids["b2"]
    assert len(graph.nodes([ids["b2"]])[ids["b2"]].justifications) == 2


def test_writes_are_idempotent_by_event_id(graph):
    """Replaying the same events changes nothing, not even the revision."""
    seed_world(graph)
    before, rev = count_nodes(graph), graph.revision()
    seed_world(graph)
    assert count_nodes(graph) == before
    assert graph.revision() == rev + 1  # only the (idempotent) source MERGE moved it


def test_unknown_premise_is_refused_and_nothing_is_written(graph):
    """A write naming a premise the graph does not hold changes nothing."""
    seed_world(graph)
    before = count_nodes(graph)
    with pytest.raises(UnknownPremise):
        record(graph, [Write("e9", "bel-x", "belief", "x", T0, premises=("nope",))])
    assert count_nodes(graph) == before


def test_preview_writes_nothing_and_reports_the_blast_radius(graph):
    """Preview leaves the live graph as it was and lists what would go OUT, by kind."""
    ids = seed_world(graph)
    before, rev = count_nodes(graph), graph.revision()
    p = ret.preview(graph, ret.Retract("r1", "portal", reason="hacked"))
    assert count_nodes(graph) == before and graph.revision() == rev
    assert all(s.is_in for s in graph.statuses(ids.values()).values())
    blast = p.blast_radius()
    assert blast.counts == {"observations": 1, "beliefs": 1, "plans": 1, "answers": 0,
                               "executed_actions": 1, "pending_actions": 0}
    assert blast.plans == [BlastItem(ids["p1"], 2)]
    assert blast.executed_actions == [BlastItem("act-1", 3)]
    # the stored form round-trips, as a repeated commit reads it back
    assert BlastRadius.from_dict(blast.to_dict()) == blast


def test_commit_refuses_a_stale_preview(graph):
    """A write after the preview makes its commit fail with a clear 'stale preview' error."""
    ids = seed_world(graph)
    p = ret.preview(graph, ret.Retract("r1", "portal"))
    record(graph, [Write("e8", "bel-new", "belief", "new", T0, premises=(ids["o2"],))])
    with pytest.raises(StalePreview, match="stale preview"):
        ret.commit(graph, p)
    assert graph.retraction("r1") is None
    with pytest.raises(StalePreview, match="stale preview"):
        decisions.decide(graph, ret.Retract("r1", "portal", reason="hacked"), commit=True,
                         rev=p.rev)


def test_repeated_commit_returns_the_first_result_and_changes_nothing(graph):
    """Committing the same retraction twice is a no-op that answers like the first."""
    seed_world(graph)
    first = ret.run(graph, ret.Retract("r1", "portal", reason="hacked"))
    rev, nodes = graph.revision(), count_nodes(graph)
    again = ret.run(graph, ret.Retract("r1", "portal", reason="hacked"))
    assert again == first and graph.revision() == rev and count_nodes(graph) == nodes


def test_results_are_kept_deflated_and_one_kept_as_plain_json_still_repeats(graph):
    """A committed result is stored deflated; a result stored as plain JSON (before) is read
    the same way: by a repeat, by a reinstate's repeat and by the API's retraction view."""
    seed_world(graph)
    keep_plain = ("MATCH (:Meta {key: 'meta'})-[r:RETRACTION {id: 'r1'}]->() "
                  "SET r.result = $result, r.undo_result = $undo")
    first = ret.run(graph, ret.Retract("r1", "portal", reason="hacked"))
    stored = graph.retraction("r1")["result"]
    assert not stored.startswith("{") and len(stored) < len(json.dumps(first.to_dict()))
    assert ops.retraction(graph, "r1")["result"] == first.to_dict()
    graph.rows(keep_plain, {"result": json.dumps(first.to_dict()), "undo": None}, False)
    rev = graph.revision()
    assert ret.run(graph, ret.Retract("r1", "portal", reason="hacked")) == first
    assert graph.revision() == rev

    back = ret.run(graph, ret.Reinstate("r1"))
    assert not graph.retraction("r1")["undo_result"].startswith("{")
    assert ops.retraction(graph, "r1")["undo_result"] == back.to_dict()
    graph.rows(keep_plain, {"result": json.dumps(first.to_dict()),
                            "undo": json.dumps(back.to_dict())}, False)
    rev = graph.revision()
    assert ret.run(graph, ret.Reinstate("r1")) == back and graph.revision() == rev
    assert ops.retraction(graph, "r1")["result"] == first.to_dict()


def test_all_status_changes_of_a_retraction_land_in_one_revision(graph):
    """One retraction is one atomic write: one revision step, one history entry per change."""
    ids = seed_world(graph)
    rev = graph.revision()
    ret.run(graph, ret.Retract("r1", "portal"))
    assert graph.revision() == rev + 1
    out = [m for m in ids.values() if graph.history(m)[-1]["status"] == "OUT"]
    assert len(out) == 4  # o1, b1, p1 and the action; b2 keeps the contract
    assert {graph.history(m)[-1]["rev"] for m in out} == {rev + 1}
    hist = graph.history(ids["p1"])
    assert [h["status"] for h in hist] == ["IN", "OUT"]
    assert hist[-1]["cause"] == "r1" and hist[-1]["hops"] == 2 and hist[-1]["op"] == "retract"


def test_reinstate_puts_everything_back_exactly(graph):
    """Reinstate restores every status the retraction changed, and records why."""
    ids = seed_world(graph)
    before = graph.statuses(ids.values())
    ret.run(graph, ret.Retract("r1", "portal"))
    assert graph.statuses([ids["a1"]])[ids["a1"]].status == "OUT"
    assert graph.statuses([ids["b2"]])[ids["b2"]].status == "IN"  # the contract still says o2
    ret.run(graph, ret.Reinstate("r1"))
    assert graph.statuses(ids.values()) == before
    assert graph.retraction("r1")["state"] == "reinstated"
    assert graph.history(ids["a1"])[-1]["op"] == "reinstate"


def test_history_is_one_line_per_change_whatever_its_length_and_reads_an_older_list(graph):
    """Each change is a line of its own (a CHANGED edge to one node per status group), so a
    memory retracted and reinstated again and again keeps every step, in revision order; a
    graph written before kept its lines in a list on the STATUS edge, and they read first."""
    from rescind.graph import queries as q
    from rescind.operator import history as asof

    ids = seed_world(graph)
    p1 = ids["p1"]
    graph.rows("MATCH (m:Mem {id: $id})-[st:STATUS]->() SET st.history = [$old]",
               {"id": p1, "old": json.dumps([0, "IN", None, None, "write", "legacy", 1])},
               read_only=False)
    for k in range(3):
        ret.run(graph, ret.Retract(f"r{k}", "portal", reason="hacked"))
        ret.run(graph, ret.Reinstate(f"r{k}", by="security"))
    hist = graph.history(p1)
    assert [h["op"] for h in hist] == ["write", "write"] + ["retract", "reinstate"] * 3
    assert hist[1]["by"] == "legacy" and hist[-1]["by"] == "r2~reinstated"
    revs = [h["rev"] for h in hist[1:]]
    assert revs == sorted(revs) and len(set(revs)) == len(revs)
    assert [h["status"] for h in hist[2:]] == ["OUT", "IN"] * 3
    [row] = graph.rows(q.HISTORIES, {"ids": [p1]})
    assert [e["op"] for e in asof.entries(*row[1:])] == [h["op"] for h in hist]
    # one node per status group and operation, not one per memory
    [[changes]] = graph.rows("MATCH (x:Change) RETURN count(x)")
    [[edges]] = graph.rows("MATCH (:Mem)-[c:CHANGED]->(:Change) RETURN count(c)")
    assert changes < edges


def test_retraction_errors_change_nothing(graph):
    """Unknown source, reversed window, unknown memory, unknown reinstate: clear errors."""
    seed_world(graph)
    rev = graph.revision()
    with pytest.raises(Invalid, match="unknown source"):
        ret.run(graph, ret.Retract("r1", "nobody"))
    with pytest.raises(Invalid, match="ends before it starts"):
        ret.run(graph, ret.Retract("r1", "portal", start=10, end=5))
    with pytest.raises(NotFound, match="unknown memory"):
        ret.run(graph, ret.Withdraw("w1", "nope"))
    with pytest.raises(NotFound, match="no retraction"):
        ret.run(graph, ret.Reinstate("nope"))
    assert graph.revision() == rev


def test_a_write_after_a_retraction_is_born_out(graph):
    """A memory resting only on retracted observations is OUT from the moment it is written."""
    ids = seed_world(graph)
    ret.run(graph, ret.Retract("r1", "portal"))
    [st] = record(graph, [Write("e9", "bel-late", "belief", "late", T0 + 9,
                                premises=(ids["b1"],))])
    assert st.status == "OUT" and st.cause == "r1" and st.hops == 2


def test_replay_rejects_a_bad_file_whole_and_writes_nothing(falkordb, tenant_name):
    """All-or-nothing: every bad line is reported and no graph is created."""
    text = "\n".join([
        '{"op":"source","id":"s","kind":"portal"}',
        '{"op":"observe","id":"o","source":"s","text":"x","at":"2026-01-01T00:00:00Z"}',
        'not json',
        '{"op":"write","id":"b","kind":"belief","agent":"a","text":"y","premises":["zz"],'
        '"at":"2026-01-01T00:00:00Z"}',
        '{"op":"observe","id":"o","source":"s","text":"x2","at":"2026-01-01T00:00:00"}',
        '{"op":"fly"}',
        '{"op":"retract","id":"r","source":"s","from":"2026-02-01T00:00:00Z",'
        '"to":"2026-01-01T00:00:00Z","reason":"x","by":"sec"}',
        '{"op":"observe","id":"o","source":"s","text":"x3","at":"2026-01-01T00:00:00Z"}',
        '{"op":"gate","action":"o"}',
    ])
    with pytest.raises(ScenarioError) as exc:
        replay_text(text, falkordb, tenant_name)
    lines = dict(exc.value.errors)
    assert set(lines) == {3, 4, 5, 6, 7, 8, 9}
    assert "malformed JSON" in lines[3] and "'zz' is not defined" in lines[4]
    assert "bad time" in lines[5] and "unknown op" in lines[6]
    assert "ends before it starts" in lines[7] and "duplicate id" in lines[8]
    assert TenantGraph(connect(falkordb), tenant_name).exists() is False


def test_replay_removes_the_graph_after_a_dynamic_error(falkordb, tenant_name):
    """Approving a recall that was never drafted aborts the replay and leaves nothing."""
    text = APPROVE_WITHOUT_DRAFT
    with pytest.raises(ScenarioError) as exc:
        replay_text(text, falkordb, tenant_name)
    # in the scenario's own name for the payment, not the graph's (act-8af3…)
    assert exc.value.errors == [
        (4, "no recall for 'a': only executed payments that went OUT have one")]
    assert TenantGraph(connect(falkordb), tenant_name).exists() is False


def test_a_correction_that_restates_the_memory_is_a_line_error(falkordb, tenant_name):
    """Correcting a memory with the same normalised text is refused at validation, line named."""
    text = "\n".join([
        '{"op":"source","id":"s","kind":"portal"}',
        '{"op":"observe","id":"o","source":"s","text":"acct","at":"2026-01-01T00:00:00Z"}',
        '{"op":"write","id":"b","kind":"belief","agent":"a","text":"Pay to DE12","premises":["o"],'
        '"at":"2026-01-01T00:00:00Z"}',
        '{"op":"correct","id":"c","memory":"b","text":"pay  to de12","by":"alice"}',
    ])
    with pytest.raises(ScenarioError) as exc:
        replay_text(text, falkordb, tenant_name)
    assert exc.value.errors == [(4, "the correction says the same as the memory it corrects")]


def test_an_id_reused_for_another_operation_is_refused_and_changes_nothing(graph):
    """Committing the same retraction again is a repeat; the same id for another source,
    another window or a withdrawal is refused, and the graph stays at its revision."""
    ids = seed_world(graph)
    first = ret.run(graph, ret.Retract("r1", "portal", reason="hacked"))
    rev, nodes = graph.revision(), count_nodes(graph)
    for other in (ret.Retract("r1", "contract"), ret.Retract("r1", "portal", start=T0 + 1),
                  ret.Withdraw("r1", ids["b2"], "mistake")):
        with pytest.raises(IdInUse, match="already used"):
            ret.run(graph, other)
    assert graph.revision() == rev and count_nodes(graph) == nodes
    assert ret.run(graph, ret.Retract("r1", "portal", reason="hacked")) == first
