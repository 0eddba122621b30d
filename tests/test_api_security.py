"""Security of the API: tenants are sealed from each other and roles from each other's work, on
every endpoint the app has (read from its routes, so a new endpoint cannot be left out); and
script-like or Cypher-like input is stored and returned literally."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable

import pytest
import redis

from rescind.api import PERMISSIONS, ROLES, api_routes, permission_of
from rescind.contract import layout
from rescind.contract import streams as st
from tests.test_api_support import COMPROMISE, Story, forget, make_story

_n = itertools.count()
AT = "2026-11-05T00:00:00Z"
NASTY = [
    '<img src=x onerror="window.__pwned=1">',
    "<script>window.__pwned=2</script>",
    "'}) MATCH (n) DETACH DELETE n //",
    '" RETURN 1 UNION MATCH (m:Mem) SET m.status = "OUT" //',
    "back\\slash \\\" quote\n{{tenant}} $rev ${x}",
]


def _rev(s: Story) -> int:
    return s.graph.revision()


def _token_id(s: Story) -> str:
    return next(t["id"] for t in s.client.get(f"{s.base}/tokens", headers=s.as_("admin")).json()
                if t["role"] == "viewer")


def _commit(s: Story) -> None:
    """Precondition of some endpoints: the portal is compromised (retraction r-b)."""
    p = s.client.post(f"{s.base}/retractions/preview", json=COMPROMISE, headers=s.as_("security"))
    r = s.client.post(f"{s.base}/retractions", headers=s.as_("security"),
                      json={**COMPROMISE, "rev": p.json()["rev"], "id": "r-b"})
    assert r.status_code == 200, r.text


# Who may do what, as the issue defines the roles: agent (send events, ask the gate), security
# (preview / commit / reinstate, withdraw, correct), finance (recalls), viewer (read); the admin
# creates tenants and tokens. People (viewer, security, finance) read; security also reads the
# audit log.
READ, SEC, FIN, AGENT = {"viewer", "security", "finance"}, {"security"}, {"finance"}, {"agent"}
ADMIN, AUDIT, ANYONE = {"admin"}, {"security", "admin"}, {*ROLES, "admin"}

# A valid request for every endpoint: who may call it, path parameters, query, body (values
# may depend on the tenant's state), and what must be true first. Keyed by method and path
# after the tenant.
Ex = dict[str, object]
EXAMPLES: dict[tuple[str, str], Ex] = {
    ("GET", "/api/v1/me"): {"roles": ANYONE},
    ("GET", "/api/v1/tenants"): {"roles": ADMIN},
    ("POST", "/api/v1/tenants"): {"roles": ADMIN, "json": lambda s: {"name": f"{s.tenant}-x"}},
    ("GET", "/tokens"): {"roles": ADMIN},
    ("POST", "/tokens"): {"roles": ADMIN, "json": {"role": "viewer", "who": "mallory"}},
    ("DELETE", "/tokens/{token_id}"): {"roles": ADMIN, "path": {"token_id": _token_id}},
    ("GET", "/audit"): {"roles": AUDIT},
    ("GET", "/revision"): {"roles": READ},
    ("GET", "/overview"): {"roles": READ},
    ("GET", "/sources"): {"roles": READ},
    ("GET", "/memories"): {"roles": READ, "params": {"kind": "action"}},
    ("GET", "/memories/{ref}"): {"roles": READ, "path": {"ref": "pay-1041"}},
    ("GET", "/memories/{ref}/history"): {"roles": READ, "path": {"ref": "pay-1041"}},
    ("GET", "/memories/{ref}/as-of"): {"roles": READ, "path": {"ref": "pay-1041"},
                                       "params": {"rev": 4}},
    ("GET", "/memories/{ref}/fragility"): {"roles": READ, "path": {"ref": "pay-1042"}},
    ("GET", "/as-of"): {"roles": READ, "params": {"at": AT}},
    ("GET", "/payments"): {"roles": READ},
    ("GET", "/audit-order"): {"roles": READ},
    ("GET", "/retractions"): {"roles": READ},
    ("GET", "/retractions/{rid}"): {"roles": READ, "path": {"rid": "r-b"}, "first": _commit},
    ("GET", "/recalls"): {"roles": READ},
    ("GET", "/recalls/{ref}"): {"roles": READ, "path": {"ref": "pay-1041"}, "first": _commit},
    ("POST", "/retractions/preview"): {"roles": SEC, "json": COMPROMISE},
    ("POST", "/retractions"): {"roles": SEC, "json": lambda s: {**COMPROMISE, "rev": _rev(s)}},
    ("POST", "/retractions/{rid}/reinstate"): {"roles": SEC, "path": {"rid": "r-b"},
                                               "first": _commit},
    ("POST", "/withdrawals/preview"): {"roles": SEC, "json": {"memory": "n-bank",
                                                              "reason": "typo"}},
    ("POST", "/withdrawals"): {"roles": SEC, "json": lambda s: {
        "memory": "n-bank", "reason": "typo", "rev": _rev(s)}},
    ("POST", "/corrections/preview"): {"roles": SEC, "json": {"memory": "n-bank", "reason": "r",
                                                              "text": "t"}},
    ("POST", "/corrections"): {"roles": SEC, "json": lambda s: {
        "memory": "n-bank", "reason": "r", "text": "t", "rev": _rev(s)}},
    ("POST", "/recalls/{ref}/approve"): {"roles": FIN, "path": {"ref": "pay-1041"},
                                         "first": _commit},
    ("POST", "/events"): {"roles": AGENT, "json": lambda s: {"events": [{
        "type": "observation_recorded", "event_id": "ev-1", "tenant": s.tenant, "at": AT,
        "source": "portal:acme", "text": "injected"}]}},
    ("POST", "/gate"): {"roles": AGENT, "json": {"action": "pay-1042"}},
}
TENANT = "/api/v1/tenants/{tenant}"


def _key(route) -> tuple[str, str]:
    [method] = route.methods
    return method, route.path.removeprefix(TENANT)


ROUTES = sorted(api_routes(), key=lambda r: (r.path, sorted(r.methods)))
TENANT_ROUTES = [r for r in ROUTES if r.path.startswith(TENANT)]


def _id(route) -> str:
    method, path = _key(route)
    return f"{method} {path}"


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
    conn = redis.Redis.from_url(s.url)
    stream = layout.tenant_stream(s.tenant)
    events = [i for i, f in conn.xrange(stream) if st._tenant_of(f) == s.tenant]
    return (s.graph.revision(), sorted(s.statuses().items()),
            s.graph.rows("MATCH (o:Outbox) RETURN count(o)"),
            sorted(conn.hkeys(layout.tenant_tokens_key(s.tenant))),
            conn.xlen(layout.audit_key(s.tenant)), events,
            conn.hexists(layout.TENANTS, f"{s.tenant}-x"))


@pytest.fixture(scope="module")
def tenant_a(falkordb):
    """A second tenant whose tokens knock on every door of the first."""
    name = f"a{os.getpid()}-{next(_n)}"
    s = make_story(falkordb, name)
    yield s
    forget(falkordb, name)


@pytest.fixture
def tenant_b(falkordb, tenant_name, tenant_a):
    s = make_story(falkordb, tenant_name, client=tenant_a.client)
    yield s
    forget(falkordb, tenant_name)
    forget(falkordb, f"{tenant_name}-x")  # made by the admin's POST /tenants


def test_every_endpoint_has_an_example_and_a_permission():
    """Each route of the app names a permission, whose roles are those this file expects, and
    has an example request: a new endpoint fails here until the tests below cover it."""
    missing = [_id(r) for r in ROUTES if _key(r) not in EXAMPLES]
    unguarded = [_id(r) for r in ROUTES if permission_of(r) not in PERMISSIONS]
    assert missing == [] and unguarded == []
    wrong = [_id(r) for r in ROUTES
             if set(PERMISSIONS[permission_of(r)]) != EXAMPLES[_key(r)]["roles"]]
    assert wrong == []
    assert len(TENANT_ROUTES) == 29


@pytest.mark.parametrize("route", TENANT_ROUTES, ids=_id)
def test_a_token_of_tenant_a_can_neither_read_nor_change_tenant_b(route, tenant_a, tenant_b):
    """Every role of tenant A gets 403 on every endpoint of tenant B, and B is unchanged; the
    same request with B's own token of an allowed role succeeds (so the refusal is the
    tenant's doing, not a bad request)."""
    ex = EXAMPLES[_key(route)]
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


@pytest.mark.parametrize("route", ROUTES, ids=_id)
def test_each_role_is_refused_what_it_may_not_do(route, tenant_b):
    """For every endpoint, each role (and the admin) outside its permission gets 403 and
    changes nothing; each role inside it is served."""
    ex = EXAMPLES[_key(route)]
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


def test_no_token_or_a_forged_one_is_401_everywhere(tenant_b):
    """Without a token, with a malformed header, or with a made-up token: 401 on every route."""
    bad: list[Callable[[], dict]] = [lambda: {}, lambda: {"Authorization": "Basic eA=="},
                                     lambda: {"Authorization": "Bearer rsc_" + "A" * 43},
                                     lambda: {"Authorization": "Bearer " + "x" * 5000}]
    for route in ROUTES:
        for headers in bad:
            r = request(tenant_b, route, tenant_b.tenant, headers(), EXAMPLES[_key(route)])
            assert r.status_code == 401, (_id(route), r.status_code)


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
