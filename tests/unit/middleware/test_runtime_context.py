"""Who the user is, the LangGraph 1.x way: the run's runtime context (``context=``, read by
nodes through ``Runtime``) fills templates as the run's ``configurable`` does; with nothing
to fill the user's source and several runs at once, a loud warning names what to set."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TypedDict

import pytest
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel

from rescind.middleware import ConfigWarning, UserSource
from rescind.middleware.checks import anonymous_users
from rescind.middleware.config import configurable, fill, plain_values


@dataclass
class AsData:
    user_id: str
    seat: int = 12
    vip: bool = True
    tags: tuple = ("a",)


@dataclass(slots=True)
class AsSlots:
    user_id: str


class AsModel(BaseModel):
    user_id: str
    _secret: str = "hidden"


class AsTyped(TypedDict):
    user_id: str


class _Runtime:
    def __init__(self, context: object) -> None:
        self.context = context


@pytest.mark.parametrize("context", [AsData("ana"), AsSlots("ana"), AsModel(user_id="ana"),
                                     AsTyped(user_id="ana"), {"user_id": "ana"}])
def test_a_runtime_context_s_fields_are_the_run_s_values(context: object) -> None:
    """A context given as a dataclass (slots or not), a pydantic model or a dict gives its
    text and number fields to the run's values, beside the configurable's own."""
    values = plain_values({"thread_id": "t-1", "__pregel_runtime": _Runtime(context)})
    assert values["user_id"] == "ana" and values["thread_id"] == "t-1"
    assert fill("user:{user_id}", values) == "user:ana"


def test_only_plain_public_fields_of_a_context_are_values() -> None:
    """Numbers and texts count; booleans, tuples, None and private fields do not."""
    values = plain_values({"__pregel_runtime": _Runtime(AsData("ana"))})
    assert values == {"user_id": "ana", "seat": 12}
    assert plain_values({"__pregel_runtime": _Runtime(AsModel(user_id="bo"))}) == \
        {"user_id": "bo"}


def test_a_configurable_value_wins_over_a_context_field_of_the_same_name() -> None:
    """Both are set by the operator's code; the configurable, named explicitly per call,
    wins; private configurable keys are never values."""
    values = plain_values({"user_id": "from-config", "__pregel_secret": "x",
                           "__pregel_runtime": _Runtime({"user_id": "from-context"})})
    assert values == {"user_id": "from-config"}


def test_no_runtime_or_no_context_adds_nothing() -> None:
    """A run with no runtime, or a runtime without a context, has its configurable only."""
    assert plain_values({"user_id": "u"}) == {"user_id": "u"}
    assert plain_values({"user_id": "u", "__pregel_runtime": _Runtime(None)}) == {"user_id": "u"}


def test_configurable_reads_the_runtime_context_inside_a_real_graph() -> None:
    """In a node of a graph invoked with ``context=`` (LangGraph 1.x), ``configurable()``
    holds the context's user id; outside a run it is empty."""
    seen: list[dict] = []

    def node(state: MessagesState, runtime: Runtime[AsData]) -> dict:
        seen.append(configurable())
        return {}

    builder = StateGraph(MessagesState, context_schema=AsData)
    builder.add_node("n", node)
    builder.add_edge(START, "n")
    builder.add_edge("n", END)
    graph = builder.compile()
    graph.invoke({"messages": []}, {"configurable": {"thread_id": "t"}}, context=AsData("cy"))
    graph.invoke({"messages": []}, context={"user_id": "di"})  # a dict, made the dataclass
    assert [v.get("user_id") for v in seen] == ["cy", "di"]
    assert seen[0]["thread_id"] == "t" and seen[0]["seat"] == 12
    assert configurable() == {}


def test_no_user_value_with_several_runs_at_once_is_warned_of() -> None:
    """``users.source`` left unfilled while three runs are at once: a ConfigWarning naming the
    missing key, the configurable and the context as where to set it, and the consequence."""
    with pytest.warns(ConfigWarning) as caught:
        assert anonymous_users(UserSource(), {"thread_id": "t"}, running=3) is True
    said = str(caught[0].message)
    assert "user_id" in said and '"configurable"' in said and "context=" in said
    assert "user:anonymous" in said and "every user" in said


def test_a_custom_user_template_names_its_own_missing_key() -> None:
    """The warning names what the operator's template needs (``account``), not ``user_id``."""
    with pytest.warns(ConfigWarning, match="account"):
        anonymous_users(UserSource(source="user:{account}"), {"user_id": "x"}, running=2)


def test_one_run_alone_is_not_warned_of() -> None:
    """With one run only, nothing is folded together: no warning, and False (warn later)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert anonymous_users(UserSource(), {}, running=1) is False
