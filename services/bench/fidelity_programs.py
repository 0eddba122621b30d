"""The programs `rescind bench fidelity` wraps: eight LangGraph programs written the way public
examples write them (this project's own code), each with a scripted chat model, and the truth
about every memory it writes, labelled by hand from what each value actually uses.

Each program is a ``Program``: ``play(runner)`` builds it afresh (its model, store, checkpointer),
hands every compiled graph to ``runner.graph`` (which wraps it, or not) and invokes it through
the runner, which times the invocations. The truth:

- ``truth``: text of each memory written -> its justifications, each the set of premises that
  together support it; a premise is named by the source that said it (``weather:york``), or, for
  a memory the program wrote earlier, by that memory's text. Only minimal sets: a fact two
  premises both state makes them alternatives, two facts from two premises make a pair.
- ``out_when``: source -> the texts that are OUT once that source alone is retracted (a source
  not listed takes nothing out). Written by hand too; the harness checks it against ``truth``.

The programs:

1. ``functional``: the functional API, ``@entrypoint`` with ``@task``s that call the model and
   the tools, and a store the entrypoint writes to.
2. ``map_reduce``: a planner fans out with ``Send`` to research branches that read a news tool
   and write their findings; a reducer builds a prompt from the findings and writes a digest.
3. ``two_tools``: a prebuilt ReAct agent whose model asks for two tools in one turn, then saves
   two notes in one turn.
4. ``langmem``: langmem's manage/search memory tools over two runs (it imports offline and
   needs no model of its own).
5. ``semantic``: a store with a semantic index (a tiny deterministic embedding); a question is
   answered from a search by query that returns two hits, one used.
6. ``checkpointer``: one thread used by two invocations (the second saves what the first's tool
   said), and a second thread that must not inherit it.
7. ``ten_users``: ten users' runs under ``asyncio.gather``, each reading its own CRM record.
8. ``profile``: a profile rewritten over three runs, each version built from the one before.
"""

from __future__ import annotations

import asyncio
import operator
import time
import uuid
import zlib
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_config
from langgraph.func import entrypoint, task
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedStore, create_react_agent
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.types import Send

from rescind.middleware import SourceTool

# -- chat models -------------------------------------------------------------------------------


class Scripted(GenericFakeChatModel):
    """A chat model that says what its script says, in order; tools are bound and ignored."""

    def bind_tools(self, tools: Any, **kw: Any) -> Scripted:
        return self


def scripted(*turns: AIMessage) -> Scripted:
    return Scripted(messages=iter(turns))


class Policy(Scripted):
    """A chat model whose answer is a function of what it is shown: for branches and users that
    run at once, where a script's order would be a race."""

    decide: Any = None

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kw: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.decide(messages))])


def call(*calls: tuple[str, dict]) -> AIMessage:
    """One model turn asking for each (tool, arguments) of ``calls``."""
    return AIMessage(content="", tool_calls=[{"name": n, "args": a,
                                              "id": f"call-{uuid.uuid4().hex[:10]}"}
                                             for n, a in calls])


def say(text: str) -> AIMessage:
    return AIMessage(content=text)


def _user(text: str) -> dict:
    return {"messages": [{"role": "user", "content": text}]}


# -- the runner a program is played through ------------------------------------------------------


class Runner:
    """Wraps each graph a program builds (``wrap``: instrument, or leave it) and times each
    invocation; ``graphs`` keeps them so that the harness can read their stores afterwards."""

    def __init__(self, wrap: Callable[[Any], Any],
                 around: Callable[[], AbstractContextManager] = nullcontext) -> None:
        self.wrap, self.around = wrap, around  # around: entered for each invocation (a profiler)
        self.graphs: list[Any] = []
        self.seconds = 0.0
        self.invokes = 0

    def graph(self, compiled: Any) -> Any:
        graph = self.wrap(compiled)
        self.graphs.append(graph)
        return graph

    def invoke(self, graph: Any, inputs: Any, config: dict | None = None) -> Any:
        with self.around():
            began = time.perf_counter()
            out = graph.invoke(inputs, config)
            self.seconds += time.perf_counter() - began
        self.invokes += 1
        return out

    def ainvoke_all(self, calls: list[tuple[Any, Any, dict | None]]) -> list[Any]:
        """Each (graph, inputs, config) of ``calls`` at once, under ``asyncio.gather``; the
        wall time of the whole is shared out among them."""

        async def all_at_once() -> list[Any]:
            return await asyncio.gather(*(g.ainvoke(i, c) for g, i, c in calls))

        with self.around():
            began = time.perf_counter()
            out = asyncio.run(all_at_once())
            self.seconds += time.perf_counter() - began
        self.invokes += len(calls)
        return out


