"""Conformance (issue 29, blind3 classes A and B): who the user is, the LangGraph 1.x way, and
what a resumed invocation's writes rest on. Programs of this suite's own, written the way
public examples are, each wrapped with one ``instrument`` call and a scripted chat model:

- a parcel desk on LangChain's ``create_agent`` with ``HumanInTheLoopMiddleware``: the model
  reads a carrier's tracking and the depot's slots, asks to book a redelivery, a supervisor
  approves (or rejects with a message, or edits the call) in a later invocation of the thread;
- a review node that asks a person with ``interrupt()`` and writes their answer;
- a household of three users run at once, the user id in the runtime context
  (``context_schema``, ``Runtime``), and the same with no user id at all.

Each asserts exact premises, and IN/OUT after a retraction.
"""

from __future__ import annotations

import asyncio
import warnings
from dataclasses import dataclass
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain.tools import ToolRuntime
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command, interrupt

from rescind.middleware import ConfigWarning, SourceTool
from tests.support import foreign as f
from tests.support.conformance import check_each, record, settle, wrap

TRACKING = {"JD014600003828": "Parcel JD014600003828 · delivery attempted 07/12/2026 11:42, "
                              "nobody in · now held at Wakefield depot (WF2 7BQ)"}
DEPOT = {"wakefield": "Wakefield depot WF2 7BQ · redelivery slots: Wed 9 Dec 2026 08:00-12:00, "
                      "Thu 10 Dec 2026 13:00-17:00"}
ASK = "My parcel didn't come yesterday, can you get it sent again please?"
PARCEL, FROM = "JD014600003828", "Wakefield depot (WF2 7BQ)"
WEDNESDAY, THURSDAY = "Wed 9 Dec 2026, 08:00-12:00", "Thu 10 Dec 2026, 13:00-17:00"
REFUSAL = "No, mornings are no good for the customer. Take the Thursday afternoon slot."
NEIGHBOUR = "leave it with the neighbour at number 14 if nobody answers"


def booked(slot: str, instructions: str = "") -> str:
    """What ``book_redelivery`` stores for a booking of the parcel from the depot."""
    return f"Redelivery of {PARCEL} from {FROM}: {slot}" + (f"; {instructions}"
                                                            if instructions else "")


BOOKING = booked(WEDNESDAY)
REBOOKED = booked(THURSDAY, "afternoon as the customer asked")
EDITED = booked(WEDNESDAY, NEIGHBOUR)
SOURCES = {"carrier_tracking": SourceTool(source="carrier:{parcel}", kind="carrier"),
           "depot_slots": SourceTool(source="depot:{depot}", kind="depot")}


@tool
def carrier_tracking(parcel: str) -> str:
    """A parcel's tracking events from the carrier."""
    return TRACKING[parcel]


@tool
def depot_slots(depot: str) -> str:
    """The redelivery slots a depot offers."""
    return DEPOT[depot]


@tool
def book_redelivery(parcel: str, depot: str, slot: str, runtime: ToolRuntime,
                    instructions: str = "") -> str:
    """Book a parcel's redelivery from a depot in one of its slots, with the driver's
    instructions if any."""
    text = f"Redelivery of {parcel} from {depot}: {slot}" + (f"; {instructions}"
                                                             if instructions else "")
    runtime.store.put(("redeliveries",), parcel, {"text": text})
    return "Booked."


def _book(slot: str, instructions: str = "") -> dict:
    return {"parcel": PARCEL, "depot": FROM, "slot": slot,
            **({"instructions": instructions} if instructions else {})}


def _desk(model: Any, url: str, tenant: str, mode: str = "batched") -> Any:
    """A parcel desk in the style of LangChain's human-in-the-loop docs: every booking waits
    for a supervisor's decision."""
    agent = create_agent(
        model, [carrier_tracking, depot_slots, book_redelivery],
        system_prompt="You are a parcel desk assistant. Check the tracking and the depot "
                      "before booking a redelivery.",
        middleware=[HumanInTheLoopMiddleware(
            interrupt_on={"book_redelivery": {"allowed_decisions": ["approve", "edit",
                                                                     "reject"]}},
            interrupt_mode=mode)],
        checkpointer=InMemorySaver(), store=InMemoryStore())
    return wrap(agent, url, tenant, sources=SOURCES)


def _read_both() -> AIMessage:
    return AIMessage(content="", tool_calls=[
        {"name": "carrier_tracking", "args": {"parcel": "JD014600003828"}, "id": "c-track"},
        {"name": "depot_slots", "args": {"depot": "wakefield"}, "id": "c-slots"}])


