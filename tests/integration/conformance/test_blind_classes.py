"""Conformance (issue 29, the first blind set's misses, fixed as classes): LangGraph programs of
our own, in the styles of public examples, each wrapped with one ``instrument`` call and a
scripted chat model: a quantity written with its unit short or with a word qualifying its noun,
two notes saved in one model turn, a file path restated from a tool's ``Command`` update. Each
asserts the exact premises and IN/OUT after each single-source retraction."""

from __future__ import annotations

import json
import uuid
from typing import Annotated, Any

from langchain_core.messages import AIMessage, SystemMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.config import get_config
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedStore, ToolNode, create_react_agent, tools_condition
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command

from rescind.middleware import SourceTool
from tests.support import foreign as f
from tests.support.conformance import record, retract_and_reinstate, settle, wrap


@tool
def save_note(text: str, store: Annotated[Any, InjectedStore()]) -> str:
    """Save a note on the user's file."""
    user = get_config()["configurable"]["user_id"]
    store.put(("notes", user), uuid.uuid5(uuid.NAMESPACE_URL, text).hex, {"text": text})
    return "saved"


def _check_each(url: str, tenant: str, truth: dict, out_when: dict[str, set[str]]) -> None:
    """The record is ``truth`` (all IN); retracting each source alone takes exactly
    ``out_when[source]`` OUT, and reinstating it brings them back."""
    assert record(url, tenant) == {t: ("IN", js) for t, js in truth.items()}
    ins = {t: "IN" for t in truth}
    for source, out in out_when.items():
        retract_and_reinstate(url, tenant, source,
                              after={t: "OUT" if t in out else "IN" for t in truth}, back=ins)


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

    graph = wrap(create_react_agent(model, [van_rates, save_note], store=InMemoryStore()),
                 rescind_workers, tenant_name,
                 sources={"van_rates": SourceTool(source="vans:{size}")})
    graph.invoke({"messages": [{"role": "user", "content": "could you book a luton for 3 hrs "
                                                          "on saturday, for 12 heavy boxes?"}]},
                 {"configurable": {"user_id": "sam"}})
    settle(rescind_workers, graph)
    _check_each(rescind_workers, tenant_name,
                {MOVE: {frozenset({"vans:luton", "user:sam"})}},
                {"vans:luton": {MOVE}, "user:sam": {MOVE}})
    graph.rescind.close()


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

    graph = wrap(create_react_agent(model, [release_checklist, save_note], store=InMemoryStore()),
                 rescind_workers, tenant_name,
                 sources={"release_checklist": SourceTool(source="releases:{version}")})
    graph.invoke({"messages": [{"role": "user", "content": "check the checklist of release 7.2 "
                                                          "and note what matters. fyi, every "
                                                          "migration needs a sign-off from "
                                                          "Priya Raman before it ships."}]},
                 {"configurable": {"user_id": "omar"}})
    settle(rescind_workers, graph)
    _check_each(rescind_workers, tenant_name,
                {RELEASE: {frozenset({"releases:7.2", "user:omar"})},
                 RULE: {frozenset({"user:omar"})}},
                {"releases:7.2": {RELEASE}, "user:omar": {RELEASE, RULE}})
    graph.rescind.close()


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
    _check_each(rescind_workers, tenant_name, {FILES: {frozenset({"tickets:1187"})}},
                {"tickets:1187": {FILES}, "user:ana": set()})
    graph.rescind.close()
