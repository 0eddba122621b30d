"""Store versions in the engine on the real FalkorDB: an update or delete marks the old version
not current (``replaced``) and moves no status; a retraction still reaches through it."""

from __future__ import annotations

from rescind.contract.events import store_memory_id
from rescind.engine.writes import Write, record, record_stream
from rescind.graph.queries import versions as vq
from rescind.graph.store import TenantGraph, connect
from rescind.operator import decisions

T0 = 1_000_000
KEY = "profiles/dana/profile"


def graph(url: str, tenant: str) -> TenantGraph:
    return TenantGraph(connect(url), tenant)


def ids(g: TenantGraph, *texts: str) -> list[str]:
    return [store_memory_id(g.tenant, "belief", KEY, t) for t in texts]


def not_current(g: TenantGraph, mids: list[str]) -> dict[str, str]:
    return dict(g.rows(vq.NOT_CURRENT, {"ids": mids}))


def test_versions_rest_on_each_other_stay_in_and_only_the_last_is_current(falkordb,
                                                                        tenant_name):
    """v1 (on a user's message) -> v2 (on v1) -> v3 (on v2), one batch each: all IN, v1 and v2
    marked superseded, the key resolves to v3; retracting the user takes the chain OUT."""
    g = graph(falkordb, tenant_name)
    v1, v2, v3 = ids(g, "York", "York, bakery", "York, bakery, rowing")
    o = "obs-dana"
    record(g, [Write("e0", o, "observation", "I live in York", T0, source="user:dana")])
    assert record(g, [Write("e1", v1, "belief", "York", T0 + 1, premises=(o,), key=KEY)])[0].is_in
    assert record(g, [Write("e2", v2, "belief", "York, bakery", T0 + 2, premises=(v1,),
                            key=KEY, supersedes=v1)])[0].is_in
    assert record(g, [Write("e3", v3, "belief", "York, bakery, rowing", T0 + 3,
                            premises=(v2,), key=KEY, supersedes=v2)])[0].is_in
    assert {m: s.status for m, s in g.statuses([v1, v2, v3]).items()} == dict.fromkeys(
        [v1, v2, v3], "IN")
    assert not_current(g, [v1, v2, v3]) == {v1: "superseded", v2: "superseded"}
    assert decisions.resolve(g, KEY) == v3
    decisions.compromise(g, "user:dana", None, None, "taken over", "sec", commit=True)
    assert {m: (s.status, s.hops) for m, s in g.statuses([v1, v2, v3]).items()} == {
        v1: ("OUT", 1), v2: ("OUT", 2), v3: ("OUT", 3)}


def test_in_one_batch_and_through_the_pipeline_the_marks_are_the_same(falkordb, tenant_name):
    """v1 replaced in the batch that creates it is created marked; red -> blue -> red through
    record_stream (each batch planned on the one in flight) leaves red current, blue marked;
    a delete marks red deleted and leaves it IN."""
    g = graph(falkordb, tenant_name)
    red, blue = ids(g, "red", "blue")
    o = "obs-chart"
    record(g, [Write("e0", o, "observation", "colour chart", T0, source="chart"),
               Write("e1", red, "belief", "red", T0 + 1, premises=(o,), key=KEY),
               Write("e2", blue, "belief", "blue", T0 + 2, premises=(red,), key=KEY,
                     supersedes=red)])
    assert not_current(g, [red, blue]) == {red: "superseded"}
    record_stream(g, [[Write("e3", red, "belief", "red", T0 + 3, premises=(blue,), key=KEY,
                             supersedes=blue)],
                      [Write("e4", "other", "belief", "x", T0 + 4, premises=(o,))]])
    assert not_current(g, [red, blue]) == {blue: "superseded"}
    record(g, [Write("e5", red, "belief", "", T0 + 5, key=KEY, deletes=True)])
    assert not_current(g, [red, blue]) == {red: "deleted", blue: "superseded"}
    assert {s.status for s in g.statuses([red, blue]).values()} == {"IN"}


def test_a_graph_marked_the_old_way_is_migrated_once(falkordb, tenant_name):
    """Versions marked as withdrawals (the rule before) with what rested on them OUT: the
    migration moves each mark to ``replaced`` and brings the chain back IN; a memory also
    withdrawn by a reviewer stays OUT; a second run finds nothing."""
    from rescind.engine import retraction as ret
    from rescind.engine.versions import migrate_store_marks

    g = graph(falkordb, tenant_name)
    v1, v2, w = ids(g, "York", "York, bakery", "Leeds")
    o = "obs-dana"
    record(g, [Write("e0", o, "observation", "I live in York", T0, source="user:dana"),
               Write("e1", v1, "belief", "York", T0 + 1, premises=(o,), key=KEY),
               Write("e2", v2, "belief", "York, bakery", T0 + 2, premises=(v1,), key=KEY),
               Write("e3", w, "belief", "Leeds", T0 + 3, premises=(o,), key=KEY)])
    ret.run(g, ret.Withdraw("wd", w, "wrong", "reviewer"), T0 + 4)
    old = {v1: (["superseded"], "OUT", "superseded", 0), v2: ([], "OUT", "superseded", 1),
           w: (["wd", "deleted"], "OUT", "wd", 0)}
    for mid, (marks, status, cause, hops) in old.items():  # what the old rule left behind
        g.rows("MATCH (m:Mem {id: $id})-[st:STATUS]->() SET m.withdrawn_by = $marks, "
               "st.status = $s, st.cause = $c, st.hops = $h",
               {"id": mid, "marks": marks, "s": status, "c": cause, "h": hops}, read_only=False)
    assert migrate_store_marks(g, T0 + 5) == {"versions": 2, "moved": 2}
    assert {m: s.status for m, s in g.statuses([v1, v2, w]).items()} == {
        v1: "IN", v2: "IN", w: "OUT"}
    assert not_current(g, [v1, v2, w]) == {v1: "superseded", w: "deleted"}
    assert dict(g.rows(vq.LEGACY_MARKED)) == {}
    assert [h["status"] for h in g.history(v2)][-1] == "IN"
    assert migrate_store_marks(g, T0 + 6) == {"versions": 0, "moved": 0}
