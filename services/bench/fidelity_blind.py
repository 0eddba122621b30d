"""The blind programs of `rescind bench fidelity`: six LangGraph programs written by someone who
read neither the attribution's rules nor how it matches values (only ``instrument``'s public
API and docs/wrapping.md's configuration), in shapes the tuned and held-out programs do not
have, the way public LangGraph examples write them. Each has a scripted chat model and the truth
about every memory it writes, labelled by hand from what the value actually uses.

How the labels are made: a premise is an item the step that wrote the value was shown (a tool
result, a user's message, a memory read or handed over in the state, also when a checkpointer
or ``previous`` restores it into what the model is shown) and whose facts the value states or
computes from. Items both shown and stating the same fact are alternatives; different facts
from different items are all needed. A value a person gave by resuming an interrupt is that
person's word (``user:{user_id}`` of the invocation that resumed it). They are scored apart from
the tuned and held-out groups (``group="blind"``).

1. ``helpdesk``: a shop's support desk: a refund subgraph (a model, a ``ToolNode`` for the
   order) that pauses on ``interrupt`` for a supervisor, who resumes it with ``Command(resume=...)``
   under their own user id; the parent graph then writes the case note.
2. ``codereview``: a code-review agent whose tool answers with ``Command(goto=..., update=...)``,
   putting the pull request (JSON) into the state that the prompt renders, and a CI tool that
   returns a dict; the review is saved through a store tool.
3. ``scheduler``: the functional API, an ``@entrypoint`` with a checkpointer whose ``previous``
   restores the conversation (tool results too); two calendars in other time zones, and a
   meeting put under one key, then moved (the key overwritten) in the second run.
4. ``procurement``: ``Send`` over a list of quote documents; each branch reads one and files a
   summary; a decision note compares the two for the user's deadline.
5. ``org_chat``: a multi-user assistant with one store namespace per organisation, two batches
   of users under ``asyncio.gather`` (two organisations, the same street); shared facts are
   upserted by key, used by a colleague, and one is deleted.
6. ``summariser``: a chat with a running summary: ``trim_messages`` limits what the model is
   shown, a summarise node replaces old messages by ``RemoveMessage`` and overwrites the summary
   under one key in the store; a goal is saved from the summary in the third run.
"""

from __future__ import annotations

import json
import operator
import uuid
from typing import Annotated, Any, TypedDict

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    trim_messages,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_config
from langgraph.func import entrypoint, task
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import InjectedStore, ToolNode, tools_condition
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command, Send, interrupt

from rescind.middleware import SourceTool

from .fidelity_programs import Policy, Program, Runner, _user, call, one, say, scripted

BLIND = "blind"


# -- 1. a support desk with a subgraph and an interrupt ------------------------------------------

ORDERS = {"DE-00419-B": "Bestellung DE-00419-B · Kundin: Zoë Müller-Łukasik · 1× Wasserkocher "
                        "„Aalto“ 1,7 l — 84,50 € · Versand 5,90 € · bezahlt: 90,40 EUR (Visa "
                        "•••• 4417) · zugestellt am 28.11.2026"}
CASE = ("Case DE-00419-B: refund EUR 84.50 for the Aalto kettle (lid cracked on arrival) to the "
        "Visa ending 4417, approved by a supervisor, ref SUP-2291; shipping (5,90 €) not "
        "refunded")
GERMAN = "Prefers replies in German"


@tool
def lookup_order(order_id: str) -> str:
    """Look an order of the shop up by its number."""
    return ORDERS[order_id.strip().upper()]


class _Desk(MessagesState):
    decision: str


