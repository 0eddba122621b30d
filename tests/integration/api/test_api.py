"""The HTTP API on the vendor-portal story, against the real server: the whole security and
finance flow, stale previews, withdraw and correct, history and "as of", agents' events and the
gate, tokens, the audit log and input limits."""

from __future__ import annotations

import json
import re

from typer.testing import CliRunner

from rescind.cli.main import app as cli
from rescind.contract import layout
from rescind.transport import connection
from tests.support.api import ADMIN, COMPROMISE, forget, make_story

AT = "2026-11-05T00:00:00Z"



def test_compromise_recall_approve_reinstate_over_http(story):
    """Preview changes nothing and names the revision; commit at it takes exactly the seven
    OUT, tells agents on the status stream, drafts the executed payment for recall; finance
    approves once; reinstating puts every status back."""
    before = story.statuses()
    conn = connection.connect(story.url)
    feed = layout.status_stream(story.tenant)
    seen = conn.xlen(feed)  # 0 when the stream does not exist
    p = story.client.post(f"{story.base}/retractions/preview", json=COMPROMISE,
                          headers=story.as_("security")).json()
    assert p["committed"] is False and story.statuses() == before
    assert p["counts"] == {"observations": 1, "beliefs": 2, "plans": 2, "answers": 0,
                           "executed_actions": 1, "pending_actions": 1}
    assert {e["from"] for e in p["graph"]["edges"]} >= {"portal:acme"}
    r = story.client.post(f"{story.base}/retractions", json={**COMPROMISE, "rev": p["rev"],
                                                               "id": "r-acme"},
                          headers=story.as_("security"))
    assert r.status_code == 200 and r.json()["retraction"] == "r-acme"
    after = story.statuses()
    assert sorted(m for m, s in after.items() if s != before[m]) == sorted(
        m for m, s in after.items() if s == "OUT") and len([s for s in after.values()
                                                            if s == "OUT"]) == 7
    assert conn.xlen(feed) - seen == 7
    recalls = story.client.get(f"{story.base}/recalls", headers=story.as_("viewer")).json()
    assert [(x["name"], x["amount"], x["state"]) for x in recalls] == [("pay-1041", 6000, "drafted")]
    assert "Reason: Acme's portal was taken over (retraction r-acme)" in recalls[0]["draft"]
    held = story.client.get(f"{story.base}/payments", headers=story.as_("viewer")).json()
    # pay-1042 is a stored (scheduled) proposal whose release the gate refused (the story's
    # gate line): it stays scheduled, so it is held; only a refused call (never run) is not.
    assert [(x["name"], x["held"], x["refused"]) for x in held] == [("pay-1042", True, False)]
    ok = story.client.post(f"{story.base}/recalls/pay-1041/approve", headers=story.as_("finance"))
    again = story.client.post(f"{story.base}/recalls/pay-1041/approve",
                              headers=story.as_("finance"))
    assert ok.json()["state"] == "approved" and again.status_code == 409
    assert "approved already" in again.json()["detail"]
    outbox = story.graph.rows("MATCH (o:Outbox) RETURN o.by")
    assert outbox == [[f"finance@{story.tenant}.example"]]
    back = story.reinstate("r-acme").json()
    assert back["direction"] == "IN" and sum(back["counts"].values()) == 7
    assert story.statuses() == before


def test_a_stale_preview_is_refused_with_409_and_a_repeat_returns_the_first_result(story):
    """A commit at an old revision answers 409 and writes nothing; committing the same id twice
    returns the first result, marked as a repeat, and changes nothing."""
    sec = story.as_("security")
    p = story.client.post(f"{story.base}/retractions/preview", json=COMPROMISE, headers=sec).json()
    story.client.post(f"{story.base}/withdrawals", headers=sec, json={
        "memory": "a-remit", "reason": "told by mistake", "rev": p["rev"]})  # the graph moves
    before, rev = story.statuses(), story.graph.revision()
    stale = story.client.post(f"{story.base}/retractions", headers=sec,
                              json={**COMPROMISE, "rev": p["rev"], "id": "r-1"})
    assert stale.status_code == 409 and "stale preview" in stale.json()["detail"]
    assert story.statuses() == before and story.graph.revision() == rev
    first = story.client.post(f"{story.base}/retractions", headers=sec,
                              json={**COMPROMISE, "rev": rev, "id": "r-1"}).json()
    rev2 = story.graph.revision()
    repeat = story.client.post(f"{story.base}/retractions", headers=sec,
                               json={**COMPROMISE, "rev": 0, "id": "r-1"}).json()
    assert repeat["repeated"] is True and repeat["counts"] == first["counts"]
    assert story.graph.revision() == rev2
    # The same id for another window is not a repeat: 409, and nothing changes.
    other = story.client.post(f"{story.base}/retractions", headers=sec,
                              json={**COMPROMISE, "from": "2026-11-02T00:00Z", "rev": rev2,
                                    "id": "r-1"})
    assert other.status_code == 409 and "already used" in other.json()["detail"]
    assert story.graph.revision() == rev2


