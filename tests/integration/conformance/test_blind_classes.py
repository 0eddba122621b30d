"""Conformance (issue 29, the first blind set's misses, fixed as classes): LangGraph programs of
our own, in the styles of public examples, each wrapped with one ``instrument`` call and a
scripted chat model: a quantity written with its unit short or with a word qualifying its noun,
two notes saved in one model turn, a file path restated from a tool's ``Command`` update. Each
asserts the exact premises and IN/OUT after each single-source retraction."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from langchain_core.tools import tool
from langgraph.config import get_config
from langgraph.prebuilt import InjectedStore, create_react_agent
from langgraph.store.memory import InMemoryStore

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