def _helpdesk(runner: Runner) -> None:
    model = scripted(
        call(("lookup_order", {"order_id": "de-00419-b"})),
        say("Danke! Ich habe Ihre Bestellung gefunden und frage die Erstattung kurz an."),
        say(CASE), say(GERMAN))

    def agent(state: _Desk) -> dict:
        system = SystemMessage("You handle refund requests for Kessel & Co. Look the order up "
                               "first; a supervisor approves every refund.")
        return {"messages": [model.bind_tools([lookup_order]).invoke([system,
                                                                     *state["messages"]])]}

    def approval(state: _Desk) -> dict:
        decision = interrupt({"question": "Approve the refund?",
                              "proposal": state["messages"][-1].content})
        return {"decision": decision}

    desk = StateGraph(_Desk)
    desk.add_node("agent", agent)
    desk.add_node("tools", ToolNode([lookup_order]))
    desk.add_node("approval", approval)
    desk.add_edge(START, "agent")
    desk.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: "approval"})
    desk.add_edge("tools", "agent")
    desk.add_edge("approval", END)

    def write_case(state: _Desk, config: RunnableConfig, *, store: BaseStore) -> dict:
        note = model.invoke([SystemMessage("Write the case note for the file. The supervisor "
                                           f"decided: {state['decision']}"),
                             *state["messages"]]).content
        order = "DE-00419-B"
        store.put(("cases", "kessel"), order, {"text": note})
        pref = model.invoke([SystemMessage("Anything lasting about how the customer wants to "
                                           "be served? One line."), *state["messages"]]).content
        store.put(("customers", "zoe"), "language", {"text": pref})
        return {}

    builder = StateGraph(_Desk)
    builder.add_node("refund_desk", desk.compile())
    builder.add_node("write_case", write_case)
    builder.add_edge(START, "refund_desk")
    builder.add_edge("refund_desk", "write_case")
    builder.add_edge("write_case", END)
    graph = runner.graph(builder.compile(checkpointer=InMemorySaver(), store=InMemoryStore()))
    runner.invoke(graph, _user("Hallo! my order de-00419-b came today and the lid of the "
                               "kettle is cracked :( I'd like my money back please. (bitte "
                               "gern auf Deutsch antworten)"),
                  {"configurable": {"thread_id": "case-DE-00419-B", "user_id": "zoe"}})
    runner.invoke(graph, Command(resume="ok for the kettle itself, not the shipping - the "
                                        "parcel arrived fine. ref SUP-2291"),
                  {"configurable": {"thread_id": "case-DE-00419-B", "user_id": "kofi"}})


HELPDESK = Program(
    "helpdesk", "support desk: a refund subgraph with a ToolNode pauses on interrupt; a "
    "supervisor resumes it under their own user id; the parent writes the case note",
    _helpdesk, group=BLIND,
    sources={"lookup_order": SourceTool(source="orders:{order_id}", kind="shop")},
    # The case note restates the order (number, amount, kettle, card, shipping), the customer's
    # complaint (cracked lid) and the supervisor's decision (approved, shipping kept, the ref).
    # The preference is the customer's alone, read again from the thread when resumed.
    truth={CASE: one("orders:de-00419-b", "user:zoe", "user:kofi"), GERMAN: one("user:zoe")},
    out_when={"orders:de-00419-b": {CASE}, "user:zoe": {CASE, GERMAN}, "user:kofi": {CASE}})


# -- 2. a code-review agent: a tool answering with a Command ---------------------------------------

PULLS = {("acme/billing-core", 482): {
    "number": 482, "title": "Round VAT per line instead of per invoice", "state": "open",
    "user": {"login": "bwojcik", "name": "Bartłomiej Wójcik"},
    "head": {"ref": "vat-per-line", "sha": "9f3c2e1d7a"},
    "files": [{"filename": "billing/vat.py", "additions": 41, "deletions": 12},
              {"filename": "tests/test_vat.py", "additions": 88, "deletions": 3}],
    "check_suite_id": 77120}}
SUITES = {77120: {"id": 77120, "conclusion": "failure", "head_sha": "9f3c2e1d7a", "check_runs": [
    {"name": "unit (py3.12)", "conclusion": "success", "duration_s": 74},
    {"name": "integration", "conclusion": "failure",
     "output": {"summary": "1 failed, 311 passed",
                "text": "FAILED tests/test_vat.py::test_vat_rounding_eu[AT-0.20] - assert "
                        "Decimal('1234.56') == Decimal('1234.57')"}}]}}
