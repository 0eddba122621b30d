"""Wrapping a graph says when the configuration cannot record what it claims: a tool the graph
does not hold, a template naming an argument its tool does not take (strict mode: an error)."""

import contextlib
import warnings

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.prebuilt import create_react_agent

from rescind import ConfigWarning, InterceptConfig, SourceTool, instrument
from rescind.contract.errors import Invalid
from rescind.middleware.checks import problems


@tool
def read_portal(vendor: str) -> str:
    """Read a vendor's portal."""
    return f"{vendor}: account ZZ97 0000"


@tool
def pay(vendor: str, amount: float) -> str:
    """Pay a vendor."""
    return "paid"


class Fake(GenericFakeChatModel):
    def bind_tools(self, tools, **kw):
        return self


def graph():
    with warnings.catch_warnings():  # create_react_agent's own deprecation notice is not ours
        warnings.simplefilter("ignore")
        return create_react_agent(Fake(messages=iter([AIMessage(content="ok")])), [read_portal, pay])


def config(**kw) -> InterceptConfig:
    base = {"tenant": "t", "url": "redis://127.0.0.1:1",
            "sources": {"read_portal": SourceTool(source="portal:{vendor}")},
            "actions": {"pay": {"amount": "amount", "payee": "vendor"}}}
    return InterceptConfig.model_validate({**base, **kw})


def test_a_configuration_that_matches_the_graph_has_no_problem():
    """The tools exist and every template names their arguments: nothing to say."""
    assert problems(graph(), config()) == []


def test_a_tool_not_in_the_graph_and_a_template_with_a_wrong_argument_are_named():
    """Each problem names the tool, what is wrong, and what the graph offers instead."""
    found = problems(graph(), config(
        sources={"read_portal": SourceTool(source="crm:{customer}"),
                 "read_contract": SourceTool(source="contract:{vendor}")},
        actions={"pay": {"amount": "sum", "payee": "vendor"}}))
    assert len(found) == 3
    assert any("'read_contract' is not in the graph" in p and "read_portal" in p for p in found)
    assert any("'crm:{customer}' names customer" in p and "vendor" in p for p in found)
    assert any("amount '{sum}' names sum" in p for p in found)


def test_a_template_may_name_the_run_s_config_values_listed_in_run_keys():
    """``crm:{user_id}``: the value comes from the run's config, not the tool: no problem; a
    name that is neither an argument nor a run key still is, and run_keys can add names."""
    tools = {"read_portal": SourceTool(source="crm:{user_id}/{vendor}", domain="crm:{tenant}",
                                      vouched=["tenant"])}
    assert [p for p in problems(graph(), config(sources=tools))] == [
        "source tool 'read_portal': domain 'crm:{tenant}' names tenant, which the tool does not "
        "take (its arguments: vendor)"]
    assert problems(graph(), config(sources=tools, run_keys=["user_id", "tenant"])) == []


def test_instrument_warns_and_strict_mode_refuses_before_connecting():
    """By default a warning per problem; with strict = true, an Invalid error raised before
    any connection is tried (the URL here points at nothing)."""
    bad = {"sources": {"read_contract": SourceTool(source="contract:{vendor}")}}
    with pytest.raises(Invalid, match="not in the graph"):
        instrument(graph(), config(strict=True, **bad))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with contextlib.suppress(Exception):  # nothing listens at the URL: the warning is first
            instrument(graph(), config(**bad))
    assert [str(w.message) for w in seen if w.category is ConfigWarning][0].startswith(
        "source tool 'read_contract' is not in the graph")


def test_graphs_sharing_a_configuration_are_judged_on_the_tools_they_hold():
    """In a system of several agents (one recorder, one configuration), a tool the graph does
    not hold may be another agent's: not a problem; a wrong template on one it holds still is."""
    shared = config(sources={"read_contract": SourceTool(source="contract:{vendor}"),
                             "read_portal": SourceTool(source="portal:{who}")})
    found = problems(graph(), shared, whole_system=False)
    assert found == [p for p in problems(graph(), shared) if "not in the graph" not in p]
    assert len(found) == 1 and "'portal:{who}' names who" in found[0]


def test_users_false_in_toml_turns_user_messages_off(tmp_path):
    """TOML has no null: ``users = false`` is how a file says the user's messages are not a
    source; left out, they are (``user:{user_id}``)."""
    path = tmp_path / "rescind.toml"
    path.write_text('tenant = "acme"\nusers = false\n')
    assert InterceptConfig.load(path).users is None
    path.write_text('tenant = "acme"\n')
    assert InterceptConfig.load(path).users.source == "user:{user_id}"


def test_an_action_tool_a_graph_without_tool_nodes_may_run_is_named_loudly():
    """Issue 29 ('Also'): a graph whose nodes call tools themselves exposes none; each action
    tool is named in a warning saying a plain function call is neither gated nor recorded."""
    from langgraph.graph import START, MessagesState, StateGraph

    from rescind.middleware import ActionTool

    builder = StateGraph(MessagesState)
    builder.add_node("pay", lambda state: {"messages": []})
    builder.add_edge(START, "pay")
    bare = builder.compile()
    found = problems(bare, InterceptConfig(tenant="t", actions={"pay_invoice": ActionTool()}))
    assert len(found) == 1 and "'pay_invoice'" in found[0] and "NEITHER gated NOR recorded" \
        in found[0]
    assert problems(bare, InterceptConfig(tenant="t")) == []
