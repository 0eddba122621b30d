"""The held-out programs of `rescind bench fidelity`: six LangGraph programs written after the
attribution was tuned, by someone who had not read its rules, in the styles of public examples,
each with a scripted chat model and the truth about every memory it writes labelled by hand
(what each value actually uses: the observations it restates, computes from or acts on).

They are scored apart from the eight the attribution was tuned against (``group="held-out"``),
so the report shows how the rules fare on programs nobody tuned them to. The data is written the
way real data comes: lowercase paraphrases, numbers in words and in digits, dates in several
formats, names at the start of sentences, names from several languages, amounts with
currencies and separators.

1. ``support``: an airline support bot (a node that fetches the passenger's booking into the
   state and the system prompt, a ``ToolNode`` for the fare rules, a checkpointer); the note is
   written in the thread's second invocation from what the first one's tool said.
2. ``research``: a research assistant that plans sub-questions, fans out with ``Send`` to
   branches that search the web and write sections, and writes a brief from two of the three.
3. ``triage``: email triage with a store: a user's rule is remembered, then emails are read
   and classified against it; an invoice is filed for the person the rule names, a newsletter
   ignored, a meeting request held in the calendar.
4. ``travel``: a travel agent (prebuilt ReAct agent with a checkpointer): a hotel found in one
   turn, an exchange rate in the next, the booking noted with the total computed in euros.
5. ``manager``: a langmem-style memory manager: after each chat turn a reflection step is shown
   the existing memories and the conversation, and upserts memories by key.
6. ``rag``: a RAG note-taker: a keyword retriever reads the top three policy documents, the
   model answers from them and a note of the answer is kept (two of three documents used).
"""

from __future__ import annotations

import json
import operator
import re
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_config
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import InjectedStore, ToolNode, create_react_agent, tools_condition
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.types import Send

from rescind.middleware import SourceTool

from .fidelity_programs import Policy, Program, Runner, _put_note, _user, call, one, say, scripted

HELD_OUT = "held-out"


def _save_note():
    @tool
    def save_note(text: str, store: Annotated[Any, InjectedStore()]) -> str:
        """Save a note for the user's file."""
        _put_note(store, ("notes", get_config()["configurable"]["user_id"]), text)
        return "saved"

    return save_note


# -- 1. an airline support bot ----------------------------------------------------------------

BOOKINGS = {"3442-587242": "Passenger 3442-587242, Ms Ngozi Okonkwo-Bauer. Ticket 0724 5543 "
                           "2190: LX 1612 Zurich (ZRH) -> Lisbon (LIS), 13/12/2026 07:40, seat "
                           "23F, fare Economy Light"}
FARE_RULES = ("Fare rules. Economy Light: changes allowed until 24 hours before departure, fee "
              "CHF 90 per ticket plus any fare difference; no refunds. Economy Classic: changes "
              "free of charge.")
CHANGE_NOTE = ("Ngozi Okonkwo-Bauer asks to move LX1612 Zurich-Lisbon from 13 Dec to Monday 14 "
               "Dec 2026; Economy Light: CHF 90 fee plus the fare difference")
WINDOW = "Always wants a window seat"


@tool
def fetch_user_flight_information(config: RunnableConfig) -> str:
    """The current passenger's tickets and flights."""
    return BOOKINGS[config["configurable"]["passenger_id"]]


@tool
def lookup_policy(query: str) -> str:
    """Look the airline's fare rules and policies up."""
    return FARE_RULES


class _Support(TypedDict, total=False):
    messages: Annotated[list[BaseMessage], add_messages]
    user_info: str


