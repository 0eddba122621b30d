"""A graph written before source names were canonical holds one source under several
spellings: `rescind sources check` reports them, `rescind sources merge --commit` moves what
each said to the canonical source, and a compromise then reaches all of it. Against the real
server, through the CLI."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rescind.cli.main import app
from rescind.contract.events import memory_id
from rescind.core.planning import Write
from rescind.engine.writes import record
from rescind.graph import queries as q
from rescind.graph.store import TenantGraph, connect

T0 = 1_793_000_000_000_000
# As an older writer stored names (the engine's own write path, below the event contract, does
# not canonicalise): the portal under three spellings, none of them canonical, and the contract.
SAID = [("o1", "portal:Northwind", "Bank: ZZ97 0001"), ("o2", "portal:NORTHWIND", "Remit: 1 Dock Road"),
        ("o3", "portal: northwind", "Bank: ZZ97 0001"), ("o4", "contract:northwind",
                                                         "Remit: 1 Dock Road")]


@pytest.fixture
def legacy(falkordb, tenant_name):
    graph = TenantGraph(connect(falkordb), tenant_name)
    obs = [Write(f"e-{name}", memory_id(tenant_name, "observation", text), "observation", text,
                 T0 + i, name=name, source=source) for i, (name, source, text) in enumerate(SAID)]
    note = "Northwind pays to ZZ97 0001"
    record(graph, [*obs, Write("e-n1", memory_id(tenant_name, "belief", note), "belief", note,
                               T0 + 10, name="n1", premises=(obs[0].mem_id,), agent="ap")])
    yield falkordb, tenant_name
    graph.delete()


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
    assert before["portal:Northwind"] == 1 and "portal:northwind" not in before
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
    assert code == 0 and d["id"] == "contract:northwind"
    code, _, err = cli(legacy, "resolve", "contract:northwnd")
    assert code == 2 and "did you mean 'contract:northwind'" in err


def test_the_compromise_command_says_which_source_a_spelling_named(legacy):
    """`rescind compromise "Contract:NORTHWIND "` previews ``contract:northwind`` and says
    what was typed."""
    url, tenant = legacy
    res = CliRunner().invoke(app, ["compromise", "Contract:NORTHWIND ", "--reason", "hacked",
                                   "--from", "2026-01-01T00:00Z", "--by", "sam", "--url", url,
                                   "--tenant", tenant],
                             env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    out = " ".join(res.stdout.split())
    assert "Preview: contract:northwind compromised" in out
    assert "(you wrote 'Contract:NORTHWIND ')" in out