def _thread(user: str, thread: str) -> dict:
    return {"configurable": {"user_id": user, "thread_id": thread}}


def _asked(graph: Any, thread: str) -> None:
    graph.invoke({"messages": [{"role": "user", "content": ASK}]}, _thread("maya", thread))


def test_an_approved_tool_call_rests_on_what_was_read_before_the_interrupt(rescind_workers,
                                                                         tenant_name):
    """The booking runs in the invocation that resumes the interrupt, with no model call
    before it: it rests on the tracking and the depot, read before the interrupt (not on the
    agent's word); the approval states nothing, so no user is a premise."""
    model = f.scripted(_read_both(), f.call("book_redelivery", _book(WEDNESDAY)),
                       f.done("Booked for Wednesday morning."))
    graph = _desk(model, rescind_workers, tenant_name)
    _asked(graph, "parcel-1")
    settle(rescind_workers, graph)
    assert record(rescind_workers, tenant_name) == {}  # nothing booked before the approval
    graph.invoke(Command(resume={"decisions": [{"type": "approve"}]}), _thread("sam", "parcel-1"))
    settle(rescind_workers, graph)
    check_each(rescind_workers, tenant_name,
               {BOOKING: {frozenset({"carrier:jd014600003828", "depot:wakefield"})}},
               {"carrier:jd014600003828": {BOOKING}, "depot:wakefield": {BOOKING},
                "user:maya": set()})  # sam only approved: said nothing, is no source
    graph.rescind.close()


def test_a_rejection_s_message_is_the_resuming_user_s_word(rescind_workers, tenant_name):
    """Three invocations: the supervisor rejects the first booking with a message (nested in
    the resume value's decisions), the model re-books from it, the supervisor approves. The
    booking rests on the tracking, the depot and the supervisor's message (user:sam), never
    on the customer who started the thread; retracting sam's word takes it OUT."""
    model = f.scripted(_read_both(), f.call("book_redelivery", _book(WEDNESDAY)),
                       f.call("book_redelivery", _book(THURSDAY, "afternoon as the customer "
                                                                 "asked")),
                       f.done("Rebooked."))
    graph = _desk(model, rescind_workers, tenant_name)
    _asked(graph, "parcel-2")
    graph.invoke(Command(resume={"decisions": [{"type": "reject", "message": REFUSAL}]}),
                 _thread("sam", "parcel-2"))
    graph.invoke(Command(resume={"decisions": [{"type": "approve"}]}), _thread("sam", "parcel-2"))
    settle(rescind_workers, graph)
    check_each(rescind_workers, tenant_name,
               {REBOOKED: {frozenset({"carrier:jd014600003828", "depot:wakefield",
                                      "user:sam"})}},
               {"carrier:jd014600003828": {REBOOKED}, "depot:wakefield": {REBOOKED},
                "user:sam": {REBOOKED}, "user:maya": set()})
    graph.rescind.close()


def test_an_edited_call_per_call_rests_on_the_editor_s_words_too(rescind_workers, tenant_name):
    """Per-call interrupts (the pause is inside the tool call): the supervisor edits the
    booking, sending back the parcel, depot and slot as the model proposed them and adding
    instructions. The booking rests on the tracking and the depot (the parcel and the slot,
    sent back unchanged, are not the editor's word) and on the editor's word (user:sam)."""
    model = f.scripted(_read_both(), f.call("book_redelivery", _book(WEDNESDAY)),
                       f.done("Booked."))
    graph = _desk(model, rescind_workers, tenant_name, mode="per_call")
    _asked(graph, "parcel-3")
    pending = graph.get_state(_thread("maya", "parcel-3")).interrupts
    assert len(pending) == 1
    edit = {"type": "edit", "edited_action": {"name": "book_redelivery",
                                              "args": _book(WEDNESDAY, NEIGHBOUR)}}
    graph.invoke(Command(resume={pending[0].id: edit}), _thread("sam", "parcel-3"))
    settle(rescind_workers, graph)
    check_each(rescind_workers, tenant_name,
               {EDITED: {frozenset({"carrier:jd014600003828", "depot:wakefield", "user:sam"})}},
               {"carrier:jd014600003828": {EDITED}, "depot:wakefield": {EDITED},
                "user:sam": {EDITED}, "user:maya": set()})
    graph.rescind.close()


class _Review(MessagesState):
    draft: str


DRAFT = "Thu 10 Dec 2026, 13:00-17:00 at Wakefield depot"
ANSWER = "confirmed by phone, Ravi at number 14 will sign for it"
CONFIRMED = f"{DRAFT}: {ANSWER}"