REVIEW = ("PR #482 'Round VAT per line instead of per invoice' (Bartłomiej Wójcik, 9f3c2e1): do "
          "not merge yet - integration fails on test_vat_rounding_eu[AT-0.20] (1234.56 instead "
          "of 1234.57), and VAT changes need a finance sign-off (Ayşe or Joost)")
DIFF = "PR 482 touches billing/vat.py (+41 −12) and tests/test_vat.py (+88 −3)"
RULE = "VAT or rounding changes need sign-off from finance (Ayşe or Joost) before merging"


@tool
def load_pull_request(repo: str, number: int,
                      tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Load a pull request into the review context, and go on reviewing."""
    pr = PULLS[(repo.lower(), int(number))]
    return Command(goto="reviewer", update={
        "pr": pr, "messages": [ToolMessage(f"Loaded {repo}#{number} into the context.",
                                           tool_call_id=tool_call_id)]})


@tool
def get_check_suite(suite_id: int) -> dict:
    """The CI check suite of a commit, with its runs."""
    return SUITES[int(suite_id)]


@tool
def save_review_note(text: str, store: Annotated[Any, InjectedStore()]) -> str:
    """Keep a note for the team's review board."""
    user = get_config()["configurable"]["user_id"]
    store.put(("review-notes", user), uuid.uuid5(uuid.NAMESPACE_URL, text).hex, {"text": text})
    return "noted"


class _Review(MessagesState):
    pr: dict


def _codereview(runner: Runner) -> None:
    model = scripted(
        call(("load_pull_request", {"repo": "acme/billing-core", "number": 482})),
        call(("get_check_suite", {"suite_id": 77120})),
        call(("save_review_note", {"text": REVIEW}), ("save_review_note", {"text": DIFF}),
             ("save_review_note", {"text": RULE})),
        say("Review left: blocked on the AT rounding test and on finance."))
    tools = [load_pull_request, get_check_suite, save_review_note]

    def reviewer(state: _Review) -> dict:
        context = (f"\n\nPull request under review:\n"
                   f"{json.dumps(state['pr'], ensure_ascii=False, indent=2)}"
                   if state.get("pr") else "")
        system = SystemMessage("You are a careful code reviewer for the billing team." + context)
        return {"messages": [model.bind_tools(tools).invoke([system, *state["messages"]])]}

    builder = StateGraph(_Review)
    builder.add_node("reviewer", reviewer)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "reviewer")
    builder.add_conditional_edges("reviewer", tools_condition)
    builder.add_edge("tools", "reviewer")
    graph = runner.graph(builder.compile(store=InMemoryStore()))
    runner.invoke(graph, _user("can you review acme/billing-core#482 and leave notes for the "
                               "board? fyi anything touching VAT or rounding needs sign-off "
                               "from someone in finance (Ayşe or Joost) before it's merged"),
                  {"configurable": {"user_id": "mei"}})


CODEREVIEW = Program(
    "codereview", "code review: a tool answers with Command(goto, update) putting the PR's JSON "
    "into the prompt; a CI tool returns a dict; notes saved by a store tool", _codereview,
    group=BLIND,
    sources={"load_pull_request": SourceTool(source="github:{repo}#{number}", kind="code_host"),
             "get_check_suite": SourceTool(source="ci:{suite_id}", kind="ci")},
    # The review restates the PR (number, title, author, short sha), the failing check (test
    # id, the two amounts) and the user's rule (finance, Ayşe or Joost). The diff note is the
    # PR's file list alone; the rule is the user's alone.
    truth={REVIEW: one("github:acme/billing-core#482", "ci:77120", "user:mei"),
           DIFF: one("github:acme/billing-core#482"), RULE: one("user:mei")},
    out_when={"github:acme/billing-core#482": {REVIEW, DIFF}, "ci:77120": {REVIEW},
              "user:mei": {REVIEW, RULE}})


