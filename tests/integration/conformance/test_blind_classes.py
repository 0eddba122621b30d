"""Conformance (issue 29, the first blind set's misses, fixed as classes): LangGraph programs of
our own, in the styles of public examples, each wrapped with one ``instrument`` call and a
scripted chat model: a quantity written with its unit short or with a word qualifying its noun,
two notes saved in one model turn, a file path restated from a tool's ``Command`` update. Each
asserts the exact premises and IN/OUT after each single-source retraction."""

from __future__ import annotations

import json
import operator
from typing import Annotated, Any, TypedDict

from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command, Send, interrupt

from rescind.middleware import SourceTool
from tests.support import foreign as f
from tests.support.conformance import (
    check_each,
    read_then_note,
    save_note,
    settle,
    wrap,
)

VANS = {"luton": "Luton van LV-204 with driver: GBP 45.00 per hour, fuel included"}
MOVE = "Luton van LV-204 booked for 3 hours at GBP 45.00 per hour, for 12 boxes"


def test_a_short_unit_and_a_qualified_noun_are_the_same_quantity(rescind_workers, tenant_name):
    """A prebuilt ReAct agent: the user asks for the van for "3 hrs" and "12 heavy boxes"
    (a question: only its values are facts); the note writes "3 hours" and "12 boxes", so
    it rests on the rates and the user's message both, and each retraction takes it OUT."""
    model = f.scripted(f.call("van_rates", {"size": "luton"}),
                       f.call("save_note", {"text": MOVE}), f.done("Booked."))

    @tool
    def van_rates(size: str) -> str:
        """A removal van's hourly rate."""
        return VANS[size]

    read_then_note(rescind_workers, tenant_name, model, van_rates, "vans:{size}",
                   "could you book a luton for 3 hrs on saturday, for 12 heavy boxes?",
                   "sam")
    check_each(rescind_workers, tenant_name,
               {MOVE: {frozenset({"vans:luton", "user:sam"})}},
               {"vans:luton": {MOVE}, "user:sam": {MOVE}})


CHECKLISTS = {"7.2": "Release 7.2 checklist: migration 0042_add_index pending; feature flag "
                     "beta_export off; owner Lena Fischer"}
RELEASE = ("Release 7.2 has migration 0042_add_index pending: it needs Priya Raman's sign-off "
           "before it ships")
RULE = "A migration needs Priya Raman's sign-off before it ships"


def test_two_notes_of_one_model_turn_are_not_premises_of_each_other(rescind_workers,
                                                                    tenant_name):
    """A prebuilt ReAct agent saves two notes in one turn: the rule restates the user's
    words alone, not the release note written beside it (which names the same person), so
    retracting the checklist leaves the rule IN."""
    model = f.scripted(f.call("release_checklist", {"version": "7.2"}),
                       AIMessage(content="", tool_calls=[
                           {"name": "save_note", "args": {"text": RELEASE}, "id": "n1"},
                           {"name": "save_note", "args": {"text": RULE}, "id": "n2"}]),
                       f.done("Both noted."))

    @tool
    def release_checklist(version: str) -> str:
        """A release's deploy checklist."""
        return CHECKLISTS[version]

    read_then_note(rescind_workers, tenant_name, model, release_checklist, "releases:{version}",
                   "check the checklist of release 7.2 and note what matters. fyi, every "
                   "migration needs a sign-off from Priya Raman before it ships.",
                   "omar")
    check_each(rescind_workers, tenant_name,
               {RELEASE: {frozenset({"releases:7.2", "user:omar"})},
                RULE: {frozenset({"user:omar"})}},
               {"releases:7.2": {RELEASE}, "user:omar": {RELEASE, RULE}})


TICKETS = {1187: {"id": 1187, "title": "Rate limit the export endpoint", "assignee": "kenji",
                  "changes": [{"path": "api/routes.py", "added": 30, "removed": 4},
                              {"path": "web/src/export_button.tsx", "added": 9, "removed": 0}]}}
FILES = "Ticket 1187 touches api/routes.py (+30 -4) and web/src/export_button.tsx (+9 -0)"


