"""Memory identity: the same fact, written twice, converges on one node."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta

_SPACE = re.compile(r"\s+")
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def normalise(text: str) -> str:
    """Case-folded, runs of white space collapsed to one space, ends stripped."""
    return _SPACE.sub(" ", text.casefold()).strip()


def memory_id(tenant: str, kind: str, text: str) -> str:
    digest = hashlib.blake2b(f"{tenant}\x1f{kind}\x1f{normalise(text)}".encode(), digest_size=10)
    return f"{kind[:3]}-{digest.hexdigest()}"


def action_id(tenant: str, name: str) -> str:
    """Actions are events, not facts: each proposal is its own memory, named by its event."""
    digest = hashlib.blake2b(f"{tenant}\x1faction\x1f{name}".encode(), digest_size=10)
    return f"act-{digest.hexdigest()}"


def to_micros(moment: datetime) -> int:
    if moment.tzinfo is None:
        raise ValueError("a time needs a zone")
    delta = moment.astimezone(UTC) - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_micros(us: int | None) -> datetime | None:
    if us is None:
        return None
    return EPOCH + timedelta(microseconds=us)
