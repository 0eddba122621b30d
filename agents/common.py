"""What the three agent graphs share: the prebuilt ReAct loop, a prompt that knows the date, and
the rule that bad tool input goes back to the model while any other failure ends the run."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import SystemMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolNode, create_react_agent
from langgraph.prebuilt.tool_node import ToolInvocationError
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.warnings import LangGraphDeprecatedSinceV10

from .world import World


def tool_error(e: Exception) -> str:
    """Bad input (a ValueError, or arguments that do not fit the schema) becomes an error message
    for the model; anything else, such as a refusal raised by a wrapper, propagates."""
    if isinstance(e, ToolInvocationError):
        return e.message
    if isinstance(e, ValueError):
        return f"Error: {e}"
    raise e


def extra_tools_text(extra: Sequence[BaseTool]) -> str:
    if not extra:
        return ""
    lines = "\n".join(f"  {t.name}: {' '.join((t.description or '').split())}" for t in extra)
    return ("\n\nYou have also been given these tools; use them where their descriptions say they "
            f"apply:\n{lines}")


def react_agent(model: Any, world: World, tools: Sequence[BaseTool], instructions: str, name: str,
                store: BaseStore | None = None) -> Any:
    """A compiled prebuilt ReAct graph named ``name``; its system prompt ends with the date."""

    def prompt(state: dict) -> list:
        now = world.now
        clock = f"\n\nIt is now {now:%A %H:%M} UTC. Today is {now.date().isoformat()}."
        return [SystemMessage(content=instructions + clock), *state["messages"]]

    node = ToolNode(list(tools), handle_tool_errors=tool_error)
    with warnings.catch_warnings():
        # create_react_agent moved to langchain.agents (not a dependency here); it still works
        warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
        graph = create_react_agent(model, node, prompt=prompt, store=store or InMemoryStore(), name=name)
    # LangChain's create_agent puts the agent's name in run metadata; the prebuilt one does not, so
    # say it here: callbacks then see lc_agent_name on every model and tool run of this graph.
    return graph.with_config({"metadata": {"lc_agent_name": name}})
