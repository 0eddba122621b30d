"""API tokens: each bound to one tenant and one role, stored hashed; and who may do what.

A token is ``rsc_`` followed by 256 random bits (URL-safe base64). Only its SHA-256 is
stored, as the key of a Redis hash holding tenant, role and who; its first 16 hex digits are
the token's public id (for listing and revoking). The admin's bootstrap token comes from
settings (``RESCIND_ADMIN_TOKEN``) and is compared by digest; admin tokens can also be made
with ``rescind api token create --role admin``.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime

import redis

from rescind.contract import layout
from rescind.contract.errors import Forbidden, Invalid, NotFound, Unauthenticated
from rescind.contract.layout import check_tenant
from rescind.graph import tenants
from rescind.operator.audit import Actor
from rescind.transport import connection

ROLES = ("agent", "security", "finance", "viewer")
ADMIN = "admin"
READERS = ("viewer", "security", "finance")

# What each permission lets a role do; every route and MCP tool names one of these.
PERMISSIONS: dict[str, tuple[str, ...]] = {
    "read": READERS,  # sources, memories, trees, history, as-of, fragility, recalls, audit order
    "decide": ("security",),  # preview / commit / reinstate retractions, withdraw, correct
    "approve": ("finance",),  # approve, reject, annotate and export recalls
    "send": ("agent",),  # send events
    "gate": ("agent",),  # ask the gate
    "audit": ("security", ADMIN),  # read the tenant's audit log
    "admin": (ADMIN,),  # tenants and tokens
    "whoami": (*ROLES, ADMIN),  # who am I
}
_VERBS = {"read": "read this tenant's data", "decide": "retract, withdraw, correct or reinstate",
          "approve": "approve, reject, annotate or export recalls", "send": "send events",
          "gate": "ask the gate",
          "audit": "read the audit log", "admin": "manage tenants and tokens", "whoami": "sign in"}
PREFIX = "rsc_"
MAX_TOKEN = 200


@dataclass(frozen=True)
class Principal:
    """Who is asking: the token's tenant (None for an admin), role and name."""

    tenant: str | None
    role: str
    who: str
    token_id: str

    def actor(self, via: str = "api") -> Actor:
        """This token as the audit names it: the token's name is the actor."""
        return Actor(self.who, self.role, self.token_id, via)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def authorize(p: Principal, tenant: str | None, permission: str) -> None:
    """Forbidden unless ``p`` may use ``permission`` on ``tenant``."""
    allowed = PERMISSIONS[permission]
    if p.role == ADMIN:
        if ADMIN not in allowed:
            raise Forbidden(f"an admin token may not {_VERBS[permission]}; use a token of the "
                            f"tenant with role {' or '.join(allowed)}")
        return
    if tenant is not None and tenant != p.tenant:
        raise Forbidden(f"this token is for tenant {p.tenant!r}, not {tenant!r}")
    if p.role not in allowed:
        raise Forbidden(f"the {p.role} role may not {_VERBS[permission]}; that needs "
                        f"{' or '.join(allowed)}")


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class TokenStore:
    """Tokens and the tenant registry in Redis (the FalkorDB server's own keyspace)."""

    def __init__(self, conn: redis.Redis, admin_token: str | None = None) -> None:
        self.conn = conn
        self._admin = digest(admin_token) if admin_token else None

    # -- tokens -------------------------------------------------------------------------------
    def create(self, tenant: str | None, role: str, who: str, by: str,
               register: bool = False) -> tuple[str, dict]:
        """A new token and its public record; the token itself is shown once, never stored."""
        if role not in (*ROLES, ADMIN):
            raise Invalid(f"unknown role {role!r}; choose from {', '.join((*ROLES, ADMIN))}")
        if role == ADMIN:
            tenant = None
        else:
            tenant = self._tenant(tenant or "")
            if not self.known_tenant(tenant):
                if not register:
                    raise NotFound(f"no tenant {tenant!r}; create it first")
                self.add_tenant(tenant, by)
        token = PREFIX + secrets.token_urlsafe(32)
        h = digest(token)
        record = {"id": h[:16], "tenant": tenant or "", "role": role, "who": who,
                  "created_at": _now(), "created_by": by}
        index = layout.tenant_tokens_key(tenant) if tenant else layout.ADMIN_TOKENS
        # Listed first, then usable: on a cluster the two keys are on different slots (no
        # transaction), and a failure between leaves a listed token that does not work.
        pipe = connection.pipeline(self.conn, index, layout.token_key(h))
        pipe.hset(index, h[:16], h)
        pipe.hset(layout.token_key(h), mapping=record)
        pipe.execute()
        return token, {**record, "tenant": tenant}

    def verify(self, token: str | None) -> Principal:
        if not token:
            raise Unauthenticated("sign in: send 'Authorization: Bearer <token>'")
        if len(token) > MAX_TOKEN:
            raise Unauthenticated("unknown or revoked token")
        h = digest(token)
        if self._admin is not None and hmac.compare_digest(h, self._admin):
            return Principal(None, ADMIN, "admin", "bootstrap")
        record = self.conn.hgetall(layout.token_key(h))
        if not record:
            raise Unauthenticated("unknown or revoked token")
        r = {k.decode(): v.decode() for k, v in record.items()}
        return Principal(r["tenant"] or None, r["role"], r["who"], r["id"])

    def tokens(self, tenant: str) -> list[dict]:
        """The public records of a tenant's tokens (never the tokens)."""
        digests = self.conn.hvals(layout.tenant_tokens_key(self._tenant(tenant)))
        pipe = self.conn.pipeline(transaction=False)
        for h in digests:
            pipe.hgetall(layout.token_key(h.decode()))
        rows = []
        for record in pipe.execute():
            if record:
                r = {k.decode(): v.decode() for k, v in record.items()}
                rows.append({**r, "tenant": r["tenant"] or None})
        return sorted(rows, key=lambda r: (r["created_at"], r["id"]))

    def revoke(self, tenant: str, token_id: str) -> dict:
        index = layout.tenant_tokens_key(self._tenant(tenant))
        h = self.conn.hget(index, token_id)
        if h is None:
            raise NotFound(f"no token {token_id!r} in tenant {tenant!r}")
        # Unusable first, then unlisted (see ``create``).
        pipe = connection.pipeline(self.conn, layout.token_key(h.decode()), index)
        pipe.delete(layout.token_key(h.decode()))
        pipe.hdel(index, token_id)
        pipe.execute()
        return {"id": token_id, "tenant": tenant, "revoked": True}

    # -- tenants ------------------------------------------------------------------------------
    @staticmethod
    def _tenant(name: str) -> str:
        return check_tenant(name)

    def add_tenant(self, name: str, by: str) -> bool:
        """Create a tenant (``rescind.graph.tenants.create``); False when it existed already."""
        return tenants.create(self.conn, self._tenant(name), by)

    def known_tenant(self, name: str) -> bool:
        """Whether the tenant was created (graphs older than the registry are adopted first)."""
        tenants.adopt_graphs(self.conn)
        return tenants.known(self.conn, name)

    def tenants(self) -> list[dict]:
        tenants.adopt_graphs(self.conn)
        registered = tenants.registered(self.conn)
        return [{"name": n, **registered[n]} for n in sorted(registered)]
