"""`update` and `delete` lines on the real FalkorDB: a replaced version is not current and stays
a valid premise; only evidence (a retraction, a withdrawal) takes things OUT."""

from __future__ import annotations

import json

import pytest

from rescind.scenario.format import ScenarioError, parse
from rescind.scenario.replay import replay_text
from tests.support.reference import run as reference

T = "2026-11-0{}T09:00:00Z"


def lines(*ops: dict) -> str:
    return "\n".join(json.dumps(x) for x in ops) + "\n"


PROFILE = lines(
    {"op": "source", "id": "user", "kind": "chat"},
    {"op": "source", "id": "crm", "kind": "portal"},
    {"op": "observe", "id": "m1", "source": "user", "text": "I live in York", "at": T.format(1)},
    {"op": "write", "id": "p1", "kind": "belief", "agent": "profiler",
     "text": "Profile: lives in York", "premises": ["m1"], "at": T.format(1)},
    {"op": "observe", "id": "m2", "source": "crm", "text": "Works at Acme", "at": T.format(2)},
    # run 2 rewrites the profile, reusing run 1's fact: the new version rests on the old one
    {"op": "update", "id": "p2", "memory": "p1", "agent": "profiler",
     "text": "Profile: lives in York, works at Acme", "premises": ["p1", "m2"],
     "at": T.format(2)},
    {"op": "write", "id": "plan", "kind": "plan", "agent": "planner",
     "text": "Invite to the York office", "premises": ["p2"], "at": T.format(3)},
)


def test_an_update_resting_on_the_old_version_is_in_and_the_old_one_is_not_current(
        falkordb, tenant_name):
    """p2 rests on p1 which it replaces: both stay IN, the plan on p2 too; p1 alone is
    reported replaced (superseded); the reference agrees."""
    report = replay_text(PROFILE, falkordb, tenant_name)
    assert {m: v["status"] for m, v in report["memories"].items()} == dict.fromkeys(
        ["m1", "p1", "m2", "p2", "plan"], "IN")
    assert report["replaced"] == {"p1": "superseded"}
    ref = reference(PROFILE)
    assert ref["replaced"] == report["replaced"]
    assert {m: v["status"] for m, v in ref["memories"].items()} == {
        m: v["status"] for m, v in report["memories"].items()}


def test_evidence_against_the_old_version_still_reaches_what_rests_on_it(falkordb, tenant_name):
    """Retracting the user's source takes p1 OUT, and p2 and the plan with it (p2 keeps no
    reason of its own for York); a delete of p2 afterwards changes no status."""
    text = PROFILE + lines(
        {"op": "retract", "id": "r1", "source": "user", "reason": "account taken over",
         "by": "security", "at": T.format(4)},
        {"op": "delete", "id": "d1", "memory": "p2", "agent": "profiler", "at": T.format(5)})
    report = replay_text(text, falkordb, tenant_name)
    got = {m: (v["status"], v["cause"], v["hops"]) for m, v in report["memories"].items()}
    assert got == {"m1": ("OUT", "r1", 0), "p1": ("OUT", "r1", 1), "m2": ("IN", None, None),
                   "p2": ("OUT", "r1", 2), "plan": ("OUT", "r1", 3)}
    assert report["replaced"] == {"p1": "superseded", "p2": "deleted"}
    assert reference(text)["replaced"] == report["replaced"]


def test_writing_an_old_value_again_makes_it_current_and_a_delete_keeps_it_in(
        falkordb, tenant_name):
    """red -> blue -> red: red is current again, blue replaced; deleting red leaves it IN."""
    text = lines(
        {"op": "source", "id": "s", "kind": "portal"},
        {"op": "observe", "id": "o", "source": "s", "text": "colour chart", "at": T.format(1)},
        {"op": "write", "id": "v1", "kind": "belief", "agent": "a", "text": "Colour: red",
         "premises": ["o"], "at": T.format(1)},
        {"op": "update", "id": "v2", "memory": "v1", "agent": "a", "text": "Colour: blue",
         "premises": ["o"], "at": T.format(2)},
        {"op": "update", "id": "v3", "memory": "v2", "agent": "a", "text": "colour:  RED",
         "premises": ["v2"], "at": T.format(3)})
    report = replay_text(text, falkordb, tenant_name)
    assert report["replaced"] == {"v2": "superseded"} == reference(text)["replaced"]
    again = text + lines({"op": "delete", "id": "d", "memory": "v3", "agent": "a",
                          "at": T.format(4)})
    report = replay_text(again, falkordb, tenant_name + "-2")
    assert report["replaced"] == {"v1": "deleted", "v2": "superseded", "v3": "deleted"}
    assert report["replaced"] == reference(again)["replaced"]
    assert all(v["status"] == "IN" for v in report["memories"].values())


@pytest.mark.parametrize(("op", "why"), [
    ({"op": "update", "id": "u", "memory": "o", "agent": "a", "text": "x", "premises": ["o"],
      "at": T.format(2)}, "memory 'o' is not a write's or an update's memory"),
    ({"op": "delete", "id": "d", "memory": "nope", "agent": "a", "at": T.format(2)},
     "memory 'nope' is not defined on an earlier line"),
    ({"op": "update", "id": "u", "memory": "w", "agent": "a", "text": "x", "premises": [],
      "at": T.format(2)}, "premises: List should have at least 1 item"),
])
def test_an_update_or_delete_must_name_an_earlier_write_or_update(op, why):
    """Observations, unknown ids and empty premises are refused before anything is applied."""
    base = lines({"op": "source", "id": "s", "kind": "portal"},
                 {"op": "observe", "id": "o", "source": "s", "text": "t", "at": T.format(1)},
                 {"op": "write", "id": "w", "kind": "belief", "agent": "a", "text": "n",
                  "premises": ["o"], "at": T.format(1)})
    with pytest.raises(ScenarioError) as err:
        parse(base + json.dumps(op))
    assert err.value.errors[0][0] == 4 and why in err.value.errors[0][1]
