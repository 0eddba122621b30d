"""The naive reference on `update` and `delete` lines (no server): a replaced version is not
current and keeps its status; only evidence takes things OUT."""

from __future__ import annotations

import json

from tests.support.reference import run

AT = "2024-05-01T1{}:00:00Z"


def scenario(*ops: dict) -> str:
    return "\n".join(json.dumps(op) for op in ops) + "\n"


BASE = (
    {"op": "source", "id": "u", "kind": "chat"},
    {"op": "observe", "id": "o", "source": "u", "text": "I live in York", "at": AT.format(0)},
    {"op": "write", "id": "v1", "kind": "belief", "agent": "p", "text": "Lives in York",
     "premises": ["o"], "at": AT.format(1)},
    {"op": "update", "id": "v2", "memory": "v1", "agent": "p",
     "text": "Lives in York, rows", "premises": ["v1"], "at": AT.format(2)},
)


def test_an_update_on_the_old_version_keeps_both_in_and_replaces_the_old():
    """v2 rests on v1 alone: both IN; v1 is reported superseded, v2 is current."""
    report = run(scenario(*BASE))
    assert {m: v["status"] for m, v in report["memories"].items()} == {
        "o": "IN", "v1": "IN", "v2": "IN"}
    assert report["replaced"] == {"v1": "superseded"}


def test_a_retraction_reaches_the_new_version_through_the_old_one_and_a_delete_does_not():
    """Retracting the user takes v1 and v2 OUT; deleting v2 alone changes no status."""
    deleted = run(scenario(*BASE, {"op": "delete", "id": "d", "memory": "v2", "agent": "p",
                                   "at": AT.format(3)}))
    assert all(v["status"] == "IN" for v in deleted["memories"].values())
    assert deleted["replaced"] == {"v1": "superseded", "v2": "deleted"}
    retracted = run(scenario(*BASE, {"op": "retract", "id": "r", "source": "u",
                                     "reason": "taken over", "by": "sec"}))
    assert {m: v["status"] for m, v in retracted["memories"].items()} == {
        "o": "OUT", "v1": "OUT", "v2": "OUT"}


def test_an_update_back_to_an_old_text_makes_that_memory_current_again():
    """v3 says what v1 said (normalised): one memory, current again; v2 superseded."""
    report = run(scenario(*BASE, {"op": "update", "id": "v3", "memory": "v2", "agent": "p",
                                  "text": " lives IN york", "premises": ["o"],
                                  "at": AT.format(3)}))
    assert report["replaced"] == {"v2": "superseded"}
