"""Conformance (issue 29, the third blind set's value classes, fixed as classes): LangGraph
programs of our own in the styles of public examples, each wrapped with one ``instrument`` call
and a scripted chat model: a booking note that restates a remembered preference in its own
two-word phrases, and a budget that writes with a currency the amounts a bank statement prints
bare while an invoice states the same number in another currency. Each asserts the exact
premises and IN/OUT after each single-source retraction."""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.store.memory import InMemoryStore

from rescind.middleware import SourceTool
from tests.support import foreign as f
from tests.support.conformance import check_each, save_note, settle, wrap

# -- a memory agent: the booking note restates a preference's phrases --------------------------

PREFERENCE = "At restaurants: a quiet corner table and a gluten free menu"
OTHER_PREFERENCE = "Prefers to pay by card and to split the bill evenly"
RESERVATION = ("Osteria Nove · reservation ON-4471 · Fri 11 Jun 2027 19:30 · table for 2 · "
               "deposit EUR 20")
NOTE = ("Dinner at Osteria Nove, Fri 11 Jun 2027 19:30 (ON-4471): quiet corner table, "
        "gluten free menu")


@tool
def remember(content: str) -> str:
    """Remember something about the user."""
    return "stored"  # the graph's own node writes it


@tool
def reservation(ref: str) -> str:
    """A restaurant reservation's confirmation."""
    return RESERVATION


def _concierge(model: Any) -> Any:
    """The memory-agent shape: the model is shown the user's memories in its system prompt; a
    ``remember`` call is written by a node of the graph; other tools run in a ToolNode-like
    node that saves notes too."""

    def call_model(state: MessagesState, config, *, store) -> dict:
        user = config["configurable"]["user_id"]
        known = "\n".join(f"- {m.value['content']}" for m in store.search(("memories", user)))
        return {"messages": [model.invoke([{"role": "system", "content": "You are a concierge."
                                            f"\nWhat you know of the user:\n{known}"},
                                           *state["messages"]])]}

    def act(state: MessagesState, config, *, store) -> dict:
        user = config["configurable"]["user_id"]
        out = []
        for tc in state["messages"][-1].tool_calls:
            if tc["name"] == "remember":
                store.put(("memories", user), uuid.uuid4().hex, {"content": tc["args"]["content"]})
                out.append(ToolMessage(content="stored", tool_call_id=tc["id"]))
            elif tc["name"] == "reservation":
                out.append(ToolMessage(content=reservation.invoke(tc["args"]),
                                       tool_call_id=tc["id"], name="reservation"))
            else:
                out.append(ToolMessage(content=save_note.invoke({**tc["args"], "store": store}),
                                       tool_call_id=tc["id"], name="save_note"))
        return {"messages": out}

    builder = StateGraph(MessagesState)
    builder.add_node(call_model)
    builder.add_node(act)
    builder.add_edge(START, "call_model")
    builder.add_conditional_edges(
        "call_model", lambda s: "act" if s["messages"][-1].tool_calls else END, ["act", END])
    builder.add_edge("act", "call_model")
    return builder.compile(store=InMemoryStore())


def test_a_note_restating_a_remembered_preference_in_phrases_rests_on_it(rescind_workers,
                                                                         tenant_name):
    """Two threads of one user: the first remembers two preferences the user states; in the
    second, the user asks for a quiet corner table, and the note restates the reservation's
    values and the first preference's phrases. It rests on the reservation and that
    preference, not on the other one nor on the question that asks for the same phrase:
    retracting the user's word takes the note OUT with the preferences."""
    model = f.scripted(
        f.call("remember", {"content": PREFERENCE}),
        f.call("remember", {"content": OTHER_PREFERENCE}),
        f.done("Noted."),
        f.call("reservation", {"ref": "ON-4471"}),
        f.call("save_note", {"text": NOTE}),
        f.done("Booked."))
    graph = wrap(_concierge(model), rescind_workers, tenant_name,
                 sources={"reservation": SourceTool(source="restaurant:{ref}")})
    graph.invoke({"messages": [{"role": "user", "content": (
        "For the record: when we eat out I like a quiet corner table and a gluten free menu. "
        "I pay by card and we split the bill evenly.")}]},
        {"configurable": {"user_id": "noor", "thread_id": "noor-1"}})
    settle(rescind_workers, graph)
    graph.invoke({"messages": [{"role": "user", "content": (
        "Can you confirm reservation ON-4471 and check I get a quiet corner table?")}]},
        {"configurable": {"user_id": "noor", "thread_id": "noor-2"}})
    settle(rescind_workers, graph)
    truth = {PREFERENCE: {frozenset({"user:noor"})},
             OTHER_PREFERENCE: {frozenset({"user:noor"})},
             NOTE: {frozenset({PREFERENCE, "restaurant:on-4471"})}}
    check_each(rescind_workers, tenant_name, truth,
               {"user:noor": set(truth), "restaurant:on-4471": {NOTE}})
    graph.rescind.close()


# -- a ReAct agent: a budget in pounds from a statement's bare amounts --------------------------

STATEMENT = ("Current account 20-44-91 73018822, March 2027\n"
             "01 MAR  DD THAMES WATER UTILITIES  48.60 DR\n"
             "03 MAR  SO K PATEL LANDLORD  1,275.00 DR\n"
             "05 MAR  BGC ACME PAYROLL  2,940.15 CR")
INVOICE = ("Invoice 88-1207 from Hudson Desk Co (New York): USD 1,275.00 for a standing desk, "
           "USD 400.00 for delivery, due 30 Mar 2027")
BUDGET = ("April 2027 budget: rent £1,275.00, water £48.60; income £2,940.15; "
          "savings £400.00")


@tool
def bank_statement(month: str) -> str:
    """The user's bank statement for a month."""
    return STATEMENT


@tool
def open_invoices() -> str:
    """The user's open invoices."""
    return INVOICE


def test_a_budget_in_pounds_rests_on_the_bare_statement_not_on_dollars(rescind_workers,
                                                                      tenant_name):
    """A prebuilt ReAct agent reads the statement (amounts with no currency, a debit or credit
    marker after each) and an invoice stating two of the budget's numbers in dollars, and
    writes a budget in pounds with the savings the user gives in pounds: it rests on the
    statement and the user, never on the invoice."""
    from langgraph.prebuilt import create_react_agent

    model = f.scripted(
        f.call("bank_statement", {"month": "2027-03"}),
        f.call("open_invoices", {}),
        f.call("save_note", {"text": BUDGET}),
        f.done("Here is your budget."))
    graph = wrap(create_react_agent(model, [bank_statement, open_invoices, save_note],
                                    store=InMemoryStore()),
                 rescind_workers, tenant_name,
                 sources={"bank_statement": SourceTool(source="bank:statement"),
                          "open_invoices": SourceTool(source="billing:invoices")})
    graph.invoke({"messages": [{"role": "user", "content": "Make my April budget from last "
                                                           "month's statement. I'm saving "
                                                           "£400.00 a month now."}]},
                 {"configurable": {"user_id": "ravi"}})
    settle(rescind_workers, graph)
    truth = {BUDGET: {frozenset({"bank:statement", "user:ravi"})}}
    check_each(rescind_workers, tenant_name, truth,
               {"bank:statement": {BUDGET}, "billing:invoices": set(), "user:ravi": {BUDGET}})
    graph.rescind.close()