@tool
def load_ticket(number: int, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Load a ticket into the working context."""
    return Command(update={"ticket": TICKETS[int(number)], "messages": [
        ToolMessage(f"Ticket {number} loaded.", tool_call_id=tool_call_id)]})


class _Desk(MessagesState):
    ticket: dict


def test_file_paths_from_a_command_update_are_the_tool_s_facts(rescind_workers, tenant_name):
    """A tool answers with ``Command(update=...)`` putting a ticket's JSON into the state the
    prompt renders; the note restates its file paths, which only the ticket states (the user
    gave its number too), so it rests on the ticket alone."""
    model = f.scripted(f.call("load_ticket", {"number": 1187}),
                       f.call("save_note", {"text": FILES}), f.done("Noted."))
    tools = [load_ticket, save_note]

    def assistant(state: _Desk) -> dict:
        shown = f"\nTicket: {json.dumps(state['ticket'])}" if state.get("ticket") else ""
        return {"messages": [model.invoke([SystemMessage("You triage tickets." + shown),
                                           *state["messages"]])]}

    builder = StateGraph(_Desk)
    builder.add_node("assistant", assistant)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "assistant")
    builder.add_conditional_edges("assistant", tools_condition)
    builder.add_edge("tools", "assistant")
    graph = wrap(builder.compile(store=InMemoryStore()), rescind_workers, tenant_name,
                 sources={"load_ticket": SourceTool(source="tickets:{number}")})
    graph.invoke({"messages": [{"role": "user", "content": "which files does ticket 1187 "
                                                          "change? note it for me"}]},
                 {"configurable": {"user_id": "ana"}})
    settle(rescind_workers, graph)
    check_each(rescind_workers, tenant_name, {FILES: {frozenset({"tickets:1187"})}},
                {"tickets:1187": {FILES}, "user:ana": set()})
    graph.rescind.close()


REQUEST = "Purchase: 3 standing desks for the design team, budget code MKT-7731, approved"


class _Purchase(MessagesState):
    decision: str


def test_a_value_given_to_resume_an_interrupt_is_the_resuming_user_s_word(rescind_workers,
                                                                           tenant_name):
    """An approval graph pauses on ``interrupt``; a manager resumes it with
    ``Command(resume=...)`` under his own user id. The note rests on the requester's message
    (the desks) and the manager's resume value (the budget code), each a user of its own
    invocation, and either retraction takes it OUT."""
    model = f.scripted(f.done("I'll ask your manager."), f.done(REQUEST))

    def draft(state: _Purchase) -> dict:
        return {"messages": [model.invoke([SystemMessage("You handle purchase requests."),
                                           *state["messages"]])]}

    def approval(state: _Purchase) -> dict:
        return {"decision": interrupt({"question": "Approve?"})}

    def file_it(state: _Purchase, *, store: BaseStore) -> dict:
        note = model.invoke([SystemMessage("File the request. The manager said: "
                                           f"{state['decision']}"), *state["messages"]]).content
        store.put(("purchases",), "desks", {"text": note})
        return {}

    builder = StateGraph(_Purchase)
    builder.add_node("draft", draft)
    builder.add_node("approval", approval)
    builder.add_node("file_it", file_it)
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "approval")
    builder.add_edge("approval", "file_it")
    builder.add_edge("file_it", END)
    graph = wrap(builder.compile(checkpointer=InMemorySaver(), store=InMemoryStore()),
                 rescind_workers, tenant_name)
    graph.invoke({"messages": [{"role": "user", "content": "can we get 3 standing desks for "
                                                          "the design team?"}]},
                 {"configurable": {"thread_id": "po-1", "user_id": "alice"}})
    graph.invoke(Command(resume="yes, go ahead, charge it to budget code MKT-7731"),
                 {"configurable": {"thread_id": "po-1", "user_id": "bruno"}})
    settle(rescind_workers, graph)
    check_each(rescind_workers, tenant_name,
               {REQUEST: {frozenset({"user:alice", "user:bruno"})}},
               {"user:alice": {REQUEST}, "user:bruno": {REQUEST}})
    graph.rescind.close()


SUMMARY = "Rent: 2,150 PLN to Kowalski Estates, due on the 10th of each month"
REMINDER = "Reminder: pay 2,150 PLN rent to Kowalski Estates on the 10th"


class _Chat(MessagesState):
    summary: str


def test_a_summary_the_program_puts_in_the_prompt_is_a_premise(rescind_workers, tenant_name):
    """A chat keeps a running summary in the store and in its state, and drops the old
    messages (``RemoveMessage``); in the next run the model is shown only the summary, in its
    system prompt, and the new request: the reminder rests on the summary (written in the
    earlier run), so retracting the user's first message takes both OUT."""
    model = f.scripted(f.done("Noted."), f.done(SUMMARY),
                       f.call("save_note", {"text": REMINDER}), f.done("Saved."))
    tools = [save_note]

    def agent(state: _Chat) -> dict:
        system = "You help with a household budget."
        if state.get("summary"):
            system += f"\nSummary of the conversation so far: {state['summary']}"
        return {"messages": [model.invoke([SystemMessage(system), *state["messages"]])]}

    def route(state: _Chat) -> str:
        if state["messages"][-1].tool_calls:
            return "tools"
        return END if state.get("summary") else "summarise"

    def summarise(state: _Chat, config: RunnableConfig, *, store: BaseStore) -> dict:
        summary = model.invoke([*state["messages"],
                                HumanMessage("Summarise the conversation.")]).content
        store.put(("summaries", config["configurable"]["user_id"]), "chat", {"text": summary})
        return {"summary": summary, "messages": [RemoveMessage(id=m.id)
                                                 for m in state["messages"]]}

    builder = StateGraph(_Chat)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools))
    builder.add_node("summarise", summarise)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tools", "summarise", END])
    builder.add_edge("tools", "agent")
    builder.add_edge("summarise", END)
    graph = wrap(builder.compile(checkpointer=InMemorySaver(), store=InMemoryStore()),
                 rescind_workers, tenant_name)
    config = {"configurable": {"thread_id": "budget", "user_id": "zofia"}}
    graph.invoke({"messages": [{"role": "user", "content": "my rent is 2150 PLN, paid to "
                                                          "Kowalski Estates on the 10th"}]},
                 config)
    graph.invoke({"messages": [{"role": "user", "content": "set me a reminder for it please"}]},
                 config)
    settle(rescind_workers, graph)
    check_each(rescind_workers, tenant_name,
               {SUMMARY: {frozenset({"user:zofia"})}, REMINDER: {frozenset({SUMMARY})}},
               {"user:zofia": {SUMMARY, REMINDER}})
    graph.rescind.close()


