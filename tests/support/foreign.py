"""Six LangGraph programs written the way public examples write them, not the way our agents
are: each is built by a function that takes its chat model(s) and store and returns the
compiled graph, untouched by Rescind. The conformance suite wraps them from outside.

1. ``memory_agent``: a custom StateGraph whose node searches ``runtime.store``-style injected
   store, shows memories to the model as a Python repr, and whose second node upserts what the
   model asked for (the shape of langchain-ai/memory-agent).
2. ``langmem_agent``: ``create_react_agent`` with langmem's manage/search memory tools and a
   prompt built from ``get_store()`` (langmem's hot-path quickstart), plus a web page tool.
3. ``supervisor``: langgraph-supervisor with a researcher and a note taker, ``Command``
   hand-offs.
4. ``crm_agent``: langchain's ``create_agent`` with tools that reach the store through
   ``ToolRuntime`` and an ``InjectedStore`` argument.
5. ``per_user``: per-user namespaces from the run's config, invoked without a thread.
6. ``ap_desk``: one run reads a vendor portal and a signed contract and writes one note.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from langchain.tools import ToolRuntime
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.config import get_config, get_store
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedStore, create_react_agent

PAGES = {
    "https://acme.example/press": "Acme Corp press: our new office is at 5 Quay Street, "
                                  "Bristol BS1 4DJ",
    "https://trends.example/colour": "Colour of the year: teal blue",
}
CRM = {"jane": "Customer: Jane Roe; Phone: +44 20 7946 0018; Plan: Business-42"}
PORTAL = {"acme": "Acme Corp portal\nBank account: GB33 BUKB 2020 1555 5555 55"}
CONTRACT = {"acme": "MASTER AGREEMENT MSA-2026-001\nSupplier: Acme Corp\n"
                    "Bank account: GB33 BUKB 2020 1555 5555 55"}


class Scripted(GenericFakeChatModel):
    """A chat model that says what its script says; tools are bound and ignored."""

    def bind_tools(self, tools: Any, **kw: Any) -> Scripted:
        return self


def scripted(*turns: AIMessage) -> Scripted:
    return Scripted(messages=iter(turns))


def call(name: str, args: dict, call_id: str | None = None) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args,
                                              "id": call_id or f"call-{uuid.uuid4().hex[:8]}"}])


def done(text: str = "done") -> AIMessage:
    return AIMessage(content=text)


@tool
def fetch_page(url: str) -> str:
    """Fetch a web page."""
    return PAGES[url]


# -- 1. the memory-agent shape --------------------------------------------------------------
@tool
def upsert_memory(content: str, context: str, memory_id: str | None = None) -> str:
    """Upsert a memory about the user."""
    return "stored"  # the graph's store_memory node does the writing


def memory_agent(model, store):
    def call_model(state: MessagesState, config, *, store) -> dict:
        user_id = config["configurable"].get("user_id", "default")
        memories = store.search(("memories", user_id), limit=10)
        formatted = "\n".join(f"[{m.key}]: {m.value!r}" for m in memories)
        system = f"You are a helpful assistant.\n<memories>\n{formatted}\n</memories>"
        msg = model.bind_tools([upsert_memory]).invoke(
            [{"role": "system", "content": system}, *state["messages"]])
        return {"messages": [msg]}

    def store_memory(state: MessagesState, config, *, store) -> dict:
        user_id = config["configurable"].get("user_id", "default")
        calls = state["messages"][-1].tool_calls
        for tc in calls:
            store.put(("memories", user_id), tc["args"].get("memory_id") or uuid.uuid4().hex,
                      {"content": tc["args"]["content"], "context": tc["args"]["context"]})
        return {"messages": [ToolMessage(content="updated memory", tool_call_id=tc["id"])
                             for tc in calls]}

    def route(state: MessagesState) -> str:
        return "store_memory" if state["messages"][-1].tool_calls else END

    builder = StateGraph(MessagesState)
    builder.add_node(call_model)
    builder.add_node(store_memory)
    builder.add_edge(START, "call_model")
    builder.add_conditional_edges("call_model", route, ["store_memory", END])
    builder.add_edge("store_memory", "call_model")
    return builder.compile(store=store)


# -- 2. langmem's hot path ------------------------------------------------------------------
def langmem_agent(model, store):
    from langmem import create_manage_memory_tool, create_search_memory_tool

    namespace = ("memories", "{langgraph_user_id}")

    def prompt(state):
        user = get_config()["configurable"]["langgraph_user_id"]
        memories = get_store().search(("memories", user))
        system = f"You are a helpful assistant.\n## Memories\n<memories>\n{memories}\n</memories>"
        return [{"role": "system", "content": system}, *state["messages"]]

    return create_react_agent(model, prompt=prompt, store=store, tools=[
        create_manage_memory_tool(namespace=namespace),
        create_search_memory_tool(namespace=namespace), fetch_page])


# -- 3. a supervisor with two sub-agents ----------------------------------------------------
@tool
def save_note(text: str, store: Annotated[Any, InjectedStore()]) -> str:
    """Save a note for the team."""
    store.put(("notes",), uuid.uuid5(uuid.NAMESPACE_URL, text).hex, {"text": text})
    return "saved"


def supervisor(models: dict, store):
    from langgraph_supervisor import create_supervisor

    researcher = create_react_agent(models["researcher"], [fetch_page], name="researcher",
                                    prompt="You research the web.")
    note_taker = create_react_agent(models["note_taker"], [save_note], name="note_taker",
                                    prompt="You keep the team's notes.")
    return create_supervisor([researcher, note_taker], model=models["supervisor"],
                             prompt="You manage a researcher and a note taker.").compile(
        store=store)


# -- 4. create_agent, store through ToolRuntime and InjectedStore ----------------------------
@tool
def lookup_crm(customer: str) -> str:
    """Look a customer up in the CRM."""
    return CRM[customer]


def crm_agent(model, store):
    from langchain.agents import create_agent

    @tool
    def save_user_info(name: str, phone: str, runtime: ToolRuntime) -> str:
        """Save what we know about the user."""
        user_id = runtime.config["configurable"]["user_id"]
        runtime.store.put(("users",), user_id, {"name": name, "phone": phone})
        return "Successfully saved user info."

    @tool
    def get_user_info(store: Annotated[Any, InjectedStore()]) -> str:
        """Look up what we know about the user."""
        user_id = get_config()["configurable"]["user_id"]
        item = store.get(("users",), user_id)
        return str(item.value) if item else "Unknown user"

    return create_agent(model, [lookup_crm, save_user_info, get_user_info], store=store)


# -- 5. per-user namespaces, no thread ------------------------------------------------------
@tool
def remember(fact: str, store: Annotated[Any, InjectedStore()]) -> str:
    """Remember a fact about the user."""
    user = get_config()["configurable"]["user_id"]
    store.put(("memories", user), "favourite", {"text": fact})
    return "remembered"


def per_user(model, store):
    return create_react_agent(model, [fetch_page, remember], store=store)


# -- 6. an AP desk that reads two sources and writes one note ---------------------------------
@tool
def read_vendor_portal(vendor: str) -> str:
    """Read the vendor's self-service portal."""
    return PORTAL[vendor]


@tool
def read_contract(vendor: str) -> str:
    """Read the signed contract with the vendor."""
    return CONTRACT[vendor]


def ap_desk(model, store):
    return create_react_agent(model, [read_vendor_portal, read_contract, save_note], store=store)


# -- 7. a node that calls a configured tool itself -------------------------------------------
def direct_caller(store):
    """No model, no ToolNode: the node calls the source tool and writes what it found."""

    def research(state: MessagesState, *, store) -> dict:
        page = fetch_page.invoke({"url": "https://acme.example/press"})
        store.put(("notes",), "office", {"text": "Office: " + page.split(" at ", 1)[1]})
        return {"messages": []}

    builder = StateGraph(MessagesState)
    builder.add_node(research)
    builder.add_edge(START, "research")
    return builder.compile(store=store)
