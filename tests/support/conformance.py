"""What the conformance suite reads back: every memory an agent wrote, with its status and
the exact premises of each of its justifications, in labels a person can read."""

from __future__ import annotations

import asyncio
import uuid
from typing import Annotated, Any

from langchain_core.tools import BaseTool, tool
from langgraph.config import get_config
from langgraph.prebuilt import InjectedStore, create_react_agent
from langgraph.store.memory import InMemoryStore

from rescind.contract import layout
from rescind.graph.store import TenantGraph, connect
from rescind.middleware import InterceptConfig, SourceTool, instrument
from rescind.operator import decisions
from rescind.scenario.via_streams import wait_idle
from rescind.transport import connection

_WHY = """
MATCH (m:Mem)-[st:STATUS]->() WHERE m.kind <> 'observation'
OPTIONAL MATCH (p:Mem)-[:PREMISE_OF]->(j:Justification)-[:JUSTIFIES]->(m)
OPTIONAL MATCH (s:Source)-[:SAID]->(p)
RETURN m.text, st.status, st.cause, j.id, p.text, s.id
"""
_GROUNDED = "MATCH (s:Source)-[:SAID]->(m:Mem) WHERE m.kind <> 'observation' RETURN m.text, s.id"


def wrap(graph: Any, url: str, tenant: str, **config: Any) -> Any:
    return instrument(graph, InterceptConfig(tenant=tenant, url=url, **config))


def invoke(graph: Any, mode: str, text: str, config: dict | None = None,
           stream: bool = False) -> None:
    """One top-level invocation, sync or async, plain or streamed (with subgraphs)."""
    inputs = {"messages": [{"role": "user", "content": text}]}
    if mode == "sync":
        if stream:
            for _ in graph.stream(inputs, config, subgraphs=True):
                pass
        else:
            graph.invoke(inputs, config)
        return

    async def run() -> None:
        if stream:
            async for _ in graph.astream(inputs, config, subgraphs=True):
                pass
        else:
            await graph.ainvoke(inputs, config)

    asyncio.run(run())


def settle(url: str, graph: Any) -> None:
    graph.rescind.publisher.flush()
    wait_idle(connection.connect(url), layout.tenant_stream(graph.rescind.tenant))


def record(url: str, tenant: str) -> dict[str, tuple[str, set[frozenset[str]]]]:
    """text of each memory -> (status, {justification: its premises}); a premise is named by
    the source that said it ("portal:acme") or, for a memory, by its text; a grounding of the
    memory itself is the set {"said by <source>"}."""
    g = TenantGraph(connect(url), tenant)
    out: dict[str, tuple[str, dict[str, set[str]]]] = {}
    for text, status, _cause, jid, ptext, source in g.rows(_WHY):
        _, by_j = out.setdefault(text, (status, {}))
        if jid is not None:
            by_j.setdefault(jid, set()).add(source or ptext)
    for text, source in g.rows(_GROUNDED):
        out[text][1][f"grounding {source}"] = {f"said by {source}"}
    return {t: (st, {frozenset(p) for p in js.values()}) for t, (st, js) in out.items()}


def statuses(url: str, tenant: str) -> dict[str, str]:
    return {t: st for t, (st, _) in record(url, tenant).items()}


def causes(url: str, tenant: str) -> dict[str, str | None]:
    g = TenantGraph(connect(url), tenant)
    return {t: c for t, _, c, *_ in g.rows(_WHY)}


def retract(url: str, tenant: str, source: str) -> str:
    g = TenantGraph(connect(url), tenant)
    done = decisions.compromise(g, source, None, None, "compromised in a test", "security",
                                commit=True)
    return done["retraction"]


def reinstate(url: str, tenant: str, rid: str) -> None:
    decisions.reinstate(TenantGraph(connect(url), tenant), rid, "security", commit=True)


def retract_and_reinstate(url: str, tenant: str, source: str, after: dict[str, str],
                          back: dict[str, str]) -> None:
    """Retract ``source``: the statuses are ``after``; reinstate it: they are ``back``."""
    rid = retract(url, tenant, source)
    assert statuses(url, tenant) == after
    reinstate(url, tenant, rid)
    assert statuses(url, tenant) == back


@tool
def save_note(text: str, store: Annotated[Any, InjectedStore()]) -> str:
    """Save a note on the user's file."""
    user = get_config()["configurable"]["user_id"]
    store.put(("notes", user), uuid.uuid5(uuid.NAMESPACE_URL, text).hex, {"text": text})
    return "saved"


def check_each(url: str, tenant: str, truth: dict, out_when: dict[str, set[str]]) -> None:
    """The record is ``truth`` (all IN); retracting each source alone takes exactly
    ``out_when[source]`` OUT, and reinstating it brings them back."""
    assert record(url, tenant) == {t: ("IN", js) for t, js in truth.items()}
    ins = {t: "IN" for t in truth}
    for source, out in out_when.items():
        retract_and_reinstate(url, tenant, source,
                              after={t: "OUT" if t in out else "IN" for t in truth}, back=ins)


def read_then_note(url: str, tenant: str, model: Any, source_tool: BaseTool, source: str,
                   message: str, user: str) -> None:
    """A prebuilt ReAct agent with one source tool (named ``source``, a template over its
    arguments) and ``save_note``, asked ``message`` by ``user``, played by ``model``; settled."""
    graph = wrap(create_react_agent(model, [source_tool, save_note], store=InMemoryStore()),
                 url, tenant, sources={source_tool.name: SourceTool(source=source)})
    graph.invoke({"messages": [{"role": "user", "content": message}]},
                 {"configurable": {"user_id": user}})
    settle(url, graph)
    graph.rescind.close()