@dataclass
class Program:
    name: str
    shape: str
    play: Callable[[Runner], None]
    truth: dict[str, set[frozenset[str]]]
    out_when: dict[str, set[str]]
    sources: dict[str, SourceTool] = field(default_factory=dict)
    users: dict | None = None  # InterceptConfig.users; None: the default (user:{user_id})
    group: str = "tuned"  # "tuned": the attribution was tuned on it; "held-out": it was not


def one(*premises: str) -> set[frozenset[str]]:
    """A single justification needing every premise."""
    return {frozenset(premises)}


# -- tools shared by the programs ----------------------------------------------------------------

FORECASTS = {("york", "2026-12-05"): "York, 2026-12-05: heavy rain, 6°C, wind 40 km/h",
             ("leeds", "2026-12-02"): "Leeds, 2026-12-02: light rain, 9°C"}


@tool
def forecast(city: str, day: str) -> str:
    """The weather forecast for a city on a day (YYYY-MM-DD)."""
    return FORECASTS[(city.lower(), day)]


WEATHER = {"forecast": SourceTool(source="weather:{city}", kind="weather")}


def _put_note(store: BaseStore, namespace: tuple[str, ...], text: str) -> None:
    store.put(namespace, uuid.uuid5(uuid.NAMESPACE_URL, text).hex, {"text": text})


# -- 1. the functional API ------------------------------------------------------------------------

PACK = "Pack a waterproof for York: heavy rain, 6°C"
LUGGAGE = "Travels with hand luggage only"


def _functional(runner: Runner) -> None:
    model = scripted(call(("forecast", {"city": "York", "day": "2026-12-05"})), say(PACK),
                     say(LUGGAGE))
    tools = {"forecast": forecast}

    @task
    def call_model(messages: list) -> AIMessage:
        return model.bind_tools(list(tools.values())).invoke(messages)

    @task
    def call_tool(tool_call: dict) -> ToolMessage:
        return tools[tool_call["name"]].invoke(tool_call)

    @task
    def extract_preferences(messages: list) -> str:
        return model.invoke([{"role": "system", "content": "Note the traveller's habits."},
                             *messages[:1]]).content

    @entrypoint(store=InMemoryStore())
    def trip_agent(messages: list, *, store: BaseStore) -> str:
        user = get_config()["configurable"]["user_id"]
        asked = messages
        reply = call_model(messages).result()
        while reply.tool_calls:
            results = [f.result() for f in [call_tool(tc) for tc in reply.tool_calls]]
            messages = [*messages, reply, *results]
            reply = call_model(messages).result()
        store.put(("trips", user), "york", {"text": reply.content})
        store.put(("habits", user), "luggage", {"text": extract_preferences(asked).result()})
        return reply.content

    graph = runner.graph(trip_agent)
    runner.invoke(graph, [{"role": "user", "content": "I'm off to York on 2026-12-05 and I only "
                                                      "travel with hand luggage. What to pack?"}],
                  {"configurable": {"user_id": "u1"}})


FUNCTIONAL = Program(
    "functional", "@entrypoint/@task, tools called from tasks, the entrypoint's store",
    _functional, sources=WEATHER,
    truth={PACK: one("weather:york"), LUGGAGE: one("user:u1")},
    out_when={"weather:york": {PACK}, "user:u1": {LUGGAGE}})


# -- 2. map-reduce with Send ----------------------------------------------------------------------

NEWS = {"solar": "Solar: 41 GW added in Q3, says the IEA-77 report",
        "wind": "Wind: offshore auction cleared at 58 EUR/MWh (round AR7)"}
FINDING = {"solar": "41 GW of solar added in Q3 (IEA-77)",
           "wind": "Offshore wind cleared at 58 EUR/MWh in AR7"}
