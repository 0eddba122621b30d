"""What the console reads besides memories: sources with when they were read and whether a
retraction of them is in force, and a payment's timeline (proposed, gate, executed, held or
recall drafted, released or recall withdrawn, recall approved)."""

from __future__ import annotations

from tests.support.api import COMPROMISE


def _commit(story, rid: str = "r-1") -> dict:
    sec = story.as_("security")
    p = story.client.post(f"{story.base}/retractions/preview", json=COMPROMISE, headers=sec).json()
    r = story.client.post(f"{story.base}/retractions", headers=sec,
                          json={**COMPROMISE, "rev": p["rev"], "id": rid})
    assert r.status_code == 200, r.text
    return r.json()


def test_sources_say_when_they_were_read_and_whether_they_are_retracted(story):
    """First and last observation times and the number of memories each source said; the
    retracted flag follows the retraction's commit and reinstatement."""
    def sources() -> dict[str, dict]:
        r = story.client.get(f"{story.base}/sources", headers=story.as_("viewer"))
        return {s["id"]: s for s in r.json()}

    before = sources()
    portal, inbox = before["portal:acme"], before["inbox:ap"]
    assert (portal["domain"], portal["kind"], portal["name"]) == (
        "acme-portal", "vendor_portal", "Acme supplier portal")
    assert (portal["first_read"], portal["last_read"], portal["observations"]) == (
        "2026-11-02T09:14:00Z", "2026-11-02T09:14:00Z", 2)
    assert (inbox["first_read"], inbox["last_read"], inbox["observations"]) == (
        "2026-11-02T08:00:00Z", "2026-11-03T08:00:00Z", 2)
    assert not any(s["retracted"] or s["retractions"] for s in before.values())

    _commit(story)
    portal = sources()["portal:acme"]
    assert portal["retracted"] is True
    assert portal["retractions"] == [{"id": "r-1", "from": "2026-11-01T00:00:00Z",
                                      "to": "2026-11-03T00:00:00Z",
                                      "reason": COMPROMISE["reason"]}]
    assert sources()["contract:acme"]["retracted"] is False
    story.reinstate("r-1")
    assert sources()["portal:acme"]["retracted"] is False


def _timeline(story, name: str) -> list[tuple]:
    r = story.client.get(f"{story.base}/memories/{name}/history", headers=story.as_("viewer"))
    assert r.status_code == 200, r.text
    return [(s["step"], s["text"]) for s in r.json()["timeline"]]


def test_a_payments_timeline_from_proposal_to_approved_recall(story):
    """The executed payment: proposed, executed, then a recall drafted when its support went
    OUT, approved by finance. The pending one: proposed, refused by the gate, held, released
    when the retraction is undone. Steps are in time order and name their cause."""
    agent = "proposed by payments-agent"
    assert _timeline(story, "pay-1041") == [("proposed", agent), ("executed", "executed")]
    pending = _timeline(story, "pay-1042")
    assert pending[0] == ("proposed", agent)
    assert pending[1][0] == "gate" and pending[1][1].startswith("blocked:")
    assert len(pending) == 2

    _commit(story)
    r = story.client.post(f"{story.base}/recalls/pay-1041/approve", headers=story.as_("finance"))
    assert r.status_code == 200, r.text
    paid = story.client.get(f"{story.base}/memories/pay-1041/history",
                            headers=story.as_("viewer")).json()["timeline"]
    assert [s["step"] for s in paid] == ["proposed", "executed", "recall drafted",
                                         "recall approved"]
    drafted, approved = paid[2], paid[3]
    assert (drafted["retraction"], drafted["source"], drafted["reason"]) == (
        "r-1", "portal:acme", COMPROMISE["reason"])
    assert approved["by"] == "finance@" + story.tenant + ".example"
    assert approved["text"] == f"recall approved by {approved['by']}"
    assert [s["at"] for s in paid] == sorted(s["at"] for s in paid)
    assert _timeline(story, "pay-1042")[2] == ("held", "went OUT before it was paid: held")

    story.reinstate("r-1")
    step, text = _timeline(story, "pay-1042")[3]
    assert step == "released" and text.startswith("released (back IN, no longer held), because "
                                                  f"security@{story.tenant}.example reinstated r-1")
    step, text = _timeline(story, "pay-1041")[-1]
    assert step == "recall withdrawn" and text.startswith(
        "back IN after it was paid: the recall is withdrawn, because ")
    # Not an action: no timeline.
    note = story.client.get(f"{story.base}/memories/n-bank/history", headers=story.as_("viewer"))
    assert "timeline" not in note.json()


def test_memories_and_as_of_carry_what_the_console_labels_them_with(story):
    """The list gives an action's currency (None when the call named none: the console then
    shows the gate's, which /me gives); "as of" gives the agent, and for an action its payee,
    account and currency, as the memory list does."""
    view = story.as_("viewer")
    items = story.client.get(f"{story.base}/memories", headers=view,
                             params={"kind": "action"}).json()["items"]
    assert {m["name"]: m["currency"] for m in items} == {"pay-1041": None, "pay-1042": None}
    me = story.client.get("/api/v1/me", headers=view).json()
    assert me["currency"] == "USD"
    then = story.client.get(f"{story.base}/as-of", headers=view,
                            params={"at": "2026-11-30T00:00:00Z"}).json()["items"]
    by_name = {m["name"]: m for m in then}
    paid = by_name["pay-1041"]
    assert (paid["agent"], paid["payee"], paid["account"], paid["currency"], paid["amount"]) == (
        "payments-agent", "Acme Ltd", None, None, 6000)
    assert by_name["n-bank"]["agent"] == "ap-agent" and "payee" not in by_name["n-bank"]
