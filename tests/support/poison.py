"""Shared by the poison-entry tests (no tests here): one valid event of every type sent on the
events streams, and every text field of each (where a NUL or a control character can hide)."""

from __future__ import annotations

from datetime import UTC, datetime

from rescind.contract import events as ev

AT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
NUL = "\x00"
NOT_TEXT = ("type", "schema", "at", "tenant", "kind", "rule")  # literals, times, the tenant


def event_samples(tenant: str = "tenant-x") -> list[ev.Event]:
    p = ["obs-1"]
    base = {"tenant": tenant, "at": AT, "event_id": "e",
            "traceparent": "00-" + "a" * 32 + "-" + "b" * 16 + "-01", "tracestate": "k=v"}
    return [
        ev.SourceDeclared(source="s", source_kind="portal", name="Acme portal",
                          source_domain="acme", **base),
        ev.ObservationRecorded(source="s", text="seen", name="n", source_domain="d", **base),
        ev.MemoryWritten(kind="belief", text="note", premises=p, agent="ap", run="r",
                         name="n", key="ns/k", supersedes="bel-1", **base),
        ev.MemoryDeleted(memory="bel-1", key="ns/k", agent="ap", run="r", **base),
        ev.MemoryAdopted(kind="belief", key="ns/k", text="old note", **base),
        ev.ActionProposed(action="pay-1", text="pay", premises=p, agent="ap", run="r",
                          amount=5.0, currency="EUR", payee="Acme", account="ZZ97", **base),
        ev.ActionExecuted(action="pay-1", receipt="paid", currency="EUR", account="ZZ97",
                          reference="REF-1", value_date="2026-11-02", **base),
        ev.ActionFailed(action="pay-1", reason="ValueError: no", **base),
        ev.SourceCompromised(retraction="r1", source="s", reason="hacked", by="sec", **base),
        ev.MemoryWithdrawn(retraction="r1", memory="bel-1", reason="wrong", by="sec", **base),
        ev.MemoryCorrected(retraction="r1", memory="bel-1", text="right", by="reviewer",
                           name="n", **base),
        ev.RetractionReinstated(retraction="r1", by="sec", **base),
        ev.RecallApproved(action="pay-1", by="fin", **base),
    ]


def text_fields(samples: list[ev.Event]) -> list[tuple[ev.Event, str]]:
    """(sample, field) for every field of each sample whose value is text or a list of texts."""
    return [(e, name) for e in samples
            for name, value in e.model_dump(mode="json", by_alias=True).items()
            if name not in NOT_TEXT and (isinstance(value, str)
                                         or isinstance(value, list) and value)]


def poisoned(value: str | list) -> str | list:
    """``value`` with a NUL in it, as long as it was (a field may be at its length limit)."""
    if isinstance(value, list):
        return ["a" + NUL + "b", *value[1:]]
    return value[:1] + NUL + value[2:]
