"""Security's and finance's commands on the vendor-portal story, against the real server."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rescind.cli.main import app
from rescind.contract import layout
from rescind.graph.store import TenantGraph, connect
from rescind.scenario.replay import replay_text
from rescind.transport import connection
from tests.support.paths import ROOT
from tests.support.shell import signed

WINDOW = ["--from", "2026-11-01T00:00Z", "--to", "2026-11-03T00:00Z"]


@pytest.fixture
def story(falkordb, tenant_name):
    """The shipped example up to (not including) its retraction, in a tenant of its own."""
    lines = (ROOT / "examples/vendor-portal.jsonl").read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if '"op": "retract"' in line)
    replay_text("\n".join(lines[:cut]), falkordb, tenant_name)
    yield falkordb, tenant_name
    TenantGraph(connect(falkordb), tenant_name).delete()


def cli(story, *args: str) -> tuple[int, object, str]:
    url, tenant = story
    res = CliRunner().invoke(app, [*args, "--url", url, "--tenant", tenant, "--json"])
    body = json.loads(res.stdout) if res.exit_code == 0 else None
    return res.exit_code, body, res.stderr if res.exit_code else ""


def statuses(story) -> dict[str, str]:
    g = TenantGraph(connect(story[0]), story[1])
    return {r[0]: r[1] for r in g.rows("MATCH (m:Mem)-[st:STATUS]->() RETURN m.id, st.status")}


def test_compromise_previews_by_default_and_changes_nothing(story):
    """Without --commit: the blast radius by kind, the payment to hold and the one to recall,
    and every status in the graph exactly as before."""
    before = statuses(story)
    code, d, _ = cli(story, "compromise", "portal:acme", *WINDOW, "--reason", "portal hacked")
    assert code == 0 and d["committed"] is False
    assert d["counts"] == {"observations": 1, "beliefs": 2, "plans": 2, "answers": 0,
                           "executed_actions": 1, "pending_actions": 1}
    assert [(a["name"], a["amount"]) for a in d["to_hold"]] == [("pay-1042", 34500)]
    assert [(a["name"], a["amount"]) for a in d["to_recall"]] == [("pay-1041", 6000)]
    assert statuses(story) == before


def test_the_whole_flow_commit_recall_approve_reinstate(story):
    """Commit takes the bank note, plan and payments OUT and leaves the remit address IN; the
    executed payment is drafted for recall and approved once into the outbox; agents hear of
    every change; reinstating puts every status back exactly."""
    before = statuses(story)
    conn = connection.connect(story[0])
    feed = layout.status_stream(story[1])
    seen = conn.xlen(feed)  # 0 when the stream does not exist
    code, d, _ = cli(story, "compromise", "portal:acme", *WINDOW, "--reason", "portal hacked",
                     "--commit", "--id", "r-portal")
    assert code == 0 and d["committed"] is True and d["retraction"] == "r-portal"
    after = statuses(story)
    out = {m for m, s in after.items() if s == "OUT"}
    assert len(out) == 7 and out == {m for m, s in after.items() if before[m] != s}
    assert conn.xlen(feed) - seen == 7
    code, rows, _ = cli(story, "recalls", "list")
    assert [(r["name"], r["amount"], r["state"]) for r in rows] == [("pay-1041", 6000, "drafted")]
    assert "Reason: portal hacked (retraction r-portal)" in rows[0]["draft"]
    code, row, _ = cli(story, "recalls", "show", "pay-1041")
    assert code == 0 and "Evidence" in row["draft"] and "Acme bank account" in row["draft"]
    code, row, _ = cli(story, "recalls", "approve", "pay-1041", "--by", "finance@example.com")
    assert code == 0 and row["state"] == "approved"
    g = TenantGraph(connect(story[0]), story[1])
    assert g.rows("MATCH (o:Outbox) RETURN o.action, o.by") == [
        [rows[0]["action"], signed("finance@example.com")]]
    code, _, message = cli(story, "recalls", "approve", "pay-1041", "--by", "finance@example.com")
    assert code == 2 and "approved already" in message
    assert len(g.rows("MATCH (o:Outbox) RETURN o.id")) == 1
    code, d, _ = cli(story, "reinstate", "r-portal", "--commit")
    assert code == 0 and d["direction"] == "IN" and sum(d["counts"].values()) == 7
    assert statuses(story) == before


def test_explain_and_fragility_name_the_sources_and_domains(story):
    """The tree of the executed payment reaches the portal through the confirmed note; the big
    payment rests on one trust domain besides the inbox, so one compromise fakes it."""
    code, d, _ = cli(story, "explain", "pay-1041")
    tree = d["tree"]  # --json: the memory and its tree, as the API answers (typed all through)
    assert code == 0 and tree["kind"] == "action" and tree["status"] == "IN"
    assert d["memory"]["id"] == tree["id"] and d["memory"]["kind"] == "action"

    def sources(node) -> set[str]:
        found = {s["source"] for s in node.get("said_by", [])}
        for premises in node.get("justifications", []):
            for p in premises:
                found |= sources(p)
        return found

    assert sources(tree) == {"portal:acme", "inbox:ap"}
    # each justification says how it was chosen: a scenario names its premises ("scenario")
    assert tree["justification_rules"] == ["scenario"] * len(tree["justifications"])
    code, f, _ = cli(story, "fragility", "pay-1042")
    assert code == 0 and f["fragility"] == 1 and len(f["would_fake_it"]) == 1
    assert f["would_fake_it"][0] in f["domains"] and set(f["domains"]) == {"acme-portal",
                                                                           "ap-inbox"}


def test_explain_gives_each_of_two_justifications_its_rule(story):
    """A memory written twice (its two observations are one memory: the same text) has two
    justifications on the same premises: explain shows them once, recorded twice, with the
    rule that chose them (not None)."""
    url, tenant = story
    [[mid]] = TenantGraph(connect(url), tenant).rows(
        "MATCH (j:Justification)-[:JUSTIFIES]->(m:Mem) WITH m, count(j) AS n WHERE n = 2 "
        "RETURN m.id")
    code, d, _ = cli(story, "explain", mid)
    tree = d["tree"]
    assert code == 0 and len(tree["justifications"]) == 1
    assert tree["justification_rules"] == ["scenario"]
    assert tree["justification_counts"] == [2]


def test_audit_order_ranks_the_portal_first(story):
    """Both payments rest on the portal alone (and on the inbox): the two share the top by
    value; the contract, with nothing resting on it alone, comes last."""
    code, rows, _ = cli(story, "audit-order")
    assert code == 0
    top = {r["source"]: r for r in rows}
    assert top["portal:acme"]["value_at_risk"] == 40500 and top["portal:acme"]["payments"] == 2
    assert rows[-1]["source"] == "contract:acme" and rows[-1]["value_at_risk"] == 0


@pytest.mark.parametrize("args, message", [
    (["compromise", "portal:nobody", *WINDOW, "--reason", "x"], "unknown source 'portal:nobody'"),
    (["compromise", "portal:acme", "--from", "2026-11-03T00:00Z", "--to", "2026-11-01T00:00Z",
      "--reason", "x"], "ends"),
    (["compromise", "portal:acme", "--reason", "x"], "no window"),
    (["compromise", "portal:acme", "--from", "yesterday", "--reason", "x"], "not an ISO 8601"),
    (["compromise", "portal:acme", "--from", "2025-01-01T00:00Z", "--to", "2025-01-02T00:00Z",
      "--reason", "x"], "no observation of 'portal:acme' between"),
    (["compromise", "portal:acme", *WINDOW, "--reason", "  "], "say why"),
    (["recalls", "approve", "pay-1041", "--by", "f"], "no recall for 'pay-1041'"),
    (["recalls", "show", "pay-404"], "no memory or action 'pay-404'"),
    (["explain", "nothing-like-this"], "no memory or action"),
    (["fragility", "pay-404"], "no memory or action"),
    (["reinstate", "r-never"], "no retraction 'r-never'"),
])
def test_bad_input_gets_one_clear_line_and_changes_nothing(story, args, message):
    """Unknown source or action, a window that ends first, no window at all, an empty window,
    a recall that does not exist or was never drafted: exit 2, the reason, the graph unchanged."""
    before = statuses(story)
    code, _, text = cli(story, *args)
    assert code == 2 and message in text
    assert statuses(story) == before


def test_a_source_with_no_observations_cannot_be_compromised(story):
    """A declared source nothing was read from: the command says so and changes nothing."""
    g = TenantGraph(connect(story[0]), story[1])
    from rescind.core.shapes import Mutation

    g.apply(Mutation(op="source", sources=[{"id": "portal:quiet", "kind": "portal",
                                            "name": "quiet", "domain": "quiet"}]), g.revision())
    rev = g.revision()
    code, _, text = cli(story, "compromise", "portal:quiet", "--all-time", "--reason", "x")
    assert code == 2 and "has no observations" in text and g.revision() == rev


def test_a_stale_preview_revision_is_refused(story):
    """--commit --rev N after the graph moved: refused as stale, nothing applied."""
    code, d, _ = cli(story, "compromise", "portal:acme", *WINDOW, "--reason", "x")
    g = TenantGraph(connect(story[0]), story[1])
    from rescind.core.shapes import Mutation

    g.apply(Mutation(op="source", sources=[{"id": "s-new", "kind": "k", "name": "n",
                                            "domain": "d"}]), g.revision())
    before = statuses(story)
    code, _, text = cli(story, "compromise", "portal:acme", *WINDOW, "--reason", "x",
                        "--commit", "--rev", str(d["rev"]))
    assert code == 2 and "stale preview" in text
    assert statuses(story) == before