DIGEST = "This week: 41 GW of solar in Q3 (IEA-77); offshore wind at 58 EUR/MWh (AR7)"


@tool
def search_news(topic: str) -> str:
    """Search this week's news on a topic."""
    return NEWS[topic]


def _map_reduce_model(messages: list[BaseMessage]) -> AIMessage:
    last = str(messages[-1].content)
    if last.startswith("Summarise"):
        return say(next(FINDING[t] for t in NEWS if NEWS[t] in last))
    if last.startswith("Write the digest"):
        return say(DIGEST)
    return say("solar, wind")


class _Digest(TypedDict, total=False):
    request: str
    topics: list[str]
    findings: Annotated[list[str], operator.add]


class _Branch(TypedDict):
    topic: str


def _map_reduce(runner: Runner) -> None:
    model = Policy(messages=iter(()), decide=_map_reduce_model)

    def plan(state: _Digest) -> dict:
        answer = model.invoke([("system", "Pick the topics of the digest, comma-separated."),
                               ("human", state["request"])])
        return {"topics": [t.strip() for t in answer.content.split(",")]}

    def fan_out(state: _Digest) -> list[Send]:
        return [Send("research", {"topic": t}) for t in state["topics"]]

    def research(state: _Branch, *, store: BaseStore) -> dict:
        page = search_news.invoke({"topic": state["topic"]})
        finding = model.invoke([("human", f"Summarise for the digest:\n{page}")]).content
        store.put(("findings",), state["topic"], {"text": finding})
        return {"findings": [finding]}

    def reduce(state: _Digest, *, store: BaseStore) -> dict:
        joined = "\n".join(sorted(state["findings"]))
        digest = model.invoke([("human", f"Write the digest from these findings:\n{joined}")])
        store.put(("digests",), "week-49", {"text": digest.content})
        return {}

    builder = StateGraph(_Digest)
    builder.add_node("plan", plan)
    builder.add_node("research", research)
    builder.add_node("reduce", reduce)
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", fan_out, ["research"])
    builder.add_edge("research", "reduce")
    builder.add_edge("reduce", END)
    graph = runner.graph(builder.compile(store=InMemoryStore()))
    runner.invoke(graph, {"request": "This week's energy digest, please"},
                  {"configurable": {"user_id": "ed"}})


MAP_REDUCE = Program(
    "map_reduce", "Send fan-out to parallel branches, a reducer's built prompt",
    _map_reduce, sources={"search_news": SourceTool(source="news:{topic}", kind="news")},
    # The reducer's prompt is built from the branches' findings: the very values the branches
    # wrote as memories, so each finding memory and its news item state the same facts, and
    # either is a premise of the digest (four minimal sets; retracting a news source takes its
    # finding out, so every one of them falls the same way).
    truth={FINDING["solar"]: one("news:solar"), FINDING["wind"]: one("news:wind"),
           DIGEST: {frozenset({a, b}) for a in ("news:solar", FINDING["solar"])
                    for b in ("news:wind", FINDING["wind"])}},
    out_when={"news:solar": {FINDING["solar"], DIGEST}, "news:wind": {FINDING["wind"], DIGEST}})


# -- 3. two tool calls in one model turn ----------------------------------------------------------

CALENDAR = {"2026-12-02": "Tue 2 Dec: 09:30 stand-up at Quay House; 14:00 dentist (Dr Okafor)"}
DAY_NOTE = "Tue 2 Dec: stand-up 09:30 at Quay House; light rain, 9°C, so take the bus"
DENTIST = "Dentist with Dr Okafor at 14:00"


@tool
def calendar_day(day: str) -> str:
    """The user's calendar for a day (YYYY-MM-DD)."""
    return CALENDAR[day]


def _save_note_tool():
    @tool
    def save_note(text: str, store: Annotated[Any, InjectedStore()]) -> str:
        """Save a note for the user."""
        user = get_config()["configurable"]["user_id"]
        _put_note(store, ("notes", user), text)
        return "saved"

    return save_note


