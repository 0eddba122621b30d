"""The audit log: every mutation asked of a tenant (who, when, what, on what, the result).

One Redis stream per tenant (``layout.audit_key``), capped near ``layout.AUDIT_MAXLEN`` entries. Refused and
failed requests are logged as well as those that succeeded.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import redis

from rescind.api.auth import Principal
from rescind.contract import layout

MAX_DETAIL = 2000


def record(conn: redis.Redis, tenant: str, who: Principal, action: str, target: str | None,
           result: str, status: int, detail: str | dict | None = None, via: str = "api") -> None:
    """Append one entry; ``result`` is ok, refused or error."""
    text = detail if isinstance(detail, str) or detail is None else json.dumps(detail, default=str)
    conn.xadd(layout.audit_key(tenant), {
        "at": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "who": who.who, "role": who.role, "token": who.token_id, "action": action,
        "target": target or "", "result": result, "status": str(status),
        "detail": (text or "")[:MAX_DETAIL], "via": via,
    }, maxlen=layout.AUDIT_MAXLEN, approximate=True)


def entries(conn: redis.Redis, tenant: str, limit: int = 100) -> list[dict]:
    """Newest first."""
    rows = conn.xrevrange(layout.audit_key(tenant), count=limit)
    return [{"id": i.decode(), **{k.decode(): v.decode() for k, v in fields.items()}}
            for i, fields in rows]
