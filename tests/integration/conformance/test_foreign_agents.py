"""Conformance: six LangGraph programs written the way public examples are (tests/support/
foreign.py), each wrapped with one ``instrument`` call and a scripted chat model, sync and
async. For every write: its exact premises; after a retraction and after a reinstate: exactly
what is IN and OUT."""

from __future__ import annotations

import pytest
from langgraph.store.memory import InMemoryStore

from rescind.graph.queries import versions as vq
from rescind.graph.store import TenantGraph, connect
from rescind.middleware import SourceTool
from tests.support import foreign as f
from tests.support.conformance import (
    invoke,
    record,
    reinstate,
    retract,
    retract_and_reinstate,
    settle,
    statuses,
    wrap,
)

MODES = ["sync", "async"]


def replaced(url: str, tenant: str) -> dict[str, str]:
    """text of each memory that is no longer current -> why (superseded, deleted)."""
    g = TenantGraph(connect(url), tenant)
    texts = dict(g.rows("MATCH (m:Mem) RETURN m.id, m.text"))
    return {texts[m]: why for m, why in g.rows(vq.NOT_CURRENT, {"ids": sorted(texts)})}
WEB = {"fetch_page": SourceTool(source="web:{url}", kind="web")}
IBAN_1, IBAN_2 = "PT50 0002 0123 1234 5678 9015 4", "PT50 0002 0123 9999 8888 7777 6"


@pytest.mark.parametrize("mode", MODES)
def test_memory_agent_a_store_update_supersedes_and_each_version_rests_on_its_message(
        mode, rescind_workers, tenant_name):
    """memory-agent: the node shows memories as a repr; the user's messages are the source.
    Run 2 updates the same key: v1 is no longer current but stays IN (not retracted), v2
    rests on message 2 only, not on v1 that the model was shown. Retracting the user's source
    takes both out; reinstating puts both back; v1 stays not current."""
    model = f.scripted(
        f.call("upsert_memory", {"content": f"User's IBAN: {IBAN_1}", "context": "chat",
                                 "memory_id": "iban"}), f.done(),
        f.call("upsert_memory", {"content": f"User's IBAN: {IBAN_2}", "context": "moved",
                                 "memory_id": "iban"}), f.done())
    graph = wrap(f.memory_agent(model, InMemoryStore()), rescind_workers, tenant_name)
    u1 = {"configurable": {"user_id": "u1"}}
    invoke(graph, mode, f"My IBAN is {IBAN_1}", u1)
    invoke(graph, mode, f"I moved banks: my IBAN is now {IBAN_2}", u1)
    settle(rescind_workers, graph)
    v1, v2 = f"User's IBAN: {IBAN_1}", f"User's IBAN: {IBAN_2}"
    assert record(rescind_workers, tenant_name) == {
        v1: ("IN", {frozenset({"user:u1"})}), v2: ("IN", {frozenset({"user:u1"})})}
    assert replaced(rescind_workers, tenant_name) == {v1: "superseded"}
    retract_and_reinstate(rescind_workers, tenant_name, "user:u1",
                          after={v1: "OUT", v2: "OUT"}, back={v1: "IN", v2: "IN"})
    graph.rescind.close()


@pytest.mark.parametrize("mode", MODES)
def test_langmem_hot_path_adopts_what_predates_the_wrapper_and_a_delete_withdraws_it(
        mode, rescind_workers, tenant_name):
    """langmem's manage/search tools in a react agent whose prompt lists the user's memories.
    A memory already in the store is adopted (grounded on store:preexisting) when the prompt
    reads it; the new memory rests on the web page it quotes; deleting the old one makes it
    not current (deleted), not OUT. Retracting the page takes out only what rests on it."""
    store = InMemoryStore()
    old_key = "6f1c2a9e-0d4b-4c1e-9a57-3b2f8e1d7c40"  # langmem's ids are UUIDs
    store.put(("memories", "u1"), old_key, {"content": "Preferred contact: email (ticket "
                                                       "TK-5521)"})
    office = "Acme's office: 5 Quay Street, Bristol BS1 4DJ"
    model = f.scripted(
        f.call("fetch_page", {"url": "https://acme.example/press"}),
        f.call("manage_memory", {"content": office, "action": "create"}),
        f.call("manage_memory", {"action": "delete", "id": old_key}), f.done())
    graph = wrap(f.langmem_agent(model, store), rescind_workers, tenant_name, sources=WEB,
                 users={"source": "user:{langgraph_user_id}"})
    invoke(graph, mode, "Where is Acme's new office?", {"configurable": {
        "langgraph_user_id": "u1"}})
    settle(rescind_workers, graph)
    old = "Preferred contact: email (ticket TK-5521)"
    assert record(rescind_workers, tenant_name) == {
        old: ("IN", {frozenset({"said by store:preexisting"})}),
        office: ("IN", {frozenset({"web:https://acme.example/press"})})}
    assert replaced(rescind_workers, tenant_name) == {old: "deleted"}
    retract_and_reinstate(rescind_workers, tenant_name, "web:https://acme.example/press",
                          after={old: "IN", office: "OUT"}, back={old: "IN", office: "IN"})
    graph.rescind.close()