def _two_tools(runner: Runner) -> None:
    model = scripted(
        call(("calendar_day", {"day": "2026-12-02"}),
             ("forecast", {"city": "Leeds", "day": "2026-12-02"})),
        call(("save_note", {"text": DAY_NOTE}), ("save_note", {"text": DENTIST})),
        say("Noted both."))
    agent = create_react_agent(model, [calendar_day, forecast, _save_note_tool()],
                               store=InMemoryStore())
    graph = runner.graph(agent)
    runner.invoke(graph, _user("How does my Tuesday look? Note anything I need."),
                  {"configurable": {"user_id": "u2"}})


TWO_TOOLS = Program(
    "two_tools", "a prebuilt ReAct agent: two tool calls in one turn, two writes in one turn",
    _two_tools,
    sources={**WEATHER, "calendar_day": SourceTool(source="calendar:{user_id}", kind="calendar")},
    truth={DAY_NOTE: one("calendar:u2", "weather:leeds"), DENTIST: one("calendar:u2")},
    out_when={"calendar:u2": {DAY_NOTE, DENTIST}, "weather:leeds": {DAY_NOTE}})


# -- 4. langmem's memory tools --------------------------------------------------------------------

MAIL = {"m-41": "From: billing@northwind.example\nSubject: new bank details\nFrom 1 December "
                "please pay us at IBAN GB33 BUKB 2020 1555 5555 55. Regards, Northwind"}
IBAN_MEMORY = "Northwind's IBAN from 1 December: GB33 BUKB 2020 1555 5555 55"
PAY_MEMORY = "Pay INV-88 (4,200.00 GBP) to Northwind, IBAN GB33 BUKB 2020 1555 5555 55"


@tool
def read_mail(message_id: str) -> str:
    """Read one message of the user's inbox."""
    return MAIL[message_id]


def _langmem(runner: Runner) -> None:
    from langmem import create_manage_memory_tool, create_search_memory_tool

    namespace = ("memories", "{langgraph_user_id}")
    model = scripted(
        call(("read_mail", {"message_id": "m-41"})),
        call(("manage_memory", {"content": IBAN_MEMORY, "action": "create"})), say("Saved."),
        call(("search_memory", {"query": "Northwind IBAN"})),
        call(("manage_memory", {"content": PAY_MEMORY, "action": "create"})), say("Scheduled."))
    agent = create_react_agent(model, store=InMemoryStore(), tools=[
        create_manage_memory_tool(namespace=namespace),
        create_search_memory_tool(namespace=namespace), read_mail])
    graph = runner.graph(agent)
    me = {"configurable": {"langgraph_user_id": "u1"}}
    runner.invoke(graph, _user("Read Northwind's mail m-41 and remember what matters."), me)
    runner.invoke(graph, _user("Schedule invoice INV-88 for 4,200.00 GBP to Northwind."), me)


LANGMEM = Program(
    "langmem", "langmem's manage_memory and search_memory tools over two runs",
    _langmem, sources={"read_mail": SourceTool(source="mail:{message_id}", kind="email")},
    users={"source": "user:{langgraph_user_id}"},
    truth={IBAN_MEMORY: one("mail:m-41"), PAY_MEMORY: one(IBAN_MEMORY, "user:u1")},
    out_when={"mail:m-41": {IBAN_MEMORY, PAY_MEMORY}, "user:u1": {PAY_MEMORY}})


# -- 5. a store with a semantic index -------------------------------------------------------------

HANDBOOK = {"parking": "Parking: level -2, bay 14, permit P-31",
            "lockers": "Lockers: room 3.12, code 4471",
            "wifi": "Wi-Fi: network QH-Guest, password tealboat"}
PARK_ANSWER = "Park on level -2 in bay 14 and show permit P-31"
DIMS = 64


def tiny_embed(texts: list[str]) -> list[list[float]]:
    """A bag of words hashed into 64 dimensions and normalised: deterministic, no model."""
    out = []
    for text in texts:
        vec = [0.0] * DIMS
        word = ""
        for ch in text.lower() + " ":
            if ch.isalnum():
                word += ch
            elif word:
                vec[zlib.crc32(word.encode()) % DIMS] += 1.0
                word = ""
        norm = sum(v * v for v in vec) ** 0.5 or 1.0
        out.append([v / norm for v in vec])
    return out


@tool
def read_handbook(section: str) -> str:
    """Read a section of the office handbook."""
    return HANDBOOK[section]


SEEN: list[str] = []  # what the semantic program's model was shown (the harness checks it)


