"""The compromise preview says what it reaches but leaves IN and why, reinstate prints what
came back without hop numbers it does not have, a compromise already in force is not committed
twice without --force, and `rescind memories list|search` finds memories: on the vendor-portal
story, against the real server, through the `rescind` command."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rescind.cli.main import app
from rescind.graph.store import TenantGraph, connect
from rescind.operator.audit import AuditLog
from rescind.scenario.replay import replay_text
from tests.support.api import story_text

WINDOW = ["--from", "2026-11-01T00:00Z", "--to", "2026-11-03T00:00Z"]
REMIT = {"o-remit-portal", "n-remit", "a-remit"}  # the portal said it, and so did the contract


@pytest.fixture
def story(falkordb, tenant_name):
    replay_text(story_text(), falkordb, tenant_name)
    yield falkordb, tenant_name
    TenantGraph(connect(falkordb), tenant_name).delete()


def run(story, *args: str, as_json: bool = True):
    url, tenant = story
    by = ["--by", "sam"] if args[0] in ("compromise", "reinstate") else []
    res = CliRunner().invoke(app, [*args, "--url", url, "--tenant", tenant, *by,
                                   *(["--json"] if as_json else [])], env={"COLUMNS": "200"})
    return res.exit_code, (json.loads(res.stdout) if as_json and res.exit_code == 0
                           else res.stdout), res.stderr


def statuses(story) -> dict[str, str]:
    g = TenantGraph(connect(story[0]), story[1])
    return {r[0]: r[1] for r in g.rows("MATCH (m:Mem) RETURN m.id, m.status")}


def test_the_preview_says_what_stays_in_and_what_holds_it(story):
    """The remit address (observation, note, answer) is reached but kept IN: the observation
    because the contract still says it, the note and the answer through what is still IN, down
    to the contract. The printed preview says so, line by line."""
    code, d, _ = run(story, "compromise", "portal:acme", *WINDOW, "--reason", "hacked")
    assert code == 0 and {k["name"] for k in d["kept"]} == REMIT
    kept = {k["name"]: k["kept_by"] for k in d["kept"]}
    assert kept["o-remit-portal"] == [{"source": "contract:acme",
                                       "name": "Acme master services agreement",
                                       "domain": "legal"}]
    [note] = kept["n-remit"]  # two justifications on the same premise: one reason
    assert [p["name"] for p in note["premises"]] == ["o-remit-portal"]
    assert [s["source"] for s in note["sources"]] == ["contract:acme"]
    [answer] = kept["a-remit"]
    assert [p["name"] for p in answer["premises"]] == ["n-remit"]
    assert [s["source"] for s in answer["sources"]] == ["contract:acme"]
    code, text, _ = run(story, "compromise", "portal:acme", *WINDOW, "--reason", "hacked",
                        as_json=False)
    assert code == 0 and "Reached but kept IN" in text
    assert "kept IN by: Acme master services agreement (contract:acme) still says it" in text
    assert ("kept IN by: Acme master services agreement (contract:acme), through: Acme remit "
            "address is 1 Dock Road, Leeds") in text


def test_reinstate_prints_what_came_back_without_hop_none(story):
    """`rescind reinstate` lists the seven memories that came back IN, each with its text,
    and never a made-up hop ("hop None")."""
    assert run(story, "compromise", "portal:acme", *WINDOW, "--reason", "hacked", "--commit",
               "--id", "r-1")[0] == 0
    code, text, _ = run(story, "reinstate", "r-1", "--commit", as_json=False)
    assert code == 0 and "7 went IN" in text and "hop" not in text
    assert "Wire 6,000.00 to IBAN GB33 BUKB 2020 1555 5555 55 ref INV-1041 6,000.00 USD" in text


def test_the_same_compromise_twice_is_refused_unless_forced(story):
    """A second commit over an overlapping window is refused (exit 2) naming r-1, changes
    nothing and is audited as a refusal; the preview warns; --force records it (nothing more
    goes OUT); the same --id again is a repeat, not a duplicate."""
    assert run(story, "compromise", "portal:acme", *WINDOW, "--reason", "hacked", "--commit",
               "--id", "r-1")[0] == 0
    before = statuses(story)
    code, _, err = run(story, "compromise", "portal:acme", "--from", "2026-11-02T00:00Z",
                       "--reason", "again", "--commit", "--id", "r-2")
    assert code == 2 and "already retracted over an overlapping window by r-1" in err
    assert "--force" in err and statuses(story) == before
    [entry] = AuditLog(connect(story[0])).entries(story[1], 1)
    assert (entry["action"], entry["result"], entry["status"]) == ("retraction.commit",
                                                                  "refused", "409")
    code, text, _ = run(story, "compromise", "portal:acme", *WINDOW, "--reason", "again",
                        as_json=False)
    assert code == 0 and "already retracted over an overlapping window by r-1" in text
    code, d, _ = run(story, "compromise", "portal:acme", *WINDOW, "--reason", "hacked",
                     "--commit", "--id", "r-1")
    assert code == 0 and d["repeated"] is True
    code, d, _ = run(story, "compromise", "portal:acme", "--from", "2026-11-02T00:00Z",
                     "--reason", "again", "--commit", "--id", "r-2", "--force")
    assert code == 0 and d["retraction"] == "r-2" and sum(d["counts"].values()) == 0
    assert [x["id"] for x in d["duplicates"]] == ["r-1"]


def test_memories_list_and_search_filter_by_kind_status_and_text(story):
    """list pages through every memory in writing order; --kind and --status filter; search
    matches text case-insensitively, OUT ones included unless --status IN; bad input is exit 2
    with the reason."""
    code, page, _ = run(story, "memories", "list")
    assert code == 0 and len(page["items"]) == 12 and page["next_skip"] is None
    code, page, _ = run(story, "memories", "list", "--kind", "action", "--limit", "1")
    assert [m["name"] for m in page["items"]] == ["pay-1041"] and page["next_skip"] == 1
    code, page, _ = run(story, "memories", "list", "--kind", "action", "--skip", "1")
    assert [m["name"] for m in page["items"]] == ["pay-1042"]
    run(story, "compromise", "portal:acme", *WINDOW, "--reason", "hacked", "--commit")
    code, page, _ = run(story, "memories", "search", "IBAN GB33")
    assert {m["name"] for m in page["items"]} == {"o-bank", "n-bank", "n-bank-confirmed",
                                                  "p-1041", "p-1042", "pay-1041", "pay-1042"}
    assert {m["status"] for m in page["items"]} == {"OUT"}
    code, page, _ = run(story, "memories", "search", "iban", "--status", "in")
    assert code == 0 and page["items"] == []
    code, page, _ = run(story, "memories", "list", "--status", "OUT", "--kind", "plan")
    assert {m["name"] for m in page["items"]} == {"p-1041", "p-1042"}
    code, text, _ = run(story, "memories", "search", "remit", as_json=False)
    assert code == 0 and "a-remit" in text and "Told the mailroom" in text
    assert run(story, "memories", "list", "--kind", "nope")[0] == 2
    code, _, err = run(story, "memories", "search", "  ")
    assert code == 2 and "say what to search for" in err
