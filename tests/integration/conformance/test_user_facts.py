"""Conformance (issue 29, facts are values): six LangGraph programs written the way public
examples are, each wrapped with one ``instrument`` call and a scripted chat model, whose writes
use facts of the kinds attribution once missed or took wrongly: a town only the user names, a
hobby only the user states, a short code from one of two search hits, a flight number inside a
longer identifier that the user's question also states, a temperature with its unit, a city
the user only asks about. Each asserts exact premises and IN/OUT after each single-source
retraction."""

from __future__ import annotations

import asyncio
import uuid
from typing import Annotated, Any

from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_config
from langgraph.func import entrypoint
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedStore, create_react_agent
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from rescind.graph.store import TenantGraph, connect
from rescind.middleware import SourceTool
from tests.support import foreign as f
from tests.support.conformance import record, retract_and_reinstate, settle, statuses, wrap

POLICIES = {"p1": "Policy HX-2231 (home cover): sum insured 250,000 GBP, renews 2027-04-01",
            "p2": "Policy HX-7710 (home cover): sum insured 180,000 GBP, renews 2027-06-15"}


def _rules(url: str, tenant: str, text: str) -> list[str]:
    """The rules that found the premises of the memory ``text``."""
    return [r[0] for r in TenantGraph(connect(url), tenant).rows(
        "MATCH (:Mem)-[:PREMISE_OF]->(j:Justification)-[:JUSTIFIES]->(:Mem {text: $t}) "
        "RETURN DISTINCT j.rule", {"t": text})]


@tool
def lookup_policy() -> str:
    """Look the current customer's policy up."""
    return POLICIES[get_config()["configurable"]["user_id"]]


@tool
def save_note(text: str, store: Annotated[Any, InjectedStore()]) -> str:
    """Save a note on the customer's file."""
    user = get_config()["configurable"]["user_id"]
    store.put(("notes", user), uuid.uuid5(uuid.NAMESPACE_URL, text).hex, {"text": text})
    return "saved"


def test_a_town_only_the_user_names_makes_the_note_rest_on_the_user_too(
        rescind_workers, tenant_name):
    """A prebuilt ReAct agent, two customers at once: each note restates the policy (the CRM)
    and the town the customer is moving to (only their message): it needs both, per customer,
    and either retraction takes that customer's note OUT and nobody else's."""
    towns = {"p1": "Kendal", "p2": "Whitby"}
    notes = {"p1": "Policy HX-2231 moves with the customer to Kendal",
             "p2": "Policy HX-7710 moves with the customer to Whitby"}

    def decide(messages):
        tools = [m for m in messages if m.type == "tool"]
        if not tools:
            return f.call("lookup_policy", {})
        if len(tools) == 1:
            who = next(u for u, p in POLICIES.items() if p == tools[0].content)
            return f.call("save_note", {"text": notes[who]})
        return f.done("Noted.")

    class Policy(f.Scripted):
        def _generate(self, messages, *args: Any, **kw: Any):
            from langchain_core.outputs import ChatGeneration, ChatResult
            return ChatResult(generations=[ChatGeneration(message=decide(messages))])

    graph = wrap(create_react_agent(Policy(messages=iter(())), [lookup_policy, save_note],
                                    store=InMemoryStore()),
                 rescind_workers, tenant_name,
                 sources={"lookup_policy": SourceTool(source="crm:{user_id}")})

    async def both() -> None:
        await asyncio.gather(*(graph.ainvoke(
            {"messages": [{"role": "user", "content": "Please update my file, I'm moving to "
                                                      f"{towns[u]} in spring."}]},
            {"configurable": {"user_id": u}}) for u in towns))

    asyncio.run(both())
    settle(rescind_workers, graph)
    assert record(rescind_workers, tenant_name) == {
        notes[u]: ("IN", {frozenset({f"crm:{u}", f"user:{u}"})}) for u in towns}
    for u in towns:
        for source in (f"crm:{u}", f"user:{u}"):
            after = {notes[v]: "OUT" if v == u else "IN" for v in towns}
            retract_and_reinstate(rescind_workers, tenant_name, source, after=after,
                                  back={n: "IN" for n in notes.values()})
    graph.rescind.close()


V1 = "About Sam: lives in Kendal, works at Orbit Labs"
V2 = "About Sam: lives in Kendal, works at Orbit Labs; enjoys bouldering"


