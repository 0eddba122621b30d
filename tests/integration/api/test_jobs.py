"""The table of jobs on the real server: the OpenAPI document shows every route's answer, and a
route and its MCP tool (made from the same job) answer the same, typed, on the vendor-portal
story."""

from __future__ import annotations

import json

import anyio
from mcp import Client

from rescind.api.jobs import JOBS
from rescind.api.mcp import create_server
from tests.support.api import COMPROMISE


def test_the_openapi_document_has_a_response_schema_for_every_route(story):
    """Every operation but the console's redirect answers a documented schema: a JSON route its
    job's answer model (a $ref, or an array of one), a file route its media types."""
    doc = story.client.get("/api/openapi.json").json()
    schemas, untyped = doc["components"]["schemas"], []
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            [(status, ok)] = [(s, r) for s, r in op["responses"].items() if s.startswith("2")]
            content = ok.get("content") or {}
            schema = (content.get("application/json") or {}).get("schema", {})
            ref = (schema.get("items") or schema).get("$ref", "")
            if not ref.startswith("#/components/schemas/") and not (
                    content and all(c["schema"].get("type") == "string" for c in content.values())):
                untyped.append(f"{method.upper()} {path}")
            elif ref:
                assert ref.rsplit("/", 1)[1] in schemas
    assert untyped == []
    by_route = {(j.method, "/api/v1" + j.path): j for j in JOBS if j.http}
    commit = doc["paths"]["/api/v1/tenants/{tenant}/retractions"]["post"]
    assert commit["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/BlastRadius"}
    assert by_route[("POST", "/api/v1/tenants/{tenant}/retractions")].name == "commit_retraction"
    assert set(schemas["BlastRadius"]["required"]) >= {"committed", "rev", "counts"}


def _tool(story, role: str, name: str, args: dict) -> dict | list:
    token = story.as_(role)["Authorization"].removeprefix("Bearer ")

    async def main():
        async with Client(create_server(story.url, token)) as c:
            r = await c.call_tool(name, args)
            assert not r.is_error, r.content[0].text
            data = r.structured_content
            return data["result"] if set(data) == {"result"} else data

    return anyio.run(main)


def test_a_route_and_its_tool_answer_the_same(story):
    """The same job over HTTP and over MCP: the same fragility, the same held-payment filter
    (a query parameter the route and the tool share), the same token and gate rule from
    whoami; a preview's blast radius alike but for the console's drawing, which only the
    route answers."""
    viewer = story.as_("viewer")
    frag = story.client.get(f"{story.base}/memories/pay-1042/fragility", headers=viewer).json()
    assert _tool(story, "viewer", "fragility", {"memory": "pay-1042"}) == frag
    assert frag["fragility"] == 1 and frag["would_fake_it"] == ["acme-portal"]

    held = story.client.get(f"{story.base}/payments", params={"held": "false"},
                            headers=viewer).json()
    assert [p["name"] for p in held] == ["pay-1042"]
    assert [p["name"] for p in _tool(story, "viewer", "pending_payments", {"held": False})] \
        == ["pay-1042"]
    none_held = story.client.get(f"{story.base}/payments", params={"held": "true"},
                                 headers=viewer).json()
    assert none_held == _tool(story, "viewer", "pending_payments", {"held": True}) == []

    me = story.client.get("/api/v1/me", headers=viewer).json()
    assert _tool(story, "viewer", "whoami", {}) == me and me["gate"]["min_domains"] == 2

    sec = story.as_("security")
    route = story.client.post(f"{story.base}/retractions/preview", json=COMPROMISE,
                              headers=sec).json()
    tool = _tool(story, "security", "preview_retraction", COMPROMISE)
    assert "graph" in route and "graph" not in tool
    assert tool["counts"] == route["counts"] and sum(tool["counts"].values()) == 7
    assert json.dumps(tool["to_hold"]) == json.dumps(route["to_hold"])
