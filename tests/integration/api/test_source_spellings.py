"""Every surface resolves any spelling of a source to the one the graph holds and says which:
the HTTP API's compromise (preview and commit) and the MCP server's; an unknown spelling is
refused naming the near source. On the vendor-portal story, against the real server."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp import Client

from rescind.api.auth import TokenStore
from rescind.api.mcp import create_server
from rescind.graph.store import connect
from rescind.scenario.replay import replay_text
from tests.support.api import COMPROMISE, forget, make_story, story_text

SPELLING = "  PORTAL:Ａｃｍｅ\u200b "


@pytest.fixture
def story(falkordb, tenant_name):
    s = make_story(falkordb, tenant_name)
    yield s
    forget(falkordb, tenant_name)


def test_the_api_resolves_a_spelling_and_says_which_source(story):
    """Preview and commit spelled with capitals, full-width letters, a zero-width space and
    padding: both answer ``source: portal:acme``, draw the blast radius from it, and take out
    what the canonical spelling does; a misspelling is a 400 naming ``portal:acme``."""
    sec = story.as_("security")
    body = {**COMPROMISE, "source": SPELLING}
    p = story.client.post(f"{story.base}/retractions/preview", json=body, headers=sec)
    assert p.status_code == 200, p.text
    canonical = story.client.post(f"{story.base}/retractions/preview", json=COMPROMISE,
                                  headers=sec).json()
    assert p.json()["source"] == "portal:acme" and p.json()["counts"] == canonical["counts"]
    assert {e["from"] for e in p.json()["graph"]["edges"]} >= {"portal:acme"}
    done = story.client.post(f"{story.base}/retractions", headers=sec,
                             json={**body, "rev": p.json()["rev"]})
    assert done.status_code == 200 and done.json()["source"] == "portal:acme"
    bad = story.client.post(f"{story.base}/retractions/preview", headers=sec,
                            json={**COMPROMISE, "source": "portal:acmee"})
    assert bad.status_code in (400, 422) and "did you mean 'portal:acme'" in bad.text


@pytest.fixture
def mcp_tenant(falkordb, tenant_name):
    replay_text(story_text(), falkordb, tenant_name)
    token = TokenStore(connect(falkordb)).create(tenant_name, "security", "s@mcp.example",
                                                 "test", register=True)[0]
    yield falkordb, token
    forget(falkordb, tenant_name)


def test_the_mcp_server_resolves_a_spelling_and_says_which_source(mcp_tenant):
    """An assistant previewing a compromise of ``PORTAL:Acme`` (any spelling) is told it is
    ``portal:acme``, with the same blast radius."""
    url, token = mcp_tenant
    window = {k: v for k, v in COMPROMISE.items() if k not in ("source", "reason")}

    async def main():
        async with Client(create_server(url, token)) as client:
            out = []
            for source in (SPELLING, "portal:acme"):
                r = await client.call_tool("preview_retraction", {
                    "source": source, "reason": "hacked", **window})
                assert not r.is_error, r.content
                out.append(r.structured_content.get("result", r.structured_content)
                           if r.structured_content else json.loads(r.content[0].text))
            return out

    spelled, plain = anyio.run(main)
    assert spelled["source"] == plain["source"] == "portal:acme"
    assert spelled["counts"] == plain["counts"]


def test_events_posted_with_any_spelling_land_on_the_one_source(rescind_workers, tenant_name):
    """An agent that does not canonicalise posts observations of ``PORTAL:Acme `` and
    ``portal:ａｃｍｅ``: the writer files both under ``portal:acme``; no source is added."""
    from rescind.contract import layout
    from rescind.scenario.via_streams import wait_idle
    from rescind.transport import connection

    story = make_story(rescind_workers, tenant_name)
    try:
        before = sorted(r[0] for r in story.graph.rows("MATCH (s:Source) RETURN s.id"))
        events = [{"type": "observation_recorded", "event_id": f"sp{i}", "tenant": tenant_name,
                   "at": "2026-11-05T00:00:00Z", "source": spelled, "text": f"Acme note {i}",
                   "source_kind": "vendor_portal"}
                  for i, spelled in enumerate(["PORTAL:Acme ", "portal:ａｃｍｅ"])]
        r = story.client.post(f"{story.base}/events", headers=story.as_("agent"),
                              json={"events": events})
        assert r.status_code == 200, r.text
        wait_idle(connection.connect(rescind_workers), layout.tenant_stream(tenant_name))
        g = story.graph
        assert sorted(r[0] for r in g.rows("MATCH (s:Source) RETURN s.id")) == before
        assert sorted(g.rows("MATCH (s:Source)-[:SAID]->(m:Mem) WHERE m.text STARTS WITH "
                             "'Acme note' RETURN s.id, m.text")) == [
            ["portal:acme", "Acme note 0"], ["portal:acme", "Acme note 1"]]
    finally:
        forget(rescind_workers, tenant_name)
