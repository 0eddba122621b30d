"""A context belongs to one top-level invocation: what one run was handed is never a premise
of what another run writes, with the same thread, or with none (sync and async)."""

import asyncio

from langchain_core.messages import AIMessage

from rescind.contract import events as ev
from rescind.graph.store import TenantGraph, connect
from tests.support.agent import PORTAL, agent, call, note_id, settle

NOTE = "Acme is paid to IBAN GB33 BUKB 2020 1555 5555 55"
OTHER = "The user's favourite colour is blue"


def script() -> list[AIMessage]:
    """Run 1 reads the portal and saves a note from it; run 2 saves an unrelated note."""
    return [call("read_vendor_portal", {"vendor": "acme"}, 1), call("save_note", {"text": NOTE}, 2),
            AIMessage(content="done"),
            call("save_note", {"text": OTHER}, 3), AIMessage(content="done")]


def premises(url: str, tenant: str, text: str) -> list[tuple[str, str]]:
    g = TenantGraph(connect(url), tenant)
    mid = note_id(tenant, text)
    return [tuple(r) for r in g.rows(
        "MATCH (p:Mem)-[:PREMISE_OF]->(j:Justification)-[:JUSTIFIES]->(:Mem {id: $id}) "
        "RETURN p.kind, j.rule", {"id": mid})]


def check(url: str, tenant: str) -> None:
    obs = ev.memory_id(tenant, "observation", PORTAL["acme"])
    g = TenantGraph(connect(url), tenant)
    rows = g.rows("MATCH (p:Mem)-[:PREMISE_OF]->(:Justification)-[:JUSTIFIES]->(m:Mem {id: $id}) "
                  "RETURN p.id", {"id": note_id(tenant, NOTE)})
    assert rows == [[obs]]
    # The second run was handed only the user's message: its note rests on that (the model's
    # turn), never on the portal the first run read.
    assert premises(url, tenant, OTHER) == [("observation", "turn-context")]
    said = g.rows("MATCH (s:Source)-[:SAID]->(o:Mem)-[:PREMISE_OF]->(:Justification)"
                  "-[:JUSTIFIES]->(:Mem {id: $id}) RETURN s.id, s.kind, o.text",
                  {"id": note_id(tenant, OTHER)})
    assert said == [["user:anonymous", "user", "remember my colour"]]


def test_two_invocations_without_a_thread_share_nothing(rescind_workers, tenant_name):
    """No thread_id at all (the default that every user shared before)."""
    wrapped = agent(script(), rescind_workers, tenant_name)
    wrapped.invoke({"messages": [("user", "note acme's account")]})
    wrapped.invoke({"messages": [("user", "remember my colour")]})
    settle(rescind_workers, wrapped)
    check(rescind_workers, tenant_name)
    wrapped.rescind.close()


def test_two_invocations_on_one_thread_share_nothing_async(rescind_workers, tenant_name):
    """The same thread_id, run with ainvoke: each invocation still starts empty."""
    wrapped = agent(script(), rescind_workers, tenant_name)
    config = {"configurable": {"thread_id": "same"}}

    async def both() -> None:
        await wrapped.ainvoke({"messages": [("user", "note acme's account")]}, config)
        await wrapped.ainvoke({"messages": [("user", "remember my colour")]}, config)

    asyncio.run(both())
    settle(rescind_workers, wrapped)
    check(rescind_workers, tenant_name)
    wrapped.rescind.close()
