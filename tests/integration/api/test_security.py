"""Security of the API: tenants are sealed from each other and roles from each other's work, on
every endpoint the app has (read from its routes, so a new endpoint cannot be left out); and
script-like or Cypher-like input is stored and returned literally."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable

import pytest

from rescind.api import ROLES
from rescind.contract import layout
from rescind.transport import connection
from tests.support.api import Story, forget, hosted_story, make_story, tenant_of
from tests.support.api_examples import EXAMPLES, ROUTES, TENANT_ROUTES, Ex, route_id, route_key

_n = itertools.count()
NASTY = [
    '<img src=x onerror="window.__pwned=1">',
    "<script>window.__pwned=2</script>",
    "'}) MATCH (n) DETACH DELETE n //",
    '" RETURN 1 UNION MATCH (m:Mem) SET m.status = "OUT" //',
    "back\\slash \\\" quote\n{{tenant}} $rev ${x}",
]


def _value(v, s: Story):
    return v(s) if callable(v) else v


def request(s: Story, route, tenant: str, headers: dict, ex: Ex):
    path = {k: _value(v, s) for k, v in (ex.get("path") or {}).items()}
    url = route.path.format(tenant=tenant, **path)
    [method] = route.methods
    return s.client.request(method, url, headers=headers, params=ex.get("params"),
                            json=_value(ex.get("json"), s))


def snapshot(s: Story) -> tuple:
    """Everything a request could change in a tenant."""
    conn = connection.connect(s.url)
    stream = layout.tenant_stream(s.tenant)
    events = [i for i, f in conn.xrange(stream) if tenant_of(f) == s.tenant]
    return (s.graph.revision(), sorted(s.statuses().items()),
            s.graph.rows("MATCH (o:Outbox) RETURN count(o)"),
            sorted(conn.hkeys(layout.tenant_tokens_key(s.tenant))),
            conn.xlen(layout.audit_key(s.tenant)), events,
            conn.xlen(layout.status_stream(s.tenant)),
            conn.hexists(layout.TENANTS, f"{s.tenant}-x"))


@pytest.fixture(scope="module")
def tenant_a(falkordb):
    """A second tenant whose tokens knock on every door of the first."""
    with hosted_story(falkordb, f"a{os.getpid()}-{next(_n)}") as s:
        yield s


@pytest.fixture
def tenant_b(falkordb, tenant_name, tenant_a):
    s = make_story(falkordb, tenant_name, client=tenant_a.client)
    yield s
    forget(falkordb, tenant_name)
    forget(falkordb, f"{tenant_name}-x")  # made by the admin's POST /tenants


@pytest.mark.parametrize("route", TENANT_ROUTES, ids=route_id)
def test_a_token_of_tenant_a_can_neither_read_nor_change_tenant_b(route, tenant_a, tenant_b):
    """Every role of tenant A gets 403 on every endpoint of tenant B, and B is unchanged; the
    same request with B's own token of an allowed role succeeds (so the refusal is the
    tenant's doing, not a bad request)."""
    ex = EXAMPLES[route_key(route)]
    if ex.get("first"):
        ex["first"](tenant_b)
    before = snapshot(tenant_b)
    for role in ROLES:
        r = request(tenant_b, route, tenant_b.tenant, tenant_a.as_(role), ex)
        assert r.status_code == 403, (role, r.status_code, r.text)
        assert f"this token is for tenant {tenant_a.tenant!r}" in r.json()["detail"] or (
            "may not" in r.json()["detail"])
    assert snapshot(tenant_b) == before
    role = sorted(ex["roles"])[0]
    own = request(tenant_b, route, tenant_b.tenant, tenant_b.as_(role), ex)
    assert own.status_code < 400, (role, own.status_code, own.text)


@pytest.mark.parametrize("route", ROUTES, ids=route_id)
def test_each_role_is_refused_what_it_may_not_do(route, tenant_b):
    """For every endpoint, each role (and the admin) outside its permission gets 403 and
    changes nothing; each role inside it is served, with the answer its example expects."""
    ex = EXAMPLES[route_key(route)]
    if ex.get("first"):
        ex["first"](tenant_b)
    allowed = ex["roles"]
    before = snapshot(tenant_b)
    for role in [r for r in (*ROLES, "admin") if r not in allowed]:
        r = request(tenant_b, route, tenant_b.tenant, tenant_b.as_(role), ex)
        assert r.status_code == 403 and "may not" in r.json()["detail"], (role, r.text)
    after = snapshot(tenant_b)
    assert after[:4] == before[:4] and after[5:] == before[5:]  # the refusals are audited
    for role in sorted(allowed):
        r = request(tenant_b, route, tenant_b.tenant, tenant_b.as_(role), ex)
        assert r.status_code < 400, (role, r.status_code, r.text)
        assert ex.get("expect", lambda r: True)(r), (role, r.text)


def test_no_token_or_a_forged_one_is_401_everywhere(tenant_b):
    """Without a token, with a malformed header, or with a made-up token: 401 on every route."""
    bad: list[Callable[[], dict]] = [lambda: {}, lambda: {"Authorization": "Basic eA=="},
                                     lambda: {"Authorization": "Bearer rsc_" + "A" * 43},
                                     lambda: {"Authorization": "Bearer " + "x" * 5000}]
    for route in ROUTES:
        for headers in bad:
            r = request(tenant_b, route, tenant_b.tenant, headers(), EXAMPLES[route_key(route)])
            assert r.status_code == 401, (route_id(route), r.status_code)


@pytest.mark.parametrize("text", NASTY)
def test_script_and_cypher_like_input_is_stored_and_returned_literally(tenant_b, text):
    """A correction whose text and reason look like markup or Cypher is stored as written:
    read back byte for byte, found by searching for it, and the graph around it intact."""
    s, sec = tenant_b, tenant_b.as_("security")
    count = len(s.statuses())
    body = {"memory": "n-remit", "reason": text, "text": f"Remit: {text}", "reviewer": "rev:1"}
    p = s.client.post(f"{s.base}/corrections/preview", json=body, headers=sec).json()
    r = s.client.post(f"{s.base}/corrections", json={**body, "rev": p["rev"], "id": "c-1"},
                      headers=sec)
    assert r.status_code == 200, r.text
    found = s.client.get(f"{s.base}/memories", headers=s.as_("viewer"),
                         params={"q": text.split("\n")[0][:40]}).json()["items"]
    mine = s.client.get(f"{s.base}/memories/{found[0]['id']}", headers=s.as_("viewer")).json()
    assert mine["memory"]["text"] == f"Remit: {text}"
    assert s.client.get(f"{s.base}/retractions/c-1", headers=sec).json()["reason"] == text
    statuses = s.statuses()
    assert len(statuses) == count + 1
    assert list(statuses.values()).count("OUT") == sum(p["counts"].values()) == 2
