"""Conformance (issue 29, values in any rendering): five LangGraph programs of our own, in the
styles of public examples, each wrapped with one ``instrument`` call and a scripted chat model,
whose writes restate a value in another form than its source: a day the user gave as a
lowercase weekday and ordinal, a term given in words, a rate with trailing zeros, a topic
passed as the invocation's input, and a brief built from the sections its ``Send`` branches
wrote. Each asserts the exact premises and IN/OUT after each single-source retraction."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import create_react_agent
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.types import Send

from rescind.middleware import SourceTool
from tests.support import foreign as f
from tests.support.conformance import (
    check_each,
    read_then_note,
    save_note,
    settle,
    wrap,
)

CLINIC = {"ferreira": "Dr Ana Ferreira (physiotherapy) sees patients on Thursdays, first slot "
                      "09:40, room 4 on the second floor; bring your referral letter"}
BOOKED = "Physio with Dr Ana Ferreira on Thursday 17 December 2026 at 9.40 am, room 4"


def test_a_day_given_as_a_lowercase_weekday_and_ordinal_is_the_user_s_fact(
        rescind_workers, tenant_name):
    """A prebuilt ReAct agent: the clinic states the doctor, the time and the room, only the
    user's lowercase "thursday the 17th" the day; the note needs both, and either retraction
    takes it OUT."""
    model = f.scripted(f.call("clinic_hours", {"doctor": "ferreira"}),
                       f.call("save_note", {"text": BOOKED}), f.done("Booked."))

    @tool
    def clinic_hours(doctor: str) -> str:
        """A doctor's clinic hours."""
        return CLINIC[doctor]

    read_then_note(rescind_workers, tenant_name, model, clinic_hours, "clinic:{doctor}",
                   "hi, can dr ferreira see me on thursday the 17th? my knee again",
                   "ines")
    check_each(rescind_workers, tenant_name,
               {BOOKED: {frozenset({"clinic:ferreira", "user:ines"})}},
               {"clinic:ferreira": {BOOKED}, "user:ines": {BOOKED}})


PRICES = {"fibre-500": "Fibre 500 broadband: GBP 32.50 per month, router included"}
TERMS = {"fibre-500": "Fibre 500: the minimum term is twenty-four months; a move is free "
                      "once a year",
         "fibre-900": "Fibre 900: the minimum term is eighteen months"}
PLAN = "Fibre 500 at £32.50 a month on a 24-month minimum term"


def test_a_term_written_in_words_is_the_same_fact_as_in_digits(rescind_workers, tenant_name):
    """Two tools in one turn: the price list states the plan and its price, the terms page
    the plan and "twenty-four months"; the note writes "24-month", so it rests on both, and
    not on the other plan's terms (eighteen months) read in the same turn."""
    model = f.scripted(AIMessage(content="", tool_calls=[
        {"name": "plan_price", "args": {"plan": "fibre-500"}, "id": "c1"},
        {"name": "plan_terms", "args": {"plan": "fibre-500"}, "id": "c2"},
        {"name": "plan_terms", "args": {"plan": "fibre-900"}, "id": "c3"}]),
        f.call("save_note", {"text": PLAN}), f.done("Saved."))

    @tool
    def plan_price(plan: str) -> str:
        """A broadband plan's price."""
        return PRICES[plan]

    @tool
    def plan_terms(plan: str) -> str:
        """A broadband plan's contract terms."""
        return TERMS[plan]

    graph = wrap(create_react_agent(model, [plan_price, plan_terms, save_note],
                                    store=InMemoryStore()),
                 rescind_workers, tenant_name,
                 sources={"plan_price": SourceTool(source="prices:{plan}"),
                          "plan_terms": SourceTool(source="terms:{plan}")})
    graph.invoke({"messages": [{"role": "user", "content": "What would fibre 500 cost me? "
                                                          "Note it down please."}]},
                 {"configurable": {"user_id": "tom"}})
    settle(rescind_workers, graph)
    check_each(rescind_workers, tenant_name,
               {PLAN: {frozenset({"prices:fibre-500", "terms:fibre-500"})}},
               {"prices:fibre-500": {PLAN}, "terms:fibre-500": {PLAN}, "terms:fibre-900": set(),
                "user:tom": set()})
    graph.rescind.close()


