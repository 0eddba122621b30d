"""What every request shares: settings, the Redis connection, tokens, tenant graphs, the audit
log; and the Guard dependency that authenticates a request, checks its permission on the path's
tenant, and audits a refusal."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import redis
from fastapi import Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from rescind.api.auth import PERMISSIONS, Principal, TokenStore, authorize
from rescind.contract.errors import BadTenantName, Forbidden, Unauthenticated
from rescind.contract.layout import check_tenant
from rescind.engine.gate import GatePolicy
from rescind.graph.store import TenantGraph
from rescind.operator.audit import Actor, AuditLog
from rescind.runtime.settings import Settings

bearer = HTTPBearer(auto_error=False, description="An API token: Authorization: Bearer rsc_…")


@dataclass
class Api:
    settings: Settings
    conn: redis.Redis
    tokens: TokenStore
    _graphs: dict[str, TenantGraph] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    gate: GatePolicy = field(init=False)
    audit: AuditLog = field(init=False)

    def __post_init__(self) -> None:  # a bad RESCIND_GATE_* stops the start, not a payment
        self.gate = GatePolicy.from_settings(self.settings)
        self.audit = AuditLog(self.conn, self.settings.audit_max_live)

    def graph(self, tenant: str) -> TenantGraph:
        """One TenantGraph per tenant (its schema is checked once, not on every request)."""
        with self._lock:
            g = self._graphs.get(tenant)
            if g is None:
                g = self._graphs[tenant] = TenantGraph(self.conn, check_tenant(tenant))
            return g

    def forget(self, tenant: str | None) -> None:
        """Make the tenant's TenantGraph again at its next request: on a cluster, its slot moved
        to another master, or its master failed over (a TenantGraph talks to one master)."""
        with self._lock:
            self._graphs.pop(tenant or "", None)

    def audited(self, me: Principal, tenant: str, action: str, target: str | None,
                run: Callable[[], Any], summary: Callable[[Any], Any] | None = None,
                via: str = "api", outcome: Callable[[Any], str] | None = None) -> Any:
        """Run a decision and log who asked what, on what, and how it ended (a refusal is
        counted: ``rescind.operator.audit``)."""
        return self.audit.audited(tenant, me.actor(via), action, target, run, summary, outcome)


def get_api(request: Request) -> Api:
    return request.app.state.api


class Guard:
    """Dependency: the caller's Principal, if its token may use ``permission`` on the tenant
    named in the path. Every refusal is audited, counted per principal, kind and minute: an
    unknown token in the server's log (it names no tenant we can trust), a tenant's token in
    its own tenant's log (never in the one it knocked on), an admin's in the log of the tenant
    it knocked on (or the server's)."""

    def __init__(self, permission: str) -> None:
        if permission not in PERMISSIONS:
            raise ValueError(f"unknown permission {permission!r}")
        self.permission = permission

    def __call__(self, request: Request,
                 creds: HTTPAuthorizationCredentials | None = Security(bearer)) -> Principal:
        api = get_api(request)
        asked = request.path_params.get("tenant")
        try:
            me = api.tokens.verify(creds.credentials if creds else None)
        except Unauthenticated as exc:
            host = request.client.host if request.client else "unknown"
            api.audit.refused(None, Actor(f"anonymous ({host})", "", "", "api"), kind(request),
                              request.url.path, 401, exc.message)
            raise
        try:
            authorize(me, asked, self.permission)
        except Forbidden as exc:
            scope = me.tenant if me.tenant is not None else tenant_or_none(asked)
            api.audit.refused(scope, me.actor(), kind(request), request.url.path, 403,
                              exc.message)
            raise
        request.state.principal = me  # for the audit of a request refused after this
        return me


def kind(request: Request) -> str:
    """What a request asks, by its route (``POST /api/v1/tenants/{tenant}/retractions``), so
    that refusals are counted per endpoint, whatever the path's values."""
    route = request.scope.get("route")
    return f"{request.method} {getattr(route, 'path', None) or request.url.path}"


def tenant_or_none(name: str | None) -> str | None:
    try:
        return check_tenant(name) if name is not None else None
    except BadTenantName:
        return None
