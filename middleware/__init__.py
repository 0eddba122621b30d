"""Rescind's interception layer: wrap a compiled LangGraph graph from outside.

    graph = instrument(compiled_graph, InterceptConfig.load("rescind.toml"))

The agent code is untouched: its store is replaced by a recording, filtering delegate, and its
runs get a callback handler that sees model inputs and tool calls.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from datetime import datetime
from typing import Any

from langchain_core.runnables.config import merge_configs

from rescind.contract.errors import Invalid

from . import checks
from .callbacks import RescindCallbacks
from .checks import ConfigWarning
from .config import ActionTool, InterceptConfig, SourceTool, UserSource
from .gate import GateRefused
from .recorder import Recorder
from .store import RecordingStore


def instrument(graph: Any, config: InterceptConfig, recorder: Recorder | None = None,
               clock: Callable[[], datetime] | None = None,
               tracer_provider: Any = None) -> Any:
    """Make ``graph`` record into Rescind, in place, and return it; ``.rescind`` is the
    recorder (close it at exit).

    In place, so that the object the agent code already holds records too: its store becomes a
    recording delegate and its own config carries the callback handler (merged with any
    callbacks a call passes). A graph instrumented twice is refused. ``clock`` stamps the
    events (default: the wall clock); several graphs of one system share one ``recorder`` so
    that they share its connections and per-run contexts. ``tracer_provider`` exports the
    agent side's spans (one trace per run; default: the process's OpenTelemetry provider)."""
    from langgraph.store.memory import InMemoryStore

    # Before anything connects; a shared recorder means several graphs share the configuration.
    for problem in checks.problems(graph, config, whole_system=recorder is None):
        if config.strict:
            raise Invalid(problem)
        warnings.warn(problem, ConfigWarning, stacklevel=2)
    if isinstance(getattr(graph, "store", None), RecordingStore):
        raise Invalid("this graph is instrumented already (instrument changes it in place: use "
                      "the graph itself)")
    if recorder is None:
        extra = {"clock": clock} if clock else {}
        recorder = Recorder(config, tracer_provider=tracer_provider, **extra)
    graph.store = RecordingStore(graph.store or InMemoryStore(), recorder)
    graph.config = merge_configs(graph.config, {"callbacks": [RescindCallbacks(recorder)]})
    graph.rescind = recorder
    return graph


__all__ = ["ActionTool", "ConfigWarning", "GateRefused", "InterceptConfig", "Recorder", "RecordingStore",
           "RescindCallbacks", "SourceTool", "UserSource", "instrument"]