# -- 3. a scheduler on the functional API, with previous ----------------------------------------

CALENDARS = {
    "joaquin.saenz@taller.mx": "Joaquín Sáenz - America/Mexico_City (UTC-06:00)\n"
                               "Tue 2026-12-08: free 8am-10am\n"
                               "Wed 2026-12-09: free 08:00-09:30\nThu 2026-12-10: out of office",
    "hana.novakova@orbis.cz": "Hana Nováková · Europe/Prague (CET, UTC+1)\n"
                              "út 8. 12. 2026: volno 15:00-17:30\nst 9. 12. 2026: volno "
                              "14:30-17:00"}
MEET_1 = ("Joaquín Sáenz / Hana Nováková, 45 min: Tue 8 Dec 2026, 15:00-15:45 Prague (CET) = "
          "08:00-08:45 Mexico City")
MEET_2 = ("Moved to Wednesday 9 December: 3:00-3:45 pm CET / 8-8:45 am in Mexico City (Joaquín "
          "Sáenz and Hana Nováková, 45 minutes)")


@tool
def free_busy(attendee: str) -> str:
    """An attendee's free slots next week, in their own time zone."""
    return CALENDARS[attendee.lower()]


def _scheduler(runner: Runner) -> None:
    model = scripted(
        call(("free_busy", {"attendee": "Joaquin.Saenz@taller.mx"}),
             ("free_busy", {"attendee": "hana.novakova@orbis.cz"})),
        say(MEET_1), say(MEET_2))
    tools = {"free_busy": free_busy}

    @task
    def call_model(messages: list[BaseMessage]) -> AIMessage:
        system = SystemMessage("You schedule meetings for Hana Nováková "
                               "(hana.novakova@orbis.cz). Answer with the slot, both time zones.")
        return model.bind_tools(list(tools.values())).invoke([system, *messages])

    @task
    def call_tool(tool_call: dict) -> ToolMessage:
        return tools[tool_call["name"]].invoke(tool_call)

    @entrypoint(checkpointer=InMemorySaver(), store=InMemoryStore())
    def schedule(inputs: list, *, previous: list | None, store: BaseStore) -> Any:
        messages = add_messages(previous or [], inputs)
        reply = call_model(messages).result()
        while reply.tool_calls:
            results = [f.result() for f in [call_tool(tc) for tc in reply.tool_calls]]
            messages = add_messages(messages, [reply, *results])
            reply = call_model(messages).result()
        user = get_config()["configurable"]["user_id"]
        store.put(("meetings", user), "joaquin-sync", {"text": reply.content})
        return entrypoint.final(value=reply.content, save=add_messages(messages, [reply]))

    graph = runner.graph(schedule)
    hana = {"configurable": {"user_id": "hana", "thread_id": "sync-joaquin"}}
    runner.invoke(graph, [{"role": "user", "content": "need 45 min with joaquín "
                           "(joaquin.saenz@taller.mx) next week, tue or wed, whatever works "
                           "for both of us"}], hana)
    runner.invoke(graph, [{"role": "user", "content": "he just wrote - tuesday doesn't work "
                           "for him after all. can we do the wednesday?"}], hana)


SCHEDULER = Program(
    "scheduler", "@entrypoint with a checkpointer and previous (tool results restored); two "
    "calendars in two time zones; a meeting overwritten under its key", _scheduler,
    group=BLIND,
    sources={"free_busy": SourceTool(source="calendar:{attendee}", kind="calendar",
                                     identity={"attendee": "email"})},
    # Both versions intersect the two calendars' free slots on their day, convert between the
    # zones and take the length (45 min) from the user; the second also the user's new day.
    # The second is not built from the first memory (the program never reads the store): it
    # rests on the restored calendars and the user's two messages.
    truth={MEET_1: one("calendar:joaquin.saenz@taller.mx", "calendar:hana.novakova@orbis.cz",
                       "user:hana"),
           MEET_2: one("calendar:joaquin.saenz@taller.mx", "calendar:hana.novakova@orbis.cz",
                       "user:hana")},
    out_when={"calendar:joaquin.saenz@taller.mx": {MEET_1, MEET_2},
              "calendar:hana.novakova@orbis.cz": {MEET_1, MEET_2},
              "user:hana": {MEET_1, MEET_2}})