def test_a_new_version_adding_what_only_the_user_said_rests_on_the_old_one_and_the_user(
        rescind_workers, tenant_name):
    """The functional API: an ``@entrypoint`` with a store reads the profile, asks the model
    for a new one, and puts it back. Version 2 adds a hobby only the user's message states, in
    a single lowercase word: it rests on version 1 and on that message; retracting the user
    takes both versions OUT (version 1 is the user's word too)."""
    model = f.scripted(f.done(V1), f.done(V2))

    @entrypoint(store=InMemoryStore())
    def profile_agent(messages: list, *, store: BaseStore) -> str:
        user = get_config()["configurable"]["user_id"]
        item = store.get(("profile", user), "me")
        known = item.value["text"] if item is not None else "nothing yet"
        reply = model.invoke([{"role": "system", "content": f"Known about the user: {known}. "
                                                           "Rewrite it with what is new."},
                              *messages])
        store.put(("profile", user), "me", {"text": reply.content})
        return reply.content

    graph = wrap(profile_agent, rescind_workers, tenant_name)
    sam = {"configurable": {"user_id": "sam"}}
    graph.invoke([{"role": "user", "content": "Hi! I'm Sam, I live in Kendal and I work at "
                                              "Orbit Labs."}], sam)
    settle(rescind_workers, graph)
    graph.invoke([{"role": "user", "content": "These days I spend my weekends bouldering."}],
                 sam)
    settle(rescind_workers, graph)
    assert record(rescind_workers, tenant_name) == {
        V1: ("IN", {frozenset({"user:sam"})}), V2: ("IN", {frozenset({V1, "user:sam"})})}
    retract_and_reinstate(rescind_workers, tenant_name, "user:sam",
                          after={V1: "OUT", V2: "OUT"}, back={V1: "IN", V2: "IN"})
    graph.rescind.close()


GUIDE = {"desks": "Hot desks: floor 3, desk 14 to desk 40; badge B-17 opens the east door",
         "booths": "Phone booths: floor 3, next to desk 14; badge B-21 books them"}
ANSWER = "Take desk 14 on floor 3 and use badge B-17 at the east door"


def test_a_short_code_and_a_numbered_desk_pick_the_search_hit_that_states_them(
        rescind_workers, tenant_name):
    """A StateGraph answering from a store search that returns two hits, the way RAG examples
    build a prompt: both hits state the floor and the desk, only one the short badge code the
    answer restates, so it rests on that hit alone, not on the other hit nor the question."""
    store = InMemoryStore()

    @tool
    def read_guide(section: str) -> str:
        """Read a section of the office guide."""
        return GUIDE[section]

    def ingest(state: MessagesState, *, store: BaseStore) -> dict:
        for section in GUIDE:
            store.put(("guide",), section, {"text": read_guide.invoke({"section": section})})
        return {}

    def answer(state: MessagesState, *, store: BaseStore) -> dict:
        hits = store.search(("guide",), limit=2)
        context = "\n\n".join(h.value["text"] for h in hits)
        reply = model.invoke([{"role": "system", "content": f"Use this context:\n{context}"},
                              *state["messages"]])
        store.put(("answers",), "desk", {"text": reply.content})
        return {"messages": [reply]}

    model = f.scripted(f.done(ANSWER))
    load, ask = StateGraph(MessagesState), StateGraph(MessagesState)
    load.add_node("ingest", ingest)
    load.add_edge(START, "ingest")
    load.add_edge("ingest", END)
    ask.add_node("answer", answer)
    ask.add_edge(START, "answer")
    ask.add_edge("answer", END)
    sources = {"read_guide": SourceTool(source="guide:{section}")}
    loader = wrap(load.compile(store=store), rescind_workers, tenant_name, sources=sources)
    asker = wrap(ask.compile(store=store), rescind_workers, tenant_name, sources=sources)
    loader.invoke({"messages": [{"role": "user", "content": "load"}]},
                  {"configurable": {"user_id": "admin"}})
    asker.invoke({"messages": [{"role": "user", "content": "Where can I sit tomorrow?"}]},
                 {"configurable": {"user_id": "ana"}})
    settle(rescind_workers, loader)
    settle(rescind_workers, asker)
    rec = record(rescind_workers, tenant_name)
    assert rec[ANSWER] == ("IN", {frozenset({GUIDE["desks"]})})
    assert _rules(rescind_workers, tenant_name, ANSWER) == ["matched"]
    ins = {t: "IN" for t in rec}
    retract_and_reinstate(rescind_workers, tenant_name, "guide:booths",
                          after={**ins, GUIDE["booths"]: "OUT"}, back=ins)
    retract_and_reinstate(rescind_workers, tenant_name, "guide:desks",
                          after={**ins, GUIDE["desks"]: "OUT", ANSWER: "OUT"}, back=ins)
    assert statuses(rescind_workers, tenant_name) == ins
    loader.rescind.close()
    asker.rescind.close()


TRAINS = {"LX318": "LX318 ZRH-LHR on 2026-12-04: boarding 07:55, gate E17, seat 21A"}
REMINDER = "LX318 boards at 07:55 at gate E17 (seat 21A)"


@tool
def flight_info(flight: str) -> str:
    """Look a flight up."""
    return TRAINS[flight]


