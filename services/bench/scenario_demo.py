"""The demo scenario of `rescind bench rules`: the reference agents' week, as it stood just
before security's retraction on Thursday, and that retraction."""

from __future__ import annotations

from datetime import UTC, datetime

from rescind.bench import rules_queries as rq
from rescind.bench.scenarios import Batch, Case, Checkpoint, micros
from rescind.engine.retraction import Retract
from rescind.engine.writes import Write


def demo_case(url: str, tenant: str = "bench-rules-demo-week") -> Case:
    """Run the demo week (deterministic policy) and keep its graph as it stood at Thursday
    09:00, before security's retraction; the scenario is that graph plus that retraction."""
    from rescind.agents.llm import PolicyModel
    from rescind.demo import week as demo
    from rescind.graph import tenants
    from rescind.graph.store import TenantGraph, connect
    from rescind.operator import decisions as security

    graph = TenantGraph(connect(url), tenant)
    seen: dict = {}

    def on_event(kind, data):
        if kind == "step" and data["name"] == "security/thursday":
            seen["rows"] = [graph.rows(q) for q in (rq.DEMO_SOURCES, rq.DEMO_MEMORIES,
                                                      rq.DEMO_GROUNDINGS, rq.DEMO_JUSTIFICATIONS)]

    summary = demo.run(url, tenant, model=PolicyModel(), on_event=on_event)  # creates it
    tenants.drop(graph.server, tenant)
    sources, mems, grounds, justs = seen["rows"]
    facts = {r[0]: r for r in mems}
    writes = []
    for gid, sid, mid, at in grounds:
        _, kind, text, *_ = facts[mid]
        writes.append(Write(gid, mid, kind, text, at, source=sid))
    for jid, mid, at, premises in justs:
        _, kind, text, _, names, executed, amount, payee = facts[mid]
        extra = {"amount": amount, "payee": payee, "executed": bool(executed)} \
            if kind == "action" else {}
        writes.append(Write(jid, mid, kind, text, at, name=(names or [None])[0],
                            premises=tuple(sorted(premises)), extra=extra))
    writes.sort(key=lambda w: (w.at, w.source is None))
    start, end = (security.parse_time(t, "window") for t in demo.ATTACK)
    op = Retract("r-northwind-portal", demo.COMPROMISED, start, end, reason=demo.REASON)
    thursday = micros(datetime(2026, 11, 19, 9, tzinfo=UTC))
    return Case(
        name="demo", sources=[{"id": s, "kind": k, "name": n, "domain": d}
                              for s, k, n, d in sources],
        events=[Batch(writes), Checkpoint("Thu 19 Nov 09:00: portal:northwind compromised "
                                          "16 Nov 08:00 - 18 Nov 12:00", thursday, [op])],
        params={"model": "deterministic policy", "retraction": {
            "source": demo.COMPROMISED, "window": list(demo.ATTACK)}},
        notes={"the demo's own commit took OUT": summary["out"]})
