"""Reading one tenant's events out of a stream partition other tests share: an entry that is
not an event (another test's poison entry, left on the same server) or is another tenant's is
passed over, never decoded into a failure of this test."""

from __future__ import annotations

from rescind.contract import layout
from rescind.contract.errors import Invalid


def tenant_of(fields: dict) -> str | None:
    """The tenant of one stream entry's event (None for an entry that is not an event)."""
    try:
        return layout.decode(fields).event().get("tenant")
    except Invalid:
        return None


def events_of(conn, stream: str, tenant: str) -> list[dict]:
    """``tenant``'s events in ``stream``, in stream order."""
    out = []
    for _, fields in conn.xrange(stream):
        try:
            event = layout.decode(fields).event()
        except Invalid:
            continue
        if event.get("tenant") == tenant:
            out.append(event)
    return out