def _support(runner: Runner) -> None:
    model = scripted(
        call(("lookup_policy", {"query": "economy light date change fee"})),
        say("Yes: moving to the 14th costs CHF 90 plus any fare difference."),
        call(("save_note", {"text": CHANGE_NOTE}), ("save_note", {"text": WINDOW})),
        say("Done, the team will see it."))
    tools = [lookup_policy, _save_note()]

    def fetch_user_info(state: _Support, config: RunnableConfig) -> dict:
        return {"user_info": fetch_user_flight_information.invoke({}, config)}

    def assistant(state: _Support) -> dict:
        system = SystemMessage(f"You are Swiss Air's support assistant. Use the tools to look "
                               f"policies up.\n\nCurrent user flight information:\n"
                               f"{state['user_info']}")
        return {"messages": [model.bind_tools(tools).invoke([system, *state["messages"]])]}

    builder = StateGraph(_Support)
    builder.add_node("fetch_user_info", fetch_user_info)
    builder.add_node("assistant", assistant)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "fetch_user_info")
    builder.add_edge("fetch_user_info", "assistant")
    builder.add_conditional_edges("assistant", tools_condition)
    builder.add_edge("tools", "assistant")
    graph = runner.graph(builder.compile(checkpointer=InMemorySaver(), store=InMemoryStore()))
    thread = {"configurable": {"user_id": "ngozi", "passenger_id": "3442-587242",
                               "thread_id": "support-1"}}
    runner.invoke(graph, _user("hi, ngozi here. could i move my lisbon flight to monday the "
                               "14th instead? what would that cost me"), thread)
    runner.invoke(graph, _user("ok go ahead and leave a note for the team. oh and i always "
                               "want a window seat"), thread)


SUPPORT = Program(
    "support", "airline support bot: booking fetched into the prompt, ToolNode, a checkpointer; "
    "the note written in the thread's second run", _support, group=HELD_OUT,
    sources={"fetch_user_flight_information": SourceTool(source="bookings:{passenger_id}",
                                                         kind="airline"),
             "lookup_policy": SourceTool(source="policy:fares", kind="policy")},
    # The note restates the booking (name, flight, route, date, fare), the fare rule (fee, fare
    # difference) and the user's new day (Monday the 14th, from the first run's message).
    truth={CHANGE_NOTE: one("bookings:3442-587242", "policy:fares", "user:ngozi"),
           WINDOW: one("user:ngozi")},
    out_when={"bookings:3442-587242": {CHANGE_NOTE}, "policy:fares": {CHANGE_NOTE},
              "user:ngozi": {CHANGE_NOTE, WINDOW}})


# -- 2. a research assistant with Send ------------------------------------------------------------

WEB = {"norway heat pumps": "NVE statistics, 3 March 2025: Norway has about 1.5 million heat "
                            "pumps installed, in roughly two of every three detached homes.",
       "enova grants": "Enova - Støtte til varmepumpe: households get up to NOK 10,000 (ti tusen "
                       "kroner) for an air-to-water heat pump; applications close 31.12.2026.",
       "sweden heat pumps": "Energimyndigheten: Sweden counts 2.1 million heat pumps, most of "
                            "them ground-source."}
SECTION = {"norway heat pumps": "Norway: about one and a half million heat pumps, in about 2 of "
                                "3 detached houses (NVE, March 2025)",
           "enova grants": "Enova grant: up to 10 000 kr per household for an air-to-water heat "
                           "pump, apply by 31 Dec 2026",
           "sweden heat pumps": "Sweden: 2.1 million heat pumps, mostly ground-source "
                                "(Energimyndigheten)"}
BRIEF = ("Heat pumps in Norway: ~1.5 million installed, two-thirds of detached homes; Enova "
         "pays up to NOK 10,000 for air-to-water pumps until 31/12/2026")


@tool
def web_search(query: str) -> str:
    """Search the web."""
    return WEB[query]


def _research_model(messages: list[BaseMessage]) -> AIMessage:
    last = str(messages[-1].content)
    if last.startswith("Summarise"):
        return say(next(SECTION[q] for q in WEB if WEB[q] in last))
    if last.startswith("Write the brief"):
        return say(BRIEF)
    return say("\n".join(WEB))


class _Research(TypedDict, total=False):
    topic: str
    queries: list[str]
    sections: Annotated[list[str], operator.add]


