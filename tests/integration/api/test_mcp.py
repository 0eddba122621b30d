"""The MCP server with the official `mcp` client: in process, over stdio (`rescind api mcp
--token …`) and over streamable HTTP (`rescind api mcp --http`, each request with its bearer
token), on the vendor-portal story: the tools and resources an assistant gets, acting with the
caller's token and nothing more."""

from __future__ import annotations

import contextlib
import json
import re
import signal
import subprocess
import sys
import time
from urllib.parse import quote

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from rescind.api import api_routes, mcp_tools, permission_of
from rescind.api.auth import PERMISSIONS, TokenStore, digest
from rescind.api.mcp import create_server
from rescind.api.serve import mcp_thread
from rescind.contract import layout
from rescind.graph import tenant_settings
from rescind.graph.store import TenantGraph, connect
from rescind.operator.audit import AuditLog
from rescind.runtime.settings import Settings
from rescind.scenario.replay import replay_text
from tests.support.api import COMPROMISE, WINDOW, forget, story_text
from tests.support.paths import ROOT
from tests.support.recalls import BANK_FILE

READ = {"whoami", "revision", "list_sources", "search_memories", "explain", "memory_history",
        "memory_as_of", "as_of", "fragility", "pending_payments", "audit_order",
        "retraction_list", "retraction", "gate_log", "recall_list", "recall", "audit_log"}
DECIDE = {"preview_retraction", "commit_retraction", "preview_reinstatement", "reinstate",
          "preview_withdrawal", "commit_withdrawal", "preview_correction", "commit_correction"}
FINANCE = {"approve_recall", "reject_recall", "annotate_recall", "export_recall",
           "approve_withdrawal_notice", "export_withdrawal_notice"}
TOOLS = READ | DECIDE | FINANCE | {"ask_gate", "send_events"}
# API routes an assistant does not get: the console's drawing data, and the admin's jobs
# (tenants and tokens; the MCP tools act on one tenant, so an admin token is refused).
NOT_MCP = {"GET /api/v1/tenants/{tenant}/overview"}


@pytest.fixture
def tenant(falkordb, tenant_name):
    """The story in a tenant of its own, and a token of each role."""
    replay_text(story_text(), falkordb, tenant_name)
    tenant_settings.update(connect(falkordb), tenant_name, BANK_FILE)  # camt.056 exports
    store = TokenStore(connect(falkordb))
    tokens = {role: store.create(tenant_name, role, f"{role}@mcp.example", "test",
                                 register=True)[0]
              for role in ("viewer", "security", "finance", "agent")}
    yield falkordb, tenant_name, tokens
    forget(falkordb, tenant_name)


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
    if r.structured_content is not None and set(r.structured_content) == {"result"}:
        return r.structured_content["result"]  # a list, as the SDK wraps it
    return json.loads(r.content[0].text)