# -- 4. procurement: Send over a list of quote documents ------------------------------------------

QUOTES = {
    "Angebot_AN-2026-3317.pdf": "Höhenwerk GmbH · Angebot Nr. AN-2026-3317 vom 27.11.2026\n"
                                "Pos. 1: Steh-Sitz-Schreibtisch „Lift Pro“ 160×80, 40 Stück à "
                                "289,00 EUR netto = 11.560,00 EUR\nLieferzeit: 15 Arbeitstage "
                                "ab Auftrag · Zahlungsziel: 30 Tage netto · gültig bis 31.12.2026",
    "ergonomia_quote_Q-118.pdf": "ERGONOMIA Sp. z o.o. - Quotation Q/118/2026 (1 Dec 2026)\n"
                                 "Sit-stand desk ErgoLift 160 x 80: unit price €274.50 excl. "
                                 "VAT; qty forty (40): €10,980.00\nDelivery: six weeks from "
                                 "PO. Payment: 50% upfront, balance on delivery."}
SUMMARY = {
    "Angebot_AN-2026-3317.pdf": "Höhenwerk (AN-2026-3317): €289.00 per desk net, €11,560.00 "
                                "for 40; delivery 15 working days; payment 30 days net",
    "ergonomia_quote_Q-118.pdf": "Ergonomia (Q/118/2026): 274,50 EUR per desk, 10 980,00 EUR "
                                 "for 40; delivery 6 weeks; 50 % upfront"}
DECISION = ("RFQ 118: order from Höhenwerk, 40 × €289.00 = €11,560.00 - €580 more than "
            "Ergonomia, but delivered within 15 working days, before the move on 18 January "
            "(Ergonomia needs 6 weeks)")


@tool
def read_attachment(filename: str) -> str:
    """Read the text of an attachment of the RFQ."""
    return QUOTES[filename]


def _procurement_model(messages: list[BaseMessage]) -> AIMessage:
    last = str(messages[-1].content)
    for name, text in QUOTES.items():
        if text in last:
            return say(SUMMARY[name])
    return say(DECISION)


class _Rfq(MessagesState):
    documents: list[str]
    summaries: Annotated[list[str], operator.add]


class _Doc(TypedDict):
    filename: str


def _procurement(runner: Runner) -> None:
    model = Policy(messages=iter(()), decide=_procurement_model)

    def fan_out(state: _Rfq) -> list[Send]:
        return [Send("extract", {"filename": name}) for name in state["documents"]]

    def extract(state: _Doc, *, store: BaseStore) -> dict:
        text = read_attachment.invoke({"filename": state["filename"]})
        summary = model.invoke([("system", "Extract vendor, unit price, total, delivery time "
                                           "and payment terms in one line."),
                                ("human", text)]).content
        store.put(("rfq-118", "quotes"), state["filename"].rsplit(".", 1)[0], {"text": summary})
        return {"summaries": [summary]}

    def decide(state: _Rfq, *, store: BaseStore) -> dict:
        quotes = "\n".join(f"- {s}" for s in sorted(state["summaries"]))
        note = model.invoke([("system", f"Pick a vendor for the request. Quotes:\n{quotes}"),
                             *state["messages"]]).content
        store.put(("rfq-118", "decision"), "award", {"text": note})
        return {"messages": [AIMessage(note)]}

    builder = StateGraph(_Rfq)
    builder.add_node("extract", extract)
    builder.add_node("decide", decide)
    builder.add_conditional_edges(START, fan_out, ["extract"])
    builder.add_edge("extract", "decide")
    builder.add_edge("decide", END)
    graph = runner.graph(builder.compile(store=InMemoryStore()))
    runner.invoke(graph, {"messages": [{"role": "user", "content": "RFQ 118 - we need the 40 "
                                        "sit-stand desks on site before we move on 18 January. "
                                        "compare the two quotes attached and pick one"}],
                          "documents": list(QUOTES)},
                  {"configurable": {"user_id": "marek"}})