def _research(runner: Runner) -> None:
    model = Policy(messages=iter(()), decide=_research_model)

    def plan(state: _Research) -> dict:
        answer = model.invoke([("system", "List web searches for the brief, one a line."),
                               ("human", state["topic"])])
        return {"queries": answer.content.splitlines()}

    def fan_out(state: _Research) -> list[Send]:
        return [Send("search", {"query": q}) for q in state["queries"]]

    def search(state: dict, *, store: BaseStore) -> dict:
        page = web_search.invoke({"query": state["query"]})
        section = model.invoke([("human", f"Summarise this for a brief:\n\n{page}")]).content
        store.put(("sections", "heat-pumps"), state["query"].replace(" ", "-"),
                  {"text": section})
        return {"sections": [section]}

    def write(state: _Research, *, store: BaseStore) -> dict:
        notes = "\n\n".join(state["sections"])
        brief = model.invoke([("system", "You write short, sourced briefs."),
                              ("human", f"Write the brief on {state['topic']} from these "
                                        f"sections:\n\n{notes}")])
        store.put(("briefs",), "heat-pumps-norway", {"text": brief.content})
        return {}

    builder = StateGraph(_Research)
    builder.add_node("plan", plan)
    builder.add_node("search", search)
    builder.add_node("write", write)
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", fan_out, ["search"])
    builder.add_edge("search", "write")
    builder.add_edge("write", END)
    graph = runner.graph(builder.compile(store=InMemoryStore()))
    runner.invoke(graph, {"topic": "heat pumps in norway"}, {"configurable": {"user_id": "ola"}})


RESEARCH = Program(
    "research", "research assistant: Send to search branches that write sections; a brief from "
    "two of the three", _research, group=HELD_OUT,
    sources={"web_search": SourceTool(source="web:{query}", kind="web")},
    # The brief is written from the sections (the branches' memories, passed in the state),
    # each restating its page: either states the facts. Sweden's section is shown, unused.
    truth={**{SECTION[q]: one(f"web:{q}") for q in WEB},
           BRIEF: {frozenset({a, b}) for a in ("web:norway heat pumps",
                                               SECTION["norway heat pumps"])
                   for b in ("web:enova grants", SECTION["enova grants"])}},
    out_when={"web:norway heat pumps": {SECTION["norway heat pumps"], BRIEF},
              "web:enova grants": {SECTION["enova grants"], BRIEF},
              "web:sweden heat pumps": {SECTION["sweden heat pumps"]}})


# -- 3. email triage with a store ----------------------------------------------------------------

INBOX = {
    "e-907": "From: Javier Muñoz <facturas@munozlogistica.es>\nSubject: Factura F-2026-0417\n\n"
             "Hola Ana, adjunto la factura F-2026-0417 por 1.250,00 € (IVA incl.), con "
             "vencimiento el 15/01/2027. Saludos, Javier Muñoz - Muñoz Logística S.L.",
    "e-908": "From: The Fintech Weekly <news@fintechweekly.example>\nSubject: Issue #212\n\n"
             "This week: 3 neobanks raise a combined $410m; open banking in Brazil.",
    "e-909": "From: Søren Lund <soren@lundvik.no>\nSubject: meeting in Porto?\n\nHi Ana, I'm "
             "in Porto next week - could we meet on Thursday 17/12 at 15h30, for an hour? "
             "Best, Søren (Lund & Vik AS)"}
RULE = "Flag invoices from Muñoz Logística for Tomás in accounts; ignore newsletters"
FILED = ("For Tomás (accounts): Muñoz Logística invoice F-2026-0417, 1 250,00 EUR incl. VAT, "
         "due 2027-01-15")
HOLD = "Hold Thu 17 December, 15:30-16:30 in Porto: meeting with Søren Lund (Lund & Vik AS)"


@tool
def fetch_email(email_id: str) -> str:
    """Fetch one email from the user's inbox."""
    return INBOX[email_id]


def _triage_model(messages: list[BaseMessage]) -> AIMessage:
    text = "\n".join(str(m.content) for m in messages)
    if text.startswith("Turn the user's instruction"):
        return say(RULE)
    if text.startswith("Classify"):
        return say("ignore" if "Fintech Weekly" in text else
                   "flag" if "Factura" in text else "respond")
    if "Factura" in text:
        return say(FILED)
    return say(HOLD)


class _Triage(TypedDict, total=False):
    email_id: str
    email: str
    verdict: str


