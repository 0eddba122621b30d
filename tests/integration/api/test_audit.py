"""The audit of the HTTP API and the gate, against the real server: decisions, the admin's
included, and every refusal (no token, another role, the admin's, bad input), counted per
principal, kind and minute, so that a flood of refusals leaves the decisions in place."""

from __future__ import annotations

import itertools
import os

import pytest
from fastapi.testclient import TestClient

from rescind.api import create_app
from rescind.contract import layout
from rescind.contract.errors import GateRefused
from rescind.middleware.gate import GateClient
from rescind.runtime.settings import Settings
from rescind.transport import connection
from tests.support.api import ADMIN, COMPROMISE, forget, make_story

_hosts = itertools.count(1)


def _client(url: str, **settings) -> tuple[TestClient, str]:
    """A client of the API from an address of its own (refusals are counted per principal, and
    an anonymous caller is told apart by its address)."""
    host = f"10.{os.getpid() % 250}.{next(_hosts) % 250}.7"
    app = create_app(Settings(url=url, admin_token=ADMIN, **settings))
    return TestClient(app, client=(host, 50000)), host


@pytest.fixture
def story(falkordb, tenant_name):
    client, host = _client(falkordb, audit_max_live=30)
    s = make_story(falkordb, tenant_name, client)
    s.host = host
    yield s
    forget(falkordb, tenant_name)


def _counted(entries: list[dict], **match) -> list[dict]:
    return [e for e in entries if e["result"] == "refused"
            and all(e[k] == v for k, v in match.items())]


def test_a_refusal_flood_leaves_the_decisions_in_place_and_a_few_counted_entries(story):
    """600 refused requests (no token, a viewer deciding, the admin deciding) around a
    commit, with the live log kept to 30 entries: the admin's set-up, the preview and the
    commit are all still in the live log; the refusals are one entry per principal and kind
    (two when a minute turns) whose counts add up, the anonymous ones in the server's log."""
    c, base, t = story.client, story.base, story.tenant
    sec, viewer, admin = story.as_("security"), story.as_("viewer"), story.as_("admin")
    p = c.post(f"{base}/retractions/preview", json=COMPROMISE, headers=sec).json()
    flood = 200  # each kind alone is more than the live log holds
    for i in range(flood):
        assert c.post(f"{base}/retractions", json={**COMPROMISE, "rev": 0}).status_code == 401
        assert c.post(f"{base}/retractions", json={**COMPROMISE, "rev": 0},
                      headers=viewer).status_code == 403
        assert c.post(f"{base}/withdrawals/preview", json={"memory": "n-bank", "reason": "x"},
                      headers=admin).status_code == 403
        if i == flood // 2:
            r = c.post(f"{base}/retractions", headers=sec,
                       json={**COMPROMISE, "rev": p["rev"], "id": "r-flood"})
            assert r.status_code == 200, r.text
    log = c.get(f"{base}/audit", headers=sec, params={"limit": 1000}).json()
    decided = [(e["who"], e["action"], e["target"]) for e in log if e["result"] == "ok"]
    assert decided == [
        (f"security@{t}.example", "retraction.commit", "portal:acme"),
        (f"security@{t}.example", "retraction.preview", "portal:acme"),
        *(("admin", "token.create", f"{role}:{role}@{t}.example")
           for role in reversed(("agent", "security", "finance", "viewer"))),
        ("admin", "tenant.create", t)]
    assert log[[e["action"] for e in log].index("retraction.commit")]["detail"][
        "retraction"] == "r-flood"
    by_viewer = _counted(log, who=f"viewer@{t}.example", status="403")
    by_admin = _counted(log, who="admin", role="admin", status="403")
    assert 1 <= len(by_viewer) <= 2 and sum(e["count"] for e in by_viewer) == flood
    assert 1 <= len(by_admin) <= 2 and sum(e["count"] for e in by_admin) == flood
    assert {e["action"] for e in by_viewer} == {"POST /api/v1/tenants/{tenant}/retractions"}
    assert {e["action"] for e in by_admin} == {
        "POST /api/v1/tenants/{tenant}/withdrawals/preview"}
    assert "admin token may not" in by_admin[0]["detail"]["message"]
    assert len(log) <= 30 + 1  # nothing was rotated out: the flood added a handful
    server = c.get("/api/v1/audit", headers=admin, params={"limit": 1000}).json()
    anonymous = _counted(server, who=f"anonymous ({story.host})", status="401")
    assert 1 <= len(anonymous) <= 2 and sum(e["count"] for e in anonymous) == flood
    assert anonymous[-1]["target"] == f"{base}/retractions" and anonymous[0]["via"] == "api"
    assert c.get("/api/v1/audit", headers=sec).status_code == 403


