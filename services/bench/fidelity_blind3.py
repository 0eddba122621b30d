"""The third blind programs of `rescind bench fidelity` (``group="blind3"``): six LangGraph
programs nobody tunes the attribution against, written by someone who read neither the
attribution's rules nor how it matches values (only ``instrument``'s public API, README.md and
docs/wrapping.md), in shapes and styles the other groups do not have, the way public LangGraph
and LangChain examples write them. Each has a scripted chat model (no network) and the truth
about every memory it writes, labelled by hand before any run from what the value actually uses.

How the labels are made (the rule of the blind sets): a premise is an item the step that wrote
the value was shown, directly or through something the program or the model built from it, and
whose facts the value states or computes from; sources are named as the truth names them (a
user's messages by ``user:{user_id}``, a tool's results by their source, a memory by its text).
Items stating the same fact are alternatives; different facts from different items are all
needed; only minimal sets. A value a person gave by resuming an interrupt is that person's word
(``user:{user_id}`` of the invocation that resumed it). A message the program builds rests on
what it was built from; the model's own earlier answers are not items.

1. ``payee_approval``: LangChain's ``create_agent`` with ``HumanInTheLoopMiddleware`` and a
   checkpointer over three invocations of one thread: an ERP record and a vendor portal, read
   in one model turn, both state the IBAN; a reviewer approves the payee and rejects the
   payment's date with a message, then approves the re-planned payment.
2. ``contract_review``: three contracts fetched in one model turn, then a node answers
   ``Command(goto=[Send(...)])`` with one branch per document (the document's text in the
   payload); each branch saves a clause note, and a reducer reads the notes back from the
   store and saves a summary that uses two of the three.
3. ``crag``: corrective RAG in the adaptive-RAG tutorial's style: an input field (no
   messages), a model router, nodes that call tools themselves (``tool.invoke``), a grader
   that drops an irrelevant hit, a web-search node with a ``RetryPolicy`` whose tool fails
   once; streamed with ``stream_mode="updates"``; a second run writes a reminder from the
   first's answer, found in the store.
4. ``account_ticket``: a prebuilt ReAct agent with its own state schema: a customer lookup
   answers ``Command(update=...)`` putting the customer record into the state (the model sees
   only the account number), and the ticket tool reads it back with ``InjectedState``.
5. ``itinerary``: the functional API (``@entrypoint`` with a checkpointer and a store with a
   semantic index searched by query) over three runs: preferences extracted, a trip planned
   from two ``@task`` futures run in parallel and one of two preference hits, then the trip
   rewritten under the same key after a flight is cancelled.
6. ``household``: three users at once under ``asyncio.gather`` on one compiled graph, in the
   LangGraph 1.x runtime style: the user id is in the ``context`` (``context_schema``,
   ``Runtime``), not in the config, and each run is streamed (``astream``).
"""

from __future__ import annotations

import json
import operator
import re
import uuid
import zlib
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain.tools import ToolRuntime
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_config
from langgraph.func import entrypoint, task
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedState, InjectedStore, ToolNode, create_react_agent, tools_condition
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command, RetryPolicy, Send

from rescind.middleware import SourceTool

from .fidelity_programs import Policy, Program, Runner, _user, call, say, scripted

BLIND3 = "blind3"


def _uid() -> str:
    return get_config()["configurable"]["user_id"]


def _policy(decide: Any) -> Policy:
    return Policy(messages=iter(()), decide=decide)


