"""A valid request for every endpoint of the API, and which roles may send it (the security
tests send each one with every role and every tenant)."""

from __future__ import annotations

from rescind.api import ROLES, api_routes
from tests.support.api import COMPROMISE, Story

AT = "2026-11-05T00:00:00Z"


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


def _approved(s: Story) -> None:
    """Precondition of the export: pay-1041's recall is drafted (r-b) and approved."""
    _commit(s)
    r = s.client.post(f"{s.base}/recalls/pay-1041/approve", headers=s.as_("finance"))
    assert r.status_code == 200, r.text


def _withdrawn(s: Story) -> None:
    """Precondition of a withdrawal notice: pay-1041's recall approved, exported for the bank,
    then r-b reinstated (the recall is withdrawn, its notice drafted)."""
    _approved(s)
    r = s.client.post(f"{s.base}/recalls/pay-1041/export", json={"format": "csv"},
                      headers=s.as_("finance"))
    assert r.status_code == 200, r.text
    assert s.reinstate("r-b").status_code == 200


def _notice_approved(s: Story) -> None:
    _withdrawn(s)
    r = s.client.post(f"{s.base}/recalls/pay-1041/notice/approve", headers=s.as_("finance"))
    assert r.status_code == 200, r.text


# Who may do what, as the issue defines the roles: agent (send events, ask the gate), security
# (preview / commit / reinstate, withdraw, correct), finance (recalls), viewer (read); the admin
# creates tenants and tokens. People (viewer, security, finance) read; security also reads the
# audit log.
READ, SEC, FIN, AGENT = {"viewer", "security", "finance"}, {"security"}, {"finance"}, {"agent"}
ADMIN, AUDIT, ANYONE = {"admin"}, {"security", "admin"}, {*ROLES, "admin"}

