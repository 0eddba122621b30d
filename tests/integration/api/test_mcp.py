"""The MCP server in process (the mcp package's in-memory client), on the vendor-portal story:
the tools an assistant gets, acting with the caller's token and nothing more."""

from __future__ import annotations

import json
import sys

import anyio
import pytest
from mcp import Client, StdioServerParameters

from rescind.api.auth import TokenStore, digest
from rescind.api.mcp import create_server
from rescind.contract import layout
from rescind.graph.store import TenantGraph, connect
from rescind.operator.audit import AuditLog
from rescind.scenario.replay import replay_text
from tests.support.api import COMPROMISE, WINDOW, story_text
from tests.support.paths import ROOT

TOOLS = {"list_sources", "explain", "fragility", "preview_retraction", "commit_retraction",
         "reinstate", "recall_list", "gate_log", "audit_order", "search_memories"}


@pytest.fixture
def tenant(falkordb, tenant_name):
    """The story in a tenant of its own, and a token of each role."""
    replay_text(story_text(), falkordb, tenant_name)
    store = TokenStore(connect(falkordb))
    tokens = {role: store.create(tenant_name, role, f"{role}@mcp.example", "test",
                                 register=True)[0]
              for role in ("viewer", "security", "finance", "agent")}
    yield falkordb, tenant_name, tokens
    TenantGraph(connect(falkordb), tenant_name).delete()
    conn = store.conn
    for h in conn.hvals(layout.tenant_tokens_key(tenant_name)):
        conn.delete(layout.token_key(h.decode()))
    conn.delete(layout.tenant_tokens_key(tenant_name),
                *conn.scan_iter(match=f"{layout.audit_key(tenant_name)}*"))
    conn.hdel(layout.TENANTS, tenant_name)


def session(url: str, token: str, steps) -> list:
    """Run ``steps(client)`` against a server acting with ``token``; return what it returns."""

    async def main():
        async with Client(create_server(url, token)) as client:
            return await steps(client)

    return anyio.run(main)


async def call(client, tool: str, **args):
    """The tool's answer as data, or ("error", message)."""
    r = await client.call_tool(tool, args)
    if r.is_error:
        return ("error", r.content[0].text)
    if r.structured_content is not None and "result" in r.structured_content:
        return r.structured_content["result"]
    return json.loads(r.content[0].text)


def test_the_tools_an_assistant_gets(tenant):
    """The server lists exactly the tools of the issue, each with a description, and the
    arguments a caller must give (not the token, which the server holds)."""
    url, _, tokens = tenant

    async def steps(client):
        return (await client.list_tools()).tools

    tools = session(url, tokens["viewer"], steps)
    assert {t.name for t in tools} == TOOLS
    assert all(t.description for t in tools)
    schema = {t.name: t.input_schema for t in tools}
    assert set(schema["commit_retraction"]["required"]) == {"source", "reason", "rev"}
    assert "me" not in schema["explain"]["properties"] and "graph" not in schema["explain"][
        "properties"]


def test_security_previews_commits_and_reinstates_through_the_assistant(tenant):
    """Preview changes nothing; a commit at an old revision is refused; at the preview's
    revision seven memories go OUT and the payment is drafted for recall; reinstate puts them
    back; each decision is in the audit log, marked as made through MCP."""
    url, name, tokens = tenant
    graph = TenantGraph(connect(url), name)

    async def steps(client):
        p = await call(client, "preview_retraction", source="portal:acme",
                       reason=COMPROMISE["reason"], **WINDOW)
        rev_before = graph.revision()
        stale = await call(client, "commit_retraction", source="portal:acme", reason="x",
                           rev=p["rev"] - 1, **WINDOW)
        done = await call(client, "commit_retraction", source="portal:acme", reason="hacked",
                          rev=p["rev"], **WINDOW,
                          id="r-mcp")
        recalls = await call(client, "recall_list")
        back = await call(client, "reinstate", retraction="r-mcp")
        return p, rev_before, stale, done, recalls, back

    p, rev_before, stale, done, recalls, back = session(url, tokens["security"], steps)
    assert p["committed"] is False and rev_before == p["rev"] and "graph" not in p
    assert stale[0] == "error" and "stale preview" in stale[1]
    assert done["committed"] is True and sum(done["counts"].values()) == 7
    assert [(r["name"], r["state"]) for r in recalls] == [("pay-1041", "drafted")]
    assert back["direction"] == "IN" and sum(back["counts"].values()) == 7
    log = TokenStore(connect(url)).conn.xrevrange(layout.audit_key(name))
    entries = [{k.decode(): v.decode() for k, v in f.items()} for _, f in log]
    assert [(e["action"], e["result"], e["via"]) for e in entries[:3]] == [
        ("retraction.reinstate", "ok", "mcp"), ("retraction.commit", "ok", "mcp"),
        ("retraction.commit", "refused", "mcp")]
    assert entries[0]["who"] == "security@mcp.example"