def test_withdraw_and_correct_preview_then_commit(story):
    """Withdrawing the bank note takes its dependants OUT (not the remit address); a correction
    brings in the reviewer's text as its own source and takes the old note OUT."""
    sec = story.as_("security")
    p = story.client.post(f"{story.base}/withdrawals/preview", headers=sec,
                          json={"memory": "n-bank", "reason": "typo"}).json()
    assert p["counts"]["beliefs"] == 2 and p["counts"]["executed_actions"] == 1
    c = story.client.post(f"{story.base}/withdrawals", headers=sec,
                          json={"memory": "n-bank", "reason": "typo", "rev": p["rev"],
                                "id": "wd-1"}).json()
    assert c["committed"] is True and c["counts"] == p["counts"]
    gone = story.client.get(f"{story.base}/memories/n-bank", headers=story.as_("viewer")).json()
    assert gone["memory"]["status"] == "OUT" and gone["memory"]["cause"] == "wd-1"
    story.reinstate("wd-1")
    text = "Acme is paid to IBAN GB12 REAL 0000 1111 2222 33"
    body = {"memory": "n-bank", "reason": "confirmed by phone", "text": text,
            "reviewer": "reviewer:ops"}
    p = story.client.post(f"{story.base}/corrections/preview", headers=sec, json=body).json()
    c = story.client.post(f"{story.base}/corrections", headers=sec,
                          json={**body, "rev": p["rev"], "id": "cor-1"}).json()
    assert c["committed"] is True
    new = story.client.get(f"{story.base}/memories", headers=story.as_("viewer"),
                           params={"q": "GB12 REAL"}).json()["items"]
    assert [(m["text"], m["status"]) for m in new] == [(text, "IN")]
    sources = story.client.get(f"{story.base}/sources", headers=story.as_("viewer")).json()
    assert "reviewer:ops" in {s["id"] for s in sources}


def test_memories_filter_by_kind_status_and_text(story):
    """The list filters by kind, status and a case-insensitive fragment, and pages."""
    sec, view = story.as_("security"), story.as_("viewer")
    p = story.client.post(f"{story.base}/retractions/preview", json=COMPROMISE, headers=sec).json()
    story.client.post(f"{story.base}/retractions", json={**COMPROMISE, "rev": p["rev"]}, headers=sec)

    def names(**params) -> list[str]:
        r = story.client.get(f"{story.base}/memories", headers=view, params=params)
        return sorted(m["name"] for m in r.json()["items"])

    assert names(kind="action") == ["pay-1041", "pay-1042"]
    assert names(kind="belief", status="OUT") == ["n-bank", "n-bank-confirmed"]
    assert names(status="IN", q="REMIT") == ["a-remit", "n-remit", "o-remit-portal"]
    first = story.client.get(f"{story.base}/memories", headers=view,
                             params={"limit": 5}).json()
    rest = story.client.get(f"{story.base}/memories", headers=view,
                            params={"limit": 5, "skip": first["next_skip"]}).json()
    assert len(first["items"]) == 5 and not {m["id"] for m in first["items"]} & {
        m["id"] for m in rest["items"]}