def _triage(runner: Runner) -> None:
    model = Policy(messages=iter(()), decide=_triage_model)
    store = InMemoryStore()

    def remember(state: MessagesState, config: RunnableConfig, *, store: BaseStore) -> dict:
        rule = model.invoke([("system", "Turn the user's instruction into a triage rule."),
                             *state["messages"]]).content
        store.put(("triage", config["configurable"]["user_id"]), "rules", {"text": rule})
        return {}

    def triage(state: _Triage, config: RunnableConfig, *, store: BaseStore) -> dict:
        email = fetch_email.invoke({"email_id": state["email_id"]})
        rules = store.get(("triage", config["configurable"]["user_id"]), "rules")
        verdict = model.invoke([("system", f"Classify the email as flag, ignore or respond.\n"
                                           f"The user's rules: {rules.value['text']}"),
                                ("human", email)]).content
        return {"email": email, "verdict": verdict}

    def route(state: _Triage) -> str:
        return {"flag": "file", "respond": "hold"}.get(state["verdict"], END)

    def file(state: _Triage, config: RunnableConfig, *, store: BaseStore) -> dict:
        user = config["configurable"]["user_id"]
        rules = store.get(("triage", user), "rules").value["text"]
        memo = model.invoke([("system", "Write a one-line filing memo for the invoice, for "
                                        f"whoever the rules name.\nRules: {rules}"),
                             ("human", state["email"])]).content
        store.put(("filed", user), state["email_id"], {"text": memo})
        return {}

    def hold(state: _Triage, config: RunnableConfig, *, store: BaseStore) -> dict:
        slot = model.invoke([("system", "Propose a calendar hold for this request."),
                             ("human", state["email"])]).content
        store.put(("calendar", config["configurable"]["user_id"]), state["email_id"],
                  {"text": slot})
        return {}

    prefs = StateGraph(MessagesState)
    prefs.add_node("remember", remember)
    prefs.add_edge(START, "remember")
    prefs.add_edge("remember", END)
    builder = StateGraph(_Triage)
    for name, node in (("triage", triage), ("file", file), ("hold", hold)):
        builder.add_node(name, node)
    builder.add_edge(START, "triage")
    builder.add_conditional_edges("triage", route, ["file", "hold", END])
    builder.add_edge("file", END)
    builder.add_edge("hold", END)
    ana = {"configurable": {"user_id": "ana"}}
    runner.invoke(runner.graph(prefs.compile(store=store)), _user(
        "hey, anything from muñoz logística with an invoice, flag it for tomás in accounts. "
        "newsletters can be ignored"), ana)
    inbox = runner.graph(builder.compile(store=store))
    for email_id in INBOX:
        runner.invoke(inbox, {"email_id": email_id}, ana)


TRIAGE = Program(
    "triage", "email triage: a user's rule in the store, emails classified against it, an "
    "invoice filed for whom the rule names, a meeting held", _triage, group=HELD_OUT,
    sources={"fetch_email": SourceTool(source="mail:{email_id}", kind="email")},
    # The filing memo restates the invoice and is addressed to whom the remembered rule names
    # (Tomás, accounts): the rule is a premise. The newsletter is read and used by nothing.
    truth={RULE: one("user:ana"), FILED: one("mail:e-907", RULE), HOLD: one("mail:e-909")},
    out_when={"user:ana": {RULE, FILED}, "mail:e-907": {FILED}, "mail:e-909": {HOLD}})


# -- 4. a travel agent with a checkpointer ----------------------------------------------------------

HOTELS = {"kraków": "Hotel Stary Kraków ****, ul. Szczepańska 5: 420,00 PLN per night, "
                    "breakfast included; free cancellation until 16.12.2026 18:00"}
FX = {("EUR", "PLN"): "ECB reference rate, 01/12/2026: 1 EUR = 4.2700 PLN"}
TRIP = ("Kraków 18-21 Dec 2026: Hotel Stary Kraków, 3 nights x 420 zł = 1 260 zł (about "
        "€295.08 at 4.27); free cancellation until 16 Dec, 18:00")
LOYALTY = "Loyalty card number: MQ-5521-07"


@tool
def search_hotels(city: str, check_in: str, nights: int) -> str:
    """Search hotels in a city from a check-in day (YYYY-MM-DD) for some nights."""
    return HOTELS[city.lower()]


@tool
def exchange_rate(base: str, quote: str) -> str:
    """Today's reference exchange rate between two currencies."""
    return FX[(base, quote)]


