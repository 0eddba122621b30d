"""Recording is safe under a run's parallel branches (issue 29, finding 1): ``Send`` fan-outs
and functional-API tasks, in threads (sync) and tasks (async), deliver into and write from one
run's context at once; the agent never sees an error from Rescind.

The count of invocations per test is ``RESCIND_STRESS_INVOCATIONS``: 250 by default (1,000
in all, with 6 branches each), so that the suite stays short; the issue's bar, 10,000
invocations, is run by setting it to 2,500 (see the commit that added this file for a run)."""

from __future__ import annotations

import asyncio
import operator
import os
from typing import Annotated, TypedDict

import pytest
from langchain_core.tools import tool
from langgraph.config import get_store
from langgraph.func import entrypoint, task
from langgraph.graph import END, START, StateGraph
from langgraph.store.memory import InMemoryStore
from langgraph.types import Send

from rescind.contract import layout
from rescind.graph.store import TenantGraph, connect
from rescind.middleware import InterceptConfig, SourceTool, instrument
from rescind.scenario.via_streams import wait_idle
from rescind.transport import connection

N = int(os.environ.get("RESCIND_STRESS_INVOCATIONS", "250"))
BRANCHES = 6
SOURCES = {"lookup": SourceTool(source="ledger:{account}", kind="ledger")}


@tool
def lookup(account: str) -> str:
    """Look an account up in the ledger."""
    return (f"Account {account}: balance 1,{account[-3:]}.50 EUR; holder Ada Lovelace; "
            f"opened 2019-0{len(account) % 9 + 1}-14 at 09:30; branch Leeds Central")


class Fan(TypedDict):
    accounts: list[str]
    seen: Annotated[list[str], operator.add]


class Branch(TypedDict):
    account: str


def send_graph(store):
    """Map-reduce as LangGraph's Send examples write it: one branch per account, each looks
    its account up, reads what earlier branches noted, and notes its own."""

    def fan_out(state: Fan) -> list[Send]:
        return [Send("note_account", {"account": a}) for a in state["accounts"]]

    def note_account(state: Branch, *, store) -> dict:
        found = lookup.invoke({"account": state["account"]})
        store.search(("notes",), limit=5)
        store.put(("notes",), state["account"], {"text": f"Checked: {found}"})
        return {"seen": [state["account"]]}

    builder = StateGraph(Fan)
    builder.add_node("note_account", note_account)
    builder.add_conditional_edges(START, fan_out, ["note_account"])
    builder.add_edge("note_account", END)
    return builder.compile(store=store)


def task_graph(store):
    """The functional API: parallel tasks started together, each writing through the store."""

    @task
    def check(account: str) -> str:
        found = lookup.invoke({"account": account})
        notes = get_store()  # the graph's store, as the functional API's examples reach it
        notes.search(("notes",), limit=5)
        notes.put(("notes",), account, {"text": f"Checked: {found}"})
        return account

    @entrypoint(store=store)
    def workflow(accounts: list[str]) -> list[str]:
        return [f.result() for f in [check(a) for a in accounts]]

    return workflow


def async_task_graph(store):
    """The same with async tasks, awaited together (a sync entrypoint under ``ainvoke`` blocks
    executor threads on its tasks' results: LangGraph's own deadlock at twenty runs at once)."""

    @task
    async def check(account: str) -> str:
        found = await lookup.ainvoke({"account": account})
        notes = get_store()
        await notes.asearch(("notes",), limit=5)
        await notes.aput(("notes",), account, {"text": f"Checked: {found}"})
        return account

    @entrypoint(store=store)
    async def workflow(accounts: list[str]) -> list[str]:
        return list(await asyncio.gather(*[check(a) for a in accounts]))

    return workflow


def _accounts(i: int) -> list[str]:
    return [f"AC{i % 50:03d}{b}{i % 7}77" for b in range(BRANCHES)]


def _wrap(graph, url: str, tenant: str):
    return instrument(graph, InterceptConfig(tenant=tenant, url=url, sources=SOURCES))


def _run(graph, mode: str, inputs_of) -> list[BaseException]:
    """N invocations; the errors they raised (none expected)."""
    errors: list[BaseException] = []
    if mode == "sync":
        for i in range(N):
            try:
                graph.invoke(inputs_of(i))
            except Exception as exc:  # noqa: BLE001 - counted, the assertion names them
                errors.append(exc)
        return errors

    async def one(i: int) -> None:
        try:
            await graph.ainvoke(inputs_of(i))
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    async def all_of() -> None:
        for start in range(0, N, 20):  # twenty runs at once, each with its branches
            await asyncio.gather(*(one(i) for i in range(start, min(N, start + 20))))

    asyncio.run(all_of())
    return errors


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("shape", ["send", "tasks"])
def test_parallel_branches_of_many_runs_record_without_an_error(shape, mode, rescind_workers,
                                                                 tenant_name):
    """N invocations of six parallel branches each (Send, or functional-API tasks; threads or
    asyncio tasks), every branch delivering a tool result and store items while the others
    write: no invocation raises, no recording step fails on the recorder's thread, and every
    note is recorded, resting on its own lookup."""
    store = InMemoryStore()
    if shape == "send":
        graph = _wrap(send_graph(store), rescind_workers, tenant_name)
        errors = _run(graph, mode, lambda i: {"accounts": _accounts(i), "seen": []})
    else:
        build = task_graph if mode == "sync" else async_task_graph
        graph = _wrap(build(store), rescind_workers, tenant_name)
        errors = _run(graph, mode, _accounts)
    assert [repr(e) for e in errors[:3]] == [] and len(errors) == 0
    assert graph.rescind.publisher.flush(max(30.0, N * 0.1))  # a large N drains longer
    assert graph.rescind.failed == 0
    wait_idle(connection.connect(rescind_workers), layout.tenant_stream(tenant_name),
              timeout=max(60.0, N * 0.2))
    g = TenantGraph(connect(rescind_workers), tenant_name)
    # Each current note rests on the ledger's answer for its own account (matched), and on no
    # other account's answer.
    rows = g.rows("MATCH (s:Source)-[:SAID]->(o:Mem)-[:PREMISE_OF]->(j:Justification)"
                  "-[:JUSTIFIES]->(m:Mem {kind: 'belief'}) RETURN m.key, s.id, j.rule")
    assert rows and all(key.split("/")[1].casefold() == src.split(":")[1].casefold()
                        and rule == "matched" for key, src, rule in rows)
    graph.rescind.close()
