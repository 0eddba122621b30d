"""Every Redis key and graph name Rescind uses, built in one place.

A tenant's keys share the hash tag ``{tenant}`` so that on a Redis cluster its graph, its
preview copies and its streams live on one shard.
"""

from __future__ import annotations

import re

from rescind.contract.errors import BadTenantName

TENANT_RE = re.compile(r"[a-z0-9_-]{1,64}")


def check_tenant(name: str) -> str:
    if not isinstance(name, str) or not TENANT_RE.fullmatch(name):
        raise BadTenantName(
            f"bad tenant name {name!r}: use 1 to 64 characters from a-z, 0-9, '_' and '-'"
        )
    return name


def graph_key(tenant: str) -> str:
    return f"rescind:{{{check_tenant(tenant)}}}"


def events_stream(tenant: str) -> str:
    return f"rescind:{{{check_tenant(tenant)}}}:events"


def dead_letter_stream(tenant: str) -> str:
    return f"rescind:{{{check_tenant(tenant)}}}:dead"


def lock_key(tenant: str, purpose: str = "write") -> str:
    return f"rescind:{{{check_tenant(tenant)}}}:lock:{purpose}"