def test_history_and_as_of_say_what_was_believed_then_and_why(story):
    """After a commit, the payment's history has its birth and the retraction with hops; as of
    the revision before the commit it was IN, as of the commit OUT because of r-acme; as of a
    time before the payment existed it is absent; the as-of list agrees."""
    sec, view = story.as_("security"), story.as_("viewer")
    p = story.client.post(f"{story.base}/retractions/preview", json=COMPROMISE, headers=sec).json()
    story.client.post(f"{story.base}/retractions", json={**COMPROMISE, "rev": p["rev"],
                                                          "id": "r-acme"}, headers=sec)
    h = story.client.get(f"{story.base}/memories/pay-1041/history", headers=view).json()["history"]
    assert [(e["status"], e["op"], e["cause"]) for e in h] == [("IN", "write", None),
                                                               ("OUT", "retract", "r-acme")]
    assert h[1]["rev"] == p["rev"] + 1 and h[1]["hops"] == 4
    then = story.client.get(f"{story.base}/memories/pay-1041/as-of", headers=view,
                            params={"rev": p["rev"]}).json()
    now = story.client.get(f"{story.base}/memories/pay-1041/as-of", headers=view,
                           params={"rev": p["rev"] + 1}).json()
    assert then["why"]["status"] == "IN" and then["tree"]["status"] == "IN"
    assert now["why"] == {**now["why"], "status": "OUT", "op": "retract", "cause": "r-acme"}
    plan = now["tree"]["justifications"][0][0]
    assert plan["kind"] == "plan" and plan["status"] == "OUT"
    early = story.client.get(f"{story.base}/memories/pay-1041/as-of", headers=view,
                             params={"at": "2026-11-02T12:00Z"}).json()
    assert early["existed"] is False and early["why"] is None
    listed = story.client.get(f"{story.base}/as-of", headers=view,
                              params={"at": "2026-11-02T12:00Z", "kind": "belief"}).json()
    assert sorted(i["name"] for i in listed["items"]) == ["n-bank", "n-bank-confirmed", "n-remit"]
    out_now = story.client.get(f"{story.base}/as-of", headers=view,
                               params={"rev": p["rev"] + 1, "status": "OUT"}).json()
    assert len(out_now["items"]) == 7 and {i["why"]["cause"] for i in out_now["items"]} == {"r-acme"}
    both = story.client.get(f"{story.base}/as-of", headers=view, params={"rev": 1, "at": AT})
    assert both.status_code == 422 and "exactly one" in both.json()["detail"]


def test_agents_send_events_and_ask_the_gate(story):
    """An agent's valid events land on its tenant's partition stream in order, all or nothing;
    an event of another tenant is refused whole; the gate refuses the large one-domain payment
    and, for a proposal not yet stored, judges its premises."""
    agent = story.as_("agent")
    conn = connection.connect(story.url)
    name = layout.tenant_stream(story.tenant)
    mine = [{"type": "observation_recorded", "schema": 1, "event_id": f"e{i}",
             "tenant": story.tenant, "at": AT, "source": "portal:acme", "text": f"note {i}"}
            for i in range(3)]
    r = story.client.post(f"{story.base}/events", headers=agent, json={"events": mine})
    assert r.status_code == 200 and r.json()["stream"] == name and r.json()["accepted"] == 3
    stored = [layout.decode(f).event()["event_id"]
              for i, f in conn.xrange(name) if i.decode() in r.json()["ids"]]
    assert stored == ["e0", "e1", "e2"]
    length = conn.xlen(name)
    other = [*mine, {**mine[0], "event_id": "x", "tenant": "someone-else"}]
    r = story.client.post(f"{story.base}/events", headers=agent, json={"events": other})
    assert r.status_code == 422 and "events[3].tenant" in r.json()["detail"]
    assert conn.xlen(name) == length
    decision = story.client.post(f"{story.base}/gate", headers=agent,
                                 json={"action": "pay-1042"}).json()
    assert decision["allowed"] is False and decision["fragility"] == 1
    [bank] = story.client.get(f"{story.base}/memories", headers=story.as_("viewer"),
                              params={"q": "Confirmed"}).json()["items"]
    small = story.client.post(f"{story.base}/gate", headers=agent, json={
        "action": "pay-new", "premises": [bank["id"]], "amount": 900}).json()
    big = story.client.post(f"{story.base}/gate", headers=agent, json={
        "action": "pay-new", "premises": [bank["id"]], "amount": 90_000}).json()
    assert small["allowed"] is True and big["allowed"] is False


def test_tokens_are_stored_hashed_listed_without_secrets_and_revocable(story):
    """No token appears in Redis in clear; the admin's list shows ids and roles only; a revoked
    token answers 401 at once."""
    conn = connection.connect(story.url)
    secret = story.as_("viewer")["Authorization"].split()[1]
    dump = b" ".join(conn.dump(k) or b"" for k in conn.keys("rescind:*api*"))
    assert secret.encode() not in dump
    listed = story.client.get(f"{story.base}/tokens", headers=story.as_("admin")).json()
    assert sorted(t["role"] for t in listed) == ["agent", "finance", "security", "viewer"]
    assert all("token" not in t and secret not in json.dumps(t) for t in listed)
    viewer_id = next(t["id"] for t in listed if t["role"] == "viewer")
    assert story.client.get(f"{story.base}/sources", headers=story.as_("viewer")).status_code == 200
    r = story.client.delete(f"{story.base}/tokens/{viewer_id}", headers=story.as_("admin"))
    assert r.status_code == 200
    r = story.client.get(f"{story.base}/sources", headers=story.as_("viewer"))
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    assert story.client.get("/api/v1/me").status_code == 401
    assert not conn.exists(layout.token_key("0" * 64))


