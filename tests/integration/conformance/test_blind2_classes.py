"""Conformance (issue 29, the second blind set's misses, fixed as classes): LangGraph programs of
our own, in the styles of public examples (plan-and-execute, a ReAct agent over a registry and a
credit agency, the quickstart chatbot with a checkpointer), each wrapped with one ``instrument``
call and a scripted chat model: a plan note that adds nothing to what the user's own messages
state, a name a register prints in capitals, a currency given only in a dict's key, a time the
user says in words and a town that is only a part of a longer name. Each asserts the exact
premises and IN/OUT after each single-source retraction."""

from __future__ import annotations

import json
import operator
import uuid
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_config
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedStore, ToolNode, create_react_agent, tools_condition
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from rescind.middleware import SourceTool
from tests.support import foreign as f
from tests.support.conformance import check_each, invoke, read_then_note, settle, wrap

# -- plan-and-execute: the plan note adds nothing the user's messages do not state ------------------

GOAL = ("Organise the team dinner in Ghent on 3 June 2027 after the workshop: we are 9 people, "
        "600 euros at most, bill it to project PRJ-771")
STEPS = ["Find a restaurant in Ghent for 9 people for one evening, 3 June 2027",
         "Pick the set menu that keeps the bill under EUR 600"]
PLAN = ("Team dinner, Ghent, 3 June 2027, 9 people, at most EUR 600: "
        + "; ".join(f"{i}) {s}" for i, s in enumerate(STEPS, 1)))
TABLES = ("Restaurants in Gent for 03/06/2027, groups of 8-12:\n- Brasserie Korenmarkt | "
          "private room 12 | set menu 58,00 EUR p.p.\n- De Vitrine | 10 seats | tasting menu "
          "89,00 EUR p.p.")
OUTCOME = ("Team dinner 3 June 2027 (9 people, project PRJ-771): Brasserie Korenmarkt, private "
           "room, set menu 58.00 EUR x 9 = 522.00 EUR for one evening, under the 600 EUR cap")


@tool
def find_tables(city: str, date: str, people: int) -> str:
    """Restaurants with a table for a group in a city on a day."""
    return TABLES


class _PlanExecute(TypedDict, total=False):
    input: str
    plan: list[str]
    past_steps: Annotated[list[tuple[str, str]], operator.add]
    response: str


def test_a_plan_note_adding_nothing_to_the_user_s_messages_is_no_premise(rescind_workers,
                                                                        tenant_name):
    """Plan-and-execute (LangGraph's tutorial shape): a planner node saves the plan, a ReAct
    executor invoked in a node is prompted with the plan's steps, a replanner answers, the
    outcome is saved. The outcome rests on the restaurant search and the user (the project
    code only the user gave), not also on the plan note: the one fact only the plan and the
    prompt restating it state ("one evening") comes to the user's messages already, so a
    justification adding the plan to them is not minimal. Retracting the user takes both
    OUT, the search only the outcome."""
    model = f.scripted(
        f.done(json.dumps({"objective": PLAN.split(": 1)")[0], "steps": STEPS})),
        f.call("find_tables", {"city": "Gent", "date": "2027-06-03", "people": 9}),
        f.done("Brasserie Korenmarkt fits: private room for 12, set menu 58 EUR a head."),
        f.done(json.dumps({"response": OUTCOME})))
    executor = create_react_agent(model, [find_tables], prompt="You are a helpful assistant.")

    def planner(state: _PlanExecute, *, store: BaseStore) -> dict:
        out = json.loads(model.invoke([
            ("system", "Make a short step by step plan for the objective, as JSON."),
            ("user", state["input"])]).content)
        text = f"{out['objective']}: " + "; ".join(f"{i}) {s}"
                                                  for i, s in enumerate(out["steps"], 1))
        store.put(("plans", "ana"), "ghent-dinner", {"text": text})
        return {"plan": out["steps"]}

    def execute(state: _PlanExecute) -> dict:
        steps = "\n".join(f"{i}. {s}" for i, s in enumerate(state["plan"], 1))
        done = executor.invoke({"messages": [("user", f"For the following plan:\n{steps}\n\n"
                                              f"Execute step 1, {state['plan'][0]}.")]})
        return {"past_steps": [(state["plan"][0], done["messages"][-1].content)]}

    def replan(state: _PlanExecute) -> dict:
        past = "\n".join(f"{t}: {r}" for t, r in state["past_steps"])
        out = json.loads(model.invoke([("user", f"Objective:\n{state['input']}\n\nDone so "
                                                f"far:\n{past}\n\nAnswer or plan again.")])
                         .content)
        return {"response": out["response"]}

    def save(state: _PlanExecute, *, store: BaseStore) -> dict:
        store.put(("plans", "ana"), "ghent-dinner-booked", {"text": state["response"]})
        return {}

    builder = StateGraph(_PlanExecute)
    for name, node in (("planner", planner), ("agent", execute), ("replan", replan),
                       ("save", save)):
        builder.add_node(name, node)
    builder.add_edge(START, "planner")
    builder.add_edge("planner", "agent")
    builder.add_edge("agent", "replan")
    builder.add_edge("replan", "save")
    builder.add_edge("save", END)
    graph = wrap(builder.compile(store=InMemoryStore()), rescind_workers, tenant_name,
                 sources={"find_tables": SourceTool(source="tables:{city}")})
    graph.invoke({"input": GOAL}, {"configurable": {"user_id": "ana"}})
    settle(rescind_workers, graph)
    check_each(rescind_workers, tenant_name,
               {PLAN: {frozenset({"user:ana"})},
                OUTCOME: {frozenset({"tables:gent", "user:ana"})}},
               {"user:ana": {PLAN, OUTCOME}, "tables:gent": {OUTCOME}})
    graph.rescind.close()