RATES = {"today": "Reference rate 01/12/2026: 1 GBP = 1.1650 EUR",
         "yesterday": "Reference rate 30/11/2026: 1 GBP = 1.1700 EUR"}
INVOICE = "Invoice INV-3307 from Atelier Moreau: 1,200.00 GBP, due 2026-12-15"
CONVERTED = "INV-3307: £1,200 is €1,398 at 1.165 (today's rate)"


def test_a_rate_with_trailing_zeros_is_the_rate_the_note_restates(rescind_workers,
                                                                    tenant_name):
    """A StateGraph that reads the invoice and two days' rates into its prompt through tools:
    the note writes "1.165" for today's "1.1650 EUR" and "£1,200" for "1,200.00 GBP"; it rests
    on the invoice and today's rate, not on yesterday's (1.1700, which rounds alike)."""
    model = f.scripted(f.done(CONVERTED))

    @tool
    def fx_rate(day: str) -> str:
        """The reference exchange rate of a day: today or yesterday."""
        return RATES[day]

    @tool
    def read_invoice(invoice: str) -> str:
        """An invoice from the ledger."""
        return INVOICE

    class State(TypedDict, total=False):
        invoice: str

    def convert(state: State, *, store: BaseStore) -> dict:
        context = "\n".join([read_invoice.invoke({"invoice": state["invoice"]}),
                             fx_rate.invoke({"day": "today"}),
                             fx_rate.invoke({"day": "yesterday"})])
        answer = model.invoke([("system", f"Convert the invoice to euros.\n{context}"),
                               ("human", "How much is it in euros?")]).content
        store.put(("notes", "ravi"), state["invoice"], {"text": answer})
        return {}

    builder = StateGraph(State)
    builder.add_node("convert", convert)
    builder.add_edge(START, "convert")
    builder.add_edge("convert", END)
    graph = wrap(builder.compile(store=InMemoryStore()), rescind_workers, tenant_name,
                 sources={"fx_rate": SourceTool(source="fx:{day}"),
                          "read_invoice": SourceTool(source="ledger:{invoice}")})
    graph.invoke({"invoice": "INV-3307"}, {"configurable": {"user_id": "ravi"}})
    settle(rescind_workers, graph)
    check_each(rescind_workers, tenant_name,
               {CONVERTED: {frozenset({"ledger:inv-3307", "fx:today"})}},
               {"ledger:inv-3307": {CONVERTED}, "fx:today": {CONVERTED}, "fx:yesterday": set()})
    graph.rescind.close()


ARTICLE = {"tidal power in wales": "Swansea Bay Tidal Lagoon: a proposed 320 MW scheme, "
                                   "turned down by the UK government in June 2018 on cost"}
ENTRY = "Tidal power in Wales: the 320 MW Swansea Bay lagoon was turned down in June 2018"


def test_a_topic_given_as_the_input_is_no_statement_of_the_user_s(rescind_workers,
                                                                   tenant_name):
    """A StateGraph whose input is a topic (not a message): the model is asked to outline it,
    then writes an entry titled with the topic from an encyclopedia article. The entry rests
    on the article alone: the topic says what to write about, it states nothing."""
    model = f.scripted(f.done("1. The lagoon"), f.done(ENTRY))

    @tool
    def encyclopedia(topic: str) -> str:
        """Look a topic up in the encyclopedia."""
        return ARTICLE[topic]

    class State(TypedDict, total=False):
        topic: str
        outline: str

    def outline(state: State) -> dict:
        return {"outline": model.invoke([("system", "Outline an entry on the topic."),
                                         ("human", state["topic"])]).content}

    def write(state: State, *, store: BaseStore) -> dict:
        article = encyclopedia.invoke({"topic": state["topic"]})
        entry = model.invoke([("system", f"Write the entry.\nOutline: {state['outline']}"),
                              ("human", f"Source:\n{article}")]).content
        store.put(("entries",), "tidal-wales", {"text": entry})
        return {}

    builder = StateGraph(State)
    builder.add_node("outline", outline)
    builder.add_node("write", write)
    builder.add_edge(START, "outline")
    builder.add_edge("outline", "write")
    builder.add_edge("write", END)
    graph = wrap(builder.compile(store=InMemoryStore()), rescind_workers, tenant_name,
                 sources={"encyclopedia": SourceTool(source="wiki:{topic}")})
    graph.invoke({"topic": "tidal power in wales"}, {"configurable": {"user_id": "gwen"}})
    settle(rescind_workers, graph)
    check_each(rescind_workers, tenant_name,
               {ENTRY: {frozenset({"wiki:tidal power in wales"})}},
               {"wiki:tidal power in wales": {ENTRY}, "user:gwen": set()})
    graph.rescind.close()


