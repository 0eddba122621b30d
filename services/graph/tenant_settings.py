"""A tenant's settings for the files it sends its bank: who the organisation is, and which bank
a recall (an ISO 20022 camt.056) goes to. Kept with the tenant (``layout.tenant_settings_key``,
a hash under its hash tag, so it moves with it), set by an admin (``PUT /api/v1/tenants/{t}/
settings``, ``rescind tenant settings``), read by the export (``rescind.operator.recalls``).

Without them a camt.056 holds placeholders: the tenant's id as the organisation's name
(``Assgnr/Pty/Nm``) and ``NOTPROVIDED`` as the bank (``Assgne/Agt/FinInstnId/Othr/Id``). The
export refuses to write those unless asked (``allow_placeholders``): a bank's portal rejects a
request that names no bank, or files it under a name it does not know.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields

import redis

from rescind.contract import layout
from rescind.contract import text as tx
from rescind.contract.errors import Invalid
from rescind.transport import connection

_BIC = re.compile(r"^[A-Z0-9]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$")  # ISO 9362
_LEI = re.compile(r"^[A-Z0-9]{18}[0-9]{2}$")  # ISO 17442


@dataclass(frozen=True)
class BankFile:
    """What a camt.056 says of the organisation and its bank (None: not set)."""

    organisation_name: str | None = None  # Assgnr/Pty/Nm and Case/Cretr: the legal name
    organisation_id: str | None = None  # Assgnr/Pty/Id/OrgId/Othr/Id: the bank's customer id
    organisation_lei: str | None = None  # Assgnr/Pty/Id/OrgId/LEI
    bank_bic: str | None = None  # Assgne/Agt/FinInstnId/BICFI: the bank the request goes to
    bank_name: str | None = None  # Assgne/Agt/FinInstnId/Nm

    def placeholders(self) -> list[str]:
        """What a camt.056 would fill with a placeholder, in words."""
        out = []
        if not self.organisation_name:
            out.append("the organisation's name (organisation_name: the tenant's id would "
                       "stand in for it)")
        if not self.bank_bic:
            out.append("the bank's BIC (bank_bic: the bank would be NOTPROVIDED)")
        return out

    def to_dict(self) -> dict:
        return {**asdict(self), "placeholders": self.placeholders()}


NAMES = tuple(f.name for f in fields(BankFile))
_LIMITS = {"organisation_name": 140, "organisation_id": 35, "organisation_lei": 20,
           "bank_bic": 11, "bank_name": 140}


def _checked(name: str, value: str | None) -> str | None:
    if name not in _LIMITS:
        raise Invalid(f"unknown tenant setting {name!r}; known: {', '.join(NAMES)}")
    if value is None or not value.strip():
        return None  # cleared
    try:
        value = tx.check(value.strip(), _LIMITS[name], True)
    except ValueError as exc:
        raise Invalid(f"{name}: {exc}") from None
    if name in ("bank_bic", "organisation_lei"):
        value = value.upper().replace(" ", "")
        pattern, what = (_BIC, "a BIC: 8 or 11 letters and digits, e.g. HBUKGB4B") \
            if name == "bank_bic" else (_LEI, "an LEI: 20 letters and digits, the last two "
                                         "digits, e.g. 5493001KJTIIGC8Y1R12")
        if not pattern.fullmatch(value):
            raise Invalid(f"{name} {value!r} is not {what}")
    return value


def _on(conn: redis.Redis, tenant: str) -> redis.Redis:
    return connection.node_for(conn, layout.tenant_settings_key(tenant))


def bank_file(conn: redis.Redis, tenant: str) -> BankFile:
    """The tenant's bank-file settings (every field None when none are set)."""
    raw = _on(conn, tenant).hgetall(layout.tenant_settings_key(tenant))
    got = {k.decode(): v.decode() for k, v in raw.items()}
    return BankFile(**{n: got.get(n) or None for n in NAMES})


def update(conn: redis.Redis, tenant: str, changes: dict[str, str | None]) -> BankFile:
    """Set (or, with None or "", clear) the named settings; the others stay. Every value is
    checked before any is written (Invalid names the first wrong one)."""
    checked = {name: _checked(name, value) for name, value in changes.items()}
    key, node = layout.tenant_settings_key(tenant), _on(conn, tenant)
    pipe = node.pipeline(transaction=True)
    if kept := {k: v for k, v in checked.items() if v is not None}:
        pipe.hset(key, mapping=kept)
    if cleared := [k for k, v in checked.items() if v is None]:
        pipe.hdel(key, *cleared)
    pipe.execute()
    return bank_file(conn, tenant)
