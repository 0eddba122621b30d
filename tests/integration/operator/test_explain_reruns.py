"""An agent run twice on the same premises records the same justification twice; `explain`
shows it once, with how many times it was recorded, against the real server."""

from __future__ import annotations

import io

from rich.console import Console

from rescind.contract.events import memory_id
from rescind.core.planning import Write
from rescind.engine.writes import record
from rescind.graph.store import TenantGraph, connect
from rescind.operator import decisions
from rescind.views import operator as views

T0 = 1_793_000_000_000_000


def test_identical_justifications_are_shown_once_with_a_count(falkordb, tenant_name):
    """Two runs writing the same note on the same observation, and a third on another: two
    justifications in `explain` (the repeated one counted 2), and the CLI's tree says so."""
    graph = TenantGraph(connect(falkordb), tenant_name)
    try:
        said = [("o1", "portal:acme", "Bank: GB33 0001"), ("o2", "contract:acme",
                                                          "Bank: GB33 0001 (signed)")]
        obs = [Write(f"e-{n}", memory_id(tenant_name, "observation", text), "observation", text,
                     T0 + i, name=n, source=src) for i, (n, src, text) in enumerate(said)]
        note = "Acme pays to GB33 0001"
        mid = memory_id(tenant_name, "belief", note)

        def run(event: str, premise: Write, at: int) -> Write:
            return Write(event, mid, "belief", note, at, name="n1", premises=(premise.mem_id,),
                         agent="ap", run=event)

        record(graph, obs)
        for event, premise, at in (("e-run1", obs[0], 10), ("e-run2", obs[0], 20),
                                   ("e-run3", obs[1], 30)):
            record(graph, [run(event, premise, T0 + at)])
        assert len(graph.nodes([mid])[mid].justifications) == 3  # stored as recorded
        tree = decisions.explain(graph, mid)
        assert [[p["id"] for p in j] for j in tree["justifications"]] == [
            [obs[0].mem_id], [obs[1].mem_id]]
        assert tree["justification_counts"] == [2, 1]
        assert len(tree["justification_rules"]) == 2
        out = io.StringIO()
        views.justification_tree(tree, Console(file=out, width=200))
        text = out.getvalue()
        assert text.count("justification ") == 2
        assert "justification 1 (declared), recorded 2 times (the same premises)" in text
        assert "justification 2 (declared): needs all of" in text
    finally:
        graph.delete()
