"""Conformance (issue 29, findings 5, 6, 7 and the Command line): LangGraph programs written the
way public examples are, each wrapped with one ``instrument`` call and a scripted chat model.
Premises come from what the model was shown: an earlier run's tool result on the same thread,
the tool result before the run's re-sent messages, a message the program built resting on what
it was built from, a ``Command``'s state update. Each asserts exact premises, and IN/OUT after
a retraction."""

from __future__ import annotations

import operator
import uuid
from typing import Annotated, Any, TypedDict

from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import InjectedState, InjectedStore, create_react_agent
from langgraph.prebuilt.chat_agent_executor import AgentState
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command, Send

from rescind.graph.store import TenantGraph, connect
from rescind.middleware import SourceTool
from tests.support import foreign as f
from tests.support.conformance import invoke, record, retract_and_reinstate, settle, wrap

FLIGHTS = {"BA117": "Flight BA117 London-New York: delayed, now departs 14:35 from gate B32"}
PAGES = {"https://acme.example/about": "Acme Corp is based at 5 Quay Street, Bristol",
         "https://globex.example/about": "Globex Ltd is based at 12 Dock Road, Hull"}


@tool
def flight_status(flight: str) -> str:
    """Look up a flight's status."""
    return FLIGHTS[flight]


@tool
def save_note(text: str, store: Annotated[Any, InjectedStore()]) -> str:
    """Save a note for later."""
    store.put(("notes",), uuid.uuid5(uuid.NAMESPACE_URL, text).hex, {"text": text})
    return "saved"


@tool
def fetch_page(url: str) -> str:
    """Fetch a web page."""
    return PAGES[url]


def _rules(url: str, tenant: str, text: str) -> list[str]:
    return [r[0] for r in TenantGraph(connect(url), tenant).rows(
        "MATCH (:Mem)-[:PREMISE_OF]->(j:Justification)-[:JUSTIFIES]->(:Mem {text: $t}) "
        "RETURN DISTINCT j.rule", {"t": text})]


def test_an_earlier_run_s_tool_result_restored_by_the_checkpointer_is_a_premise(
        rescind_workers, tenant_name):
    """Finding 7. A react agent with a checkpointer: run 1 looks the flight up; run 2, on the
    same thread, notes the new departure time. The note rests on the flight status of run 1
    (shown again from the thread by its tool-call id), not on run 2's request; retracting the
    flight source takes the note OUT."""
    note = "BA117 now leaves at 14:35 from gate B32"
    model = f.scripted(f.call("flight_status", {"flight": "BA117"}), f.done("It is delayed."),
                       f.call("save_note", {"text": note}), f.done("Noted."))
    graph = wrap(create_react_agent(model, [flight_status, save_note], store=InMemoryStore(),
                                    checkpointer=InMemorySaver()),
                 rescind_workers, tenant_name,
                 sources={"flight_status": SourceTool(source="flights:{flight}")})
    thread = {"configurable": {"thread_id": "trip-1", "user_id": "u1"}}
    invoke(graph, "sync", "Is my flight on time?", thread)
    invoke(graph, "sync", "Please write that down for me", thread)
    settle(rescind_workers, graph)
    assert record(rescind_workers, tenant_name) == {
        note: ("IN", {frozenset({"flights:ba117"})})}
    assert _rules(rescind_workers, tenant_name, note) == ["matched"]
    retract_and_reinstate(rescind_workers, tenant_name, "flights:ba117",
                          after={note: "OUT"}, back={note: "IN"})
    graph.rescind.close()


def test_a_paraphrase_rests_on_the_tool_result_not_on_messages_sent_again(rescind_workers,
                                                                        tenant_name):
    """Finding 5. The model reads the flight status, then saves a note in its own words (no
    fact of anything delivered): the fallback is the tool result it was shown, not the user's
    message that every model call receives again."""
    note = "Delayed again, tell the hotel we will be late"
    model = f.scripted(f.call("flight_status", {"flight": "BA117"}),
                       f.call("save_note", {"text": note}), f.done("Noted."))
    graph = wrap(create_react_agent(model, [flight_status, save_note], store=InMemoryStore()),
                 rescind_workers, tenant_name,
                 sources={"flight_status": SourceTool(source="flights:{flight}")})
    invoke(graph, "sync", "Check my flight and keep a note", {"configurable": {"user_id": "u2"}})
    settle(rescind_workers, graph)
    assert record(rescind_workers, tenant_name) == {
        note: ("IN", {frozenset({"flights:ba117"})})}
    assert _rules(rescind_workers, tenant_name, note) == ["turn-context"]
    retract_and_reinstate(rescind_workers, tenant_name, "flights:ba117",
                          after={note: "OUT"}, back={note: "IN"})
    graph.rescind.close()


