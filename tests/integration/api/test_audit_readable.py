"""The audit log as a person reads it, through the API against the real server: ``detail`` a
JSON object (never JSON inside a string), a sentence with who, what, why, counts and amounts,
times to the second, and pages that follow a cursor through the live log and its archive."""

from __future__ import annotations

import json
import re

import pytest
from fastapi.testclient import TestClient

from rescind.api import create_app
from rescind.contract import layout
from rescind.operator.audit import Actor, AuditLog
from rescind.runtime.settings import Settings
from rescind.transport import connection
from tests.support.api import ADMIN, COMPROMISE, forget, make_story

SECOND = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


@pytest.fixture
def story(falkordb, tenant_name):
    client = TestClient(create_app(Settings(url=falkordb, admin_token=ADMIN, audit_max_live=4)))
    s = make_story(falkordb, tenant_name, client)
    yield s
    forget(falkordb, tenant_name)


def _commit(story) -> None:
    sec = story.as_("security")
    p = story.client.post(f"{story.base}/retractions/preview", json=COMPROMISE, headers=sec)
    r = story.client.post(f"{story.base}/retractions", headers=sec,
                          json={**COMPROMISE, "rev": p.json()["rev"], "id": "r-read"})
    assert r.status_code == 200, r.text


def test_a_commit_reads_as_who_what_why_with_counts_and_amounts(story):
    """The commit's entry: detail an object with the reason, the counts and the held payment's
    amount; a sentence naming the person, the source, the counts, the amount with its currency
    and why; its time to the second."""
    _commit(story)
    log = story.client.get(f"{story.base}/audit", headers=story.as_("security")).json()
    [commit] = [e for e in log if e["action"] == "retraction.commit"]
    d = commit["detail"]
    assert isinstance(d, dict) and d["retraction"] == "r-read" and d["committed"] is True
    assert d["reason"] == COMPROMISE["reason"]
    assert d["held"] == [{"id": "pay-1042", "amount": 34500, "payee": "Acme Ltd"}]
    assert d["recalled"][0]["amount"] == 6000 and d["counts"]["pending_actions"] == 1
    s = commit["summary"]
    assert s.startswith(f"security@{story.tenant}.example (security, via api) declared "
                        "portal:acme compromised")
    for part in ("1 pending payment", "1 payment held: pay-1042 34,500.00 USD",
                 "1 payment to recall: pay-1041 6,000.00 USD",
                 f"why: {COMPROMISE['reason']}", "as r-read"):
        assert part in s, (part, s)
    assert SECOND.match(commit["at"]), commit["at"]
    [preview] = [e for e in log if e["action"] == "retraction.preview"]
    assert preview["summary"].startswith(f"security@{story.tenant}.example (security, via api) "
                                         "previewed declaring portal:acme compromised")
    assert preview["detail"]["committed"] is False


def test_a_refusal_reads_as_refused_with_its_reason_and_count(story):
    """A viewer refused twice: one entry, its detail an object holding the message, its
    sentence saying who was refused what, how many times and why."""
    viewer = story.as_("viewer")
    for _ in range(2):
        r = story.client.post(f"{story.base}/retractions/preview", json=COMPROMISE,
                              headers=viewer)
        assert r.status_code == 403
    [e] = [e for e in story.client.get(f"{story.base}/audit", headers=story.as_("security"))
           .json() if e["result"] == "refused"]
    assert e["count"] == 2 and set(e["detail"]) == {"message"}
    assert e["summary"].startswith(f"viewer@{story.tenant}.example (viewer, via api) was "
                                   "refused (2 times): POST /api/v1/tenants/{tenant}/retractions/"
                                   "preview on ")
    assert f"why: {e['detail']['message']}" in e["summary"]
    assert SECOND.match(e["last"])


