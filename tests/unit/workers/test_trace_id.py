"""A memory keeps the trace id of the run that wrote it (the console links it): read from the
event's W3C traceparent, and nothing when there is none or it is not one."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from rescind.contract import events as ev
from rescind.runtime.settings import Settings
from rescind.workers.ingest import to_write, trace_id

AT = datetime(2026, 11, 2, tzinfo=UTC)


@pytest.mark.parametrize(("traceparent", "expected"), [
    ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
     "4bf92f3577b34da6a3ce929d0e0e4736"),
    ("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-00",
     "4bf92f3577b34da6a3ce929d0e0e4736"),
    ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", None),  # invalid by the spec
    ("00-4bf92f3577b34da6a3ce929d0e0e47zz-00f067aa0ba902b7-01", None),
    ("4bf92f3577b34da6a3ce929d0e0e4736", None),
    (None, None),
])
def test_the_trace_id_is_read_from_a_traceparent(traceparent, expected):
    assert trace_id(traceparent) == expected


def test_every_kind_of_write_carries_its_trace():
    tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    events = [
        ev.ObservationRecorded(event_id="o", tenant="t", at=AT, source="s", text="x",
                               traceparent=tp),
        ev.MemoryWritten(event_id="m", tenant="t", at=AT, kind="belief", text="y",
                         premises=["obs-1"], agent="ap", traceparent=tp),
        ev.ActionProposed(event_id="a", tenant="t", at=AT, action="pay", text="pay",
                          premises=["obs-1"], agent="ap", traceparent=tp),
    ]
    assert [to_write(e).trace for e in events] == ["4bf92f3577b34da6a3ce929d0e0e4736"] * 3
    assert to_write(events[1].model_copy(update={"traceparent": None})).trace is None


@pytest.mark.parametrize("url", ["http://traces.example/trace", "javascript:alert(1)/{trace_id}",
                                 "ftp://x/{trace_id}"])
def test_a_trace_ui_address_without_its_place_for_the_id_is_refused(url):
    with pytest.raises(ValidationError, match="trace_url"):
        Settings(trace_url=url)
    assert Settings(trace_url="https://t.example/t/{trace_id}").trace_url
