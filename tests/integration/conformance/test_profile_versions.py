"""A profile rewritten over three runs, each version built from the one before (issue 29,
finding 2): the store keeps serving the newest version, and run 3's model is shown it.

The program is written the way profile-memory examples are: a node reads the user's profile
from the store and shows it to the model in the system prompt; the model answers with the whole
profile rewritten; a second node puts it back under the same key."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.store.memory import InMemoryStore

from rescind.graph.queries import versions as vq
from rescind.graph.store import TenantGraph, connect
from tests.support import foreign as f
from tests.support.conformance import invoke, retract, settle, statuses, wrap

V1 = "Profile of Dana: lives in York (12 Elm Court)"
V2 = "Profile of Dana: lives in York (12 Elm Court); works at Harbor Lane Bakery"
V3 = "Profile of Dana: lives in York (12 Elm Court); works at Harbor Lane Bakery; likes rowing"


PROMPTS: list[str | None] = []  # the system prompt of every model call, in order


class Seen(f.Scripted):
    """A scripted chat model that keeps the system prompt of every call in PROMPTS."""

    def _generate(self, messages, *args: Any, **kw: Any):
        PROMPTS.append(next((m.content for m in messages if m.type == "system"), None))
        return super()._generate(messages, *args, **kw)


def profile_program(model, store):
    def think(state: MessagesState, config, *, store) -> dict:
        user = config["configurable"]["user_id"]
        item = store.get(("profiles", user), "profile")
        current = item.value["text"] if item is not None else "(none yet)"
        system = f"Keep the user's profile up to date.\nCurrent profile: {current}"
        return {"messages": [model.invoke([{"role": "system", "content": system},
                                           *state["messages"]])]}

    def save(state: MessagesState, config, *, store) -> dict:
        user = config["configurable"]["user_id"]
        store.put(("profiles", user), "profile", {"text": state["messages"][-1].content})
        return {}

    builder = StateGraph(MessagesState)
    builder.add_node("think", think)
    builder.add_node("save", save)
    builder.add_edge(START, "think")
    builder.add_edge("think", "save")
    builder.add_edge("save", END)
    return builder.compile(store=store)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_profile_rewritten_from_itself_stays_served_and_run_3_sees_it(
        mode, rescind_workers, tenant_name):
    """Run 2's profile reuses run 1's facts: v1 is no longer current but stays IN, v2 is IN
    and served, so run 3's model is shown v2 (not "(none yet)"); only the current version is
    served by get and search. Retracting the user's word takes all three OUT, by evidence."""
    PROMPTS.clear()
    model = Seen(messages=iter([AIMessage(V1), AIMessage(V2), AIMessage(V3)]))
    store = InMemoryStore()
    graph = wrap(profile_program(model, store), rescind_workers, tenant_name)
    dana = {"configurable": {"user_id": "dana"}}
    invoke(graph, mode, "Hi, I'm Dana, I live at 12 Elm Court in York", dana)
    settle(rescind_workers, graph)
    invoke(graph, mode, "I started at Harbor Lane Bakery this week", dana)
    settle(rescind_workers, graph)
    invoke(graph, mode, "I took up rowing", dana)
    settle(rescind_workers, graph)

    assert [p.splitlines()[-1] for p in PROMPTS] == [
        "Current profile: (none yet)", f"Current profile: {V1}", f"Current profile: {V2}"]
    assert statuses(rescind_workers, tenant_name) == {V1: "IN", V2: "IN", V3: "IN"}
    g = TenantGraph(connect(rescind_workers), tenant_name)
    texts = dict(g.rows("MATCH (m:Mem) WHERE m.key IS NOT NULL RETURN m.id, m.text"))
    not_current = dict(g.rows(vq.NOT_CURRENT, {"ids": sorted(texts)}))
    assert {texts[m]: why for m, why in not_current.items()} == {V1: "superseded",
                                                                  V2: "superseded"}
    [[current]] = g.rows(vq.CURRENT_OF_KEY, {"key": "profiles/dana/profile"})
    assert texts[current] == V3
    # The wrapped store serves the current version, and only it.
    assert graph.store.get(("profiles", "dana"), "profile").value["text"] == V3
    assert [i.value["text"] for i in graph.store.search(("profiles", "dana"))] == [V3]

    retract(rescind_workers, tenant_name, "user:dana")
    assert statuses(rescind_workers, tenant_name) == {V1: "OUT", V2: "OUT", V3: "OUT"}
    graph.rescind.status.refresh()
    assert graph.store.get(("profiles", "dana"), "profile") is None  # hidden: OUT by evidence
    graph.rescind.close()