QUOTES = {"nowak": "Jan Nowak Instalacje: new combi boiler fitted, 1 450 PLN all in"}
BOILER = "Boiler died again; Jan Nowak Instalacje fits a new combi boiler for 1,450 PLN"


def test_an_emoticon_ends_the_user_s_statement_before_a_request(rescind_workers, tenant_name):
    """The user's chat message states a fact, then, after an emoticon and no full stop, asks
    for something ("… died again :( please …"): the statement is still the user's, so the
    note restating it rests on the quote and the user both."""
    model = f.scripted(f.call("plumber_quote", {"name": "nowak"}),
                       f.call("save_note", {"text": BOILER}), f.done("Noted."))

    @tool
    def plumber_quote(name: str) -> str:
        """A plumber's quote."""
        return QUOTES[name]

    read_then_note(rescind_workers, tenant_name, model, plumber_quote, "plumbers:{name}",
                   "my boiler died again :( please get the quote from jan nowak and note it",
                   "ewa")
    check_each(rescind_workers, tenant_name,
               {BOILER: {frozenset({"plumbers:nowak", "user:ewa"})}},
               {"plumbers:nowak": {BOILER}, "user:ewa": {BOILER}})


FUNDS = {"index": "Global index fund: 0.12% yearly fee, minimum monthly plan 100 PLN"}
PLAN = "Index fund plan: 1,500 PLN a month towards 25,000 PLN, fee 0.12% a year"


def test_thousands_grouped_by_spaces_or_written_with_k_are_the_user_s_numbers(
        rescind_workers, tenant_name):
    """The user asks (a question: only values are facts) to put "1 500" a month towards
    "25k"; the plan writes 1,500 and 25,000, so it rests on the fund's page and the user."""
    model = f.scripted(f.call("fund_facts", {"fund": "index"}),
                       f.call("save_note", {"text": PLAN}), f.done("Saved."))

    @tool
    def fund_facts(fund: str) -> str:
        """A fund's key facts."""
        return FUNDS[fund]

    read_then_note(rescind_workers, tenant_name, model, fund_facts, "funds:{fund}",
                   "could I put 1 500 a month into the index fund until I have 25k?",
                   "piotr")
    check_each(rescind_workers, tenant_name,
               {PLAN: {frozenset({"funds:index", "user:piotr"})}},
               {"funds:index": {PLAN}, "user:piotr": {PLAN}})


PAGES = {"sonne": "Zimmer und Preise - Doppelzimmer 120 EUR pro Nacht, Fruehstueck inklusive",
         "mond": "Zimmer und Preise - Doppelzimmer 135 EUR pro Nacht, ohne Fruehstueck"}
FINDING = {"sonne": "Hotel Sonne: double room 120 EUR a night, breakfast included",
           "mond": "Hotel Mond: double room 135 EUR a night, no breakfast"}
PICK = "Book Hotel Sonne at 120 EUR a night rather than Hotel Mond at 135 EUR"


class _Policy(f.Scripted):
    """A chat model whose answer is a function of what it is shown (branches run at once)."""

    decide: Any = None

    def _generate(self, messages: list, stop: Any = None, run_manager: Any = None,
                  **kw: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.decide(messages))])


@tool
def hotel_page(hotel: str) -> str:
    """A hotel's price page."""
    return PAGES[hotel]


class _Trip(TypedDict):
    hotels: list[str]
    findings: Annotated[list[str], operator.add]