def _text(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else str(message.content)


# -- 1. a payee approved by a reviewer (create_agent, HumanInTheLoopMiddleware) -----------------

ERP = {"V-20418": "VENDOR MASTER V-20418 | Name1: Kessler Metallbau GmbH | Str.: Industriestr. 7 "
                  "| Ort: 73037 Göppingen | IBAN: DE44500105175407324931 | Zahlungsbed.: 30 Tage "
                  "netto | geändert: 2026-11-28 (ap-clerk)"}
PORTAL = {"kessler": "Kessler Metallbau GmbH · Supplier portal · Bank details (verified "
                     "28.11.2026)\nAccount holder: Kessler Metallbau GmbH\nIBAN: DE44 5001 0517 "
                     "5407 3249 31\nYour vendor number with Harbor & Finch: V-20418"}
PAYEE = "Payee: Kessler Metallbau GmbH (vendor V-20418), IBAN DE44 5001 0517 5407 3249 31"
PAY_THIS_WEEK = ("Pay invoice RE-2027-0113, EUR 18,240.00, to Kessler Metallbau GmbH (IBAN "
                 "DE44500105175407324931) on Fri 4 Dec 2026")
PAY_PLAN = ("Pay invoice RE-2027-0113, EUR 18,240.00, to Kessler Metallbau GmbH (IBAN "
            "DE44500105175407324931) on Fri 15 Jan 2027")
REJECTION = "Not this week: pay it on the due date, 15 January 2027, per the cash plan. - Ines"


@tool
def erp_vendor(vendor_id: str) -> str:
    """The vendor master record in the ERP."""
    return ERP[vendor_id.strip().upper()]


@tool
def vendor_portal(vendor: str) -> str:
    """The bank details a vendor published on its supplier portal."""
    return PORTAL[vendor.strip().lower()]


def _payee_approval(runner: Runner) -> None:
    @tool
    def save_payee(text: str, runtime: ToolRuntime) -> str:
        """Record a vendor's verified payee details."""
        runtime.store.put(("payees",), "V-20418", {"text": text})
        return "Payee saved."

    @tool
    def plan_payment(text: str, pay_on: str, runtime: ToolRuntime) -> str:
        """Plan an invoice's payment for a date (ISO 8601)."""
        runtime.store.put(("payment_plans",), "RE-2027-0113",
                          {"text": text, "kind": "plan", "pay_on": pay_on})
        return f"Payment planned for {pay_on}."

    model = scripted(
        call(("erp_vendor", {"vendor_id": "V-20418"}), ("vendor_portal", {"vendor": "Kessler"})),
        call(("save_payee", {"text": PAYEE}),
             ("plan_payment", {"text": PAY_THIS_WEEK, "pay_on": "2026-12-04"})),
        call(("plan_payment", {"text": PAY_PLAN, "pay_on": "2027-01-15"})),
        say("Done: the payee is recorded and RE-2027-0113 is planned for 15 January 2027."))
    agent = create_agent(
        model, [erp_vendor, vendor_portal, save_payee, plan_payment],
        system_prompt="You are an accounts-payable assistant. Verify bank details against the "
                      "ERP and the vendor's portal before recording a payee.",
        middleware=[HumanInTheLoopMiddleware(interrupt_on={
            "save_payee": {"allowed_decisions": ["approve", "reject"]},
            "plan_payment": {"allowed_decisions": ["approve", "edit", "reject"]}})],
        checkpointer=InMemorySaver(), store=InMemoryStore())
    graph = runner.graph(agent)
    marta = {"configurable": {"user_id": "marta", "thread_id": "ap-re-2027-0113"}}
    ines = {"configurable": {"user_id": "ines", "thread_id": "ap-re-2027-0113"}}
    runner.invoke(graph, _user("Kessler Metallbau (vendor V-20418) sent new bank details with "
                               "invoice RE-2027-0113, EUR 18.240,00. Check the IBAN in the ERP "
                               "and on their portal, record the payee and plan the payment for "
                               "this week."), marta)
    runner.invoke(graph, Command(resume={"decisions": [
        {"type": "approve"}, {"type": "reject", "message": REJECTION}]}), ines)
    runner.invoke(graph, Command(resume={"decisions": [{"type": "approve"}]}), ines)


PAYEE_APPROVAL = Program(
    "payee_approval", "create_agent with HumanInTheLoopMiddleware over three invocations: an "
    "ERP record and a portal both state the IBAN; a reviewer approves, rejects with a new date, "
    "then approves the re-planned payment", _payee_approval, group=BLIND3,
    sources={"erp_vendor": SourceTool(source="erp:{vendor_id}", kind="erp"),
             "vendor_portal": SourceTool(source="portal:{vendor}", kind="vendor_portal")},
    # The payee's name, vendor number and IBAN are each stated by the ERP and by the portal
    # (the user states the name and number, not the IBAN): either source alone supports it.
    # The plan takes the invoice and amount from Marta, the IBAN from either source, and the
    # date from Ines's rejection (her word, given by resuming). The approvals add no fact.
    truth={PAYEE: {frozenset({"erp:v-20418"}), frozenset({"portal:kessler"})},
           PAY_PLAN: {frozenset({"erp:v-20418", "user:marta", "user:ines"}),
                      frozenset({"portal:kessler", "user:marta", "user:ines"})}},
    out_when={"user:marta": {PAY_PLAN}, "user:ines": {PAY_PLAN}})


# -- 2. contracts reviewed in Send branches, summarised from the store ----------------------------

CONTRACTS = {
    "SC-101": "CONTRACT SC-101 - Cleaning services - Supplier: Brightwell Facility Services Ltd\n"
              "Term: 1 April 2025 to 31 March 2027.\n§ 9.2 Renewal: this Agreement renews "
              "automatically for successive 12-month periods unless either party gives written "
              "notice no later than 90 days before the end of the then-current term.\nFees: GBP "
              "4,850.00 per month (excl. VAT).",
    "SC-102": "SC-102 | Software licence | Supplier: Quillmark Analytics B.V.\nInitial term: "
              "01/07/2024 - 30/06/2027. No automatic renewal: any extension requires a written "
              "amendment signed by both parties.\nLicence fee: EUR 62.000,00 per annum.",
    "SC-103": "Vertrag SC-103 · Entsorgung (Abfall) · Auftragnehmer: Ostara Recycling GmbH\n"
              "Laufzeit: 2026-03-01 bis 2027-02-28; verlängert sich stillschweigend um jeweils "
              "ein Jahr, wenn nicht mit einer Frist von 3 Monaten zum Laufzeitende gekündigt "
              "wird.\nEntgelt: 1.190,00 EUR monatlich"}
NOTES = {
    "SC-101": "SC-101 Brightwell Facility Services (cleaning): renews automatically for 12 "
              "months unless notice is given by 31 Dec 2026 (90 days before the term ends on 31 "
              "March 2027); GBP 4,850.00 a month",
    "SC-102": "SC-102 Quillmark Analytics (software licence): ends 30 June 2027, no automatic "
              "renewal (extension only by signed amendment); EUR 62,000 a year",
    "SC-103": "SC-103 Ostara Recycling (waste collection): renews automatically for a year "
              "unless cancelled 3 months before the term ends on 28 Feb 2027, i.e. by 28 Nov "
              "2026; EUR 1,190.00 a month"}
RENEWALS = ("Contracts that renew by themselves: SC-101 Brightwell (cleaning), give notice by 31 "
            "Dec 2026; SC-103 Ostara Recycling (waste): its deadline, 28 Nov 2026, has passed, "
            "so it runs on to 28 Feb 2028")


@tool
def fetch_contract(contract_id: str) -> str:
    """The full text of a supplier contract from the contract repository."""
    return CONTRACTS[contract_id.strip().upper()]


class _Contracts(MessagesState):
    reviewed: Annotated[list[str], operator.add]


class _Document(TypedDict):
    document: str


def _contract_model(messages: list[BaseMessage]) -> Any:
    head = _text(messages[0])
    if head.startswith("You review"):
        found = re.search(r"SC-\d{3}", _text(messages[-1]))
        return say(NOTES[found.group(0)])
    if head.startswith("Today is"):
        return say(RENEWALS)
    return call(*(("fetch_contract", {"contract_id": c}) for c in CONTRACTS))


def _contract_review(runner: Runner) -> None:
    model = _policy(_contract_model)
    tools = [fetch_contract]

    def agent(state: _Contracts) -> dict:
        system = SystemMessage("You are a contracts assistant. Fetch every contract the user "
                               "names.")
        return {"messages": [model.bind_tools(tools).invoke([system, *state["messages"]])]}

    def fan_out(state: _Contracts) -> Command:
        docs = [m for m in state["messages"] if isinstance(m, ToolMessage)]
        return Command(goto=[Send("review", {"document": _text(m)}) for m in docs])

    def review(doc: _Document, *, store: BaseStore) -> dict:
        note = model.invoke([SystemMessage("You review supplier contracts. Summarise the term, "
                                           "the renewal clause with its notice deadline as a "
                                           "date, and the fee, in one line."),
                             HumanMessage(doc["document"])]).content
        key = re.match(r"SC-\d{3}", note).group(0)
        store.put(("contracts", _uid()), key, {"text": note})
        return {"reviewed": [key]}

    def summarise(state: _Contracts, *, store: BaseStore) -> dict:
        notes = store.search(("contracts", _uid()), limit=20)
        listing = "\n".join(f"- {item.value['text']}" for item in notes)
        text = model.invoke([SystemMessage("Today is Wed 2 Dec 2026. From the contract notes, "
                                           "list the contracts that renew automatically and "
                                           "what must be done by when."),
                             HumanMessage(listing)]).content
        store.put(("reports", _uid()), "renewals", {"text": text})
        return {"messages": [("ai", text)]}

    builder = StateGraph(_Contracts)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools))
    builder.add_node("fan_out", fan_out, destinations=("review",))
    builder.add_node("review", review)
    builder.add_node("summarise", summarise)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", "tools")
    builder.add_edge("tools", "fan_out")
    builder.add_edge("review", "summarise")
    builder.add_edge("summarise", END)
    graph = runner.graph(builder.compile(store=InMemoryStore()))
    runner.invoke(graph, _user("which of our supplier contracts renew by themselves? check "
                               "SC-101, SC-102 and SC-103 and tell me the notice deadlines"),
                  {"configurable": {"user_id": "kofi"}})