def _travel(runner: Runner) -> None:
    model = scripted(
        call(("search_hotels", {"city": "Kraków", "check_in": "2026-12-18", "nights": 3})),
        say("Hotel Stary Kraków has a room at 420 zł a night, breakfast included."),
        call(("exchange_rate", {"base": "EUR", "quote": "PLN"})),
        call(("save_note", {"text": TRIP}), ("save_note", {"text": LOYALTY})),
        say("Saved, with the total in euros and your card."))
    agent = create_react_agent(model, [search_hotels, exchange_rate, _save_note()],
                               checkpointer=InMemorySaver(), store=InMemoryStore(),
                               prompt="You are a helpful travel agent.")
    graph = runner.graph(agent)
    thread = {"configurable": {"user_id": "piotr", "thread_id": "trip-krk"}}
    runner.invoke(graph, _user("looking for a hotel in kraków, three nights from the 18th of "
                               "december"), thread)
    runner.invoke(graph, _user("sounds good. save the details with the total in euros, and "
                               "my loyalty card MQ-5521-07"), thread)


TRAVEL = Program(
    "travel", "travel agent (ReAct, checkpointer): hotel found in one run, rate in the next, "
    "the total computed", _travel, group=HELD_OUT,
    sources={"search_hotels": SourceTool(source="hotels:{city}", kind="hotels"),
             "exchange_rate": SourceTool(source="fx:{base}-{quote}", kind="fx")},
    # The trip note restates the hotel (name, price, cancellation), computes the euro total
    # from the rate, and takes the dates and nights from the user's first message.
    truth={TRIP: one("hotels:kraków", "fx:eur-pln", "user:piotr"), LOYALTY: one("user:piotr")},
    out_when={"hotels:kraków": {TRIP}, "fx:eur-pln": {TRIP}, "user:piotr": {TRIP, LOYALTY}})


# -- 5. a langmem-style memory manager --------------------------------------------------------------

HOME_1 = "Rui lives in Porto with his partner Ngozi"
PET = "Has a dog called Pastel"
HOME_2 = "Rui lives in Lisbon with his partner Ngozi (moved from Porto on 3 Nov 2026)"
JOB = "Ngozi starts at Hospital de Santa Maria in January 2027"


def _manager(runner: Runner) -> None:
    model = scripted(
        say("Olá Rui! Nice to meet you both - and Pastel."),
        say(json.dumps([{"key": "home", "content": HOME_1}, {"key": "pets", "content": PET}])),
        say("Congratulations on the move, and good luck to Ngozi!"),
        say(json.dumps([{"key": "home", "content": HOME_2},
                        {"key": "partner_job", "content": JOB}])))

    def chat(state: MessagesState, config: RunnableConfig, *, store: BaseStore) -> dict:
        return {"messages": [model.invoke([("system", "You are a friendly assistant."),
                                           *state["messages"]])]}

    def reflect(state: MessagesState, config: RunnableConfig, *, store: BaseStore) -> dict:
        namespace = ("memories", config["configurable"]["user_id"])
        existing = "\n".join(f"- [{m.key}] {m.value['content']}"
                             for m in store.search(namespace, limit=50)) or "(none)"
        talk = "\n".join(f"{m.type}: {m.content}" for m in state["messages"])
        answer = model.invoke([("system", "Extract durable facts about the user. Return a "
                                          "JSON list of {key, content}; reuse a key to update "
                                          f"a memory.\n\nExisting memories:\n{existing}"),
                               ("human", f"Conversation:\n{talk}")])
        for memory in json.loads(answer.content):
            store.put(namespace, memory["key"], {"content": memory["content"]})
        return {}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_node("reflect", reflect)
    builder.add_edge(START, "chat")
    builder.add_edge("chat", "reflect")
    builder.add_edge("reflect", END)
    graph = runner.graph(builder.compile(store=InMemoryStore()))
    rui = {"configurable": {"user_id": "rui"}}
    runner.invoke(graph, _user("olá! I'm Rui, I live in Porto with my partner Ngozi, and we "
                               "have a dog called Pastel"), rui)
    runner.invoke(graph, _user("news: we moved to lisbon on the 3rd of november! ngozi starts "
                               "at Hospital de Santa Maria in january"), rui)


MANAGER = Program(
    "manager", "langmem-style memory manager: a reflection step shown the memories and the "
    "conversation upserts by key", _manager, group=HELD_OUT,
    # The second run is shown the first home memory, not the first message: the new home keeps
    # its partner and old city from that memory. The job is all in the second message.
    truth={HOME_1: one("user:rui"), PET: one("user:rui"), HOME_2: one(HOME_1, "user:rui"),
           JOB: one("user:rui")},
    out_when={"user:rui": {HOME_1, PET, HOME_2, JOB}})


