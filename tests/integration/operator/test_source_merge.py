"""A graph written before source names were canonical holds one source under several
spellings: `rescind sources check` reports them, `rescind sources merge --commit` moves what
each said to the canonical source, and a compromise then reaches all of it. Against the real
server, through the CLI."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rescind.cli.main import app
from rescind.graph import queries as q
from rescind.graph.store import TenantGraph, connect
from rescind.scenario.replay import replay_text

# Written as a scenario (replayed straight into the graph, as an older writer stored names):
# the portal under three spellings, none of them canonical, and the contract.
LEGACY = "\n".join(json.dumps(x) for x in [
    {"op": "source", "id": "portal:Northwind", "kind": "vendor_portal", "domain": "Portal:Northwind"},
    {"op": "source", "id": "portal:NORTHWIND", "kind": "vendor_portal"},
    {"op": "source", "id": "portal: northwind", "kind": "vendor_portal"},
    {"op": "source", "id": "contract:northwind", "kind": "signed_contract", "domain": "legal"},
    {"op": "observe", "id": "o1", "source": "portal:Northwind", "text": "Bank: ZZ97 0001",
     "at": "2026-11-02T09:00:00Z"},
    {"op": "observe", "id": "o2", "source": "portal:NORTHWIND", "text": "Remit: 1 Dock Road",
     "at": "2026-11-02T09:05:00Z"},
    {"op": "observe", "id": "o3", "source": "portal: northwind", "text": "Bank: ZZ97 0001",
     "at": "2026-11-02T09:06:00Z"},
    {"op": "observe", "id": "o4", "source": "contract:northwind", "text": "Remit: 1 Dock Road",
     "at": "2026-03-01T12:00:00Z"},
    {"op": "write", "id": "n1", "kind": "belief", "agent": "ap", "text": "Northwind pays to "
     "ZZ97 0001", "premises": ["o1"], "at": "2026-11-02T10:00:00Z"},
])


@pytest.fixture
def legacy(falkordb, tenant_name):
    replay_text(LEGACY, falkordb, tenant_name)
    yield falkordb, tenant_name
    TenantGraph(connect(falkordb), tenant_name).delete()


def cli(where, *args: str):
    url, tenant = where
    res = CliRunner().invoke(app, ["sources", *args, "--url", url, "--tenant", tenant, "--json"],
                             env={"COLUMNS": "200"})
    return res.exit_code, (json.loads(res.stdout) if res.stdout.strip() else None), res.stderr


def said(where) -> dict[str, int]:
    g = TenantGraph(connect(where[0]), where[1])
    return {s: n for s, n in g.rows("MATCH (s:Source) OPTIONAL MATCH (s)-[e:SAID]->() "
                                     "RETURN s.id, count(e)")}


def test_check_reports_the_spellings_of_one_source_and_changes_nothing(legacy):
    """Three spellings of the portal are one group named by its canonical form, with what
    each said; the contract is not listed; exit 1; the graph is as it was."""
    before = said(legacy)
    code, d, _ = cli(legacy, "check")
    assert code == 1 and not d["committed"]
    [group] = d["merged"]
    assert group["canonical"] == "portal:northwind"
    assert sorted((m["id"], m["said"]) for m in group["spellings"]) == [
        ("portal: northwind", 1), ("portal:NORTHWIND", 1), ("portal:Northwind", 1)]
    assert said(legacy) == before


def test_merge_moves_what_each_spelling_said_and_a_compromise_reaches_it_all(legacy):
    """The preview changes nothing; --commit leaves one portal source holding the three
    statements (and the merged domain), check is then clean, and a compromise spelled
    ``Portal:NorthWind`` takes the observations and the note OUT."""
    code, d, _ = cli(legacy, "merge", "--by", "sam")
    assert code == 0 and not d["committed"] and d["moved"] == 3
    assert "portal:northwind" not in said(legacy)
    code, d, _ = cli(legacy, "merge", "--commit", "--by", "sam")
    assert code == 0 and d["committed"]
    assert said(legacy) == {"portal:northwind": 3, "contract:northwind": 1}
    g = TenantGraph(connect(legacy[0]), legacy[1])
    assert g.source("portal:northwind")["domain"] == "portal:northwind"
    assert cli(legacy, "check")[0] == 0
    from rescind.operator import decisions

    done = decisions.compromise(g, "Portal:NorthWind", None, None, "taken over", "sec",
                                commit=True)
    assert done["source"] == "portal:northwind"
    out = {r[0] for r in g.rows("MATCH (m:Mem)-[st:STATUS]->() WHERE st.status = 'OUT' "
                                "RETURN m.text")}
    assert out == {"Bank: ZZ97 0001", "Northwind pays to ZZ97 0001"}  # the remit: contract too


def test_a_spelling_under_a_retraction_in_force_is_not_merged(legacy):
    """A variant compromised by its old spelling keeps its node: moving its statements would
    take them out of that retraction's reach. The merge skips the group and says why."""
    g = TenantGraph(connect(legacy[0]), legacy[1])
    from rescind.operator import decisions

    decisions.compromise(g, "portal:NORTHWIND", None, None, "taken over", "sec", commit=True)
    code, d, _ = cli(legacy, "merge", "--commit", "--by", "sam")
    assert code == 0 and d["merged"] == []
    [skipped] = d["skipped"]
    assert skipped["retracted"] == ["portal:NORTHWIND"] and "reinstate it first" in skipped["why"]
    assert {r[0] for r in g.rows(q.SOURCES)} >= {"portal:Northwind", "portal:NORTHWIND"}


def test_resolve_names_the_source_of_a_spelling_or_the_near_ones(legacy):
    """`sources resolve` prints the source a spelling names; a misspelling exits 2 naming the
    near sources."""
    code, d, _ = cli(legacy, "resolve", "contract:NORTHWIND ")
    assert code == 0 and d["id"] == "contract:northwind" and d["domain"] == "legal"
    code, _, err = cli(legacy, "resolve", "contract:northwnd")
    assert code == 2 and "did you mean 'contract:northwind'" in err