def _semantic(runner: Runner) -> None:
    store = InMemoryStore(index={"dims": DIMS, "embed": tiny_embed, "fields": ["text"]})

    def ingest(state: MessagesState, *, store: BaseStore) -> dict:
        for section in HANDBOOK:
            store.put(("handbook",), section, {"text": read_handbook.invoke({"section": section})})
        return {}

    def answer(state: MessagesState, *, store: BaseStore) -> dict:
        question = state["messages"][-1].content
        hits = store.search(("handbook",), query=question, limit=2)
        shown = "\n".join(f"- {h.value['text']}" for h in hits)
        SEEN.append(shown)
        reply = model.invoke([{"role": "system", "content": f"Answer from:\n{shown}"},
                              *state["messages"]])
        user = get_config()["configurable"]["user_id"]
        store.put(("answers", user), "parking", {"text": reply.content})
        return {"messages": [reply]}

    model = scripted(say(PARK_ANSWER))
    load = StateGraph(MessagesState)
    load.add_node("ingest", ingest)
    load.add_edge(START, "ingest")
    load.add_edge("ingest", END)
    ask = StateGraph(MessagesState)
    ask.add_node("answer", answer)
    ask.add_edge(START, "answer")
    ask.add_edge("answer", END)
    loader = runner.graph(load.compile(store=store))
    runner.invoke(loader, _user("Load the handbook"), {"configurable": {"user_id": "admin"}})
    asker = runner.graph(ask.compile(store=store))
    runner.invoke(asker, _user("What is the parking rule at the office?"),
                  {"configurable": {"user_id": "u5"}})


SEMANTIC = Program(
    "semantic", "a store with a semantic index searched by query; two hits, one used",
    _semantic, sources={"read_handbook": SourceTool(source="handbook:{section}",
                                                    kind="handbook")},
    truth={HANDBOOK["parking"]: one("handbook:parking"),
           HANDBOOK["lockers"]: one("handbook:lockers"), HANDBOOK["wifi"]: one("handbook:wifi"),
           PARK_ANSWER: one(HANDBOOK["parking"])},
    out_when={"handbook:parking": {HANDBOOK["parking"], PARK_ANSWER},
              "handbook:lockers": {HANDBOOK["lockers"]}, "handbook:wifi": {HANDBOOK["wifi"]}})


# -- 6. a checkpointer thread used by two invocations ------------------------------------------

FLIGHTS = {"BA1326": "BA1326 LHR-EDI on 2026-12-03: delayed to 18:40, gate 22"}
REMINDER = "Reminder: BA1326 leaves at 18:40 from gate 22"
CHARGER = "Buy a charger before flying BA1326"


@tool
def flight_status(flight: str) -> str:
    """The status of a flight today."""
    return FLIGHTS[flight]


def _checkpointer(runner: Runner) -> None:
    model = scripted(
        call(("flight_status", {"flight": "BA1326"})), say("BA1326 is delayed to 18:40, gate 22."),
        call(("save_note", {"text": REMINDER})), say("Reminder saved."),
        call(("save_note", {"text": CHARGER})), say("Noted."))
    agent = create_react_agent(model, [flight_status, _save_note_tool()],
                               checkpointer=InMemorySaver(), store=InMemoryStore())
    graph = runner.graph(agent)
    t1 = {"configurable": {"user_id": "u6", "thread_id": "t1"}}
    runner.invoke(graph, _user("What's the status of BA1326?"), t1)
    runner.invoke(graph, _user("Save me a reminder of that, please."), t1)
    runner.invoke(graph, _user("Remind me to buy a charger before flying BA1326."),
                  {"configurable": {"user_id": "u6", "thread_id": "t2"}})


CHECKPOINTER = Program(
    "checkpointer", "a checkpointer thread used by two invocations, then a new thread",
    _checkpointer, sources={"flight_status": SourceTool(source="flights:{flight}",
                                                        kind="airline")},
    truth={REMINDER: one("flights:ba1326"), CHARGER: one("user:u6")},
    out_when={"flights:ba1326": {REMINDER}, "user:u6": {CHARGER}})


# -- 7. ten users at once ---------------------------------------------------------------------------

