"""A NUL in any text the API takes (a body's field, a path segment, a query) answers 422 with a
message naming the field, before anything is done: before this, a NUL in a retraction reason
previewed 200 and committed 500 (FalkorDB cut the query at it)."""

from __future__ import annotations

import os
from urllib.parse import quote

import pytest

from rescind.contract import events as ev
from tests.support.api import COMPROMISE, hosted_story
from tests.support.poison import NUL, event_samples, poisoned, text_fields


@pytest.fixture(scope="module")
def story(falkordb):
    """The vendor-portal story in a tenant of this module's; nothing here changes it."""
    with hosted_story(falkordb, f"poison{os.getpid()}") as s:
        yield s


WITHDRAW = {"memory": "a-remit", "reason": "told by mistake", "id": "wd-1"}
CORRECT = {"memory": "a-remit", "text": "400 Harbor Lane", "reason": "typo", "id": "cor-1",
           "reviewer": "reviewer:sam", "name": "remit-fixed"}
GATE = {"action": "pay-1042", "premises": ["obs-1"], "amount": 5.0, "account": "ZZ97",
        "payee": "Acme", "currency": "EUR"}
BODIES = [  # (path under the tenant, or absolute; role; body)
    ("/retractions/preview", "security", {**COMPROMISE, "id": "r-1"}),
    ("/retractions", "security", {**COMPROMISE, "id": "r-1", "rev": 1}),
    ("/withdrawals/preview", "security", WITHDRAW),
    ("/withdrawals", "security", {**WITHDRAW, "rev": 1}),
    ("/corrections/preview", "security", CORRECT),
    ("/corrections", "security", {**CORRECT, "rev": 1}),
    ("/gate", "agent", GATE),
    ("/tokens", "admin", {"role": "viewer", "who": "sam@example"}),
]
BODY_CASES = [(path, role, body, field) for path, role, body in BODIES for field in body
              if isinstance(body[field], str | list)]
AGENT_EVENTS = [e for e in event_samples() if isinstance(
    e, ev.SourceDeclared | ev.ObservationRecorded | ev.MemoryWritten | ev.ActionProposed
    | ev.ActionExecuted)]
EVENT_CASES = text_fields(AGENT_EVENTS)


@pytest.mark.parametrize(("path", "role", "body", "field"), BODY_CASES,
                         ids=[f"{p}:{f}" for p, _, _, f in BODY_CASES])
def test_a_nul_in_a_body_field_answers_422_naming_it(story, path, role, body, field):
    rev = story.graph.revision()
    r = story.client.post(story.base + path, headers=story.as_(role),
                          json={**body, field: poisoned(body[field])})
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert f"body.{field}" in detail, detail
    # A field with a stricter rule of its own (a currency code, a role) says that rule.
    assert "must not contain NUL" in detail or field in ("currency", "role"), detail
    assert story.graph.revision() == rev


@pytest.mark.parametrize("c", ["\x01", "\x1b", "\x7f", "\x85"], ids=lambda c: f"{ord(c):02x}")
def test_other_control_characters_in_a_reason_answer_422_too(story, c):
    for path in ("/retractions/preview", "/retractions"):
        r = story.client.post(story.base + path, headers=story.as_("security"),
                              json={**COMPROMISE, "rev": 1, "reason": f"taken{c}over"})
        assert r.status_code == 422 and "body.reason" in r.json()["detail"]
    ok = story.client.post(story.base + "/retractions/preview", headers=story.as_("security"),
                           json={**COMPROMISE, "reason": "taken\tover,\r\nby someone"})
    assert ok.status_code == 200  # tab, newline and carriage return are text


def test_the_tenant_name_of_a_new_tenant_refuses_a_nul(story):
    r = story.client.post("/api/v1/tenants", headers=story.as_("admin"), json={"name": "a\x00b"})
    assert r.status_code == 422 and "body.name" in r.json()["detail"]


@pytest.mark.parametrize(("sample", "field"), EVENT_CASES,
                         ids=[f"{type(e).__name__}.{f}" for e, f in EVENT_CASES])
def test_a_nul_in_any_field_of_an_agents_event_answers_422_naming_it(story, sample, field):
    event = sample.model_dump(mode="json", by_alias=True) | {"tenant": story.tenant}
    event[field] = poisoned(event[field])
    r = story.client.post(story.base + "/events", headers=story.as_("agent"),
                          json={"events": [event]})
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert detail.startswith("invalid request: body.events.0.") and f".{field}" in detail
    assert "must not contain NUL" in detail or field == "currency" and "pattern" in detail


BAD = quote("a" + NUL + "b")
PATHS = [("get", f"/memories/{BAD}", "viewer"), ("get", f"/memories/{BAD}/history", "viewer"),
         ("get", f"/memories/{BAD}/fragility", "viewer"),
         ("get", f"/memories/{BAD}/as-of?rev=1", "viewer"),
         ("get", f"/memories/a-remit/as-of?at={BAD}", "viewer"),
         ("get", f"/retractions/{BAD}", "viewer"), ("get", f"/recalls/{BAD}", "viewer"),
         ("get", f"/memories?q={BAD}", "viewer"), ("get", f"/as-of?at={BAD}", "viewer"),
         ("get", f"/gates?action={BAD}", "viewer"),
         ("post", f"/retractions/{BAD}/reinstate", "security"),
         ("post", f"/recalls/{BAD}/approve", "finance")]


@pytest.mark.parametrize(("method", "path", "role"), PATHS, ids=[p for _, p, _ in PATHS])
def test_a_nul_in_a_path_segment_or_a_query_answers_422(story, method, path, role):
    r = getattr(story.client, method)(story.base + path, headers=story.as_(role))
    assert r.status_code == 422, r.text
    assert "must not contain NUL" in r.json()["detail"]
