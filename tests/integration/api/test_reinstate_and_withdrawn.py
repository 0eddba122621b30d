"""Money moves by reinstatement only after a preview (issue 28, findings 10 and 11), over HTTP
against the real server: the preview lists the held payments it would release and the recalls
it would withdraw or pull and changes nothing; the commit needs the preview's revision; the
timeline says who released the payment and why; a recall whose payment is IN again is
withdrawn, refused approval and export (409), and one already exported gets a withdrawal notice
for the bank that finance approves, then exports."""

from __future__ import annotations

import csv
import io

import pytest

from tests.support.api import COMPROMISE, forget, make_story
from tests.support.recalls import COMPROMISE as FIN_COMPROMISE
from tests.support.recalls import finance_story_text, record_receipts


def _commit(s, body: dict, rid: str) -> None:
    sec = s.as_("security")
    p = s.client.post(f"{s.base}/retractions/preview", json=body, headers=sec).json()
    r = s.client.post(f"{s.base}/retractions", headers=sec,
                      json={**body, "rev": p["rev"], "id": rid})
    assert r.status_code == 200, r.text


def _preview(s, rid: str, reason: str | None = None) -> dict:
    r = s.client.post(f"{s.base}/retractions/{rid}/reinstate/preview",
                      json={"reason": reason} if reason else None, headers=s.as_("security"))
    assert r.status_code == 200, r.text
    return r.json()


def test_reinstate_previews_the_release_and_commits_only_at_its_revision(story):
    """The preview names pay-1042 (held, 34,500) as released and pay-1041's drafted recall as
    withdrawn, in words, and changes nothing; a commit without a revision is 422, at a stale
    one 409; at the preview's it releases, and the timeline says who and why."""
    _commit(story, COMPROMISE, "r-1")
    before, rev = story.statuses(), story.graph.revision()
    p = _preview(story, "r-1", reason="the portal report was a false alarm")
    assert p["committed"] is False and p["direction"] == "IN" and p["rev"] == rev
    assert [i["name"] for i in p["to_release"]] == ["pay-1042"]
    assert [(w["name"], w["state"]) for w in p["recalls_to_withdraw"]] == [
        ("pay-1041", "drafted")]
    assert any(w.startswith("pay-1042 (34,500.00") and "would be released" in w
               for w in p["warnings"]), p["warnings"]
    assert any(w.startswith("the recall of pay-1041 (6,000.00") and "would be withdrawn" in w
               for w in p["warnings"]), p["warnings"]
    assert story.statuses() == before and story.graph.revision() == rev  # nothing moved

    sec = story.as_("security")
    url = f"{story.base}/retractions/r-1/reinstate"
    assert story.client.post(url, headers=sec).status_code == 422  # no revision: no commit
    assert story.client.post(url, json={"rev": rev - 1}, headers=sec).status_code == 409
    assert story.statuses() == before
    done = story.client.post(url, json={"rev": rev, "reason": "the portal report was a false "
                                        "alarm"}, headers=sec)
    assert done.status_code == 200, done.text
    d = done.json()
    assert d["committed"] is True and [i["name"] for i in d["to_release"]] == ["pay-1042"]
    assert any("was released" in w for w in d["warnings"])
    assert story.statuses()[d["to_release"][0]["id"]] == "IN"

    steps = story.client.get(f"{story.base}/memories/pay-1042/history",
                             headers=story.as_("viewer")).json()["timeline"]
    released = steps[-1]
    assert released["step"] == "released"
    who = f"security@{story.tenant}.example"
    assert released["by"] == who
    for part in (f"because {who} reinstated r-1 (the retraction of portal:acme",
                 COMPROMISE["reason"], "saying: the portal report was a false alarm"):
        assert part in released["text"], released["text"]
    audit = story.client.get(f"{story.base}/audit", headers=story.as_("admin")).json()
    actions = [e["action"] for e in audit]
    assert actions[0] == "retraction.reinstate" and "retraction.reinstate.preview" in actions


@pytest.fixture
def day(falkordb, tenant_name):
    """The finance story (both payments executed), the portal compromised (r-fin)."""
    s = make_story(falkordb, tenant_name, text=finance_story_text())
    record_receipts(falkordb, tenant_name)
    _commit(s, FIN_COMPROMISE, "r-fin")
    yield s
    forget(falkordb, tenant_name)