def test_a_node_s_interrupt_answer_is_the_user_s_word_and_the_reads_carry_over(
        rescind_workers, tenant_name):
    """A custom graph: a node reads the depot (a tool invoked from the node), drafts with the
    model, then asks a person with ``interrupt()``; the resumed node stores the draft with the
    person's answer. The note rests on the depot (read before the interrupt) and on the
    answering user's word (user:lee), nothing else."""
    policy = f.scripted(f.done(DRAFT))

    def draft(state: _Review) -> dict:
        slots = depot_slots.invoke({"depot": "wakefield"})
        reply = policy.invoke([("system", "Pick the afternoon slot."), ("human", slots)])
        return {"draft": reply.content}

    def review(state: _Review, *, store: BaseStore) -> dict:
        answer = interrupt({"question": "Did the customer confirm?", "draft": state["draft"]})
        store.put(("confirmations",), "JD014600003828",
                  {"text": f"{state['draft']}: {answer['note']}"})
        return {}

    builder = StateGraph(_Review)
    builder.add_node("draft", draft)
    builder.add_node("review", review)
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "review")
    builder.add_edge("review", END)
    graph = wrap(builder.compile(checkpointer=InMemorySaver(), store=InMemoryStore()),
                 rescind_workers, tenant_name, sources=SOURCES)
    graph.invoke({"messages": [{"role": "user", "content": "Book the afternoon one"}]},
                 _thread("maya", "parcel-4"))
    graph.invoke(Command(resume={"confirmed": True, "note": ANSWER}), _thread("lee", "parcel-4"))
    settle(rescind_workers, graph)
    check_each(rescind_workers, tenant_name,
               {CONFIRMED: {frozenset({"depot:wakefield", "user:lee"})}},
               {"depot:wakefield": {CONFIRMED}, "user:lee": {CONFIRMED}})
    graph.rescind.close()


# -- users named in the runtime context ----------------------------------------------------------

STATEMENTS = {"ACC-3301": "Energy account ACC-3301 · November 2026: 412 kWh, £131.84 · direct "
                          "debit £120.00 on the 5th",
              "ACC-3302": "Energy account ACC-3302 · November 2026: 268 kWh, £88.10 · direct "
                          "debit £95.00 on the 12th",
              "ACC-3303": "Energy account ACC-3303 · November 2026: 530 kWh, £169.60 · direct "
                          "debit £150.00 on the 20th"}
FLAT = {"ines": ("Set my December reminder from my energy account ACC-3301; I'll pay £140 by "
                 "card instead of the debit",
                 "ACC-3301: November £131.84 (412 kWh); direct debit £120.00 replaced by £140 "
                 "by card"),
        "jon": ("Remind me about ACC-3302 in December; I'm away until the 18th",
                "ACC-3302: November £88.10 (268 kWh); direct debit £95.00 on the 12th, while "
                "away until the 18th"),
        "kit": ("December reminder for ACC-3303 please, raise the debit to £170",
                "ACC-3303: November £169.60 (530 kWh); direct debit £150.00 on the 20th, to be "
                "raised to £170")}


@tool
def energy_statement(account: str) -> str:
    """An energy account's latest monthly statement."""
    return STATEMENTS[account]


@dataclass
class Flatmate:
    user_id: str


class _Flatmates(f.Scripted):
    """The flatmates' chat model: its answer is a function of what it is shown (the runs go
    at once, so a script's order would be a race)."""

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kw: Any) -> ChatResult:
        last = messages[-1]
        for said, note in FLAT.values():
            account = "ACC-" + said.split("ACC-")[1][:4]
            if last.type == "human" and last.content == said:
                reply = f.call("energy_statement", {"account": account})
                break
            if last.type == "tool" and account in str(last.content):
                reply = f.done(note)
                break
        else:
            raise AssertionError(f"unexpected turn {last!r}")
        return ChatResult(generations=[ChatGeneration(message=reply)])


def _flat() -> Any:
    """Three flatmates' reminders, one graph, the user id in the runtime context."""
    model = _Flatmates(messages=iter(()))

    async def assistant(state: MessagesState, runtime: Runtime[Flatmate]) -> dict:
        return {"messages": [await model.ainvoke(state["messages"])]}

    async def remember(state: MessagesState, runtime: Runtime[Flatmate]) -> dict:
        who = runtime.context.user_id if runtime.context else "flat"
        await runtime.store.aput(("reminders", who), "2026-12",
                                 {"text": state["messages"][-1].content})
        return {}

    builder = StateGraph(MessagesState, context_schema=Flatmate)
    builder.add_node("assistant", assistant)
    builder.add_node("tools", ToolNode([energy_statement]))
    builder.add_node("remember", remember)
    builder.add_edge(START, "assistant")
    builder.add_conditional_edges("assistant", tools_condition,
                                  {"tools": "tools", END: "remember"})
    builder.add_edge("tools", "assistant")
    builder.add_edge("remember", END)
    return builder.compile(store=InMemoryStore())