def test_a_viewers_assistant_reads_and_searches_but_cannot_decide(tenant):
    """A viewer lists sources, explains a payment down to its sources, reads its fragility and
    the audit order (nothing left at risk); search leaves OUT memories out unless asked;
    preview, commit and reinstate are refused and change nothing."""
    url, name, tokens = tenant
    graph = TenantGraph(connect(url), name)

    async def security(client):
        p = await call(client, "preview_retraction", source="portal:acme", reason="x",
                       **WINDOW)
        return await call(client, "commit_retraction", source="portal:acme", reason="x",
                          rev=p["rev"], **WINDOW,
                          id="r-1")

    session(url, tokens["security"], security)
    rev = graph.revision()

    async def viewer(client):
        return [await call(client, "list_sources"),
                await call(client, "explain", memory="pay-1041"),
                await call(client, "fragility", memory="pay-1042"),
                await call(client, "audit_order"),
                await call(client, "search_memories", query="iban"),
                await call(client, "search_memories", query="iban", include_out=True),
                await call(client, "preview_retraction", source="portal:acme", reason="x"),
                await call(client, "commit_retraction", source="portal:acme", reason="x", rev=rev),
                await call(client, "reinstate", retraction="r-1"),
                await call(client, "explain", memory="no-such-thing")]

    sources, tree, frag, order, search_in, search_all, *refused, missing = session(
        url, tokens["viewer"], viewer)
    assert {s["id"] for s in sources} == {"portal:acme", "contract:acme", "inbox:ap"}
    assert tree["memory"]["name"] == "pay-1041" and tree["tree"]["status"] == "OUT"
    assert frag["fragility"] == 0 and frag["status"] == "OUT"
    assert {r["source"] for r in order} == {s["id"] for s in sources}
    assert all(r["value_at_risk"] == 0 for r in order)  # what rested on the portal is OUT already
    assert search_in == [] and {m["name"] for m in search_all} == {
        "o-bank", "n-bank", "n-bank-confirmed", "p-1041", "p-1042", "pay-1041", "pay-1042"}
    assert all(r[0] == "error" and "viewer role may not" in r[1] for r in refused)
    assert missing[0] == "error" and "no memory or action" in missing[1]
    assert graph.revision() == rev


def test_every_refusal_of_a_tool_is_audited_and_counted(tenant):
    """A viewer's assistant refused a decision five times is one entry of the tenant's log
    with its count (via mcp, by the tool's name); an agent's token refused a read is another;
    a made-up token and an admin's token are counted in the server's log."""
    url, name, tokens = tenant
    store = TokenStore(connect(url))
    admin_token, admin = store.create(None, "admin", "ada@mcp.example", "test")
    try:
        _refusals(url, name, tokens, store, admin_token)
    finally:
        store.conn.delete(layout.token_key(digest(admin_token)))
        store.conn.hdel(layout.ADMIN_TOKENS, admin["id"])