CONTRACT_REVIEW = Program(
    "contract_review", "three contracts fetched in one turn; Command(goto=[Send]) with the "
    "document in each branch's payload; branch notes saved; a reducer reads them back from the "
    "store and summarises two of three", _contract_review, group=BLIND3,
    sources={"fetch_contract": SourceTool(source="clm:{contract_id}", kind="contract_repository")},
    # Each note restates its own contract (shown through the branch's payload) and computes the
    # deadline from it. The summary is shown the three notes (read from the store) and states
    # and computes from SC-101's and SC-103's only; SC-102's note is shown and not used.
    truth={NOTES["SC-101"]: {frozenset({"clm:sc-101"})},
           NOTES["SC-102"]: {frozenset({"clm:sc-102"})},
           NOTES["SC-103"]: {frozenset({"clm:sc-103"})},
           RENEWALS: {frozenset({NOTES["SC-101"], NOTES["SC-103"]})}},
    out_when={"clm:sc-101": {NOTES["SC-101"], RENEWALS}, "clm:sc-102": {NOTES["SC-102"]},
              "clm:sc-103": {NOTES["SC-103"], RENEWALS}})


# -- 3. corrective RAG: a router, a grader, a retried web search, streamed ------------------------

POLICY_DOC = ("Workplace policy WP-12 \"Dogs at work\" (rev. 3, 01/09/2026): well-behaved dogs "
              "up to 15 kg may come to the Leeds and York offices on Fridays, 10:00-16:00, "
              "floors 2 and 3 only. Register your dog with reception before its first visit.")
