"""Every Redis key the API uses, built here, in the style of ``services.graph.keys``.

Per-tenant keys carry the tenant's hash tag ``{tenant}`` so they live on the tenant's shard;
token records are found by the SHA-256 of the token, never by the token itself.
"""

from __future__ import annotations

import re

from rescind.contract.keys import check_tenant

_HEX = re.compile(r"[0-9a-f]{64}")


def token_key(digest: str) -> str:
    """The record of one token: tenant, role, who; keyed by the token's SHA-256 (hex)."""
    if not _HEX.fullmatch(digest):
        raise ValueError("a token key needs a SHA-256 hex digest")
    return f"rescind:api:token:{digest}"


def tenant_tokens_key(tenant: str) -> str:
    """Hash: token id -> SHA-256 of every token of a tenant (for listing and revoking)."""
    return f"rescind:{{{check_tenant(tenant)}}}:api:tokens"


def admin_tokens_key() -> str:
    return "rescind:api:admin-tokens"


def tenants_key() -> str:
    """Hash: tenant name -> JSON {created_at, created_by} of every tenant an admin created."""
    return "rescind:api:tenants"


def audit_key(tenant: str) -> str:
    """Stream: every mutation asked of a tenant through the API or MCP, with its result."""
    return f"rescind:{{{check_tenant(tenant)}}}:audit"