PROCUREMENT = Program(
    "procurement", "Send over a list of quote documents; branch summaries in the store; a "
    "decision note comparing the two for the user's deadline", _procurement, group=BLIND,
    sources={"read_attachment": SourceTool(source="rfq:{filename}", kind="vendor_quote")},
    # Each summary restates its quote. The decision is shown the summaries (the branches'
    # memories) in the same run as the quotes, which state the same facts: either is a premise
    # of each vendor's facts; the deadline (18 January) is the user's.
    truth={**{SUMMARY[n]: one(f"rfq:{n.lower()}") for n in QUOTES},
           DECISION: {frozenset({h, e, "user:marek"})
                      for h in ("rfq:angebot_an-2026-3317.pdf",
                                SUMMARY["Angebot_AN-2026-3317.pdf"])
                      for e in ("rfq:ergonomia_quote_q-118.pdf",
                                SUMMARY["ergonomia_quote_Q-118.pdf"])}},
    out_when={"rfq:angebot_an-2026-3317.pdf": {SUMMARY["Angebot_AN-2026-3317.pdf"], DECISION},
              "rfq:ergonomia_quote_q-118.pdf": {SUMMARY["ergonomia_quote_Q-118.pdf"],
                                                DECISION},
              "user:marek": {DECISION}})


# -- 5. a multi-user assistant with a namespace per organisation ---------------------------------

ORG = {"ines": "lumen", "tiago": "lumen", "olga": "kvass"}
SAID = {
    "ines": "heads-up for everyone: from Mon 4 Jan 2027 the Lisbon office is at Rua da Prata "
            "80, 3.º andar (1100-414 Lisboa). the door code stays 4471#",
    "olga": "our lisbon desk moved too btw, we're at Rua da Prata 12, 1.º Esq. since november",
    "tiago": "where should the courier bring my 2 new monitors? they arrive on 6/1",
    "olga-2": "please drop the note with our address, we go fully remote in january"}
OFFICE = "Lisbon office from 4 January 2027: Rua da Prata 80, 3rd floor, 1100-414 Lisboa"
DOOR = "Door code of the Lisbon office: 4471#"
KVASS_DESK = "Lisbon desk: Rua da Prata 12, 1.º Esq. (since November)"
DELIVERY = ("Courier on 06/01/2027: Tiago's two monitors go to Rua da Prata 80, 3rd floor, "
            "1100-414 Lisboa (door code 4471#)")
REMOTE = "The team goes fully remote in January"
EXTRACTED = {"ines": [{"key": "lisbon-office", "text": OFFICE},
                      {"key": "door-code", "text": DOOR}],
             "olga": [{"key": "lisbon-desk", "text": KVASS_DESK}],
             "tiago": [{"key": "delivery-tiago-monitors", "text": DELIVERY}],
             "olga-2": [{"key": "lisbon-desk", "delete": True},
                        {"key": "remote", "text": REMOTE}]}
ANSWER = {"ines": "Thanks Inês, noted for the team.", "olga": "Noted, Olga.",
          "tiago": "Send them to Rua da Prata 80, 3rd floor, 1100-414 Lisboa; the door code is "
                   "4471#.", "olga-2": "Done, the address note is gone."}


def _org_model(messages: list[BaseMessage]) -> AIMessage:
    said = next(str(m.content) for m in reversed(messages) if isinstance(m, HumanMessage))
    who = next(k for k, v in SAID.items() if v in said)
    if str(messages[0].content).startswith("Extract"):
        return say(json.dumps(EXTRACTED[who], ensure_ascii=False))
    return say(ANSWER[who])