WIKI_DOC = ("Intranet > Leeds office > Parking: 14 bays behind the building, booked in the FM "
            "app; EV chargers in bays 1-4; bike store by the side door.")
BYLAWS = {"leeds": "Leeds City Council - Public Spaces Protection Order (Dog Control) "
                   "2026-2029: dogs must be kept on a lead in Park Square, City Square and "
                   "Millennium Square. Fixed penalty notice: £100."}
QUESTION = ("can I bring my dog to the Leeds office? she's a 9kg beagle. and does she have to "
            "be on a lead in Park Square at lunch?")
ANSWER = ("Yes: a 9 kg beagle is within the 15 kg limit, so she can come to the Leeds office on "
          "Fridays, 10:00-16:00, floors 2 and 3 (policy WP-12; register her with reception "
          "first). In Park Square she must be on a lead: Leeds' dog control order 2026-2029, "
          "£100 fixed penalty.")
REMIND_ME = "thanks! remind me this Friday at 9.30 am to register Biscuit at reception"
DOG_REMINDER = ("Fri 4 Dec 2026, 9.30 am: register Biscuit (9 kg beagle) with reception at the "
                "Leeds office before her first Friday visit (policy WP-12)")


@tool
def search_policies(query: str) -> str:
    """Search the staff handbook's policies."""
    return POLICY_DOC


@tool
def search_wiki(query: str) -> str:
    """Search the intranet wiki."""
    return WIKI_DOC


class _Rag(TypedDict, total=False):
    question: str
    documents: list[str]
    web: str
    answer: str


def _rag_model(messages: list[BaseMessage]) -> Any:
    head, last = _text(messages[0]), _text(messages[-1])
    if head.startswith("Route"):
        return say("memory" if "remind" in last else "vectorstore")
    if head.startswith("You are a grader"):
        return say("yes" if "WP-12" in last else "no")
    if head.startswith("Today is"):
        return say(DOG_REMINDER)
    return say(ANSWER)


class _Streamed:
    """``invoke`` as a streaming client does it: every update streamed, the last state kept."""

    def __init__(self, graph: Any) -> None:
        self.graph = graph

    def invoke(self, inputs: Any, config: dict | None = None) -> Any:
        for _chunk in self.graph.stream(inputs, config, stream_mode="updates"):
            pass
        return self.graph.get_state(config).values if self.graph.checkpointer else None


def _crag(runner: Runner) -> None:
    model = _policy(_rag_model)
    attempts: list[str] = []

    @tool
    def council_bylaws(area: str) -> str:
        """Search a council's published bylaws and orders (web)."""
        attempts.append(area)
        if len(attempts) == 1:
            raise ConnectionError("search API: 503 Service Unavailable")
        return BYLAWS[area.strip().lower()]

    def route_question(state: _Rag) -> str:
        verdict = model.invoke([SystemMessage("Route the question: answer 'vectorstore' for "
                                              "questions about office policies, 'memory' for "
                                              "requests about earlier answers."),
                                HumanMessage(state["question"])]).content
        return "remind" if verdict.strip() == "memory" else "retrieve"

    def retrieve(state: _Rag) -> dict:
        question = state["question"]
        return {"documents": [search_policies.invoke({"query": question}),
                              search_wiki.invoke({"query": question})]}

    def grade_documents(state: _Rag) -> dict:
        kept = []
        for doc in state["documents"]:
            grade = model.invoke([SystemMessage("You are a grader assessing the relevance of a "
                                                "retrieved document to a user question. Answer "
                                                "yes or no."),
                                  HumanMessage(f"Retrieved document:\n\n{doc}\n\nUser question: "
                                               f"{state['question']}")]).content
            if grade.strip().lower() == "yes":
                kept.append(doc)
        return {"documents": kept, "web": "" if len(kept) == len(state["documents"]) else "yes"}

    def web_search(state: _Rag) -> dict:
        return {"web": council_bylaws.invoke({"area": "Leeds"})}

    def generate(state: _Rag, *, store: BaseStore) -> dict:
        context = "\n\n".join([*state["documents"], state["web"]])
        answer = model.invoke([SystemMessage("You are an assistant for question-answering "
                                             "tasks. Use the retrieved context to answer."),
                               HumanMessage(f"Question: {state['question']}\n\nContext:\n"
                                            f"{context}")]).content
        store.put(("answers", _uid()), "leeds-dog", {"text": answer})
        return {"answer": answer}

    def remind(state: _Rag, *, store: BaseStore) -> dict:
        earlier = "\n".join(i.value["text"] for i in store.search(("answers", _uid()), limit=5))
        text = model.invoke([SystemMessage("Today is Wed 2 Dec 2026. Write one reminder line: "
                                           "date, time, what to do."),
                             HumanMessage(f"Earlier answers:\n{earlier}\n\nRequest: "
                                          f"{state['question']}")]).content
        store.put(("reminders", _uid()), uuid.uuid5(uuid.NAMESPACE_URL, text).hex,
                  {"text": text})
        return {"answer": text}

    builder = StateGraph(_Rag)
    builder.add_node("retrieve", retrieve)
    builder.add_node("grade_documents", grade_documents)
    builder.add_node("web_search", web_search,
                     retry_policy=RetryPolicy(max_attempts=3, initial_interval=0.01,
                                              jitter=False, retry_on=ConnectionError))
    builder.add_node("generate", generate)
    builder.add_node("remind", remind)
    builder.add_conditional_edges(START, route_question, ["retrieve", "remind"])
    builder.add_edge("retrieve", "grade_documents")
    builder.add_conditional_edges("grade_documents",
                                  lambda s: "web_search" if s.get("web") else "generate",
                                  ["web_search", "generate"])
    builder.add_edge("web_search", "generate")
    builder.add_edge("generate", END)
    builder.add_edge("remind", END)
    graph = runner.graph(builder.compile(store=InMemoryStore()))
    priya = {"configurable": {"user_id": "priya"}}
    for question in (QUESTION, REMIND_ME):
        runner.invoke(_Streamed(graph), {"question": question}, priya)


