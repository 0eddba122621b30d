"""Shared set-up of the API tests (no tests here): a tenant with the vendor-portal story, the
app on the session's FalkorDB, and a token of every role."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field

import redis
from fastapi.testclient import TestClient

from rescind.api import ROLES, create_app
from rescind.contract import layout
from rescind.graph.store import TenantGraph, connect
from rescind.runtime.settings import Settings
from rescind.scenario.replay import replay_text
from rescind.transport import connection
from rescind.transport import streams as st
from tests.support.paths import ROOT
from tests.support.stream_entries import tenant_of  # noqa: F401 - re-exported

ADMIN = "test-admin-token-not-for-production"
WINDOW = {"from": "2026-11-01T00:00Z", "to": "2026-11-03T00:00Z"}
COMPROMISE = {"source": "portal:acme", **WINDOW, "reason": "Acme's portal was taken over"}


def story_text() -> str:
    """The shipped example up to (not including) its retraction."""
    lines = (ROOT / "examples/vendor-portal.jsonl").read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if '"op": "retract"' in line)
    return "\n".join(lines[:cut])


@dataclass
class Story:
    client: TestClient
    tenant: str
    tokens: dict[str, dict[str, str]] = field(default_factory=dict)  # role -> headers
    url: str = ""

    @property
    def base(self) -> str:
        return f"/api/v1/tenants/{self.tenant}"

    @property
    def graph(self) -> TenantGraph:
        return TenantGraph(connect(self.url), self.tenant)

    def as_(self, role: str) -> dict[str, str]:
        return self.tokens[role]

    def reinstate(self, rid: str, role: str = "security", reason: str | None = None):
        """Undo ``rid`` as a person does: preview, then commit at the preview's revision."""
        body = {"reason": reason} if reason else {}
        url = f"{self.base}/retractions/{rid}/reinstate"
        p = self.client.post(f"{url}/preview", json=body, headers=self.as_(role))
        if p.status_code != 200:
            return p
        return self.client.post(url, json={**body, "rev": p.json()["rev"]},
                                headers=self.as_(role))

    def statuses(self) -> dict[str, str]:
        return {r[0]: r[1] for r in self.graph.rows("MATCH (m:Mem)-[st:STATUS]->() RETURN m.id, st.status")}


def make_story(url: str, tenant: str, client: TestClient | None = None,
               text: str | None = None) -> Story:
    """``text`` (default: the vendor-portal story) in ``tenant``, an app, a token per role."""
    replay_text(text or story_text(), url, tenant)
    client = client or TestClient(create_app(Settings(url=url, admin_token=ADMIN)))
    admin = {"Authorization": f"Bearer {ADMIN}"}
    story = Story(client, tenant, {"admin": admin}, url)
    assert client.post("/api/v1/tenants", json={"name": tenant}, headers=admin).status_code == 201
    for role in ROLES:
        r = client.post(f"{story.base}/tokens", json={"role": role, "who": f"{role}@{tenant}.example"},
                        headers=admin)
        assert r.status_code == 201, r.text
        story.tokens[role] = {"Authorization": f"Bearer {r.json()['token']}"}
    return story


def forget(url: str, tenant: str) -> None:
    """Remove everything a story left: graph, tokens, registry entry, audit log (live, archived,
    counted), status stream, events."""
    conn = connection.connect(url)
    TenantGraph(connect(url), tenant).delete()
    for h in conn.hvals(layout.tenant_tokens_key(tenant)):
        conn.delete(layout.token_key(h.decode()))
    conn.delete(layout.tenant_tokens_key(tenant), layout.tenant_settings_key(tenant),
                *conn.scan_iter(
        match=f"{layout.audit_key(tenant)}*"))  # the live log, its archive, its counts
    st.forget_status(conn, tenant)
    conn.hdel(layout.TENANTS, tenant)
    drop_events(conn, tenant)


def drop_events(conn: redis.Redis, tenant: str) -> int:
    """Delete the tenant's entries from its partition stream, so no later test's workers read
    them (consumer groups created later start from the beginning of the stream)."""
    name = layout.tenant_stream(tenant)
    ids = [i for i, fields in conn.xrange(name) if tenant_of(fields) == tenant]
    return conn.xdel(name, *ids) if ids else 0


@contextlib.contextmanager
def hosted_story(falkordb: str, name: str) -> Iterator:
    """The vendor-portal story in tenant ``name``, removed afterwards (a failure included)."""
    s = make_story(falkordb, name)
    try:
        yield s
    finally:
        forget(falkordb, name)
