"""What every request shares: settings, the Redis connection, tokens, tenant graphs; and the
Guard dependency that authenticates a request and checks its permission on the path's tenant."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import redis
from fastapi import Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from rescind.api import audit
from rescind.api.auth import PERMISSIONS, Principal, TokenStore, authorize
from rescind.contract.errors import Forbidden, RescindError, http_status
from rescind.contract.layout import check_tenant
from rescind.engine.gate import GatePolicy
from rescind.graph.store import TenantGraph
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

    def __post_init__(self) -> None:  # a bad RESCIND_GATE_* stops the start, not a payment
        self.gate = GatePolicy.from_settings(self.settings)

    def graph(self, tenant: str) -> TenantGraph:
        """One TenantGraph per tenant (its schema is checked once, not on every request)."""
        with self._lock:
            g = self._graphs.get(tenant)
            if g is None:
                g = self._graphs[tenant] = TenantGraph(self.conn, check_tenant(tenant))
            return g

    def audited(self, me: Principal, tenant: str, action: str, target: str | None,
                run: Callable[[], Any], summary: Callable[[Any], Any] | None = None,
                via: str = "api") -> Any:
        """Run a mutation and log who asked what, on what, and how it ended."""
        try:
            result = run()
        except RescindError as exc:
            audit.record(self.conn, tenant, me, action, target, "refused", http_status(exc), exc.message,
                         via)
            raise
        except Exception as exc:
            audit.record(self.conn, tenant, me, action, target, "error", 500,
                         type(exc).__name__, via)
            raise
        audit.record(self.conn, tenant, me, action, target, "ok", 200,
                     summary(result) if summary else None, via)
        return result


def get_api(request: Request) -> Api:
    return request.app.state.api


class Guard:
    """Dependency: the caller's Principal, if its token may use ``permission`` on the tenant
    named in the path. Refused mutations are written to the caller's own audit log."""

    def __init__(self, permission: str) -> None:
        if permission not in PERMISSIONS:
            raise ValueError(f"unknown permission {permission!r}")
        self.permission = permission

    def __call__(self, request: Request,
                 creds: HTTPAuthorizationCredentials | None = Security(bearer)) -> Principal:
        api = get_api(request)
        me = api.tokens.verify(creds.credentials if creds else None)
        try:
            authorize(me, request.path_params.get("tenant"), self.permission)
        except Forbidden as exc:
            if request.method != "GET" and me.tenant is not None:
                audit.record(api.conn, me.tenant, me, f"{request.method} {request.url.path}",
                             request.path_params.get("tenant"), "refused", 403, exc.message)
            raise
        return me