CRAG = Program(
    "crag", "corrective RAG: an input field, a model router, nodes that invoke tools, a grader "
    "that drops a hit, a web search retried by RetryPolicy, streamed updates; a reminder from "
    "the stored answer", _crag, group=BLIND3,
    sources={"search_policies": SourceTool(source="handbook:policies", kind="handbook"),
             "search_wiki": SourceTool(source="wiki:intranet", kind="wiki"),
             "council_bylaws": SourceTool(source="bylaws:{area}", kind="web")},
    # The answer takes the weight and breed from the question (Priya's input), the limit, days,
    # hours, floors, registration and WP-12 from the policy, the lead and the penalty from the
    # bylaws; the wiki hit was graded out and never shown to the answer. The reminder is shown
    # the stored answer (breed, weight, reception, Leeds, WP-12) and Priya's second request
    # (the dog's name, Friday, 9.30 am).
    truth={ANSWER: {frozenset({"handbook:policies", "bylaws:leeds", "user:priya"})},
           DOG_REMINDER: {frozenset({ANSWER, "user:priya"})}},
    out_when={"handbook:policies": {ANSWER, DOG_REMINDER}, "bylaws:leeds": {ANSWER, DOG_REMINDER},
              "user:priya": {ANSWER, DOG_REMINDER}})


# -- 4. a tool that updates the state with Command; another reads it with InjectedState --------

CUSTOMERS = {"07700900461": {"account": "7734-2291", "name": "Tomasz Nowak",
                             "plan": "Fibre 500 (£38.50/mo)",
                             "address": "12 Ashby Road, Loughborough LE11 3AA",
                             "customer_since": "2019-04-02"}}
LINES = {"7734-2291": "Line 7734-2291 · FTTP · ONT: LOS (loss of signal) since "
                      "2026-12-01T22:14Z · area fault F-88120: Ashby Road cabinet 14, fibre cut "
                      "· ETA 03/12/2026 18:00"}
FAULT = ("Fault: no service since 1 Dec 2026 22:14 on line 7734-2291, ONT shows LOS (loss of "
         "signal); area fault F-88120 at Ashby Road cabinet 14, fix due 3 Dec 2026 18:00. "
         "Customer works from home; call back on 07700 900461 after 6 pm")
TICKET = (FAULT + " | customer: Tomasz Nowak, Fibre 500 (£38.50/mo), 12 Ashby Road, "
          "Loughborough LE11 3AA")
CALLBACK = ("Account 7734-2291: the customer works from home; call back on 07700 900461, only "
            "after 6 pm")