def test_pages_follow_the_cursor_through_the_live_log_and_the_archive(story):
    """With 4 entries kept live, pages of 3 from the newest, each from the previous page's
    X-Next-Before, give every entry once, in order, live and archived, as one big page does;
    X-Total-Count counts them all; the last page names no next one, even when it is full."""
    _commit(story)
    sec = story.as_("security")
    whole = story.client.get(f"{story.base}/audit", headers=sec, params={"limit": 1000})
    everything = [e["id"] for e in whole.json()]
    assert len(everything) >= 7  # the tenant, 4 tokens, the preview and the commit
    assert connection.connect(story.url).xlen(layout.audit_key(story.tenant)) < len(everything)
    assert int(whole.headers["X-Total-Count"]) == len(everything)
    paged, params = [], {"limit": 3}
    for _ in range(len(everything)):  # a page at least each time, or the cursor is ignored
        r = story.client.get(f"{story.base}/audit", headers=sec, params=params)
        assert r.status_code == 200 and int(r.headers["X-Total-Count"]) == len(everything)
        paged += [e["id"] for e in r.json()]
        if "X-Next-Before" not in r.headers:
            break
        assert r.headers["X-Next-Before"] == paged[-1]
        params = {"limit": 3, "before": r.headers["X-Next-Before"]}
    assert paged == everything
    exact = story.client.get(f"{story.base}/audit", headers=sec,
                             params={"limit": len(everything)})
    assert len(exact.json()) == len(everything) and "X-Next-Before" not in exact.headers
    bad = story.client.get(f"{story.base}/audit", headers=sec, params={"before": "yesterday"})
    assert bad.status_code == 422


def test_the_servers_log_pages_too(story):
    """The server's own log (the admin's) answers with the total and takes the cursor."""
    admin = story.as_("admin")
    for _ in range(2):
        assert story.client.get("/api/v1/me").status_code == 401
    r = story.client.get("/api/v1/audit", headers=admin, params={"limit": 1})
    assert r.status_code == 200 and int(r.headers["X-Total-Count"]) >= 1
    [first] = r.json()
    assert isinstance(first["detail"], dict) and first["summary"].endswith(".")


def test_a_long_detail_stays_one_object_and_old_entries_read_as_objects(falkordb, tenant_name):
    """A detail far past the log's bound is kept as one JSON object, shortened by its parts
    (a long list says how many it left out); an entry written as text before, or as JSON inside
    a string, reads as an object all the same."""
    conn = connection.connect(falkordb)  # a cluster's client too (make test-cluster)
    log = AuditLog(conn)
    try:
        me = Actor("sam", "security", "", "cli")
        log.record(tenant_name, me, "retraction.commit", "portal:x",
                   detail={"reason": "r" * 5000, "held": [{"id": f"pay-{i}", "amount": i}
                                                          for i in range(500)]})
        raw = conn.xrevrange(layout.audit_key(tenant_name), count=1)[0][1][b"detail"].decode()
        assert len(raw) <= 2000 and isinstance(json.loads(raw), dict)
        [e] = log.entries(tenant_name, 1)
        assert e["detail"]["reason"].startswith("rrr") and e["detail"]["reason"].endswith("…")
        assert e["detail"]["held"][-1].startswith("… ") and e["detail"]["held"][-1].endswith(
            " more")
        assert "payments held: pay-0 0.00 USD" in e["summary"]
        for old in ('{"retraction": "r-1", "counts": {"beliefs": 2}}', "no such recall"):
            conn.xadd(layout.audit_key(tenant_name), {
                "who": "sam", "role": "operator", "token": "", "via": "cli",
                "action": "recall.approve", "target": "pay-1", "result": "ok", "status": "200",
                "detail": old})
            [e] = log.entries(tenant_name, 1)
            assert e["detail"] == (json.loads(old) if old.startswith("{")
                                   else {"message": old})
    finally:
        for key in conn.scan_iter(match=f"{layout.audit_key(tenant_name)}*"):
            conn.delete(key)