def test_every_mutation_is_audited_with_who_what_and_result(story):
    """A commit, a refused approve (wrong role), a failed one (nothing drafted) and a viewer
    refused the log are each in the tenant's audit log with who, when, what, on what and the
    result (a refusal by its route, with its count); viewers cannot read it, security can."""
    sec = story.as_("security")
    p = story.client.post(f"{story.base}/retractions/preview", json=COMPROMISE, headers=sec).json()
    story.client.post(f"{story.base}/retractions", json={**COMPROMISE, "rev": p["rev"],
                                                          "id": "r-a"}, headers=sec)
    story.client.post(f"{story.base}/recalls/pay-1041/approve", headers=sec)
    story.client.post(f"{story.base}/recalls/pay-1042/approve", headers=story.as_("finance"))
    assert story.client.get(f"{story.base}/audit", headers=story.as_("viewer")).status_code == 403
    log = story.client.get(f"{story.base}/audit", headers=sec).json()
    rows = [(e["who"], e["action"], e["target"], e["result"], e["status"], e.get("count"))
            for e in log[:5]]
    t = story.tenant
    assert rows == [
        (f"viewer@{t}.example", "GET /api/v1/tenants/{tenant}/audit",
         f"/api/v1/tenants/{t}/audit", "refused", "403", 1),
        (f"finance@{t}.example", "recall.approve", "pay-1042", "refused", "404", 1),
        (f"security@{t}.example", "POST /api/v1/tenants/{tenant}/recalls/{memory}/approve",
         f"/api/v1/tenants/{t}/recalls/pay-1041/approve", "refused", "403", 1),
        (f"security@{t}.example", "retraction.commit", "portal:acme", "ok", "200", None),
        (f"security@{t}.example", "retraction.preview", "portal:acme", "ok", "200", None),
    ]
    assert log[3]["detail"]["retraction"] == "r-a" and log[3]["at"].endswith("Z")
    assert {e["via"] for e in log[:5]} == {"api"} and log[3]["token"] == log[4]["token"] != ""


def test_input_limits_answer_413_and_422_with_a_clear_message(story):
    """A body over the limit is 413 before it is read; an over-long reason, too many events, a
    window without a zone, an unknown source: 422 naming the field; nothing changes."""
    sec, before = story.as_("security"), story.statuses()
    big = story.client.post(f"{story.base}/retractions/preview", headers={
        **sec, "Content-Type": "application/json"}, content=b"[" + b"1," * 600_000 + b"1]")
    assert big.status_code == 413 and "too large" in big.json()["detail"]
    long = story.client.post(f"{story.base}/retractions/preview", headers=sec,
                             json={**COMPROMISE, "reason": "x" * 2001})
    assert long.status_code == 422 and "body.reason" in long.json()["detail"]
    many = story.client.post(f"{story.base}/events", headers=story.as_("agent"), json={
        "events": [{"type": "action_executed", "event_id": f"e{i}", "tenant": story.tenant,
                    "at": AT, "action": "pay"} for i in range(501)]})
    assert many.status_code == 422 and "body.events" in many.json()["detail"]
    zone = story.client.post(f"{story.base}/retractions/preview", headers=sec,
                             json={**COMPROMISE, "from": "2026-11-01"})
    assert zone.status_code == 422 and "no zone" in zone.json()["detail"]
    unknown = story.client.post(f"{story.base}/retractions/preview", headers=sec,
                                json={**COMPROMISE, "source": "portal:nobody"})
    assert unknown.status_code == 422 and "unknown source" in unknown.json()["detail"]
    missing = story.client.get(f"{story.base}/memories/nothing-like-this",
                               headers=story.as_("viewer"))
    assert missing.status_code == 404 and "no memory" in missing.json()["detail"]
    assert story.statuses() == before