CITIES = ["Hull", "Derby", "Truro", "Ely", "Bath", "Wells", "Ripon", "Lincoln", "Exeter", "Perth"]
USERS = [f"c{n}" for n in range(1, 11)]


def _crm(user: str) -> str:
    n = int(user[1:])
    return f"Account {user}: plan Gold-{n:02d}, renews 2027-01-{n:02d}, manager R. Iyer"


def _summary(user: str) -> str:
    n = int(user[1:])
    return f"Plan Gold-{n:02d}, renews 2027-01-{n:02d}; moving to {CITIES[n - 1]}"


@tool
def lookup_account() -> str:
    """Look the current user's account up in the CRM."""
    return _crm(get_config()["configurable"]["user_id"])


def _ten_users_model(messages: list[BaseMessage]) -> AIMessage:
    tools = [m for m in messages if isinstance(m, ToolMessage)]
    if not tools:
        return call(("lookup_account", {}))
    if len(tools) == 1:
        user = str(tools[0].content).split(":", 1)[0].split()[-1]
        return call(("save_note", {"text": _summary(user)}))
    return say("Saved.")


def _ten_users(runner: Runner) -> None:
    model = Policy(messages=iter(()), decide=_ten_users_model)
    agent = create_react_agent(model, [lookup_account, _save_note_tool()], store=InMemoryStore())
    graph = runner.graph(agent)
    runner.ainvoke_all([
        (graph, _user(f"I'm moving to {CITIES[int(u[1:]) - 1]} next month; note it on my "
                      "account."), {"configurable": {"user_id": u}}) for u in USERS])


TEN_USERS = Program(
    "ten_users", "ten users' runs under asyncio.gather, one shared graph and store",
    _ten_users, sources={"lookup_account": SourceTool(source="crm:{user_id}", kind="crm")},
    truth={_summary(u): one(f"crm:{u}", f"user:{u}") for u in USERS},
    out_when={**{f"crm:{u}": {_summary(u)} for u in USERS},
              **{f"user:{u}": {_summary(u)} for u in USERS}})


# -- 8. a profile rewritten over three runs -------------------------------------------------------

V1 = "Profile of Dana: lives in York (12 Elm Court)"
V2 = "Profile of Dana: lives in York (12 Elm Court); works at Harbor Lane Bakery"
V3 = "Profile of Dana: lives in York (12 Elm Court); works at Harbor Lane Bakery; likes rowing"


def _profile(runner: Runner) -> None:
    model = scripted(say(V1), say(V2), say(V3))

    def think(state: MessagesState, config: RunnableConfig, *, store: BaseStore) -> dict:
        user = config["configurable"]["user_id"]
        item = store.get(("profiles", user), "profile")
        current = item.value["text"] if item is not None else "(none yet)"
        system = f"Keep the user's profile up to date.\nCurrent profile: {current}"
        return {"messages": [model.invoke([{"role": "system", "content": system},
                                           *state["messages"]])]}

    def save(state: MessagesState, config: RunnableConfig, *, store: BaseStore) -> dict:
        user = config["configurable"]["user_id"]
        store.put(("profiles", user), "profile", {"text": state["messages"][-1].content})
        return {}

    builder = StateGraph(MessagesState)
    builder.add_node("think", think)
    builder.add_node("save", save)
    builder.add_edge(START, "think")
    builder.add_edge("think", "save")
    builder.add_edge("save", END)
    graph = runner.graph(builder.compile(store=InMemoryStore()))
    dana = {"configurable": {"user_id": "dana"}}
    for text in ("Hi, I'm Dana, I live at 12 Elm Court in York",
                 "I started at Harbor Lane Bakery this week", "I took up rowing"):
        runner.invoke(graph, _user(text), dana)


PROFILE = Program(
    "profile", "a profile read, rewritten from itself and put back, over three runs",
    _profile, truth={V1: one("user:dana"), V2: one(V1, "user:dana"), V3: one(V2, "user:dana")},
    out_when={"user:dana": {V1, V2, V3}})


PROGRAMS: dict[str, Program] = {p.name: p for p in (
    FUNCTIONAL, MAP_REDUCE, TWO_TOOLS, LANGMEM, SEMANTIC, CHECKPOINTER, TEN_USERS, PROFILE)}

__all__ = ["PROGRAMS", "Program", "Runner", "tiny_embed"]