@tool
def lookup_customer(phone: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Find the customer's account by phone number."""
    record = CUSTOMERS[re.sub(r"\D", "", phone)]
    return Command(update={"customer": record, "messages": [ToolMessage(
        f"Customer found: account {record['account']}", tool_call_id=tool_call_id)]})


@tool
def line_diagnostics(account: str) -> str:
    """Live diagnostics of a customer's broadband line."""
    return LINES[account.strip()]


@tool
def open_ticket(summary: str, state: Annotated[dict, InjectedState],
                store: Annotated[Any, InjectedStore()]) -> str:
    """Open a fault ticket with a summary; the customer's details are added from the account."""
    c = state["customer"]
    store.put(("tickets", _uid()), "FT-40917",
              {"text": f"{summary} | customer: {c['name']}, {c['plan']}, {c['address']}"})
    return "Ticket FT-40917 opened."


@tool
def remember(text: str, store: Annotated[Any, InjectedStore()]) -> str:
    """Remember something about this customer for the next agent."""
    store.put(("customer_notes", _uid()), uuid.uuid5(uuid.NAMESPACE_URL, text).hex,
              {"text": text})
    return "Noted."


def _account_ticket(runner: Runner) -> None:
    from langgraph.prebuilt.chat_agent_executor import AgentState

    class SupportState(AgentState):
        customer: dict

    model = scripted(
        call(("lookup_customer", {"phone": "07700900461"})),
        call(("line_diagnostics", {"account": "7734-2291"})),
        call(("open_ticket", {"summary": FAULT}), ("remember", {"text": CALLBACK})),
        say("Sorry about this! There's a fibre cut at the Ashby Road cabinet; it should be fixed "
            "by 6 pm tomorrow. Ticket FT-40917 is open and we'll call you after 6 pm."))
    agent = create_react_agent(model, [lookup_customer, line_diagnostics, open_ticket, remember],
                               state_schema=SupportState, store=InMemoryStore(),
                               prompt="You are a broadband support agent. Identify the "
                                      "customer, check the line, open a ticket.")
    graph = runner.graph(agent)
    runner.invoke(graph, _user("hi my broadband's been dead since about 10pm last night. I work "
                               "from home so this is urgent!! call me back on 07700 900461 but "
                               "only after 6pm pls"), {"configurable": {"user_id": "tomasz"}})


ACCOUNT_TICKET = Program(
    "account_ticket", "ReAct agent with a custom state: a lookup answers Command(update=...) "
    "with the customer record in the state; the ticket tool adds it via InjectedState",
    _account_ticket, group=BLIND3,
    sources={"lookup_customer": SourceTool(source="crm:{phone}", kind="crm"),
             "line_diagnostics": SourceTool(source="netops:{account}", kind="network")},
    # The ticket states the line's fault (time, LOS, fault id, cabinet, ETA) from the
    # diagnostics, the customer's name, plan and address from the lookup's state update, and
    # working from home, the number and the hours from Tomasz. The callback note states the
    # account number (the lookup's message and the diagnostics both state it) and Tomasz's
    # number, hours and working from home.
    truth={TICKET: {frozenset({"crm:07700900461", "netops:7734-2291", "user:tomasz"})},
           CALLBACK: {frozenset({"crm:07700900461", "user:tomasz"}),
                      frozenset({"netops:7734-2291", "user:tomasz"})}},
    out_when={"crm:07700900461": {TICKET}, "netops:7734-2291": {TICKET},
              "user:tomasz": {TICKET, CALLBACK}})


# -- 5. the functional API: parallel task futures, a semantic index, a trip rewritten ------------

FLIGHTS = {"LX1613": "LX 1613 · 09 FEB 2027 · London City (LCY) 07:35 → Zürich (ZRH) 10:20 · "
                     "Embraer 190 · status: scheduled",
           "LX1617": "LX 1617 · 09 FEB 2027 · London City (LCY) 12:50 → Zürich (ZRH) 15:35 · "
                     "Airbus A220 · status: scheduled"}
HOTELS = {"HB-55102": "Booking HB-55102 · Hotel Adler Zürich, Rosengasse 10, 8001 Zürich · "
                      "arrival Tue 9 Feb 2027 (check-in from 14:00), departure Thu 11 Feb 2027 "
                      "· 2 nights · CHF 418.00 incl. city tax"}
PREF_SEAT = "On flights: an aisle seat and a vegetarian meal"
PREF_TRAIN = "Takes the train instead of flying when the journey is under 4 hours door to door"
TRIP_1 = ("Zürich trip, 9-11 Feb 2027: LX 1613 London City 07:35 -> Zürich 10:20, aisle seat, "
          "vegetarian meal; Hotel Adler Zürich (Rosengasse 10), check-in from 14:00, 2 nights, "
          "CHF 418.00 (booking HB-55102)")
TRIP_2 = ("Zürich trip, 9-11 Feb 2027: LX 1617 London City 12:50 -> Zürich 15:35 (LX 1613 "
          "cancelled), aisle seat, vegetarian meal; Hotel Adler Zürich (Rosengasse 10), "
          "check-in from 14:00, 2 nights, CHF 418.00 (booking HB-55102)")
DIMS = 48


def _embed(texts: list[str]) -> list[list[float]]:
    """A deterministic bag-of-words embedding: each word adds one to a hashed dimension."""
    out = []
    for text in texts:
        vec = [0.0] * DIMS
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            vec[zlib.crc32(word.encode()) % DIMS] += 1.0
        norm = sum(v * v for v in vec) ** 0.5 or 1.0
        out.append([v / norm for v in vec])
    return out


@tool
def flight_status(flight: str, date: str) -> str:
    """An airline's status of a flight on a day."""
    return FLIGHTS[flight.replace(" ", "").upper()]


@tool
def hotel_booking(booking: str) -> str:
    """A hotel booking's confirmation."""
    return HOTELS[booking.strip().upper()]


def _itinerary(runner: Runner) -> None:
    model = scripted(
        say(json.dumps({"preferences": [PREF_SEAT, PREF_TRAIN]})),
        say(json.dumps({"flight": "LX1613", "date": "2027-02-09", "booking": "HB-55102"})),
        say(TRIP_1),
        say(json.dumps({"flight": "LX1617", "date": "2027-02-09"})),
        say(TRIP_2))
    store = InMemoryStore(index={"dims": DIMS, "embed": _embed, "fields": ["text"]})

    @task
    def understand(message: str) -> dict:
        reply = model.invoke([SystemMessage("Read the traveller's message. Answer JSON: "
                                            '{"preferences": [...]} for standing preferences, '
                                            'or {"flight", "date", "booking"} for a trip.'),
                              HumanMessage(message)])
        return json.loads(reply.content)

    @task
    def check_flight(flight: str, date: str) -> str:
        return flight_status.invoke({"flight": flight, "date": date})

    @task
    def check_hotel(booking: str) -> str:
        return hotel_booking.invoke({"booking": booking})

    @task
    def write_trip(message: str, facts: list[str]) -> str:
        return model.invoke([SystemMessage("Write the traveller's itinerary in one line from "
                                           "these facts:\n" + "\n".join(facts)),
                             HumanMessage(message)]).content

    @entrypoint(checkpointer=InMemorySaver(), store=store)
    def travel_assistant(request: dict, *, store: BaseStore) -> str:
        user = get_config()["configurable"]["user_id"]
        wanted = understand(request["message"]).result()
        if "preferences" in wanted:
            for text in wanted["preferences"]:
                store.put(("prefs", user), uuid.uuid5(uuid.NAMESPACE_URL, text).hex,
                          {"text": text})
            return "noted"
        flight = check_flight(wanted["flight"], wanted["date"])
        hotel = check_hotel(wanted["booking"]) if wanted.get("booking") else None
        current = store.get(("trips", user), "zurich-2027-02")
        if current is None:
            hits = store.search(("prefs", user), query="seat and meal on flights", limit=2)
            facts = [f"Preference: {h.value['text']}" for h in hits]
        else:
            facts = [f"Current itinerary: {current.value['text']}"]
        facts += [f"Flight: {flight.result()}"] + ([f"Hotel: {hotel.result()}"] if hotel else [])
        text = write_trip(request["message"], facts).result()
        store.put(("trips", user), "zurich-2027-02", {"text": text})
        return text

    graph = runner.graph(travel_assistant)
    aiko = {"configurable": {"user_id": "aiko", "thread_id": "aiko-travel"}}
    for message in ("for my travel profile: I always want an aisle seat and the vegetarian meal "
                    "when I fly. and if a trip is under 4 hours door to door I'd rather take the "
                    "train",
                    "plan my Zürich trip please: flight LX 1613 on 9 Feb 2027, hotel booking "
                    "HB-55102",
                    "LX 1613 got cancelled, they rebooked me on LX 1617 the same day. update my "
                    "trip"):
        runner.invoke(graph, {"message": message}, aiko)


ITINERARY = Program(
    "itinerary", "functional API with a checkpointer and a semantic store: preferences "
    "extracted, a trip from two parallel task futures and one of two hits by query, then "
    "rewritten under its key after a cancellation", _itinerary, group=BLIND3,
    sources={"flight_status": SourceTool(source="flights:{flight}", kind="airline"),
             "hotel_booking": SourceTool(source="hotels:{booking}", kind="hotel")},
    # Each preference restates Aiko's first message. The first trip takes the flight's times
    # from its status, the hotel, dates, check-in and price from the booking, and the seat and
    # meal from the preference hit; the train preference is shown and not used, and Aiko's
    # second message states nothing the sources do not. The rewrite is shown the first trip
    # (read back under its key: hotel, seat, meal), the new flight's status, and Aiko's third
    # message (LX 1613 cancelled).
    truth={PREF_SEAT: {frozenset({"user:aiko"})}, PREF_TRAIN: {frozenset({"user:aiko"})},
           TRIP_1: {frozenset({"flights:lx1613", "hotels:hb-55102", PREF_SEAT})},
           TRIP_2: {frozenset({TRIP_1, "flights:lx1617", "user:aiko"})}},
    out_when={"user:aiko": {PREF_SEAT, PREF_TRAIN, TRIP_1, TRIP_2},
              "flights:lx1613": {TRIP_1, TRIP_2}, "hotels:hb-55102": {TRIP_1, TRIP_2},
              "flights:lx1617": {TRIP_2}})


# -- 6. three users at once, the user id in the runtime context ----------------------------------

STATEMENTS = {
    "NL91ABNA0417164300": "ABN AMRO · Rekeningoverzicht november 2026 · NL91 ABNA 0417 1643 00\n"
                          "01-11 Huur Woonstichting De Key  -€ 1.150,00\n03-11 Vattenfall "
                          "energie  -€ 96,00\nBoodschappen (Albert Heijn, Jumbo), totaal  -€ "
                          "412,37\nSaldo 30-11-2026: € 2.804,15",
    "GB29NWBK60161331926819": "NatWest · Statement 01/11/2026 - 30/11/2026 · "
                              "GB29NWBK60161331926819\nRENT HOLLIS ESTATES  1,450.00 DR\n"
                              "COUNCIL TAX LEEDS CC  162.00 DR\nGROCERIES (TESCO, ALDI)  318.40 "
                              "DR\nBALANCE  3,112.76 CR",
    "DE89370400440532013000": "Kontoauszug 11/2026 · DE89 3704 0044 0532 0130 00\nMiete "
                              "Hausverwaltung Krämer  -980,00 EUR\nLebensmittel (REWE, Aldi)  "
                              "-275,90 EUR\nStrom Stadtwerke  -64,00 EUR\nKontostand "
                              "30.11.2026: 1.422,18 EUR"}
HOUSEHOLD = {
    "amara": ("hi! can you set my budget for December from my November statement? account NL91 "
              "ABNA 0417 1643 00. I want to put €1.000 aside on the 1st",
              "December 2026 budget: rent €1,150.00, energy €96.00 (Vattenfall), groceries €420 "
              "(November: €412.37); €1,000 to savings on 1 Dec"),
    "bo": ("December budget please, same as November but groceries up a bit for Christmas; keep "
           "a £500 buffer. acct GB29 NWBK 6016 1331 9268 19",
           "December 2026 budget: rent £1,450.00, council tax £162.00, groceries £380 (November: "
           "£318.40, more for Christmas); keep a £500.00 buffer"),
    "chidi": ("Budget für Dezember bitte, Konto DE89 3704 0044 0532 0130 00 - das Auto ist seit "
              "Oktober verkauft, also keine Autokosten mehr",
              "Dezember 2026: Miete 980,00 EUR, Lebensmittel 290 EUR (November: 275,90 EUR), "
              "Strom 64,00 EUR; keine Autokosten (Auto seit Oktober verkauft)")}
IBANS = {"amara": "NL91ABNA0417164300", "bo": "GB29NWBK60161331926819",
         "chidi": "DE89370400440532013000"}


@tool
def bank_statement(iban: str, month: str) -> str:
    """A bank account's statement for a month (YYYY-MM)."""
    return STATEMENTS[re.sub(r"\s", "", iban).upper()]


@dataclass
class _Household:
    user_id: str


def _budget_model(messages: list[BaseMessage]) -> Any:
    last = messages[-1]
    for user, (said, budget) in HOUSEHOLD.items():
        if last.type == "human" and _text(last) == said:
            return call(("bank_statement", {"iban": IBANS[user], "month": "2026-11"}))
        if last.type == "tool" and _text(last) == STATEMENTS[IBANS[user]]:
            return say(budget)
    raise AssertionError(f"unexpected turn: {last!r}")


class _InContext:
    """A client that streams a run with its runtime context (``context=``), keeping the last
    state: the LangGraph 1.x way to pass who is calling."""

    def __init__(self, graph: Any, context: _Household) -> None:
        self.graph, self.context = graph, context

    async def ainvoke(self, inputs: Any, config: dict | None = None) -> Any:
        state = None
        async for chunk in self.graph.astream(inputs, config, context=self.context,
                                              stream_mode="values"):
            state = chunk
        return state


def _household(runner: Runner) -> None:
    model = _policy(_budget_model)
    tools = [bank_statement]

    async def assistant(state: MessagesState, runtime: Runtime[_Household]) -> dict:
        system = SystemMessage("You help each member of the household plan a monthly budget "
                               "from their last statement.")
        reply = await model.bind_tools(tools).ainvoke([system, *state["messages"]])
        return {"messages": [reply]}

    async def save_budget(state: MessagesState, runtime: Runtime[_Household]) -> dict:
        await runtime.store.aput(("budgets", runtime.context.user_id), "2026-12",
                                 {"text": _text(state["messages"][-1])})
        return {}

    builder = StateGraph(MessagesState, context_schema=_Household)
    builder.add_node("assistant", assistant)
    builder.add_node("tools", ToolNode(tools))
    builder.add_node("save_budget", save_budget)
    builder.add_edge(START, "assistant")
    builder.add_conditional_edges("assistant", tools_condition,
                                  {"tools": "tools", END: "save_budget"})
    builder.add_edge("tools", "assistant")
    builder.add_edge("save_budget", END)
    graph = runner.graph(builder.compile(store=InMemoryStore()))
    runner.ainvoke_all([(_InContext(graph, _Household(user)), _user(said), None)
                        for user, (said, _budget) in HOUSEHOLD.items()])


HOUSEHOLD_BUDGETS = Program(
    "household", "three users under asyncio.gather on one graph, the user id in the runtime "
    "context (context_schema, Runtime), each run streamed with astream", _household,
    group=BLIND3,
    sources={"bank_statement": SourceTool(source="bank:{iban}", kind="bank",
                                          identity={"iban": "iban"})},
    # Each budget restates its own statement's lines and its user's wish (savings, buffer,
    # Christmas, the sold car); nothing crosses users.
    truth={HOUSEHOLD[u][1]: {frozenset({f"bank:{IBANS[u].lower()}", f"user:{u}"})}
           for u in HOUSEHOLD},
    out_when={**{f"bank:{IBANS[u].lower()}": {HOUSEHOLD[u][1]} for u in HOUSEHOLD},
              **{f"user:{u}": {HOUSEHOLD[u][1]} for u in HOUSEHOLD}})


BLIND3_PROGRAMS: dict[str, Program] = {p.name: p for p in (
    PAYEE_APPROVAL, CONTRACT_REVIEW, CRAG, ACCOUNT_TICKET, ITINERARY, HOUSEHOLD_BUDGETS)}

__all__ = ["BLIND3", "BLIND3_PROGRAMS"]