def test_a_flight_number_inside_a_longer_identifier_is_found_so_the_question_is_no_premise(
        rescind_workers, tenant_name):
    """A ReAct agent with a checkpointer, two runs on one thread: the status reads
    "LX318 ZRH-LHR …", the user asked about "LX318"; the reminder written in run 2 restates the
    flight, time, gate and seat, all of which the status states: it rests on the status alone,
    and retracting the user's word leaves it IN."""
    model = f.scripted(f.call("flight_info", {"flight": "LX318"}), f.done("Boarding 07:55."),
                       f.call("save_note", {"text": REMINDER}), f.done("Saved."))
    graph = wrap(create_react_agent(model, [flight_info, save_note], store=InMemoryStore(),
                                    checkpointer=InMemorySaver()),
                 rescind_workers, tenant_name,
                 sources={"flight_info": SourceTool(source="flights:{flight}")})
    thread = {"configurable": {"thread_id": "t-9", "user_id": "kim"}}
    graph.invoke({"messages": [{"role": "user", "content": "When does LX318 board?"}]}, thread)
    graph.invoke({"messages": [{"role": "user", "content": "Save me a reminder of it."}]},
                 thread)
    settle(rescind_workers, graph)
    assert record(rescind_workers, tenant_name) == {
        REMINDER: ("IN", {frozenset({"flights:lx318"})})}
    retract_and_reinstate(rescind_workers, tenant_name, "user:kim",
                          after={REMINDER: "IN"}, back={REMINDER: "IN"})
    retract_and_reinstate(rescind_workers, tenant_name, "flights:lx318",
                          after={REMINDER: "OUT"}, back={REMINDER: "IN"})
    graph.rescind.close()


WEATHER = {"oslo": "Oslo: -4°C, snow showers, wind 30 km/h"}
GLOVES = "Oslo will be -4°C on arrival: pack gloves"


@tool
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return WEATHER[city.lower()]


def test_a_temperature_with_its_unit_is_the_forecast_s_fact_not_the_user_s(
        rescind_workers, tenant_name):
    """The classic tool-calling graph (an agent node, a ``ToolNode``, ``tools_condition``):
    the user and the forecast both name the city, only the forecast states "-4°C", so the
    note rests on the forecast alone: retracting the user leaves it IN, the forecast OUT."""
    from langgraph.prebuilt import ToolNode, tools_condition

    model = f.scripted(f.call("get_weather", {"city": "Oslo"}),
                       f.call("save_note", {"text": GLOVES}), f.done("Noted."))

    def agent(state: MessagesState) -> dict:
        return {"messages": [model.bind_tools([get_weather, save_note]).invoke(
            state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([get_weather, save_note]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    graph = wrap(builder.compile(store=InMemoryStore()), rescind_workers, tenant_name,
                 sources={"get_weather": SourceTool(source="weather:{city}")})
    graph.invoke({"messages": [{"role": "user", "content": "I land in Oslo on Friday. What "
                                                           "should I bring?"}]},
                 {"configurable": {"user_id": "lea"}})
    settle(rescind_workers, graph)
    assert record(rescind_workers, tenant_name) == {GLOVES: ("IN", {frozenset({"weather:oslo"})})}
    assert _rules(rescind_workers, tenant_name, GLOVES) == ["matched"]  # by the temperature
    retract_and_reinstate(rescind_workers, tenant_name, "user:lea",
                          after={GLOVES: "IN"}, back={GLOVES: "IN"})
    retract_and_reinstate(rescind_workers, tenant_name, "weather:oslo",
                          after={GLOVES: "OUT"}, back={GLOVES: "IN"})
    graph.rescind.close()


FORECASTS = {"leeds": "light rain, 9°C, wind 20 km/h"}
UMBRELLA = "Umbrella for Leeds: light rain, 9°C"


@tool
def forecast(city: str) -> str:
    """Today's forecast for a city."""
    return FORECASTS[city.lower()]


def test_a_city_the_user_only_asks_about_leaves_the_note_on_the_forecast(
        rescind_workers, tenant_name):
    """A ReAct agent asked "What's the weather in Leeds?" calls a forecast tool whose answer
    does not repeat the city; the note names Leeds and restates the forecast. A question asks,
    it states nothing: the note rests on the forecast alone, and retracting the user's word
    leaves it IN."""
    model = f.scripted(f.call("forecast", {"city": "Leeds"}),
                       f.call("save_note", {"text": UMBRELLA}), f.done("Saved."))
    graph = wrap(create_react_agent(model, [forecast, save_note], store=InMemoryStore()),
                 rescind_workers, tenant_name,
                 sources={"forecast": SourceTool(source="weather:{city}")})
    graph.invoke({"messages": [{"role": "user", "content": "What's the weather in Leeds?"}]},
                 {"configurable": {"user_id": "noa"}})
    settle(rescind_workers, graph)
    assert record(rescind_workers, tenant_name) == {
        UMBRELLA: ("IN", {frozenset({"weather:leeds"})})}
    retract_and_reinstate(rescind_workers, tenant_name, "user:noa",
                          after={UMBRELLA: "IN"}, back={UMBRELLA: "IN"})
    retract_and_reinstate(rescind_workers, tenant_name, "weather:leeds",
                          after={UMBRELLA: "OUT"}, back={UMBRELLA: "IN"})
    graph.rescind.close()