# -- 6. a RAG note-taker ----------------------------------------------------------------------------

KB = {"exp-travel": "Travel expenses (rev. 4, Zoë Østergaard, Finance). Rail is preferred for "
                    "trips under four hours; flights in economy. Per diem in Germany: €45 per "
                    "full day, €22.50 for the days of arrival and departure.",
      "exp-hotels": "Hotel caps per night, taxes included: Munich €160, Berlin €140, Hamburg "
                    "€135, elsewhere €110. Always book through Navan.",
      "exp-meals": "Client dinners: up to €60 per person; a receipt is needed for anything "
                   "over €25. Alcohol is not reimbursed on travel days.",
      "exp-equipment": "Equipment: laptops are replaced every thirty-six months; a second "
                       "monitor is available on request."}
OFFSITE = ("Munich offsite 9-11 March 2027: hotel up to €320 (2 nights x €160, book via "
           "Navan); per diem €90 (€45 for the full day, 2 x €22.50 for arrival and departure)")
LAPTOP = "Laptop bought in May 2024: replaceable from May 2027 (36-month cycle)"


@tool
def read_document(doc_id: str) -> str:
    """Read one document of the expenses handbook."""
    return KB[doc_id]


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-zà-ÿ]{4,}", text.lower()))


def _rag(runner: Runner) -> None:
    model = scripted(say("€320 for the hotel and €90 per diem."), say(OFFSITE),
                     say("From May 2027."), say(LAPTOP))

    def retrieve(state: MessagesState) -> dict:
        question = _words(str(state["messages"][-1].content))
        ranked = sorted(KB, key=lambda d: (-len(question & _words(KB[d] + " " + d)), d))
        docs = "\n\n".join(f"[{d}] {read_document.invoke({'doc_id': d})}" for d in ranked[:3])
        return {"messages": [SystemMessage(f"Context:\n{docs}", name="retriever")]}

    def answer(state: MessagesState) -> dict:
        return {"messages": [model.invoke([("system", "Answer from the context only."),
                                           *state["messages"]])]}

    def take_note(state: MessagesState, config: RunnableConfig, *, store: BaseStore) -> dict:
        note = model.invoke([("system", "Write the answer as a one-line note to keep."),
                             *state["messages"]]).content
        _put_note(store, ("notes", config["configurable"]["user_id"]), note)
        return {}

    builder = StateGraph(MessagesState)
    for name, node in (("retrieve", retrieve), ("answer", answer), ("take_note", take_note)):
        builder.add_node(name, node)
    builder.add_edge(START, "retrieve")
    builder.add_edge("retrieve", "answer")
    builder.add_edge("answer", "take_note")
    builder.add_edge("take_note", END)
    graph = runner.graph(builder.compile(store=InMemoryStore()))
    lea = {"configurable": {"user_id": "lea"}}
    runner.invoke(graph, _user("what's my budget for the munich offsite? arriving 9 march, "
                               "leaving on the 11th (2027). hotel and travel expenses"), lea)
    runner.invoke(graph, _user("when can my laptop be replaced? i got it in may 2024"), lea)


RAG = Program(
    "rag", "RAG note-taker: a keyword retriever reads three documents, the note uses two",
    _rag, group=HELD_OUT,
    sources={"read_document": SourceTool(source="kb:{doc_id}", kind="handbook")},
    # The offsite note uses the hotel caps (Munich, Navan) and the travel per diem; the meals
    # document is retrieved and unused. The laptop note counts 36 months (written in words in
    # the handbook) from the user's purchase date.
    truth={OFFSITE: one("kb:exp-hotels", "kb:exp-travel", "user:lea"),
           LAPTOP: one("kb:exp-equipment", "user:lea")},
    out_when={"kb:exp-hotels": {OFFSITE}, "kb:exp-travel": {OFFSITE},
              "kb:exp-equipment": {LAPTOP}, "user:lea": {OFFSITE, LAPTOP}})


HELD_OUT_PROGRAMS: dict[str, Program] = {p.name: p for p in (
    SUPPORT, RESEARCH, TRIAGE, TRAVEL, MANAGER, RAG)}

__all__ = ["HELD_OUT", "HELD_OUT_PROGRAMS"]