def _org_chat(runner: Runner) -> None:
    model = Policy(messages=iter(()), decide=_org_model)

    def facts(store: BaseStore, config: RunnableConfig) -> tuple[tuple[str, ...], str]:
        namespace = ("orgs", config["configurable"]["org_id"], "facts")
        found = store.search(namespace, limit=50)
        return namespace, "\n".join(f"- [{i.key}] {i.value['text']}" for i in found) or "(none)"

    def chat(state: MessagesState, config: RunnableConfig, *, store: BaseStore) -> dict:
        _, known = facts(store, config)
        system = SystemMessage(f"You are the office assistant of "
                               f"{config['configurable']['org_id']}. What the team knows:\n"
                               f"{known}")
        return {"messages": [model.invoke([system, *state["messages"]])]}

    def remember(state: MessagesState, config: RunnableConfig, *, store: BaseStore) -> dict:
        namespace, known = facts(store, config)
        answer = model.invoke([SystemMessage("Extract facts the team should keep, as a JSON "
                                             "list of {key, text}; reuse a key to update, "
                                             f"{{key, delete}} to drop one.\nKnown:\n{known}"),
                               *state["messages"]])
        for fact in json.loads(answer.content):
            if fact.get("delete"):
                store.delete(namespace, fact["key"])
            else:
                store.put(namespace, fact["key"], {"text": fact["text"]})
        return {}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_node("remember", remember)
    builder.add_edge(START, "chat")
    builder.add_edge("chat", "remember")
    builder.add_edge("remember", END)
    graph = runner.graph(builder.compile(store=InMemoryStore()))

    def turn(who: str) -> tuple[Any, dict, dict]:
        user = who.split("-")[0]
        return (graph, _user(SAID[who]),
                {"configurable": {"user_id": user, "org_id": ORG[user]}})

    runner.ainvoke_all([turn("ines"), turn("olga")])
    runner.ainvoke_all([turn("tiago"), turn("olga-2")])


ORG_CHAT = Program(
    "org_chat", "multi-user assistant, one store namespace per organisation, two batches "
    "under asyncio.gather; facts upserted by key, used by a colleague, one deleted",
    _org_chat, group=BLIND,
    # Tiago's delivery note is built from the two facts Inês left in the organisation's
    # namespace (address, door code) and his own date and monitors. The other organisation's
    # address on the same street is never shown to him. The deleted note was IN when deleted.
    truth={OFFICE: one("user:ines"), DOOR: one("user:ines"), KVASS_DESK: one("user:olga"),
           DELIVERY: one(OFFICE, DOOR, "user:tiago"), REMOTE: one("user:olga")},
    out_when={"user:ines": {OFFICE, DOOR, DELIVERY}, "user:olga": {KVASS_DESK, REMOTE},
              "user:tiago": {DELIVERY}})


# -- 6. a chat with a running summary --------------------------------------------------------------

ACCOUNTS = {"PL61109010140000071219812874": "Rachunek PL61 1090 1014 0000 0712 1981 2874 - "
                                            "saldo dostępne: 12.304,17 PLN (stan na "
                                            "02.12.2026, 08:14)"}
SUMMARY_1 = ("Łucja: net pay 7,850 PLN on the 25th; account PL61 1090 1014 0000 0712 1981 2874 "
             "had 12,304.17 PLN available on 2 Dec 2026")
GOAL = ("Flat deposit: 60 000 zł; 12 304,17 zł there already, 47 695,83 zł to go at 4 000 zł a "
        "month from the 25th: about 12 months")
SUMMARY_2 = ("Łucja: net pay 7,850 PLN on the 25th; 12,304.17 PLN available on 2 Dec 2026; "
             "saving 4,000 PLN a month towards a 60,000 PLN flat deposit")


@tool
def get_balance(account: str) -> str:
    """The available balance of one of the user's bank accounts."""
    return ACCOUNTS[account.replace(" ", "").upper()]