@pytest.mark.parametrize("mode", MODES)
def test_a_supervisor_s_note_rests_on_what_its_researcher_read(mode, rescind_workers,
                                                              tenant_name):
    """langgraph-supervisor, Command hand-offs, streamed with subgraphs: the note taker's note
    rests on the page the researcher fetched in the same top-level run."""
    office = "Acme moved: 5 Quay Street, Bristol BS1 4DJ"
    models = {
        "supervisor": f.scripted(f.call("transfer_to_researcher", {}),
                                 f.call("transfer_to_note_taker", {}), f.done("all done")),
        "researcher": f.scripted(f.call("fetch_page", {"url": "https://acme.example/press"}),
                                 f.done("Acme is at 5 Quay Street")),
        "note_taker": f.scripted(f.call("save_note", {"text": office}), f.done("noted"))}
    graph = wrap(f.supervisor(models, InMemoryStore()), rescind_workers, tenant_name,
                 sources=WEB)
    invoke(graph, mode, "Find Acme's new address and note it", stream=True)
    settle(rescind_workers, graph)
    assert record(rescind_workers, tenant_name) == {
        office: ("IN", {frozenset({"web:https://acme.example/press"})})}
    retract_and_reinstate(rescind_workers, tenant_name, "web:https://acme.example/press",
                          after={office: "OUT"}, back={office: "IN"})
    graph.rescind.close()


@pytest.mark.parametrize("mode", MODES)
def test_create_agent_with_store_tools_names_its_source_from_the_run_s_config(
        mode, rescind_workers, tenant_name):
    """langchain's create_agent; the CRM source is ``crm:{user_id}``, a value of the run's
    config, not of the tool; the saved user info (a dict with no "text") rests on it."""
    model = f.scripted(f.call("lookup_crm", {"customer": "jane"}),
                       f.call("save_user_info", {"name": "Jane Roe",
                                                 "phone": "+44 20 7946 0018"}), f.done())
    graph = wrap(f.crm_agent(model, InMemoryStore()), rescind_workers, tenant_name,
                 sources={"lookup_crm": SourceTool(source="crm:{user_id}", kind="crm")})
    invoke(graph, mode, "Look Jane up and save her details", {"configurable": {
        "user_id": "u7", "thread_id": "t1"}})
    settle(rescind_workers, graph)
    saved = '{"name": "Jane Roe", "phone": "+44 20 7946 0018"}'
    assert record(rescind_workers, tenant_name) == {saved: ("IN", {frozenset({"crm:u7"})})}
    retract_and_reinstate(rescind_workers, tenant_name, "crm:u7", after={saved: "OUT"},
                          back={saved: "IN"})
    graph.rescind.close()


@pytest.mark.parametrize("mode", MODES)
def test_per_user_namespaces_without_a_thread_never_merge_or_share_context(
        mode, rescind_workers, tenant_name):
    """Two users, no thread_id, the same text under their own namespaces: two memories. A's
    rests on the page A read, B's on B's own message; retracting A's page leaves B's IN."""
    fact = "Favourite colour: teal blue"
    model = f.scripted(
        f.call("fetch_page", {"url": "https://trends.example/colour"}),
        f.call("remember", {"fact": fact}), f.done(),
        f.call("remember", {"fact": fact}), f.done())
    graph = wrap(f.per_user(model, InMemoryStore()), rescind_workers, tenant_name, sources=WEB)
    invoke(graph, mode, "What is the colour of the year? I'll take it.",
           {"configurable": {"user_id": "a"}})
    invoke(graph, mode, "My favourite colour: teal blue", {"configurable": {"user_id": "b"}})
    settle(rescind_workers, graph)
    assert _premises_by_key(rescind_workers, tenant_name, fact) == [
        ["memories/a/favourite", "web:https://trends.example/colour"],
        ["memories/b/favourite", "user:b"]]
    assert _by_user(rescind_workers, tenant_name, fact) == {"a": "IN", "b": "IN"}
    rid = retract(rescind_workers, tenant_name, "web:https://trends.example/colour")
    assert _by_user(rescind_workers, tenant_name, fact) == {"a": "OUT", "b": "IN"}
    reinstate(rescind_workers, tenant_name, rid)
    assert _by_user(rescind_workers, tenant_name, fact) == {"a": "IN", "b": "IN"}
    graph.rescind.close()


def _premises_by_key(url: str, tenant: str, text: str) -> list[list[str]]:
    """[key, source of the premise] of every memory holding ``text``: one per user's key."""
    return TenantGraph(connect(url), tenant).rows(
        "MATCH (p:Mem)-[:PREMISE_OF]->(:Justification)-[:JUSTIFIES]->(m:Mem {text: $t}) "
        "OPTIONAL MATCH (s:Source)-[:SAID]->(p) RETURN m.key, s.id ORDER BY m.key", {"t": text})