def test_an_exported_recall_is_withdrawn_and_its_notice_approved_then_exported(day):
    """pay-1041's recall approved and exported as camt.056, pay-1042's approved only; the
    retraction reinstated: both are withdrawn (who, when, why); approving, rejecting and
    exporting them is 409 and writes nothing; pay-1041 has a drafted withdrawal notice naming
    the camt.056's identifiers, which finance approves and exports (text, CSV); pay-1042 has
    none."""
    fin = day.as_("finance")
    for name in ("pay-1041", "pay-1042"):
        assert day.client.post(f"{day.base}/recalls/{name}/approve",
                               headers=fin).status_code == 200
    sent = day.client.post(f"{day.base}/recalls/pay-1041/export", json={"format": "camt.056"},
                           headers=fin)
    assert sent.status_code == 200
    p = _preview(day, "r-fin")
    assert {w["name"]: w["state"] for w in p["recalls_to_withdraw"]} == {
        "pay-1041": "exported", "pay-1042": "approved"}
    assert any("withdrawal notice" in w for w in p["warnings"])
    day.client.post(f"{day.base}/retractions/r-fin/reinstate", json={"rev": p["rev"]},
                    headers=day.as_("security")).raise_for_status()

    rows = {r["name"]: r for r in day.client.get(f"{day.base}/recalls", headers=fin).json()}
    assert {n: r["state"] for n, r in rows.items()} == {"pay-1041": "withdrawn",
                                                          "pay-1042": "withdrawn"}
    w = rows["pay-1041"]["withdrawn"]
    assert w["by"] == f"security@{day.tenant}.example" and w["retraction"] == "r-fin"
    assert w["at"] and "reinstated r-fin" in w["why"]
    assert rows["pay-1041"]["draft"].startswith("RECALL REQUEST - WITHDRAWN at ")
    assert rows["pay-1042"]["notice"] is None

    rev = day.graph.revision()
    for name, path, body in (("pay-1041", "export", {"format": "camt.056"}),
                             ("pay-1041", "export", {"format": "csv"}),
                             ("pay-1042", "export", {"format": "camt.056"}),
                             ("pay-1041", "approve", None), ("pay-1042", "approve", None),
                             ("pay-1042", "reject", {"reason": "no"})):
        r = day.client.post(f"{day.base}/recalls/{name}/{path}", json=body, headers=fin)
        assert r.status_code == 409, (name, path, r.text)
        assert "withdrawn" in r.json()["detail"] and "nothing was changed" in r.json()["detail"]
    assert day.graph.revision() == rev
    assert "withdrawal notice" in day.client.post(
        f"{day.base}/recalls/pay-1041/export", json={"format": "camt.056"},
        headers=fin).json()["detail"]

    notice = rows["pay-1041"]["notice"]
    assert notice["state"] == "drafted" and len(notice["disregard"]) == 1
    ids = notice["disregard"][0]["ids"]
    assert ids["case"] in sent.text and ids["message"] in sent.text
    assert ids["cancellation"] in sent.text
    assert notice["text"].startswith("WITHDRAWAL OF RECALL REQUEST - DRAFT")
    assert f"message {ids['message']}" in notice["text"]
    # A draft is not exported; pay-1042 (never exported) has no notice to approve.
    assert day.client.post(f"{day.base}/recalls/pay-1041/notice/export", json={},
                           headers=fin).status_code == 409
    assert day.client.post(f"{day.base}/recalls/pay-1042/notice/approve",
                           headers=fin).status_code == 409
    assert day.client.post(f"{day.base}/recalls/pay-1041/notice/approve",
                           headers=day.as_("security")).status_code == 403

    ok = day.client.post(f"{day.base}/recalls/pay-1041/notice/approve", headers=fin)
    assert ok.status_code == 200, ok.text
    n = ok.json()["notice"]
    assert n["state"] == "approved" and n["approved"]["by"] == f"finance@{day.tenant}.example"
    assert day.client.post(f"{day.base}/recalls/pay-1041/notice/approve",
                           headers=fin).status_code == 409  # once
    letter = day.client.post(f"{day.base}/recalls/pay-1041/notice/export",
                             json={"format": "text"}, headers=fin)
    assert letter.status_code == 200 and letter.headers["content-type"].startswith("text/plain")
    assert "Please disregard our request to recall" in letter.text
    assert ids["message"] in letter.text and "Amount: 6,000.00 USD" in letter.text
    table = day.client.post(f"{day.base}/recalls/pay-1041/notice/export",
                            json={"format": "csv"}, headers=fin)
    [row] = list(csv.DictReader(io.StringIO(table.text)))
    assert (row["disregard_message_id"], row["disregard_case_id"], row["amount"]) == (
        ids["message"], ids["case"], "6000.00")
    after = day.client.get(f"{day.base}/recalls/pay-1041", headers=fin).json()
    assert after["notice"]["state"] == "exported"
    assert [e["format"] for e in after["notice"]["exports"]] == ["text", "csv"]
    audit = [e["action"] for e in day.client.get(f"{day.base}/audit", headers=day.as_(
        "admin")).json() if e["result"] == "ok"]
    assert audit.count("recall.notice.export") == 2 and audit.count("recall.notice.approve") == 1
