"""What the conformance suite reads back: every memory an agent wrote, with its status and
the exact premises of each of its justifications, in labels a person can read."""

from __future__ import annotations

import asyncio
from typing import Any

from rescind.contract import layout
from rescind.graph.store import TenantGraph, connect
from rescind.middleware import InterceptConfig, instrument
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