class Research(TypedDict):
    messages: Annotated[list, operator.add]
    urls: list[str]
    findings: Annotated[list[str], operator.add]


def map_reduce(model, store):
    """Map-reduce in the style of LangGraph's Send examples: one branch per page, a reducer
    that joins the findings into a human message for the model, a writer that stores what the
    model says."""

    def plan(state: Research) -> list[Send]:
        return [Send("read", {"url": u}) for u in state["urls"]]

    def read(state: dict) -> dict:
        return {"findings": [fetch_page.invoke({"url": state["url"]})]}

    def reduce(state: Research) -> dict:
        joined = "\n".join(f"- {x}" for x in state["findings"])
        return {"messages": [HumanMessage(content=f"Summarise these findings:\n{joined}")]}

    def write(state: Research, *, store) -> dict:
        answer = model.invoke(state["messages"])
        store.put(("summaries",), "offices", {"text": answer.content})
        return {"messages": [answer]}

    builder = StateGraph(Research)
    builder.add_node("read", read)
    builder.add_node("reduce", reduce)
    builder.add_node("write", write)
    builder.add_conditional_edges(START, plan, ["read"])
    builder.add_edge("read", "reduce")
    builder.add_edge("reduce", "write")
    builder.add_edge("write", END)
    return builder.compile(store=store)


def test_a_message_the_program_builds_rests_on_what_it_was_built_from(rescind_workers,
                                                                      tenant_name):
    """Finding 6. The reducer's joined findings reach the model as a human message: that is
    not the user's word. The summary rests on both pages the branches read (AND), on nothing
    else; retracting either page takes it OUT."""
    summary = ("Acme Corp is based at 5 Quay Street, Bristol; Globex Ltd is based at 12 Dock "
               "Road, Hull")
    graph = wrap(map_reduce(f.scripted(f.done(summary)), InMemoryStore()), rescind_workers,
                 tenant_name, sources={"fetch_page": SourceTool(source="web:{url}", kind="web")})
    invoke_inputs = {"messages": [{"role": "user", "content": "Where are they based?"}],
                     "urls": list(PAGES), "findings": []}
    graph.invoke(invoke_inputs, {"configurable": {"user_id": "u3"}})
    settle(rescind_workers, graph)
    acme, globex = "web:https://acme.example/about", "web:https://globex.example/about"
    assert record(rescind_workers, tenant_name) == {summary: ("IN", {frozenset({acme, globex})})}
    retract_and_reinstate(rescind_workers, tenant_name, acme, after={summary: "OUT"},
                          back={summary: "IN"})
    retract_and_reinstate(rescind_workers, tenant_name, globex, after={summary: "OUT"},
                          back={summary: "IN"})
    graph.rescind.close()


class Support(AgentState):
    user_info: dict


@tool
def lookup_customer(email: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Look the customer up and keep their record in the conversation's state."""
    return Command(update={
        "user_info": {"name": "Jane Roe", "account": "ACC-77120", "email": email},
        "messages": [ToolMessage("Customer found.", tool_call_id=tool_call_id)]})


@tool
def remember_customer(state: Annotated[dict, InjectedState],
                      store: Annotated[Any, InjectedStore()]) -> str:
    """Remember the customer found."""
    info = state["user_info"]
    store.put(("customers",), info["email"], {"text": f"{info['name']} holds {info['account']}"})
    return "remembered"


def test_a_command_s_state_update_is_part_of_its_tool_s_observation(rescind_workers,
                                                                     tenant_name):
    """The 'Also' line. A source tool answers with a Command whose update carries the
    customer's record (``user_info``) beside a bare message: the record is in its observation,
    so the memory built from the state rests on the CRM by the facts it states (matched)."""
    memory = "Jane Roe holds ACC-77120"
    model = f.scripted(f.call("lookup_customer", {"email": "jane@example.com"}),
                       f.call("remember_customer", {}), f.done("Done."))
    graph = wrap(create_react_agent(model, [lookup_customer, remember_customer],
                                    state_schema=Support, store=InMemoryStore()),
                 rescind_workers, tenant_name,
                 sources={"lookup_customer": SourceTool(source="crm:{email}", kind="crm")})
    graph.invoke({"messages": [{"role": "user", "content": "Find jane@example.com"}],
                  "user_info": {}}, {"configurable": {"user_id": "u4"}})
    settle(rescind_workers, graph)
    assert record(rescind_workers, tenant_name) == {
        memory: ("IN", {frozenset({"crm:jane@example.com"})})}
    assert _rules(rescind_workers, tenant_name, memory) == ["matched"]
    retract_and_reinstate(rescind_workers, tenant_name, "crm:jane@example.com",
                          after={memory: "OUT"}, back={memory: "IN"})
    graph.rescind.close()
