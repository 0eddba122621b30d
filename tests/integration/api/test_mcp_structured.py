"""The MCP server's typed answers, its version and its stdio token check, with the official
`mcp` client against the real server: every tool publishes an output schema and answers
structured content (a list in one text block, not one per item); the server names the
package's version; a bogus or admin stdio token stops the server at start, saying why."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata

import anyio
import pytest
import redis
from mcp import Client

from rescind.api.auth import TokenStore
from rescind.api.mcp import create_server
from rescind.graph.store import connect
from rescind.operator.audit import AuditLog
from rescind.scenario.replay import replay_text
from tests.support.api import ADMIN, COMPROMISE, forget, story_text
from tests.support.paths import ROOT


@pytest.fixture
def tenant(falkordb, tenant_name):
    replay_text(story_text(), falkordb, tenant_name)
    store = TokenStore(connect(falkordb))
    tokens = {role: store.create(tenant_name, role, f"{role}@mcp.example", "test",
                                 register=True)[0] for role in ("security", "finance")}
    yield falkordb, tenant_name, tokens
    forget(falkordb, tenant_name)


def test_every_tool_answers_typed_structured_content_and_the_server_names_its_version(tenant):
    """initialize names the package's version; every tool has an output schema; lists come as
    {"result": [...]} with one text block of the same JSON; objects come as themselves, typed
    (a payment's fragility, a preview's counts, an audit entry's detail an object)."""
    url, _, tokens = tenant

    async def steps():
        async with Client(create_server(url, tokens["security"])) as c:
            info = c.server_info
            tools = (await c.list_tools()).tools
            sources = await c.call_tool("list_sources", {})
            me = await c.call_tool("whoami", {})
            frag = await c.call_tool("fragility", {"memory": "pay-1042"})
            preview = await c.call_tool("preview_retraction", {
                "source": "portal:acme", "reason": COMPROMISE["reason"],
                "from": COMPROMISE["from"], "to": COMPROMISE["to"]})
            await c.call_tool("whoami", {})
            await c.call_tool("preview_retraction", {  # a second entry, for the next page
                "source": "portal:acme", "reason": "again", "from": COMPROMISE["from"],
                "to": COMPROMISE["to"]})
            log = await c.call_tool("audit_log", {"limit": 1})
            newest = log.structured_content["result"][0]["id"]
            older = await c.call_tool("audit_log", {"limit": 5, "before": newest})
            return info, tools, sources, me, frag, preview, log, older

    info, tools, sources, me, frag, preview, log, older = anyio.run(steps)
    assert info.version == metadata.version("rescind") != ""
    assert [t.name for t in tools if not t.output_schema] == []
    schema = {t.name: t.output_schema for t in tools}
    assert schema["list_sources"]["properties"]["result"]["type"] == "array"
    assert {"fragility", "would_fake_it"} <= set(schema["fragility"]["properties"])
    assert {"committed", "rev", "counts"} <= set(schema["preview_retraction"]["required"])

    assert len(sources.content) == 1
    listed = sources.structured_content["result"]
    assert json.loads(sources.content[0].text) == listed
    assert {s["id"] for s in listed} == {"portal:acme", "contract:acme", "inbox:ap"}
    assert me.structured_content["role"] == "security"
    assert me.structured_content["currency"] == "USD"
    f = frag.structured_content
    assert (f["fragility"], f["amount"]) == (1, 34500) and isinstance(f["would_fake_it"], list)
    p = preview.structured_content
    assert p["committed"] is False and p["counts"]["pending_actions"] == 1
    assert p["to_hold"][0]["amount"] == 34500
    [entry, *_] = log.structured_content["result"]
    assert entry["action"] == "retraction.preview" and isinstance(entry["detail"], dict)
    assert entry["summary"].startswith("security@mcp.example (security, via mcp) previewed")
    assert entry["detail"]["reason"] == "again"
    [first] = older.structured_content["result"]  # the next page, by its cursor
    assert first["detail"]["reason"] == COMPROMISE["reason"] and first["id"] < entry["id"]


def _stdio(url: str, token: str) -> subprocess.CompletedProcess:
    """`rescind api mcp --token …` with nothing on its stdin: a good token serves until EOF."""
    return subprocess.run([sys.executable, "-m", "rescind.cli", "api", "mcp", "--url", url,
                           "--token", token], cwd=ROOT, input="", capture_output=True,
                          text=True, timeout=120)


def test_a_bogus_stdio_token_stops_the_server_at_start(falkordb, tenant):
    """An unknown token and the admin's: the stdio server does not start (exit 2), says why and
    what to do, and the refusal is in the server's audit log; a tenant's token serves."""
    url, _, tokens = tenant
    conn = redis.Redis.from_url(url)
    before = len(AuditLog(conn).entries(None, 1000))
    bogus = _stdio(url, "rsc_not-a-token")
    assert bogus.returncode == 2, bogus.stderr
    assert "the MCP server did not start" in bogus.stderr
    assert "unknown or revoked" in bogus.stderr and "rescind api token create" in bogus.stderr
    admin = subprocess.run([sys.executable, "-m", "rescind.cli", "api", "mcp", "--url", url,
                            "--token", ADMIN], cwd=ROOT, input="", capture_output=True,
                           text=True, timeout=120, env={**_env(), "RESCIND_ADMIN_TOKEN": ADMIN})
    assert admin.returncode == 2 and "admin token cannot use the MCP tools" in admin.stderr
    started = [e for e in AuditLog(conn).entries(None, 1000)
               if e["action"] == "mcp.start"]
    assert len(AuditLog(conn).entries(None, 1000)) > before
    assert {(e["result"], e["status"]) for e in started} >= {("refused", "401"),
                                                             ("refused", "403")}
    good = _stdio(url, tokens["finance"])
    assert good.returncode == 0, good.stderr


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)