# A valid request for every endpoint: who may call it, path parameters, query, body (values
# may depend on the tenant's state), what must be true first, and what its answer says
# (``expect``, given the response). Keyed by method and path after the tenant.
Ex = dict[str, object]
EXAMPLES: dict[tuple[str, str], Ex] = {
    ("GET", "/api/v1/me"): {"roles": ANYONE},
    ("GET", "/api/v1/tenants"): {"roles": ADMIN},
    ("GET", "/api/v1/audit"): {"roles": ADMIN},
    ("POST", "/api/v1/tenants"): {"roles": ADMIN, "json": lambda s: {"name": f"{s.tenant}-x"}},
    ("GET", "/settings"): {"roles": ADMIN},
    ("PATCH", "/settings"): {"roles": ADMIN, "json": {"organisation_name": "Harbor & Finch Ltd",
                                                      "bank_bic": "HBUKGB4B"}},
    ("GET", "/tokens"): {"roles": ADMIN},
    ("POST", "/tokens"): {"roles": ADMIN, "json": {"role": "viewer", "who": "mallory"}},
    ("DELETE", "/tokens/{token_id}"): {"roles": ADMIN, "path": {"token_id": _token_id}},
    ("GET", "/audit"): {"roles": AUDIT},
    ("GET", "/revision"): {"roles": READ, "expect": lambda r: r.json() == {"revision": 4}},
    ("GET", "/overview"): {"roles": READ},
    ("GET", "/sources"): {"roles": READ},
    ("GET", "/memories"): {"roles": READ, "params": {"kind": "action"}},
    ("GET", "/memories/{memory}"): {"roles": READ, "path": {"memory": "pay-1041"}},
    ("GET", "/memories/{memory}/history"): {"roles": READ, "path": {"memory": "pay-1041"}},
    ("GET", "/memories/{memory}/as-of"): {"roles": READ, "path": {"memory": "pay-1041"},
                                       "params": {"rev": 4}},
    ("GET", "/memories/{memory}/fragility"): {
        "roles": READ, "path": {"memory": "pay-1042"},
        "expect": lambda r: r.json()["fragility"] == 1},
    ("GET", "/as-of"): {"roles": READ, "params": {"at": AT}},
    ("GET", "/payments"): {"roles": READ, "params": {"held": "false"},
                           "expect": lambda r: [p["name"] for p in r.json()] == ["pay-1042"]},
    ("GET", "/audit-order"): {"roles": READ},
    ("GET", "/retractions"): {"roles": READ},
    ("GET", "/retractions/{rid}"): {"roles": READ, "path": {"rid": "r-b"}, "first": _commit},
    ("GET", "/gates"): {"roles": READ},
    ("GET", "/recalls"): {"roles": READ},
    ("GET", "/recalls/{memory}"): {"roles": READ, "path": {"memory": "pay-1041"}, "first": _commit},
    ("POST", "/retractions/preview"): {"roles": SEC, "json": COMPROMISE},
    ("POST", "/retractions"): {"roles": SEC, "json": lambda s: {**COMPROMISE, "rev": _rev(s)}},
    ("POST", "/retractions/{rid}/reinstate/preview"): {"roles": SEC, "path": {"rid": "r-b"},
                                                       "first": _commit},
    ("POST", "/retractions/{rid}/reinstate"): {"roles": SEC, "path": {"rid": "r-b"},
                                               "json": lambda s: {"rev": _rev(s)},
                                               "first": _commit},
    ("POST", "/withdrawals/preview"): {"roles": SEC, "json": {"memory": "n-bank",
                                                              "reason": "typo"}},
    ("POST", "/withdrawals"): {"roles": SEC, "json": lambda s: {
        "memory": "n-bank", "reason": "typo", "rev": _rev(s)}},
    ("POST", "/corrections/preview"): {"roles": SEC, "json": {"memory": "n-bank", "reason": "r",
                                                              "text": "t"}},
    ("POST", "/corrections"): {"roles": SEC, "json": lambda s: {
        "memory": "n-bank", "reason": "r", "text": "t", "rev": _rev(s)}},
    ("POST", "/recalls/{memory}/approve"): {"roles": FIN, "path": {"memory": "pay-1041"},
                                         "first": _commit},
    ("POST", "/recalls/{memory}/reject"): {"roles": FIN, "path": {"memory": "pay-1041"},
                                        "json": {"reason": "the vendor confirmed the account"},
                                        "first": _commit},
    ("POST", "/recalls/{memory}/notes"): {"roles": FIN, "path": {"memory": "pay-1041"},
                                       "json": {"text": "called the bank"}, "first": _commit},
    ("POST", "/recalls/{memory}/export"): {"roles": FIN, "path": {"memory": "pay-1041"},
                                        "json": {"format": "camt.056",
                                                 "allow_placeholders": True},
                                        "first": _approved},
    ("POST", "/recalls/{memory}/notice/approve"): {"roles": FIN, "path": {"memory": "pay-1041"},
                                                "first": _withdrawn},
    ("POST", "/recalls/{memory}/notice/export"): {"roles": FIN, "path": {"memory": "pay-1041"},
                                               "json": {"format": "text"},
                                               "first": _notice_approved},
    ("POST", "/events"): {"roles": AGENT, "json": lambda s: {"events": [{
        "type": "observation_recorded", "event_id": "ev-1", "tenant": s.tenant, "at": AT,
        "source": "portal:acme", "text": "injected"}]}},
    ("POST", "/gate"): {"roles": AGENT, "json": {"action": "pay-1042"}},
}
TENANT = "/api/v1/tenants/{tenant}"


def route_key(route) -> tuple[str, str]:
    [method] = route.methods
    return method, route.path.removeprefix(TENANT)


ROUTES = sorted(api_routes(), key=lambda r: (r.path, sorted(r.methods)))
TENANT_ROUTES = [r for r in ROUTES if r.path.startswith(TENANT)]


def route_id(route) -> str:
    method, path = route_key(route)
    return f"{method} {path}"