def _all_at_once(graph: Any, contexts: dict[str, Any]) -> None:
    async def one(user: str) -> None:
        async for _ in graph.astream({"messages": [{"role": "user", "content": FLAT[user][0]}]},
                                     context=contexts[user], stream_mode="values"):
            pass

    async def every() -> None:
        await asyncio.gather(*(one(u) for u in FLAT))

    asyncio.run(every())


def test_users_named_in_the_runtime_context_are_each_their_own_source(rescind_workers,
                                                                      tenant_name):
    """Three users at once, each named only in the run's ``context=`` (a ``context_schema``
    dataclass read through ``Runtime``): each reminder rests on its own statement and on
    ``user:<id>``; retracting one user's word takes out that user's reminder alone."""
    graph = wrap(_flat(), rescind_workers, tenant_name,
                 sources={"energy_statement": SourceTool(source="energy:{account}")})
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConfigWarning)  # a user is found: nothing to warn of
        _all_at_once(graph, {u: Flatmate(u) for u in FLAT})
        settle(rescind_workers, graph)
    truth = {FLAT[u][1]: {frozenset({f"energy:acc-330{i + 1}", f"user:{u}"})}
             for i, u in enumerate(FLAT)}
    check_each(rescind_workers, tenant_name, truth,
               {**{f"user:{u}": {FLAT[u][1]} for u in FLAT},
                **{f"energy:acc-330{i + 1}": {FLAT[u][1]} for i, u in enumerate(FLAT)}})
    graph.rescind.close()


def test_a_runtime_context_given_as_a_dict_names_the_user_too(rescind_workers, tenant_name):
    """The context passed as a plain dict (LangGraph builds the schema's dataclass from it):
    the users are still told apart, each reminder resting on its own user."""
    graph = wrap(_flat(), rescind_workers, tenant_name,
                 sources={"energy_statement": SourceTool(source="energy:{account}")})
    _all_at_once(graph, {u: {"user_id": u} for u in FLAT})
    settle(rescind_workers, graph)
    assert {t: js for t, (_, js) in record(rescind_workers, tenant_name).items()} == {
        FLAT[u][1]: {frozenset({f"energy:acc-330{i + 1}", f"user:{u}"})}
        for i, u in enumerate(FLAT)}
    graph.rescind.close()


def test_runs_at_once_with_no_user_id_are_warned_of_loudly(rescind_workers, tenant_name):
    """No user id in the config nor the context, three runs at once: their messages are all
    ``user:anonymous`` (recorded as such) and a ConfigWarning says so once, naming
    ``user_id`` and where to pass it."""
    graph = wrap(_flat(), rescind_workers, tenant_name,
                 sources={"energy_statement": SourceTool(source="energy:{account}")})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _all_at_once(graph, {u: None for u in FLAT})
        settle(rescind_workers, graph)
    told = [w for w in caught if issubclass(w.category, ConfigWarning)]
    assert len(told) == 1
    assert "user_id" in str(told[0].message) and "context=" in str(told[0].message)
    assert "user:anonymous" in str(told[0].message)
    assert {t: js for t, (_, js) in record(rescind_workers, tenant_name).items()} == {
        FLAT[u][1]: {frozenset({f"energy:acc-330{i + 1}", "user:anonymous"})}
        for i, u in enumerate(FLAT)}
    graph.rescind.close()


def test_runs_one_after_another_with_no_user_id_are_not_warned_of(rescind_workers,
                                                                  tenant_name):
    """Runs with no user id, one after another (a script, a notebook), even while the first
    one's recording is still under way: recorded as user:anonymous, without a warning, since
    no two runs were at once."""
    graph = wrap(_flat(), rescind_workers, tenant_name,
                 sources={"energy_statement": SourceTool(source="energy:{account}")})

    async def one_then_another() -> None:
        for user in ("jon", "kit"):
            await graph.ainvoke({"messages": [{"role": "user", "content": FLAT[user][0]}]})

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(one_then_another())
        settle(rescind_workers, graph)
    assert not [w for w in caught if issubclass(w.category, ConfigWarning)]
    assert {t: js for t, (_, js) in record(rescind_workers, tenant_name).items()} == {
        FLAT["jon"][1]: {frozenset({"energy:acc-3302", "user:anonymous"})},
        FLAT["kit"][1]: {frozenset({"energy:acc-3303", "user:anonymous"})}}
    graph.rescind.close()
