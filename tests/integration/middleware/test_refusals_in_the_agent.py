"""What docs/wrapping.md says of refusals and currencies, with a ToolNode agent as LangGraph's
tutorials write it, wrapped from outside, against the real server and gate worker: with
``handle_tool_errors=True`` a refusal becomes the tool's answer and the agent carries on;
without it the refusal leaves ``graph.invoke``; a payment in another currency is judged with
the workers' RESCIND_GATE_RATES, and refused when its currency has no rate."""

from __future__ import annotations

import itertools

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from rescind.contract.errors import GateRefused
from rescind.core.gate_rule import GatePolicy
from rescind.middleware import InterceptConfig, instrument
from rescind.middleware.config import ActionTool, SourceTool
from rescind.workers.app import WorkerSettings, WorkerThread
from tests.support.agent import ToolCallingFake

REFUNDS: list[tuple[str, float, str]] = []
_ids = itertools.count()


@tool
def lookup_order(order_id: str) -> str:
    """Look an order up in the shop's order system."""
    return f"Order {order_id}: 2 x walnut desk, card ending 4242"


@tool
def issue_refund(order_id: str, amount: float, currency: str) -> str:
    """Refund an order to the card it was paid with."""
    REFUNDS.append((order_id, amount, currency))
    return f"Refunded {amount:.2f} {currency} on {order_id}"


@pytest.fixture(scope="module")
def gate_with_rates(falkordb):
    """The workers, their gate told what a euro is worth in dollars (and nothing else)."""
    settings = WorkerSettings(url=falkordb, worker_id="rates", reaper_idle_ms=2_000,
                              gate=GatePolicy(rates={"EUR": 1.08}))
    with WorkerThread(settings, ("writer", "retraction", "gate", "reaper")):
        yield falkordb


def desk(url: str, tenant: str, refund: dict, handle_tool_errors: bool):
    n = next(_ids)
    script = [AIMessage("", tool_calls=[{"name": "lookup_order", "args": {"order_id": "A-1"},
                                         "id": f"look-{n}"}]),
              AIMessage("", tool_calls=[{"name": "issue_refund", "args": refund,
                                         "id": f"refund-{n}"}]),
              AIMessage("I could not refund it: a person will look at it.")]
    llm = ToolCallingFake(messages=iter(script))

    def assistant(state: MessagesState) -> dict:
        return {"messages": [llm.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("assistant", assistant)
    builder.add_node("tools", ToolNode([lookup_order, issue_refund],
                                       handle_tool_errors=handle_tool_errors))
    builder.add_edge(START, "assistant")
    builder.add_conditional_edges("assistant", tools_condition)
    builder.add_edge("tools", "assistant")
    config = InterceptConfig(
        tenant=tenant, url=url, users=None,
        sources={"lookup_order": SourceTool(source="orders:{order_id}", domain="order-system")},
        actions={"issue_refund": ActionTool(id="refund:{order_id}", amount="amount",
                                            currency="currency")})
    return instrument(builder.compile(), config)


def _run(graph) -> dict:
    try:
        return graph.invoke({"messages": [("user", "refund A-1")]},
                            {"configurable": {"thread_id": f"t-{next(_ids)}"}})
    finally:
        graph.rescind.close()


def test_a_refusal_is_what_the_model_reads_with_handle_tool_errors(gate_with_rates,
                                                                   tenant_name):
    """25,000 USD on one trust domain: with handle_tool_errors=True the run goes on to the
    model's last answer, the refund never ran, and the model read an error ToolMessage naming
    GateRefused and why; without it, the same refusal leaves graph.invoke."""
    REFUNDS.clear()
    big = {"order_id": "A-1", "amount": 25000, "currency": "USD"}
    out = _run(desk(gate_with_rates, tenant_name, big, handle_tool_errors=True))
    [refused] = [m for m in out["messages"] if isinstance(m, ToolMessage)
                 and m.name == "issue_refund"]
    assert refused.status == "error"
    assert refused.content.startswith("Error: GateRefused(")
    assert "blocked" in refused.content and "trust domain" in refused.content
    assert refused.content.endswith("Please fix your mistakes.")
    assert out["messages"][-1].content == "I could not refund it: a person will look at it."
    assert REFUNDS == []
    with pytest.raises(GateRefused, match="blocked"):
        _run(desk(gate_with_rates, tenant_name, {**big, "order_id": "A-2"},
                  handle_tool_errors=False))
    assert REFUNDS == []


def test_another_currency_needs_the_workers_rate(gate_with_rates, tenant_name):
    """500 EUR is judged at the workers' rate (540 USD, under the threshold) and runs; 500 JPY,
    a currency with no rate, is refused saying so, and the agent carries on."""
    REFUNDS.clear()
    _run(desk(gate_with_rates, tenant_name,
              {"order_id": "A-3", "amount": 500, "currency": "EUR"}, handle_tool_errors=True))
    assert REFUNDS == [("A-3", 500, "EUR")]
    out = _run(desk(gate_with_rates, tenant_name,
                    {"order_id": "A-4", "amount": 500, "currency": "JPY"},
                    handle_tool_errors=True))
    [refused] = [m for m in out["messages"] if isinstance(m, ToolMessage)
                 and m.name == "issue_refund"]
    assert refused.status == "error" and "JPY" in refused.content, refused.content
    assert "rate" in refused.content
    assert REFUNDS == [("A-3", 500, "EUR")]