@tool
def save_goal(text: str, store: Annotated[Any, InjectedStore()]) -> str:
    """Save one of the user's savings goals."""
    store.put(("goals", get_config()["configurable"]["user_id"]), "flat-deposit", {"text": text})
    return "saved"


class _Chat(MessagesState):
    summary: str


def _summariser(runner: Runner) -> None:
    model = scripted(
        say("Got it, thanks!"),
        call(("get_balance", {"account": "PL61 1090 1014 0000 0712 1981 2874"})),
        say("You have 12 304,17 zł available."), say(SUMMARY_1),
        call(("save_goal", {"text": GOAL})), say("Saved: about a year at that pace."),
        say(SUMMARY_2))
    tools = [get_balance, save_goal]

    def agent(state: _Chat) -> dict:
        shown = trim_messages(state["messages"], max_tokens=4, token_counter=len,
                              strategy="last", start_on="human")
        system = "You help Łucja with her budget."
        if state.get("summary"):
            system += f"\n\nSummary of the conversation so far: {state['summary']}"
        return {"messages": [model.bind_tools(tools).invoke([SystemMessage(system), *shown])]}

    def route(state: _Chat) -> str:
        return "tools" if state["messages"][-1].tool_calls else "summarise"

    def summarise(state: _Chat, config: RunnableConfig, *, store: BaseStore) -> dict:
        if len(state["messages"]) <= 4:
            return {}
        asked = (f"This is the summary so far: {state['summary']}\n\nExtend it with the new "
                 "messages above." if state.get("summary") else "Summarise the conversation.")
        summary = model.invoke([*state["messages"], HumanMessage(asked)]).content
        store.put(("summaries", config["configurable"]["user_id"]), "conversation",
                  {"text": summary})
        return {"summary": summary,
                "messages": [RemoveMessage(id=m.id) for m in state["messages"][:-2]]}

    builder = StateGraph(_Chat)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools))
    builder.add_node("summarise", summarise)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tools", "summarise"])
    builder.add_edge("tools", "agent")
    builder.add_edge("summarise", END)
    graph = runner.graph(builder.compile(checkpointer=InMemorySaver(), store=InMemoryStore()))
    lucja = {"configurable": {"user_id": "lucja", "thread_id": "budget"}}
    for said in ("cześć! quick context: I'm paid on the 25th, 7 850 zł net. my account is "
                 "PL61 1090 1014 0000 0712 1981 2874",
                 "what's my balance right now?",
                 "I want to save 60k for a flat deposit, putting aside 4 000 a month. how long "
                 "will it take? save it as a goal"):
        runner.invoke(graph, _user(said), lucja)


SUMMARISER = Program(
    "summariser", "running summary: trim_messages for the model, RemoveMessage for the state, "
    "the summary overwritten under one store key; a goal saved from the summary",
    _summariser, group=BLIND,
    sources={"get_balance": SourceTool(source="bank:{account}", kind="bank",
                                       identity={"account": "iban"})},
    # The first summary restates the user's pay and account and the bank's balance. In the
    # third run the model is shown only that summary and the new message (trimmed): the goal
    # takes the balance and the pay day from the summary, the target and the monthly amount
    # from the user. The second summary extends the first with the new message.
    truth={SUMMARY_1: one("user:lucja", "bank:pl61109010140000071219812874"),
           GOAL: one(SUMMARY_1, "user:lucja"), SUMMARY_2: one(SUMMARY_1, "user:lucja")},
    out_when={"user:lucja": {SUMMARY_1, GOAL, SUMMARY_2},
              "bank:pl61109010140000071219812874": {SUMMARY_1, GOAL, SUMMARY_2}})


BLIND_PROGRAMS: dict[str, Program] = {p.name: p for p in (
    HELPDESK, CODEREVIEW, SCHEDULER, PROCUREMENT, ORG_CHAT, SUMMARISER)}

__all__ = ["BLIND", "BLIND_PROGRAMS"]