def _by_user(url: str, tenant: str, text: str) -> dict[str, str]:
    rows = TenantGraph(connect(url), tenant).rows(
        "MATCH (m:Mem {text: $t})-[st:STATUS]->() RETURN m.key, st.status", {"t": text})
    return {key.split("/")[1]: status for key, status in rows}


@pytest.mark.parametrize("mode", MODES)
def test_one_run_reading_two_sources_that_state_the_account_gives_two_justifications(
        mode, rescind_workers, tenant_name):
    """Portal and contract both state the account: the note has one justification on each
    (OR). Retracting the portal leaves it IN; retracting the contract too takes it OUT;
    reinstating the portal brings it back."""
    note = "Acme is paid to GB33 BUKB 2020 1555 5555 55"
    model = f.scripted(f.call("read_vendor_portal", {"vendor": "acme"}),
                       f.call("read_contract", {"vendor": "acme"}),
                       f.call("save_note", {"text": note}), f.done())
    graph = wrap(f.ap_desk(model, InMemoryStore()), rescind_workers, tenant_name, sources={
        "read_vendor_portal": SourceTool(source="portal:{vendor}", kind="vendor_portal"),
        "read_contract": SourceTool(source="contract:{vendor}", kind="signed_contract")})
    invoke(graph, mode, "Note where Acme is paid", {"configurable": {"thread_id": "ap"}})
    settle(rescind_workers, graph)
    assert record(rescind_workers, tenant_name) == {
        note: ("IN", {frozenset({"portal:acme"}), frozenset({"contract:acme"})})}
    portal = retract(rescind_workers, tenant_name, "portal:acme")
    assert statuses(rescind_workers, tenant_name) == {note: "IN"}
    retract(rescind_workers, tenant_name, "contract:acme")
    assert statuses(rescind_workers, tenant_name) == {note: "OUT"}
    reinstate(rescind_workers, tenant_name, portal)
    assert statuses(rescind_workers, tenant_name) == {note: "IN"}
    graph.rescind.close()


def test_the_original_graph_object_records_and_a_store_key_is_explained_by_its_version(
        rescind_workers, tenant_name):
    """``instrument`` changes the graph in place: the object the agent code already holds
    records (no copy left silent), a second ``instrument`` is refused, and ``explain`` finds a
    store memory by its key: the current version, whose history holds the old one's end."""
    from rescind.contract.errors import Invalid
    from rescind.operator import decisions

    model = f.scripted(
        f.call("upsert_memory", {"content": f"User's IBAN: {IBAN_1}", "context": "chat",
                                 "memory_id": "iban"}), f.done(),
        f.call("upsert_memory", {"content": f"User's IBAN: {IBAN_2}", "context": "moved",
                                 "memory_id": "iban"}), f.done())
    original = f.memory_agent(model, InMemoryStore())
    returned = wrap(original, rescind_workers, tenant_name)
    assert returned is original
    with pytest.raises(Invalid, match="instrumented already"):
        wrap(original, rescind_workers, tenant_name)
    u1 = {"configurable": {"user_id": "u1"}}
    original.invoke({"messages": [("user", f"My IBAN is {IBAN_1}")]}, u1)
    original.invoke({"messages": [("user", f"New IBAN: {IBAN_2}")]}, u1)
    settle(rescind_workers, original)
    g = TenantGraph(connect(rescind_workers), tenant_name)
    tree = decisions.explain(g, "memories/u1/iban")
    assert tree["text"] == f"User's IBAN: {IBAN_2}" and tree["status"] == "IN"
    assert tree["justification_rules"] == ["matched"]
    [[v1]] = g.rows("MATCH (m:Mem {text: $t}) RETURN m.id", {"t": f"User's IBAN: {IBAN_1}"})
    assert [h["status"] for h in g.history(v1)] == ["IN"]  # replaced, never OUT
    assert g.rows(vq.NOT_CURRENT, {"ids": [v1]}) == [[v1, "superseded"]]
    original.rescind.close()


@pytest.mark.parametrize("mode", MODES)
def test_a_configured_tool_called_directly_from_a_node_is_still_observed(
        mode, rescind_workers, tenant_name):
    """The node invokes the source tool itself (no ToolNode, no model): the call still runs
    under the graph's callbacks, so the page is observed and the note rests on it."""
    graph = wrap(f.direct_caller(InMemoryStore()), rescind_workers, tenant_name, sources=WEB)
    invoke(graph, mode, "go", {"configurable": {"thread_id": "n1"}})
    settle(rescind_workers, graph)
    note = "Office: 5 Quay Street, Bristol BS1 4DJ"
    assert record(rescind_workers, tenant_name) == {
        note: ("IN", {frozenset({"web:https://acme.example/press"})})}
    graph.rescind.close()