def test_a_pick_shown_the_branches_findings_rests_on_the_findings(rescind_workers,
                                                                  tenant_name):
    """Map-reduce with ``Send``: each branch reads a hotel's price page (which does not name
    the hotel: the branch knows which one it read) and writes a finding; the pick, shown the
    findings, rests on both findings (what it was shown, not the pages under them; a page
    naming its hotel would be an alternative, as a section's report is in test_value_forms);
    retracting one page takes its finding and the pick OUT."""

    def decide(messages: list) -> AIMessage:
        last = str(messages[-1].content)
        for name, page in PAGES.items():
            if page in last:
                return AIMessage(content=FINDING[name])
        return AIMessage(content=PICK)

    model = _Policy(messages=iter(()), decide=decide)

    def fan_out(state: _Trip) -> list[Send]:
        return [Send("read", {"hotel": h}) for h in state["hotels"]]

    def read(state: dict, *, store: BaseStore) -> dict:
        page = hotel_page.invoke({"hotel": state["hotel"]})
        finding = model.invoke([("system", "One line in English."), ("human", page)]).content
        store.put(("trip", "findings"), state["hotel"], {"text": finding})
        return {"findings": [finding]}

    def pick(state: _Trip, *, store: BaseStore) -> dict:
        shown = "\n".join(sorted(state["findings"]))
        note = model.invoke([("system", f"Pick a hotel:\n{shown}")]).content
        store.put(("trip", "decision"), "hotel", {"text": note})
        return {}

    builder = StateGraph(_Trip)
    builder.add_node("read", read)
    builder.add_node("pick", pick)
    builder.add_conditional_edges(START, fan_out, ["read"])
    builder.add_edge("read", "pick")
    builder.add_edge("pick", END)
    graph = wrap(builder.compile(store=InMemoryStore()), rescind_workers, tenant_name,
                 sources={"hotel_page": SourceTool(source="hotels:{hotel}")})
    graph.invoke({"hotels": ["sonne", "mond"], "findings": []},
                 {"configurable": {"user_id": "lea"}})
    settle(rescind_workers, graph)
    sonne, mond = FINDING["sonne"], FINDING["mond"]
    check_each(rescind_workers, tenant_name,
               {sonne: {frozenset({"hotels:sonne"})}, mond: {frozenset({"hotels:mond"})},
                PICK: {frozenset({sonne, mond})}},
               {"hotels:sonne": {sonne, PICK}, "hotels:mond": {mond, PICK}})
    graph.rescind.close()


def test_a_note_of_an_earlier_turn_was_shown_to_the_next_call(rescind_workers, tenant_name):
    """A prebuilt ReAct agent saves the release note, then in its next turn the rule: the next
    call was shown the note (as the model's own tool call), so the rule rests on the user's
    words or on the note (which itself rests on them and the checklist); retracting the user
    takes both OUT, retracting the checklist only the note. Two notes of ONE turn are not
    premises of each other (test_two_notes_of_one_model_turn_are_not_premises_of_each_other)."""
    model = f.scripted(f.call("release_checklist", {"version": "7.2"}),
                       f.call("save_note", {"text": RELEASE}),
                       f.call("save_note", {"text": RULE}), f.done("Both noted."))

    @tool
    def release_checklist(version: str) -> str:
        """A release's deploy checklist."""
        return CHECKLISTS[version]

    read_then_note(rescind_workers, tenant_name, model, release_checklist, "releases:{version}",
                   "check the checklist of release 7.2 and note what matters. fyi, every "
                   "migration needs a sign-off from Priya Raman before it ships.",
                   "omar")
    check_each(rescind_workers, tenant_name,
               {RELEASE: {frozenset({"releases:7.2", "user:omar"})},
                RULE: {frozenset({"user:omar"}), frozenset({RELEASE})}},
               {"releases:7.2": {RELEASE}, "user:omar": {RELEASE, RULE}})


PARCELS = {"PX-2210": "Parcel PX-2210: out for delivery since 28 Nov, depot Valencia-Norte"}
SPANISH = "Prefers answers in Spanish"


def test_a_language_named_in_its_own_tongue_is_the_user_s_fact(rescind_workers, tenant_name):
    """The user asks, in a line of their own, for answers "en Español"; the preference the
    agent saves names Spanish, so it rests on the user alone, not on the parcel status the
    model was shown in the same call."""
    model = f.scripted(f.call("track_parcel", {"parcel": "PX-2210"}),
                       f.call("save_note", {"text": SPANISH}), f.done("Noted."))

    @tool
    def track_parcel(parcel: str) -> str:
        """A parcel's delivery status."""
        return PARCELS[parcel]

    read_then_note(rescind_workers, tenant_name, model, track_parcel, "parcels:{parcel}",
                   "hi, where is parcel PX-2210?\nrespuestas en Español, gracias",
                   "marta")
    check_each(rescind_workers, tenant_name, {SPANISH: {frozenset({"user:marta"})}},
                {"user:marta": {SPANISH}, "parcels:px-2210": set()})