def _refusals(url, name, tokens, store, admin_token) -> None:

    async def viewer(client):
        return [await call(client, "commit_retraction", source="portal:acme", reason="x", rev=1)
                for _ in range(5)]

    async def reader(client):
        return await call(client, "list_sources")

    assert all(r[0] == "error" for r in session(url, tokens["viewer"], viewer))
    assert "agent role may not" in session(url, tokens["agent"], reader)[1]
    made_up = f"rsc_made-up-{name}"
    assert "unknown or revoked" in session(url, made_up, reader)[1]
    assert "not an admin's" in session(url, admin_token, reader)[1]
    log = AuditLog(store.conn)
    rows = [(e["who"], e["action"], e["status"], e["count"], e["via"])
            for e in log.entries(name, 2)]
    assert rows == [("agent@mcp.example", "mcp.list_sources", "403", 1, "mcp"),
                    ("viewer@mcp.example", "mcp.commit_retraction", "403", 5, "mcp")]
    server = [(e["who"], e["action"], e["status"]) for e in log.entries(None, 50)
              if e["who"] == "ada@mcp.example" or e["via"] == "mcp"]
    assert ("ada@mcp.example", "mcp.list_sources", "403") in server
    assert ("anonymous", "mcp.list_sources", "401") in server


def test_a_revoked_or_foreign_token_stops_at_once(tenant):
    """An agent's token may not read through MCP; a token revoked while the server runs is
    refused on the next call; a made-up token is refused."""
    url, name, tokens = tenant
    store = TokenStore(connect(url))

    async def steps(client):
        first = await call(client, "list_sources")
        [record] = [t for t in store.tokens(name) if t["role"] == "viewer"]
        store.revoke(name, record["id"])
        return first, await call(client, "list_sources")

    first, after = session(url, tokens["viewer"], steps)
    assert len(first) == 3 and after[0] == "error" and "unknown or revoked" in after[1]

    async def agent(client):
        return await call(client, "list_sources")

    assert "agent role may not" in session(url, tokens["agent"], agent)[1]
    assert "unknown or revoked" in session(url, "rsc_made-up", agent)[1]


def test_rescind_api_mcp_serves_over_stdio(tenant):
    """`rescind api mcp --token …` is an MCP server on standard input and output: a client
    that launches it lists the tenant's sources through it."""
    url, _, tokens = tenant
    params = StdioServerParameters(
        command=sys.executable, cwd=str(ROOT),
        args=["-m", "rescind.cli", "api", "mcp", "--url", url, "--token", tokens["viewer"]])

    async def main():
        async with Client(params) as client:
            return await call(client, "list_sources")

    assert {s["id"] for s in anyio.run(main)} == {"portal:acme", "contract:acme", "inbox:ap"}


def test_the_window_is_from_and_to_and_a_duplicate_needs_force(tenant):
    """The tools name the window `from`/`to` (`start`/`end` still accepted, marked deprecated
    in the schema; both at once is refused); committing the same compromise again is refused
    naming the retraction in force, and goes through with `force`."""
    url, _, tokens = tenant
    old = {"start": WINDOW["from"], "end": WINDOW["to"]}

    async def steps(client):
        tools = {t.name: t.input_schema for t in (await client.list_tools()).tools}
        p = await call(client, "preview_retraction", source="portal:acme", reason="x", **old)
        both = await call(client, "preview_retraction", source="portal:acme", reason="x",
                          **old, **WINDOW)
        first = await call(client, "commit_retraction", source="portal:acme", reason="x",
                           rev=p["rev"], id="r-first", **WINDOW)
        again = await call(client, "commit_retraction", source="portal:acme", reason="x",
                           rev=first["rev"] + 1, id="r-again", **WINDOW)
        forced = await call(client, "commit_retraction", source="portal:acme", reason="x",
                            rev=first["rev"] + 1, id="r-again", force=True, **WINDOW)
        return tools, p, both, first, again, forced

    tools, p, both, first, again, forced = session(url, tokens["security"], steps)
    props = tools["commit_retraction"]["properties"]
    assert {"from", "to", "force"} <= set(props) and "from_" not in props
    assert props["start"].get("deprecated") is True and props["end"].get("deprecated") is True
    assert sum(p["counts"].values()) == 7  # the deprecated names still work
    assert both[0] == "error" and "deprecated name" in both[1]
    assert first["committed"] is True
    assert again[0] == "error" and "r-first" in again[1] and "force" in again[1]
    assert forced["committed"] is True and sum(forced["counts"].values()) == 0