def test_input_refused_after_sign_in_is_audited_and_reads_are_not(story):
    """A decision refused for its input (422: a reason too long) is a counted refusal of its
    caller; a read with a bad query is answered 422 and not logged."""
    c, base, sec = story.client, story.base, story.as_("security")
    for _ in range(3):
        r = c.post(f"{base}/retractions/preview", headers=sec, json={**COMPROMISE,
                                                                      "reason": "x" * 2001})
        assert r.status_code == 422
    assert c.get(f"{base}/memories", params={"limit": 0}, headers=sec).status_code == 422
    [newest, *_] = c.get(f"{base}/audit", headers=sec).json()
    assert (newest["action"], newest["status"], newest["count"], newest["who"]) == (
        "POST /api/v1/tenants/{tenant}/retractions/preview", "422", 3,
        f"security@{story.tenant}.example")
    assert "body.reason" in newest["detail"]["message"]


def test_every_gate_decision_is_audited_by_the_route_and_by_the_worker(story, rescind_workers):
    """POST /gate (an agent's token) and a wrapped agent's question on the gate stream (the
    worker) each leave one entry per decision, allowed or blocked, with the reason; the
    worker's entry names the agents and the trace."""
    c, base, agent = story.client, story.base, story.as_("agent")
    r = c.post(f"{base}/gate", json={"action": "pay-1042"}, headers=agent)
    assert r.status_code == 200 and r.json()["allowed"] is False
    r = c.post(f"{base}/gate", json={"action": "pay-1041"}, headers=agent)
    assert r.json()["allowed"] is True
    assert c.post(f"{base}/gate", json={"action": "nothing"}, headers=agent).status_code == 404
    trace = "00-" + "ab" * 16 + "-" + "cd" * 8 + "-01"
    with pytest.raises(GateRefused):
        GateClient(story.url, story.tenant).ask("pay-1042", [], None, None, trace, proposed=True)
    log = c.get(f"{base}/audit", headers=story.as_("security")).json()
    rows = [(e["action"], e["target"], e["result"], e["via"], e["who"]) for e in log[:4]]
    t = story.tenant
    assert rows == [("gate", "pay-1042", "blocked", "stream", "agents"),
                    ("gate", "nothing", "refused", "api", f"agent@{t}.example"),
                    ("gate", "pay-1041", "allowed", "api", f"agent@{t}.example"),
                    ("gate", "pay-1042", "blocked", "api", f"agent@{t}.example")]
    worker = log[0]["detail"]
    assert worker["trace"] == trace and worker["amount"] == 34500 and "blocked" in worker["reason"]
    assert log[3]["detail"]["fragility"] == 1


def test_the_admin_decisions_and_refusals_land_in_the_tenant_they_concern(story):
    """The admin's token create and revoke are decisions of the tenant (who: the token's name);
    a tenant's token refused an admin route is counted in its own tenant's log; the server's
    log is the admin's to read."""
    c, base, admin = story.client, story.base, story.as_("admin")
    made = c.post(f"{base}/tokens", json={"role": "viewer", "who": "vic"}, headers=admin).json()
    assert c.delete(f"{base}/tokens/{made['id']}", headers=admin).status_code == 200
    assert c.post("/api/v1/tenants", json={"name": "x"}, headers=story.as_("finance")).status_code \
        == 403
    log = c.get(f"{base}/audit", headers=admin).json()
    rows = [(e["who"], e["role"], e["action"], e["target"], e["result"]) for e in log[:3]]
    t = story.tenant
    assert rows == [(f"finance@{t}.example", "finance", "POST /api/v1/tenants", "/api/v1/tenants",
                     "refused"),
                    ("admin", "admin", "token.revoke", made["id"], "ok"),
                    ("admin", "admin", "token.create", "viewer:vic", "ok")]
    assert log[1]["token"] == "bootstrap"
    conn = connection.connect(story.url)
    assert conn.exists(layout.audit_key(None))