def test_the_tools_an_assistant_gets(tenant):
    """The server lists exactly the tools of the table of jobs, among them every tool of the
    issue, each with a description, and the arguments a caller must give (not the token, which
    the server holds)."""
    url, _, tokens = tenant

    async def steps(client):
        return (await client.list_tools()).tools

    tools = session(url, tokens["viewer"], steps)
    assert {t.name for t in tools} == {j.name for j in mcp_tools.tools()} >= TOOLS
    assert all(t.description for t in tools)
    schema = {t.name: t.input_schema for t in tools}
    assert set(schema["commit_retraction"]["required"]) == {"source", "reason", "rev"}
    assert set(schema["explain"]["properties"]) == {"memory"}  # not the caller, not the context


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
        ahead = await call(client, "preview_reinstatement", retraction="r-mcp")
        back = await call(client, "reinstate", retraction="r-mcp", rev=ahead["rev"])
        return p, rev_before, stale, done, recalls, back

    p, rev_before, stale, done, recalls, back = session(url, tokens["security"], steps)
    assert p["committed"] is False and rev_before == p["rev"] and "graph" not in p
    assert stale[0] == "error" and "stale preview" in stale[1]
    assert done["committed"] is True and sum(done["counts"].values()) == 7
    assert [(r["name"], r["state"]) for r in recalls] == [("pay-1041", "drafted")]
    assert back["direction"] == "IN" and sum(back["counts"].values()) == 7
    log = TokenStore(connect(url)).conn.xrevrange(layout.audit_key(name))
    entries = [{k.decode(): v.decode() for k, v in f.items()} for _, f in log]
    assert [(e["action"], e["result"], e["via"]) for e in entries[:4]] == [
        ("retraction.reinstate", "ok", "mcp"), ("retraction.reinstate.preview", "ok", "mcp"),
        ("retraction.commit", "ok", "mcp"),
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
                await call(client, "reinstate", retraction="r-1", rev=rev),
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


def test_finance_rejects_annotates_approves_and_exports_through_the_assistant(falkordb,
                                                                                tenant_name):
    """Both of the story's payments executed and OUT: finance rejects one with a reason (an
    empty reason, an unknown payment and approving it afterwards are refused, saying why),
    annotates and approves the other, exports it as camt.056 and CSV; each decision is in the
    audit log. Security then reinstates: the answer warns that the approved recall is in the
    outbox, naming the entry to pull."""
    story = story_text().replace('"payee": "Acme Ltd", "executed": false',
                                 '"payee": "Acme Ltd", "executed": true')
    assert story.count('"executed": true') == 2
    replay_text(story, falkordb, tenant_name)
    tenant_settings.update(connect(falkordb), tenant_name, BANK_FILE)  # camt.056 exports
    store = TokenStore(connect(falkordb))
    tokens = {role: store.create(tenant_name, role, f"{role}@mcp.example", "test",
                                 register=True)[0] for role in ("security", "finance")}
    try:
        _finance_day(falkordb, tenant_name, tokens)
    finally:
        forget(falkordb, tenant_name)


def _finance_day(url: str, name: str, tokens: dict) -> None:
    async def security(client):
        p = await call(client, "preview_retraction", source="portal:acme", reason="hacked",
                       **WINDOW)
        return await call(client, "commit_retraction", source="portal:acme", reason="hacked",
                          rev=p["rev"], id="r-fin", **WINDOW)

    assert session(url, tokens["security"], security)["committed"] is True

    async def finance(client):
        return {
            "list": await call(client, "recall_list"),
            "empty": await call(client, "reject_recall", memory="pay-1042", reason=" "),
            "unknown": await call(client, "reject_recall", memory="pay-9999", reason="x"),
            "rejected": await call(client, "reject_recall", memory="pay-1042",
                                   reason="Acme confirmed INV-1042 was paid to its own account"),
            "approve_rejected": await call(client, "approve_recall", memory="pay-1042"),
            "noted": await call(client, "annotate_recall", memory="pay-1041",
                                text="Acme's AP says they never changed banks"),
            "approved": await call(client, "approve_recall", memory="pay-1041"),
            "xml": await call(client, "export_recall", memory="pay-1041", format="camt.056"),
            "csv": await call(client, "export_recall", memory="pay-1041", format="csv"),
            "draft_export": await call(client, "export_recall", memory="pay-1042"),
        }

    d = session(url, tokens["finance"], finance)
    assert [(r["name"], r["state"]) for r in d["list"]] == [("pay-1042", "drafted"),
                                                            ("pay-1041", "drafted")]
    assert d["empty"][0] == "error" and "reason" in d["empty"][1]
    assert d["unknown"][0] == "error" and "no memory or action 'pay-9999'" in d["unknown"][1]
    rejected = d["rejected"]
    assert rejected["state"] == "rejected" and rejected["rejected"]["by"] == "finance@mcp.example"
    assert rejected["draft"].startswith("RECALL REQUEST - REJECTED by finance@mcp.example")
    assert "Acme confirmed INV-1042 was paid to its own account" in rejected["draft"]
    assert "rejected by finance@mcp.example" in d["approve_rejected"][1]
    assert d["noted"]["notes"][0]["text"] == "Acme's AP says they never changed banks"
    assert d["approved"]["state"] == "approved" and d["approved"]["outbox"] == \
        f"recall:{d['approved']['action']}"
    assert d["xml"]["file"]["media_type"] == "application/xml"
    assert d["csv"]["file"]["content"].splitlines()[1].startswith("pay-1041,")
    assert [e["format"] for e in d["csv"]["exports"]] == ["camt.056", "csv"]
    assert "only an approved recall is exported" in d["draft_export"][1]
    graph = TenantGraph(connect(url), name)
    assert graph.rows("MATCH (o:Outbox) RETURN o.id") == [[d["approved"]["outbox"]]]
    entries = [(e["action"], e["result"], e["target"])
               for e in AuditLog(connect(url)).entries(name, 50) if e["via"] == "mcp"]
    for action in ("recall.reject", "recall.annotate", "recall.approve", "recall.export"):
        assert (action, "ok") in {(a, r) for a, r, _ in entries}, action
    assert ("recall.approve", "refused", "pay-1042") in entries

    async def reinstate(client):
        ahead = await call(client, "preview_reinstatement", retraction="r-fin")
        return await call(client, "reinstate", retraction="r-fin", rev=ahead["rev"])

    back = session(url, tokens["security"], reinstate)
    [pull] = back["recalls_to_pull"]
    assert (pull["name"], pull["outbox"]) == ("pay-1041", d["approved"]["outbox"])
    [warning] = [w for w in back["warnings"] if " is IN again" in w]
    assert "pay-1041 is IN again" in warning and d["approved"]["outbox"] in warning
    assert "exported as csv" in warning


# -- parity with the API ------------------------------------------------------------------------
def test_every_job_of_the_api_is_a_tool_with_the_same_permission(tenant):
    """Each API route a tenant's token may use (all but the admin's and the console's drawing
    data) is the job of exactly one tool, which names it and needs the route's permission (the
    same roles); no tool names a route the API does not have."""
    url, _, tokens = tenant

    async def steps(client):
        return (await client.list_tools()).tools

    tools = session(url, tokens["viewer"], steps)
    api = {f"{m} {r.path}": permission_of(r) for r in api_routes() for m in r.methods}
    jobs = {k: v for k, v in api.items() if v != "admin" and k not in NOT_MCP}
    by_route = {t.meta["rescind/route"]: t for t in tools}
    assert len(by_route) == len(tools)  # one tool per route
    assert set(by_route) == set(jobs)
    for route, t in by_route.items():
        assert t.meta["rescind/permission"] == jobs[route], route
        assert t.meta["rescind/roles"] == list(PERMISSIONS[jobs[route]])


# -- every tool, over stdio and over streamable HTTP --------------------------------------------
ROLES = ("viewer", "security", "finance", "agent")


@pytest.fixture(scope="module")
def mcp_http(falkordb):
    """`rescind api mcp --http`'s server (streamable HTTP at /mcp) in a thread."""
    with mcp_thread(falkordb, "127.0.0.1", 0, Settings(url=falkordb)) as endpoint:
        yield endpoint


@contextlib.asynccontextmanager
async def over_stdio(url: str, token: str):
    """`rescind api mcp --token …`, launched by the client as a subprocess."""
    params = StdioServerParameters(
        command=sys.executable, cwd=str(ROOT),
        args=["-m", "rescind.cli", "api", "mcp", "--url", url, "--token", token])
    async with Client(params) as client:
        yield client


@contextlib.asynccontextmanager
async def over_http(endpoint: str, token: str, mode: str = "auto"):
    """The official client over streamable HTTP, every request with the token."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http, \
            Client(streamable_http_client(endpoint, http_client=http), mode=mode) as client:
        yield client


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_every_tool_and_resource_does_its_job_for_the_roles_that_may(tenant, transport,
                                                                      request):
    """One token of each role, each through its own client over the transport: the agent asks
    the gate and sends events; the viewer reads everything and is refused decisions and the
    audit log; security previews and commits a retraction, withdraws and corrects, reads the
    audit log; the held payment, the drafted recall, the history and as-of follow; finance
    approves the recall (not twice), and may not decide; security reinstates. Every tool is
    called; the recalls and held payments are resources of the tenant, refused for another
    tenant; refusals are audited with the transport's `via`."""
    url, name, tokens = tenant
    if transport == "stdio":
        opener, via = (lambda t: over_stdio(url, t)), "mcp"
    else:
        endpoint = request.getfixturevalue("mcp_http")
        opener, via = (lambda t: over_http(endpoint, t)), "mcp-http"
    called: set[str] = set()

    async def main():
        async with contextlib.AsyncExitStack() as stack:
            clients = {r: await stack.enter_async_context(opener(tokens[r])) for r in ROLES}

            async def as_(role, tool, **args):
                called.add(tool)
                return await call(clients[role], tool, **args)

            return await tour(as_, clients, name)

    out = anyio.run(main)
    assert called == TOOLS
    log = AuditLog(connect(url))
    refused = {(e["who"].split("@")[0], e["action"]) for e in log.entries(name, 200)
               if e["result"] == "refused" and e["via"] == via}
    assert {("viewer", "mcp.preview_retraction"), ("viewer", "mcp.audit_log"),
            ("viewer", "mcp.approve_recall"), ("finance", "mcp.commit_retraction"),
            ("agent", "mcp.list_sources"), ("viewer", "mcp.resource.recalls"),
            ("security", "retraction.commit")} <= refused
    decided = [(e["action"], e["who"]) for e in log.entries(name, 200)
               if e["result"] == "ok" and e["via"] == via]
    assert {("recall.approve", "finance@mcp.example"), ("recall.annotate", "finance@mcp.example"),
            ("recall.export", "finance@mcp.example")} <= set(decided)
    assert ("viewer", "mcp.export_recall") in refused
    assert ("withdrawal.commit", "security@mcp.example") in decided
    assert out["done"]


async def tour(as_, clients, name) -> dict:
    # The agent: who it is, the gate, events; reads are not its job.
    me = await as_("agent", "whoami")
    assert (me["tenant"], me["role"]) == (name, "agent")
    asked = await as_("agent", "ask_gate", action="pay-1042", amount=34500)
    assert asked["allowed"] is False and "trust domain" in asked["reason"]
    sent = await as_("agent", "send_events", events=[{
        "type": "source_declared", "event_id": f"{name}-src", "tenant": name,
        "at": "2026-11-04T00:00:00Z", "source": "portal:globex", "source_kind": "vendor_portal"}])
    assert sent["accepted"] == 1
    foreign = await as_("agent", "send_events", events=[{
        "type": "source_declared", "event_id": "x", "tenant": "elsewhere",
        "at": "2026-11-04T00:00:00Z", "source": "s", "source_kind": "portal"}])
    assert foreign[0] == "error" and "this token sends events of" in foreign[1]
    assert "agent role may not" in (await as_("agent", "list_sources"))[1]

    # The viewer reads, before anything is retracted.
    rev0 = (await as_("viewer", "revision"))["revision"]
    assert {s["id"] for s in await as_("viewer", "list_sources")} >= {"portal:acme",
                                                                         "contract:acme"}
    assert {m["name"] for m in await as_("viewer", "search_memories", query="iban",
                                         kind="action")} == {"pay-1041", "pay-1042"}
    assert (await as_("viewer", "explain", memory="pay-1042"))["tree"]["status"] == "IN"
    assert (await as_("viewer", "fragility", memory="pay-1042"))["fragility"] == 1
    [pending] = await as_("viewer", "pending_payments")
    assert (pending["name"], pending["held"], pending["refused"]) == ("pay-1042", False, False)
    gates = await as_("viewer", "gate_log", action="pay-1042")
    assert gates and gates[0]["allowed"] is False
    assert {r["source"] for r in await as_("viewer", "audit_order")} >= {"portal:acme"}
    for tool, args in (("preview_retraction", {"source": "portal:acme", "reason": "x"}),
                       ("audit_log", {})):
        refused = await as_("viewer", tool, **args)
        assert refused[0] == "error" and "viewer role may not" in refused[1]

    # Security: the retraction, a withdrawal and a correction, each previewed first.
    p = await as_("security", "preview_retraction", source="portal:acme",
                  reason=COMPROMISE["reason"], **WINDOW)
    assert sum(p["counts"].values()) == 7 and p["committed"] is False
    stale = await as_("security", "commit_retraction", source="portal:acme", reason="x",
                      rev=p["rev"] - 1, **WINDOW)
    assert stale[0] == "error" and "stale preview" in stale[1]
    done = await as_("security", "commit_retraction", source="portal:acme", reason="hacked",
                     rev=p["rev"], id="r-tour", **WINDOW)
    assert done["committed"] is True and "graph" not in done
    rev1 = (await as_("viewer", "revision"))["revision"]
    assert rev1 > rev0
    w = await as_("security", "preview_withdrawal", memory="o-inv-1", reason="not an invoice")
    assert w["committed"] is False
    bad = await as_("security", "commit_withdrawal", memory="o-inv-1", reason="", rev=w["rev"])
    assert bad[0] == "error" and "reason" in bad[1]
    wd = await as_("security", "commit_withdrawal", memory="o-inv-1", reason="not an invoice",
                   rev=w["rev"], id="wd-tour")
    assert wd["committed"] is True
    c = await as_("security", "preview_correction", memory="n-remit-contract",
                  text="Acme remit address is 12 Dock Road, Leeds", reason="the contract says 12")
    cor = await as_("security", "commit_correction", memory="n-remit-contract",
                    text="Acme remit address is 12 Dock Road, Leeds", reason="the contract says 12",
                    rev=c["rev"], id="cor-tour")
    assert cor["committed"] is True
    listed = {r["id"]: r for r in await as_("security", "retraction_list")}
    assert {"r-tour", "wd-tour", "cor-tour"} <= set(listed)
    assert (listed["r-tour"]["from"], listed["r-tour"]["state"]) == ("2026-11-01T00:00:00Z",
                                                                      "committed")
    one = await as_("viewer", "retraction", retraction="r-tour")
    assert one["source"] == "portal:acme"
    audit = await as_("security", "audit_log", limit=50)
    assert {"retraction.commit", "withdrawal.commit", "correction.commit"} <= {
        e["action"] for e in audit}

    # What follows: a held payment, a drafted recall, history and as-of.
    # pay-1042, OUT now, is scheduled; its release was refused: it is held (a refused
    # release leaves a scheduled payment at the bank; issue 28).
    [held] = await as_("viewer", "pending_payments", held=True)
    assert held["name"] == "pay-1042" and held["status"] == "OUT" and not held["refused"]
    assert await as_("viewer", "pending_payments", held=False) == []
    [drafted] = await as_("viewer", "recall_list")
    assert (drafted["name"], drafted["state"]) == ("pay-1041", "drafted")
    assert (await as_("viewer", "recall", memory="pay-1041"))["state"] == "drafted"
    hist = (await as_("viewer", "memory_history", memory="pay-1041"))["history"]
    assert [(h["status"], h["cause"]) for h in hist][-2:] == [("OUT", "r-tour"),
                                                                ("OUT", "wd-tour")]
    then = await as_("viewer", "memory_as_of", memory="pay-1041", rev=rev0)
    now = await as_("viewer", "memory_as_of", memory="pay-1041", rev=rev1)
    assert (then["why"]["status"], now["why"]["status"]) == ("IN", "OUT")
    neither = await as_("viewer", "memory_as_of", memory="pay-1041")
    assert neither[0] == "error" and "exactly one of at" in neither[1]
    before = await as_("viewer", "as_of", rev=rev0, kind="action")
    assert {i["name"]: i["why"]["status"] for i in before["items"]} == {
        "pay-1041": "IN", "pay-1042": "IN"}
    outs = await as_("viewer", "search_memories", status="OUT", kind="action")
    assert {m["name"] for m in outs} == {"pay-1041", "pay-1042"}

    # Resources: the tenant's own, listed and read; another tenant's refused.
    viewer = clients["viewer"]
    uris = {str(r.uri) for r in (await viewer.list_resources()).resources}
    assert uris == {f"rescind://{name}/recalls", f"rescind://{name}/payments/held",
                    f"rescind://{name}/payments/pending"}
    templates = {t.uri_template for t in (await viewer.list_resource_templates())
                 .resource_templates}
    assert "rescind://{tenant}/recalls/{memory}" in templates
    held_res = await _read(viewer, f"rescind://{name}/payments/held")
    assert [h["name"] for h in held_res] == ["pay-1042"]  # scheduled, its release refused
    pending_res = await _read(viewer, f"rescind://{name}/payments/pending")
    assert [(p["name"], p["refused"]) for p in pending_res] == [("pay-1042", False)]
    recalls_res = await _read(viewer, f"rescind://{name}/recalls")
    assert [r["name"] for r in recalls_res] == ["pay-1041"]
    one_res = await _read(viewer, f"rescind://{name}/recalls/{quote('pay-1041', safe='')}")
    assert one_res["state"] == "drafted"
    with pytest.raises(MCPError, match="this token is for tenant"):
        await viewer.read_resource("rescind://elsewhere/recalls")

    # Finance approves, once; the viewer and finance may not do each other's or security's job.
    assert "viewer role may not" in (await as_("viewer", "approve_recall", memory="pay-1041"))[1]
    ok = await as_("finance", "approve_recall", memory="pay-1041")
    assert (ok["name"], ok["state"]) == ("pay-1041", "approved")
    again = await as_("finance", "approve_recall", memory="pay-1041")
    assert again[0] == "error"
    noted = await as_("finance", "annotate_recall", memory="pay-1041", text="Bank called back")
    assert [(n["by"], n["text"]) for n in noted["notes"]] == [("finance@mcp.example",
                                                               "Bank called back")]
    late = await as_("finance", "reject_recall", memory="pay-1041", reason="changed my mind")
    assert late[0] == "error" and "cannot be rejected now" in late[1]
    out = await as_("finance", "export_recall", memory="pay-1041", format="camt.056")
    assert out["state"] == "exported" and out["exports"][0]["by"] == "finance@mcp.example"
    assert out["file"]["content"].startswith("<?xml") and "<OrgnlEndToEndId>pay-1041<" in \
        out["file"]["content"]
    for tool, args in (("export_recall", {"memory": "pay-1041"}),
                       ("reject_recall", {"memory": "pay-1041", "reason": "x"}),
                       ("annotate_recall", {"memory": "pay-1041", "text": "x"})):
        assert "viewer role may not" in (await as_("viewer", tool, **args))[1]
    assert "finance role may not" in (await as_("finance", "commit_retraction",
                                                source="portal:acme", reason="x", rev=1))[1]

    # Security reinstates what it did.
    ahead = await as_("security", "preview_reinstatement", retraction="wd-tour")
    back = await as_("security", "reinstate", retraction="wd-tour", rev=ahead["rev"])
    assert back["direction"] == "IN"
    # And the retraction: pay-1041 is IN again, its exported recall withdrawn; finance approves
    # and exports the withdrawal notice for the bank.
    ahead = await as_("security", "preview_reinstatement", retraction="r-tour")
    assert any("withdrawal notice" in w for w in ahead["warnings"])
    await as_("security", "reinstate", retraction="r-tour", rev=ahead["rev"])
    assert "viewer role may not" in (await as_("viewer", "approve_withdrawal_notice",
                                               memory="pay-1041"))[1]
    n = await as_("finance", "approve_withdrawal_notice", memory="pay-1041")
    assert (n["state"], n["notice"]["state"]) == ("withdrawn", "approved")
    letter = await as_("finance", "export_withdrawal_notice", memory="pay-1041")
    assert "Please disregard our request" in letter["file"]["content"]
    return {"done": True}


async def _read(client, uri: str):
    r = await client.read_resource(uri)
    return json.loads(r.contents[0].text)


# -- streamable HTTP: who may connect ----------------------------------------------------------
MCP_HEADERS = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def test_http_refuses_a_request_without_a_known_tenant_token_and_audits_it(tenant, mcp_http):
    """Over HTTP a request with no token, another scheme, a made-up token or a revoked one is
    answered 401 (with WWW-Authenticate: Bearer), an admin's token 403, before any MCP message
    is read; each is in the server's audit log (via mcp-http). The official client fails to
    connect without a token."""
    url, name, tokens = tenant
    store = TokenStore(connect(url))
    admin_token, admin = store.create(None, "admin", f"ada-{name}@mcp.example", "test")
    revoked, record = store.create(name, "viewer", f"gone-{name}@mcp.example", "test")
    store.revoke(name, record["id"])

    async def main():
        async with httpx2.AsyncClient() as http:
            out = []
            for auth in (None, f"Basic {tokens['viewer']}", "Bearer rsc_made-up",
                         f"Bearer {revoked}", f"Bearer {admin_token}"):
                headers = {**MCP_HEADERS, **({"Authorization": auth} if auth else {})}
                r = await http.post(mcp_http, json=LIST, headers=headers)
                out.append((r.status_code, r.headers.get("www-authenticate"),
                            r.json()["detail"]))
            return out

    try:
        answers = anyio.run(main)
        server = [(e["who"], e["status"]) for e in AuditLog(store.conn).entries(None, 200)
                  if e["action"] == "mcp.http" and e["via"] == "mcp-http"]
    finally:
        store.conn.delete(layout.token_key(digest(admin_token)))
        store.conn.hdel(layout.ADMIN_TOKENS, admin["id"])
    assert [a[:2] for a in answers] == [(401, "Bearer")] * 4 + [(403, None)]
    assert "sign in" in answers[0][2] and "not an admin's" in answers[4][2]
    assert (f"ada-{name}@mcp.example", "403") in server
    assert ("anonymous (127.0.0.1)", "401") in server

    async def no_token():
        async with Client(mcp_http) as client:
            return await client.list_tools()

    with pytest.raises(BaseException) as failed:
        anyio.run(no_token)
    assert "MCPError" in repr(failed.value)  # the 401 it got, as the SDK reports it


def test_http_session_belongs_to_its_token_and_a_revoked_token_stops(tenant, mcp_http):
    """A session opened with one token is unknown (404) to a request with another; a token
    revoked mid-session is refused (401) on its next request; each request acts with its own
    token (a viewer's call is the viewer's, in the tenant's audit log with via mcp-http)."""
    url, name, tokens = tenant
    store = TokenStore(connect(url))

    async def main():
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}
        viewer = {**MCP_HEADERS, "Authorization": f"Bearer {tokens['viewer']}"}
        async with httpx2.AsyncClient() as http:
            r = await http.post(mcp_http, json=init, headers=viewer)
            sid = r.headers["mcp-session-id"]
            h = {"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
            await http.post(mcp_http, json={"jsonrpc": "2.0",
                                            "method": "notifications/initialized"},
                            headers={**viewer, **h})
            other = await http.post(mcp_http, json=LIST, headers={
                **MCP_HEADERS, **h, "Authorization": f"Bearer {tokens['security']}"})
            own = await http.post(mcp_http, json=LIST, headers={**viewer, **h})
            [t] = [t for t in store.tokens(name) if t["role"] == "viewer"]
            store.revoke(name, t["id"])
            after = await http.post(mcp_http, json=LIST, headers={**viewer, **h})
            return other.status_code, own.status_code, after.status_code

    assert anyio.run(main) == (404, 200, 401)


def test_http_speaks_both_protocol_generations(tenant, mcp_http):
    """The client's handshake-era mode (2025-11-25: initialize, a session) and the per-request
    2026-07-28 mode both list the tools and act with the token."""
    url, name, tokens = tenant

    async def main(mode):
        async with over_http(mcp_http, tokens["security"], mode) as client:
            return (client.protocol_version, len((await client.list_tools()).tools),
                    await call(client, "whoami"))

    legacy, modern = anyio.run(main, "legacy"), anyio.run(main, "auto")
    assert legacy[0] == "2025-11-25" and modern[0] == "2026-07-28"
    for _, count, me in (legacy, modern):
        assert count == len(mcp_tools.tools()) and (me["tenant"], me["role"]) == (name,
                                                                                 "security")


def test_the_in_process_server_refuses_another_tenants_resource_and_audits_it(tenant):
    """A resource of another tenant is refused (and audited in the caller's tenant, via mcp);
    a recall that does not exist is a clear error."""
    url, name, tokens = tenant

    async def steps(client):
        errors = []
        for uri in ("rescind://other/payments/held", f"rescind://{name}/recalls/pay-1042"):
            try:
                await client.read_resource(uri)
            except MCPError as exc:
                errors.append(str(exc))
        return errors

    foreign, missing = session(url, tokens["finance"], steps)
    assert "this token is for tenant" in foreign
    assert "no recall for 'pay-1042'" in missing  # it was not executed
    [entry] = [e for e in AuditLog(connect(url)).entries(name, 10)
               if e["action"] == "mcp.resource.held_payments"]
    assert (entry["status"], entry["via"], entry["who"]) == ("403", "mcp", "finance@mcp.example")


def test_rescind_api_mcp_http_serves_until_stopped(tenant):
    """`rescind api mcp --http --port 0` prints the endpoint it listens on (the port the system
    chose), where the official client acts with its bearer token; SIGTERM stops it. `--host`
    without `--http` is refused before anything starts."""
    url, name, tokens = tenant
    cmd = [sys.executable, "-m", "rescind.cli", "api", "mcp"]
    wrong = subprocess.run([*cmd, "--url", url, "--port", "9"], cwd=ROOT, capture_output=True,
                           text=True, timeout=60)
    assert wrong.returncode == 2 and "--host and --port are for --http" in wrong.stderr
    proc = subprocess.Popen([*cmd, "--http", "--url", url, "--port", "0"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
        endpoint = re.search(r"on (http://127\.0\.0\.1:\d+/mcp) ", line).group(1)
        assert not endpoint.endswith(":0/mcp")

        async def main():
            async with over_http(endpoint, tokens["viewer"]) as client:
                return await call(client, "whoami")

        me = None
        for _ in range(50):  # the port is bound before uvicorn starts answering
            try:
                me = anyio.run(main)
                break
            except Exception:
                time.sleep(0.1)
        assert me is not None and (me["tenant"], me["role"]) == (name, "viewer")
    finally:
        proc.send_signal(signal.SIGTERM)
        # uvicorn shuts down, then raises the signal it caught again (as `rescind api serve`)
        assert proc.wait(timeout=30) in (0, -signal.SIGTERM)