REPORTS = {"north": "North region, Q3: 1,200 units sold, up 4.0% on Q2; best month September",
           "south": "South region, Q3: nine hundred and fifty units sold, up 2.50% on Q2",
           "east": "East region, Q3: 610 units sold, down 1.0% on Q2"}
SECTIONS = {"north": "North sold 1200 units in Q3 (+4%)",
            "south": "South sold 950 units in Q3 (+2.5%)",
            "east": "East sold 610 units in Q3 (-1%)"}
BRIEF = "Q3 growth: North 1,200 units (+4 percent), South 950 units (+2.5 percent)"


class _Sales(TypedDict, total=False):
    request: str
    sections: Annotated[list[str], operator.add]


def test_a_brief_built_from_the_branches_sections_rests_on_each_section_or_its_report(
        rescind_workers, tenant_name):
    """Map-reduce with ``Send``: each branch reads its region's report and writes a section
    (in digits where the report has words); the reducer builds its prompt from the sections
    and writes a brief on the two regions that grew. The brief rests on each of those
    sections or its report (alternatives), never on East's, nor on the request."""

    def decide(messages) -> AIMessage:
        last = str(messages[-1].content)
        if last.startswith("Summarise"):
            return f.done(next(SECTIONS[r] for r in REPORTS if REPORTS[r] in last))
        return f.done(BRIEF)

    class Policy(f.Scripted):
        def _generate(self, messages, *args: Any, **kw: Any):
            from langchain_core.outputs import ChatGeneration, ChatResult
            return ChatResult(generations=[ChatGeneration(message=decide(messages))])

    model = Policy(messages=iter(()))

    @tool
    def sales_report(region: str) -> str:
        """A region's quarterly sales report."""
        return REPORTS[region]

    def fan_out(state: _Sales) -> list[Send]:
        return [Send("summarise", {"region": r}) for r in REPORTS]

    def summarise(state: dict, *, store: BaseStore) -> dict:
        report = sales_report.invoke({"region": state["region"]})
        section = model.invoke([("human", f"Summarise:\n{report}")]).content
        store.put(("sections",), state["region"], {"text": section})
        return {"sections": [section]}

    def brief(state: _Sales, *, store: BaseStore) -> dict:
        joined = "\n".join(sorted(state["sections"]))
        text = model.invoke([("human", f"Brief the board on growth from:\n{joined}")]).content
        store.put(("briefs",), "q3", {"text": text})
        return {}

    builder = StateGraph(_Sales)
    builder.add_node("summarise", summarise)
    builder.add_node("brief", brief)
    builder.add_conditional_edges(START, fan_out, ["summarise"])
    builder.add_edge("summarise", "brief")
    builder.add_edge("brief", END)
    graph = wrap(builder.compile(store=InMemoryStore()), rescind_workers, tenant_name,
                 sources={"sales_report": SourceTool(source="sales:{region}")})
    graph.invoke({"request": "The Q3 board brief, please"}, {"configurable": {"user_id": "mo"}})
    settle(rescind_workers, graph)
    truth = {SECTIONS[r]: {frozenset({f"sales:{r}"})} for r in REPORTS}
    truth[BRIEF] = {frozenset({n, s}) for n in ("sales:north", SECTIONS["north"])
                    for s in ("sales:south", SECTIONS["south"])}
    check_each(rescind_workers, tenant_name, truth,
                {"sales:north": {SECTIONS["north"], BRIEF},
                 "sales:south": {SECTIONS["south"], BRIEF},
                 "sales:east": {SECTIONS["east"]}})
    graph.rescind.close()
