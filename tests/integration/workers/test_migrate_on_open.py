"""A tenant whose store versions were marked under the old rule (an update or delete taken as a
withdrawal, with what rested on them OUT) is moved when the workers first open its graph: the
versions become merely not current and the chain comes back IN, before any new event."""

from __future__ import annotations

from rescind.contract.events import store_memory_id
from rescind.engine.writes import Write, record
from rescind.graph.queries import versions as vq
from rescind.graph.store import TenantGraph, connect
from rescind.workers.roles import Workers, WorkerSettings

T0 = 1_000_000
KEY = "profiles/dana/profile"


def test_the_workers_move_old_store_marks_when_they_open_a_tenant(falkordb, tenant_name):
    """v2 rests on v1, which an old-rule update marked 'superseded' (both OUT): once a worker
    opens the tenant, both are IN and v1 is not current."""
    g = TenantGraph(connect(falkordb), tenant_name)
    v1, v2 = (store_memory_id(tenant_name, "belief", KEY, t) for t in ("York", "York, bakery"))
    record(g, [Write("e0", "obs-dana", "observation", "I live in York", T0, source="user:dana"),
               Write("e1", v1, "belief", "York", T0 + 1, premises=("obs-dana",), key=KEY),
               Write("e2", v2, "belief", "York, bakery", T0 + 2, premises=(v1,), key=KEY)])
    for mid, marks, hops in ((v1, ["superseded"], 0), (v2, [], 1)):  # as the old rule left it
        g.rows("MATCH (m:Mem {id: $id})-[st:STATUS]->() SET m.withdrawn_by = $marks, "
               "st.status = 'OUT', st.cause = 'superseded', st.hops = $h",
               {"id": mid, "marks": marks, "h": hops}, read_only=False)

    workers = Workers(WorkerSettings(url=falkordb, worker_id="migrate"))
    opened = workers.graph(tenant_name)
    assert {m: s.status for m, s in opened.statuses([v1, v2]).items()} == {v1: "IN", v2: "IN"}
    assert dict(opened.rows(vq.NOT_CURRENT, {"ids": [v1, v2]})) == {v1: "superseded"}
    assert workers.graph(tenant_name) is opened  # once per process