def test_the_openapi_document_names_every_endpoints_roles_and_the_console_is_served(story):
    """/api/openapi.json lists each endpoint with the roles that may call it; the console's
    page is served with a strict Content-Security-Policy; / leads to it."""
    doc = story.client.get("/api/openapi.json").json()
    ops = [o for p in doc["paths"].values() for o in p.values()]
    guarded = [o for o in ops if "x-rescind-permission" in o]
    assert len(guarded) == len(ops) - 1  # all but the health check
    commit = doc["paths"]["/api/v1/tenants/{tenant}/retractions"]["post"]
    assert commit["x-rescind-roles"] == ["security"]
    page = story.client.get("/console/")
    assert page.status_code == 200 and "script-src 'self'" in page.headers[
        "content-security-policy"]
    assert story.client.get("/", follow_redirects=False).headers["location"] == "/console/"
    assert ADMIN not in json.dumps(doc)


def test_rescind_api_token_create_makes_a_working_token(story):
    """`rescind api token create` prints a token once that the API accepts with its role, and
    logs the creation in the tenant's audit log."""
    res = CliRunner().invoke(cli, ["api", "token", "create", "--role", "finance", "--who",
                                   "fin@cli.example", "--tenant", story.tenant, "--url",
                                   story.url, "--json"])
    assert res.exit_code == 0, res.output
    made = json.loads(res.stdout)
    me = story.client.get("/api/v1/me", headers={"Authorization": f"Bearer {made['token']}"})
    assert me.json() == {"tenant": story.tenant, "role": "finance", "who": "fin@cli.example",
                         "token": made["id"], "trace_url": None,  # no trace UI configured
                         "currency": "USD",  # and the gate's rule, for the console's words
                         "gate": {"currency": "USD", "min_domains": 2, "threshold": 10000.0}}
    log = story.client.get(f"{story.base}/audit", headers=story.as_("security")).json()
    assert (log[0]["action"], log[0]["via"], log[0]["target"]) == ("token.create", "cli",
                                                                  "finance:fin@cli.example")
    bad = CliRunner().invoke(cli, ["api", "token", "create", "--role", "king", "--who", "x",
                                   "--tenant", story.tenant, "--url", story.url])
    assert bad.exit_code == 2 and "unknown role 'king'" in bad.stderr


def test_agents_events_go_to_the_partition_the_settings_name(falkordb, tenant_name):
    """With RESCIND_PARTITIONS at 7 (Settings.partitions), POST /events appends to the stream
    a publisher with 7 partitions uses for the tenant, not to the default layout's."""
    from fastapi.testclient import TestClient

    from rescind.api import create_app
    from rescind.runtime.settings import Settings

    tenant = next(t for t in (f"{tenant_name}-{i}" for i in range(100))
                  if layout.partition_of(t, 7) != layout.partition_of(t, layout.PARTITIONS))
    client = TestClient(create_app(Settings(url=falkordb, admin_token=ADMIN, partitions=7)))
    s = make_story(falkordb, tenant, client)
    conn = connection.connect(falkordb)
    name = layout.tenant_stream(tenant, 7)
    r = None
    try:
        r = s.client.post(f"{s.base}/events", headers=s.as_("agent"), json={"events": [
            {"type": "observation_recorded", "schema": 1, "event_id": "p7", "tenant": tenant,
             "at": AT, "source": "portal:acme", "text": "note"}]})
        assert r.status_code == 200 and r.json()["stream"] == name
        [entry] = [f for i, f in conn.xrange(name) if i.decode() in r.json()["ids"]]
        assert layout.decode(entry).event()["event_id"] == "p7"
    finally:
        forget(falkordb, tenant)  # its events too, from the default layout's stream only
        if r is not None and r.status_code == 200:
            conn.xdel(name, *r.json()["ids"])


def test_the_api_reference_is_served_from_local_files(story):
    """/docs renders Swagger UI from this server alone (FastAPI's default page loads it from a
    CDN): the page, its stylesheet and scripts all come from here, under the console's CSP, and
    point at the OpenAPI document the API publishes."""
    page = story.client.get("/docs")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "script-src 'self'" in page.headers["content-security-policy"]
    refs = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert {"assets/swagger-ui-bundle.js", "assets/swagger-ui.css", "reference.js"} <= set(refs)
    for ref in refs:
        assert "//" not in ref  # nothing from another host
        asset = story.client.get(f"/docs/{ref}")
        assert asset.status_code == 200 and len(asset.content) > 100, ref
    init = story.client.get("/docs/reference.js").text
    assert '"/api/openapi.json"' in init and "SwaggerUIBundle" in init
    assert "SwaggerUIBundle" in story.client.get("/docs/assets/swagger-ui-bundle.js").text
    assert story.client.get("/api/openapi.json").json()["info"]["title"] == "Rescind"
    console = story.client.get("/console/").text
    assert not re.findall(r'(?:src|href)="(?:https?:)?//', console)  # the console: local too
