"""`rescind reinstate` previews unless told `--commit` (issue 28, finding 10), and a recall
whose payment comes back IN is withdrawn at the shell too (finding 11): refused approval and
export, its withdrawal notice approved and exported; against the real server."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rescind.cli.main import app
from rescind.graph.store import TenantGraph, connect
from tests.support.recalls import COMPROMISE, replay_finance_story
from tests.support.shell import signed

WINDOW = ["--from", COMPROMISE["from"], "--to", COMPROMISE["to"]]


def cli(story, *args: str, as_json: bool = True) -> tuple[int, object, str]:
    url, tenant = story
    res = CliRunner().invoke(app, [*args, "--url", url, "--tenant", tenant,
                                   *(["--json"] if as_json else [])], env={"COLUMNS": "200"})
    body = (json.loads(res.stdout) if as_json else res.stdout) if res.exit_code == 0 else None
    return res.exit_code, body, res.stderr if res.exit_code else ""


@pytest.fixture
def story(falkordb, tenant_name):
    """The finance story (both payments executed) with the portal compromised (r-fin)."""
    replay_finance_story(falkordb, tenant_name)
    code, d, _ = cli((falkordb, tenant_name), "compromise", "portal:acme", *WINDOW, "--reason",
                     COMPROMISE["reason"], "--commit", "--id", "r-fin", "--by", "sam")
    assert code == 0 and d["committed"] is True
    yield falkordb, tenant_name
    TenantGraph(connect(falkordb), tenant_name).delete()


def statuses(story) -> dict[str, str]:
    g = TenantGraph(connect(story[0]), story[1])
    return {r[0]: r[1] for r in g.rows("MATCH (m:Mem)-[st:STATUS]->() RETURN m.id, st.status")}


def test_reinstate_without_commit_is_a_preview_that_names_the_money(story):
    """`rescind reinstate r-fin` changes nothing and says which recalls it would withdraw and
    which approved one it would pull, with amounts, and how to apply it; `--commit --rev` at a
    stale revision is refused (exit 2, nothing changed); at the preview's it applies."""
    assert cli(story, "recalls", "approve", "pay-1041", "--by", "fran")[0] == 0
    g = TenantGraph(connect(story[0]), story[1])
    before, rev = statuses(story), g.revision()
    code, text, _ = cli(story, "reinstate", "r-fin", "--by", "sam", as_json=False)
    flat = " ".join(text.split())
    assert code == 0 and flat.startswith("Preview: reinstate r-fin")
    assert "Money: 0 held payment(s) released, 2 recall(s) withdrawn, 1 to pull from the " \
           "outbox" in flat
    assert "the recall of pay-1041 (6,000.00 USD) would be withdrawn and pulled from the " \
           "outbox" in flat
    assert "the recall of pay-1042 (34,500.00 USD) would be withdrawn" in flat
    assert f"nothing changed; apply with --commit --rev {rev}" in flat
    assert statuses(story) == before and g.revision() == rev

    code, _, err = cli(story, "reinstate", "r-fin", "--by", "sam", "--commit", "--rev",
                       str(rev - 1))
    assert code == 2 and "stale preview" in err
    assert statuses(story) == before and g.revision() == rev
    code, d, _ = cli(story, "reinstate", "r-fin", "--by", "sam", "--commit", "--rev", str(rev),
                     "--reason", "the vendor confirmed its bank")
    assert code == 0 and d["committed"] is True and d["reason"] == "the vendor confirmed its bank"
    assert statuses(story) != before
    assert g.retraction("r-fin")["reinstated_reason"] == "the vendor confirmed its bank"


def test_a_withdrawn_recall_is_refused_and_its_notice_goes_out_at_the_shell(story, tmp_path):
    """pay-1041 approved and exported, then r-fin reinstated: `recalls approve` and `export`
    exit 2 saying it was withdrawn; `recalls notice-export` of the draft is refused;
    `notice-approve` then `notice-export --format text --out` write the letter."""
    assert cli(story, "recalls", "approve", "pay-1041", "--by", "fran")[0] == 0
    assert cli(story, "recalls", "export", "pay-1041", "--format", "csv", "--by", "fran",
               as_json=False)[0] == 0
    assert cli(story, "reinstate", "r-fin", "--by", "sam", "--commit")[0] == 0
    code, rows, _ = cli(story, "recalls", "list")
    assert {r["name"]: r["state"] for r in rows} == {"pay-1041": "withdrawn"}
    for args in (["approve", "pay-1041"], ["export", "pay-1041", "--format", "camt.056"]):
        code, _, err = cli(story, "recalls", *args, "--by", "fran")
        assert code == 2 and "was withdrawn" in err and "nothing was changed" in err, err
    code, _, err = cli(story, "recalls", "notice-export", "pay-1041", "--by", "fran")
    assert code == 2 and "is a draft" in err
    code, r, _ = cli(story, "recalls", "notice-approve", "pay-1041", "--by", "fran")
    assert code == 0 and r["notice"]["state"] == "approved"
    out = tmp_path / "notice.txt"
    code, text, _ = cli(story, "recalls", "notice-export", "pay-1041", "--format", "text",
                        "--out", str(out), "--by", "fran", as_json=False)
    assert code == 0 and "exported the withdrawal notice of pay-1041" in text
    letter = out.read_text()
    assert letter.startswith(f"WITHDRAWAL OF RECALL REQUEST - APPROVED by {signed('fran')}")
    assert f"csv exported by {signed('fran')}" in letter and "Amount: 6,000.00 USD" in letter
