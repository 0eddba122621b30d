"""A scenario file names its sources canonically: a source declared as ``Portal:Acme`` is the
one its observations and its retraction spell ``portal:acme`` or ``PORTAL:ａｃｍｅ`` when the file
is replayed straight into the graph (sent through the streams, the events' own contract
canonicalises the same fields)."""

from __future__ import annotations

import json

import pytest

from rescind.graph import queries as q
from rescind.graph.store import TenantGraph, connect
from rescind.scenario.format import ScenarioError, parse
from rescind.scenario.replay import replay_text

LINES = [
    {"op": "source", "id": "Portal:Acme", "kind": "vendor_portal", "domain": "Acme-Portal "},
    {"op": "observe", "id": "o1", "source": "portal:acme", "text": "Acme bank: ZZ97 0001",
     "at": "2026-11-02T09:00:00Z"},
    {"op": "observe", "id": "o2", "source": " PORTAL:ａｃｍｅ\u200b", "text": "Acme remit: Leeds",
     "at": "2026-11-02T09:01:00Z"},
    {"op": "retract", "id": "r1", "source": "portal:ACME", "reason": "hacked", "by": "sec",
     "at": "2026-11-03T00:00:00Z"},
]
TEXT = "\n".join(json.dumps(x, ensure_ascii=False) for x in LINES)


def test_every_spelling_in_a_scenario_validates_as_the_declared_source():
    """The file validates (no 'unknown source'), each line naming ``portal:acme``."""
    steps = parse(TEXT)
    assert [getattr(s.op, "source", None) or s.op.id for s in steps] == ["portal:acme"] * 4
    assert steps[0].op.domain == "acme-portal"
    with pytest.raises(ScenarioError, match="portal:acmee"):
        parse(TEXT.replace('"portal:ACME"', '"portal:acmee"'))


def test_a_replayed_scenario_holds_one_source_and_its_retraction_reaches_both(falkordb,
                                                                             tenant_name):
    """Replayed into the graph: one source, and the retraction spelled otherwise takes both
    observations OUT."""
    replay_text(TEXT, falkordb, tenant_name)
    g = TenantGraph(connect(falkordb), tenant_name)
    try:
        assert [r[0] for r in g.rows(q.SOURCES)] == ["portal:acme"]
        assert g.rows("MATCH (m:Mem)-[st:STATUS]->() RETURN DISTINCT st.status") == [["OUT"]]
    finally:
        g.delete()
