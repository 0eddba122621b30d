"""Conformance (issue 29, the fourth blind set's branch class, fixed as a class): a map-reduce
graph in the style of LangGraph's ``Send`` examples whose branches are each an invocation of a
compiled subgraph. A branch's write rests on what that branch and the parent before the
fan-out were given, never on what a sibling branch run at once read; subgraphs of different
steps are not kept apart. Each asserts the exact premises and IN/OUT after each single-source
retraction."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.store.memory import InMemoryStore
from langgraph.types import Send

from rescind.middleware import SourceTool
from tests.support.conformance import check_each, settle, wrap

BOOKING = "Hotel booking HB-5512: two nights from Friday, late check-in after 22:00 agreed"
FORECAST = {
    "lisbon": "Lisbon weekend forecast: 24 °C by day on average (range 21-26), no rain "
              "expected, light north-west wind.",
    "porto": "Porto weekend forecast: 19 °C by day, UV index 6.5 on average; rain likely on "
             "Saturday afternoon.",
}
NOTE = {"lisbon": "Lisbon (HB-5512, late check-in after 22:00): 24 °C on average by day, no "
                  "rain expected",
        "porto": "Porto (HB-5512, late check-in after 22:00): 19 °C, rain likely on Saturday "
                 "afternoon"}
SOURCES = {"weather": SourceTool(source="weather:{city}"),
           "booking": SourceTool(source="hotel:{ref}")}


@tool
def weather(city: str) -> str:
    """The weekend's weather forecast for a city."""
    return FORECAST[city]


@tool
def booking(ref: str) -> str:
    """A hotel booking's confirmation."""
    return BOOKING


class Briefer(BaseChatModel):
    """A chat model that writes the note for the forecast it is shown (branches call it in
    any order, so it answers by its input, not by a script)."""

    @property
    def _llm_type(self) -> str:
        return "briefer"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kw: Any) -> ChatResult:
        shown = str(messages[-1].content)
        city = next(c for c, text in FORECAST.items() if text in shown)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(NOTE[city]))])


class Trip(TypedDict, total=False):
    ref: str
    booking: str
    notes: Annotated[list[str], operator.add]


class Scout(TypedDict, total=False):
    city: str
    stay: str  # the booking, as sent (a key of its own: the branch's state returns whole)
    forecast: str
    notes: Annotated[list[str], operator.add]


def _scout(model: BaseChatModel) -> Any:
    """One city's research: look its forecast up, then note it with the booking."""

    def look(state: Scout) -> dict:
        return {"forecast": weather.invoke({"city": state["city"]})}

    def note(state: Scout) -> dict:
        text = str(model.invoke([SystemMessage("Write a one-line weekend note for the city."),
                                 HumanMessage(f"{state['stay']}\n\n{state['forecast']}")])
                   .content)
        get_store().put(("notes", "trip"), state["city"], {"text": text})
        return {"notes": [text]}

    sub = StateGraph(Scout)
    sub.add_node("look", look)
    sub.add_node("note", note)
    sub.add_edge(START, "look")
    sub.add_edge("look", "note")
    return sub.compile()


def _fan_out_graph(model: BaseChatModel) -> Any:
    """The booking is read before the fan-out; each city is sent to the compiled subgraph."""

    def confirm(state: Trip) -> dict:
        return {"booking": booking.invoke({"ref": state["ref"]})}

    def fan_out(state: Trip) -> list[Send]:
        return [Send("scout", {"city": c, "stay": state["booking"]}) for c in FORECAST]

    builder = StateGraph(Trip)
    builder.add_node("confirm", confirm)
    builder.add_node("scout", _scout(model))
    builder.add_edge(START, "confirm")
    builder.add_conditional_edges("confirm", fan_out, ["scout"])
    builder.add_edge("scout", END)
    return builder.compile(store=InMemoryStore())


def test_a_branch_of_a_send_to_a_subgraph_rests_on_its_own_reads_only(rescind_workers,
                                                                      tenant_name):
    """Two cities sent at once to a compiled subgraph, after the parent read the booking: each
    note rests on its own forecast and the booking, not on the sibling's forecast (whose "on
    average" the Lisbon note says too, as its own forecast does in a longer phrase): retracting
    one forecast takes only its city's note OUT, the booking both."""
    graph = wrap(_fan_out_graph(Briefer()), rescind_workers, tenant_name, sources=SOURCES)
    graph.invoke({"ref": "HB-5512"}, {"configurable": {"user_id": "ines"}})
    settle(rescind_workers, graph)
    truth = {NOTE[c]: {frozenset({"hotel:hb-5512", f"weather:{c}"})} for c in FORECAST}
    check_each(rescind_workers, tenant_name, truth,
               {"hotel:hb-5512": set(truth), "weather:lisbon": {NOTE["lisbon"]},
                "weather:porto": {NOTE["porto"]}})
    graph.rescind.close()



def _chained_graph(model: BaseChatModel) -> Any:
    """Two compiled subgraphs one after the other: the first confirms the booking, the second
    (a later step, not run at once) notes Lisbon's forecast with the booking it was given."""

    class Stay(TypedDict, total=False):
        ref: str
        booking: str

    def confirm(state: Stay) -> dict:
        return {"booking": booking.invoke({"ref": state["ref"]})}

    check_in = StateGraph(Stay)
    check_in.add_node("confirm", confirm)
    check_in.add_edge(START, "confirm")

    builder = StateGraph(Trip)
    builder.add_node("check_in", check_in.compile())
    builder.add_node("scout", _scout(model))
    builder.add_edge(START, "check_in")
    builder.add_conditional_edges(
        "check_in", lambda s: Send("scout", {"city": "lisbon", "stay": s["booking"]}),
        ["scout"])
    builder.add_edge("scout", END)
    return builder.compile(store=InMemoryStore())


def test_a_subgraph_of_a_later_step_rests_on_what_an_earlier_one_read(rescind_workers,
                                                                      tenant_name):
    """The booking read inside one subgraph, the note written inside another at the next
    step: subgraphs of different steps are not kept apart, so the note rests on both."""
    graph = wrap(_chained_graph(Briefer()), rescind_workers, tenant_name, sources=SOURCES)
    graph.invoke({"ref": "HB-5512"}, {"configurable": {"user_id": "ines"}})
    settle(rescind_workers, graph)
    truth = {NOTE["lisbon"]: {frozenset({"hotel:hb-5512", "weather:lisbon"})}}
    check_each(rescind_workers, tenant_name, truth,
               {"hotel:hb-5512": set(truth), "weather:lisbon": set(truth)})
    graph.rescind.close()
