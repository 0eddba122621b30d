"""A small LangGraph agent that Rescind wraps from outside: the shop's support desk.

The agent looks an order up, refunds it and leaves a note for the team in its LangGraph store.
Nothing in it knows about Rescind: the last lines of ``main`` wrap it with the configuration in
``rescind.toml`` beside this file, invoke it, wait for the workers to apply what was recorded,
and print why the note was written (what ``rescind explain`` prints).

    rescind up --port 6379                        # FalkorDB and the workers, in another shell
    rescind tenant create shop                    # the tenant it writes to
    python docs/examples/wrap_my_agent.py redis://127.0.0.1:6379

The URL may also come from RESCIND_URL, and the tenant from RESCIND_TENANT (default: the one in
rescind.toml), as for the ``rescind`` command. No network and no API key: the chat model is a
script. With a real model, replace ``scripted_model()`` by e.g. ``init_chat_model(...)``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import redis
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.config import get_config, get_store
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.store.memory import InMemoryStore

from rescind import InterceptConfig, instrument
from rescind.contract import layout

CONFIG = Path(__file__).with_name("rescind.toml")
ORDERS = {"A-1042": "Order A-1042: 2 x walnut desk, total 1,280.00 USD; ships to 12 Elm Road, "
                    "Leeds LS1 4AB; tracking 1Z999AA10123456784"}
REFUNDS: list[tuple[str, float]] = []  # the payment provider, for this example


# -- the agent, as any LangGraph program writes it --------------------------------------------
@tool
def lookup_order(order_id: str) -> str:
    """Look an order up in the shop's order system."""
    return ORDERS.get(order_id, f"No order {order_id}")


@tool
def issue_refund(order_id: str, amount: float) -> str:
    """Refund an order to the card it was paid with."""
    REFUNDS.append((order_id, amount))
    return f"Refunded {amount:.2f} USD on {order_id}"


@tool
def save_note(order_id: str, text: str) -> str:
    """Leave a note on an order for the support team."""
    user_id = get_config()["configurable"]["user_id"]
    get_store().put(("notes", user_id), order_id, {"text": text})
    return "Noted."


TOOLS = [lookup_order, issue_refund, save_note]


def build_agent(model, store):
    llm = model.bind_tools(TOOLS)

    def assistant(state: MessagesState) -> dict:
        system = {"role": "system", "content": "You are the shop's support desk."}
        return {"messages": [llm.invoke([system, *state["messages"]])]}

    builder = StateGraph(MessagesState)
    builder.add_node("assistant", assistant)
    builder.add_node("tools", ToolNode(TOOLS))
    builder.add_edge(START, "assistant")
    builder.add_conditional_edges("assistant", tools_condition)
    builder.add_edge("tools", "assistant")
    return builder.compile(store=store)


class ScriptedModel(GenericFakeChatModel):
    """An offline chat model: it answers with the next message of its script."""

    def bind_tools(self, tools, **kwargs):
        return self


def scripted_model() -> ScriptedModel:
    def call(name: str, **args) -> AIMessage:
        return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])

    return ScriptedModel(messages=iter([
        call("lookup_order", order_id="A-1042"),
        call("issue_refund", order_id="A-1042", amount=1280.0),
        call("save_note", order_id="A-1042", text="A-1042 refunded in full (1,280.00 USD, "
             "tracking 1Z999AA10123456784); the customer is away until 2026-11-24"),
        AIMessage("Your order A-1042 is refunded in full."),
    ]))


# -- wrapping it ---------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", nargs="?", default=os.environ.get("RESCIND_URL"),
                        help="the FalkorDB server (default: RESCIND_URL, else rescind.toml's)")
    parser.add_argument("--tenant", default=os.environ.get("RESCIND_TENANT"),
                        help="default: RESCIND_TENANT, else rescind.toml's")
    args = parser.parse_args(argv)

    config = InterceptConfig.load(CONFIG)
    config.url, config.tenant = args.url or config.url, args.tenant or config.tenant
    try:
        created = redis.Redis.from_url(config.url, socket_connect_timeout=2).hexists(
            layout.TENANTS, config.tenant)
    except redis.ConnectionError:
        sys.exit(f"no FalkorDB at {config.url}: start one with `rescind up --port 6379`, or "
                 "pass its URL")
    if not created:  # the workers would dead-letter what it records
        sys.exit(f"no tenant {config.tenant!r} yet: `rescind tenant create {config.tenant} "
                 f"--url {config.url}`")

    graph = instrument(build_agent(scripted_model(), InMemoryStore()), config)
    graph.invoke({"messages": [{"role": "user", "content": (
        "My order A-1042 arrived damaged. I'm away until 2026-11-24, so please refund it "
        "rather than send a new one.")}]},
        {"configurable": {"user_id": "u-17", "thread_id": "support-1"}})
    graph.rescind.close()  # send what is still buffered

    applied(config)
    explain(config, "notes/u-17/A-1042")  # a store item: its namespace and key
    explain(config, "refund:A-1042")  # an action: the name its `id` template gave it
    return 0


def applied(config: InterceptConfig, timeout: float = 60.0) -> None:
    """Wait until the workers have applied every event sent for the tenant."""
    from rescind.contract.layout import tenant_stream
    from rescind.scenario.via_streams import Quiescence, wait_idle

    try:
        wait_idle(redis.Redis.from_url(config.url), tenant_stream(config.tenant), timeout)
    except Quiescence:
        sys.exit(f"the events were not applied in {timeout:.0f}s: are the workers running "
                 "(`rescind up`, or `rescind worker writer retraction gate --url ...`)?")


def explain(config: InterceptConfig, ref: str) -> None:
    """What `rescind explain REF --url URL --tenant TENANT` prints."""
    from rich.console import Console

    from rescind.graph.store import TenantGraph, connect
    from rescind.operator.decisions import explain as why
    from rescind.views.operator import justification_tree

    graph = TenantGraph(connect(config.url), config.tenant)
    print(f"$ rescind explain {ref} --tenant {config.tenant}")
    justification_tree(why(graph, ref), Console())


if __name__ == "__main__":
    sys.exit(main())