# -- a ReAct agent over a register (names in capitals) and a credit agency (a dict) -----------------

REGISTER = ("Bolagsverket · Org.nr 556677-8899 · GRANSKOG TRÄ AB · Aktiebolag · "
            "Säte: Sundsvall · registrerat 2011-03-02")
REGISTERED = "Granskog Trä AB (556677-8899), registered in Sundsvall since 2 Mar 2011"
CREDIT = {"org_no": "5566778899", "rating": "B1", "credit_limit_sek": 120000,
          "as_of": "2026-10-31"}
CREDIT_NOTE = "Credit for 5566778899: rating B1, limit 120,000 SEK as of 31 Oct 2026"


@tool
def company_register(org_no: str) -> str:
    """The Swedish companies register's entry for an organisation number."""
    return REGISTER


@tool
def credit_check(org_no: str) -> dict:
    """A credit agency's report on a company, as a record."""
    return CREDIT


def test_a_name_a_register_prints_in_capitals_is_the_register_s_fact(rescind_workers,
                                                                     tenant_name):
    """A prebuilt ReAct agent looks an organisation number up in the register, which prints
    the company's name in capitals, and notes the entry. The name is the register's fact as
    much as the user's, and the register alone states the seat and the date: the note rests
    on the register only, and retracting the user leaves it IN."""
    model = f.scripted(f.call("company_register", {"org_no": "556677-8899"}),
                       f.call("save_note", {"text": REGISTERED}), f.done("Noted."))
    read_then_note(rescind_workers, tenant_name, model, company_register, "register:{org_no}",
                   "Add Granskog Trä AB to our customers, org nr 556677-8899.", "ines")
    check_each(rescind_workers, tenant_name,
               {REGISTERED: {frozenset({"register:556677-8899"})}},
               {"register:556677-8899": {REGISTERED}, "user:ines": set()})


def test_a_currency_only_in_a_dict_s_key_is_the_record_s_fact(rescind_workers, tenant_name):
    """A prebuilt ReAct agent reads a credit record whose limit is given as
    ``credit_limit_sek`` and notes "120,000 SEK"; the user also said they pay in SEK. The key
    names the currency of its value, so the note rests on the record alone (not on the user
    for "SEK"), and retracting the user leaves it IN."""
    model = f.scripted(f.call("credit_check", {"org_no": "5566778899"}),
                       f.call("save_note", {"text": CREDIT_NOTE}), f.done("Noted."))
    read_then_note(rescind_workers, tenant_name, model, credit_check, "credit:{org_no}",
                   "Run a credit check on org 5566778899. They settle invoices in SEK.", "ines")
    check_each(rescind_workers, tenant_name,
               {CREDIT_NOTE: {frozenset({"credit:5566778899"})}},
               {"credit:5566778899": {CREDIT_NOTE}, "user:ines": set()})


# -- the quickstart chatbot with a checkpointer: reminders set in a third invocation -----------------

BOILER = ("Wartungsvertrag HX-2231 · Gastherme Vaillant ecoTEC · nächste Wartung fällig "
          "10.04.2027 · Fachbetrieb Heizung Krämer, Bonn")
SWEEP = ("Kehrbezirk Bonn-Beuel · Feuerstättenschau fällig 06/2027 · letzte Messung 20.06.2026 "
         "durch Bezirksschornsteinfeger Ohlig")
REMIND_BOILER = ("Wed 10 Mar 2027, 07:45: book the boiler service for contract HX-2231 (due "
                 "10.04.2027) with Heizung Krämer, Bonn")
REMIND_SWEEP = ("Thu 20 May 2027, 7.45 am: let the chimney sweep in - inspection due 06/2027, "
                "last measured 20.06.2026 by Kehrbezirk Bonn-Beuel")


@tool
def boiler_contract(contract: str) -> str:
    """When the boiler's next service under a maintenance contract is due."""
    return BOILER


@tool
def chimney_sweep(district: str) -> str:
    """When the district's chimney sweep is next due."""
    return SWEEP


@tool
def set_reminder(text: str, due: str, store: Annotated[Any, InjectedStore()]) -> str:
    """Set a reminder at a date and time (ISO 8601)."""
    user = get_config()["configurable"]["user_id"]
    store.put(("reminders", user), uuid.uuid5(uuid.NAMESPACE_URL, text).hex,
              {"text": text, "due": due})
    return f"set for {due}"


def test_a_time_in_words_is_the_user_s_and_a_town_inside_a_longer_name_no_fact(
        rescind_workers, tenant_name):
    """The quickstart chatbot (StateGraph, ToolNode, tools_condition) with a checkpointer,
    three invocations on one thread: the boiler contract, the chimney sweep, then two
    reminders "at quarter to eight in the morning" (07:45, 7.45 am: the user's time, said in
    words) on dates computed from the due dates. Each reminder rests on its tool result and
    the user; the sweep's reminder does not rest on the boiler's result for "Bonn", which it
    names only inside "Bonn-Beuel". Retracting a tool takes its reminder OUT, the user both."""
    model = f.scripted(
        f.call("boiler_contract", {"contract": "HX-2231"}),
        f.done("Your boiler is due for its service on 10 April 2027."),
        f.call("chimney_sweep", {"district": "beuel"}),
        f.done("The chimney sweep is due in June 2027."),
        AIMessage(content="", tool_calls=[  # both in one model turn
            {"name": "set_reminder", "id": "call-boiler",
             "args": {"text": REMIND_BOILER, "due": "2027-03-10T07:45:00+01:00"}},
            {"name": "set_reminder", "id": "call-sweep",
             "args": {"text": REMIND_SWEEP, "due": "2027-05-20T07:45:00+02:00"}}]),
        f.done("Both reminders are set."))
    tools = [boiler_contract, chimney_sweep, set_reminder]
    bound = model.bind_tools(tools)

    def chatbot(state: MessagesState) -> dict:
        return {"messages": [bound.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("chatbot", chatbot)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "chatbot")
    builder.add_conditional_edges("chatbot", tools_condition)
    builder.add_edge("tools", "chatbot")
    graph = wrap(builder.compile(checkpointer=InMemorySaver(), store=InMemoryStore()),
                 rescind_workers, tenant_name,
                 sources={"boiler_contract": SourceTool(source="boiler:{contract}"),
                          "chimney_sweep": SourceTool(source="sweep:{district}")})
    thread = {"configurable": {"user_id": "lena", "thread_id": "house"}}
    for said in ("when is the boiler due for its service? it's contract HX-2231",
                 "and when does the chimney sweep come round?",
                 "remind me of both four weeks before, at quarter to eight in the morning"):
        invoke(graph, "sync", said, thread)
    settle(rescind_workers, graph)
    check_each(rescind_workers, tenant_name,
               {REMIND_BOILER: {frozenset({"boiler:hx-2231", "user:lena"})},
                REMIND_SWEEP: {frozenset({"sweep:beuel", "user:lena"})}},
               {"boiler:hx-2231": {REMIND_BOILER}, "sweep:beuel": {REMIND_SWEEP},
                "user:lena": {REMIND_BOILER, REMIND_SWEEP}})
    graph.rescind.close()
