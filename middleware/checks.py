"""What `instrument` says about a configuration that cannot record what it claims to.

A tool named in the configuration that the graph does not hold, or a template that names an
argument its tool does not take, records nothing (or a literal ``{vendor}``), silently. These
checks run when the graph is wrapped: each problem is a warning, or an error in strict mode.
"""

from __future__ import annotations

import contextlib
import logging
import string
import warnings
from typing import Any

from .config import InterceptConfig, UserSource, fields

log = logging.getLogger("rescind.middleware")


class ConfigWarning(UserWarning):
    """The configuration names something the wrapped graph cannot give it."""


def problems(graph: Any, config: InterceptConfig, whole_system: bool = True) -> list[str]:
    """Every problem found, as a sentence naming the tool and the fix; [] when none is.

    Tools are found in the graph's tool nodes (as prebuilt agents and ``ToolNode`` hold them);
    a graph that calls tools only from its own nodes exposes none: its sources are not judged,
    and each action tool is named (an action run as a plain function is never gated). When the
    graph is one of several sharing the configuration (``whole_system`` False), a tool it does
    not hold may be another graph's: only the tools it holds are checked."""
    tools = graph_tools(graph)
    if not tools:  # its nodes call tools themselves: only a LangChain tool call is seen
        return [f"action tool {name!r} is in no ToolNode of the graph: a node that calls it "
                f"as a LangChain tool ({name}.invoke(...)) is gated and recorded, but a plain "
                "function call inside a node is NEITHER gated NOR recorded"
                for name in config.actions]
    found = []
    for kind, specs in (("source", config.sources), ("action", config.actions)):
        for name, spec in specs.items():
            tool = tools.get(name)
            if tool is None:
                if not whole_system:
                    continue
                found.append(f"{kind} tool {name!r} is not in the graph (its tools: "
                             f"{', '.join(sorted(tools))}); nothing will be recorded for it")
                continue
            args = _arguments(tool)
            for field, template in _templates(spec, run_keys=set(config.run_keys)):
                missing = sorted(_fields(template) - args)
                if missing and args:
                    found.append(f"{kind} tool {name!r}: {field} {template!r} names "
                                 f"{', '.join(missing)}, which the tool does not take (its "
                                 f"arguments: {', '.join(sorted(args))})")
    return found


def anonymous_users(users: UserSource, values: dict, running: int) -> bool:
    """The user's source was filled with nothing of the run's (``user:anonymous``): with
    several runs at once (``running``), a loud warning naming what to set, since every
    user's word is then one source (retracting one person's takes out everyone's memories).
    True once warned (the caller warns once); False when alone (nothing said yet)."""
    if running < 2:
        return False
    needed = sorted(fields(users.source) - set(values)) or ["user_id"]
    names = ", ".join(needed)
    sample = ", ".join(f'"{n}": ...' for n in needed)
    problem = (f"users.source {users.source!r} needs {names}, which neither the run's "
               f"configurable nor its runtime context holds: the messages of several runs "
               f"at once are all recorded as one source, user:anonymous, and retracting one "
               f"person's word would take out every user's memories. Pass {names} with each "
               f"run: graph.invoke(..., {{\"configurable\": {{{sample}}}}}), or "
               f"context={{{sample}}} (a field of the graph's context_schema), or set "
               f"users.source to a template over a value you pass")
    log.warning("%s", problem)
    # warnings made errors: said in the log already, and the recording goes on
    with contextlib.suppress(ConfigWarning):
        warnings.warn(problem, ConfigWarning, stacklevel=2)
    return True


def graph_tools(graph: Any) -> dict[str, Any]:
    """The tools held by the graph's tool nodes (``ToolNode.tools_by_name``), by name."""
    tools: dict[str, Any] = {}
    for node in (getattr(graph, "nodes", None) or {}).values():
        runnable = getattr(node, "bound", node)
        tools.update(getattr(runnable, "tools_by_name", None) or {})
    return tools


def _templates(spec: Any, run_keys: set[str] = frozenset()) -> list[tuple[str, str]]:
    """(field, template) pairs to check against the tool's arguments; names of the run's
    config values (``run_keys``) are left out of the templates, as they come from the run."""
    out = []
    for field in ("source", "domain", "id"):
        value = getattr(spec, field, None)
        if isinstance(value, str):
            if _fields(value) & run_keys:
                value = "".join(part for part in _literal_parts(value, run_keys))
            out.append((field, value))
    for field in ("amount", "currency", "payee", "account"):  # plain argument names
        value = getattr(spec, field, None)
        if isinstance(value, str):
            out.append((field, "{" + value + "}"))
    return out


def _literal_parts(template: str, skip: set[str]):
    """The template without the replacement fields named in ``skip``."""
    for literal, name, spec, conv in string.Formatter().parse(template):
        yield literal
        if name and name.split(".")[0].split("[")[0] not in skip:
            yield "{" + name + (f"!{conv}" if conv else "") + (f":{spec}" if spec else "") + "}"


def _fields(template: str) -> set[str]:
    try:
        return {f.split(".")[0].split("[")[0] for _, f, _, _ in string.Formatter().parse(template)
                if f}
    except ValueError:
        return set()


def _arguments(tool: Any) -> set[str]:
    try:
        return set(getattr(tool, "args", None) or {})
    except Exception:  # a tool whose schema cannot be read is not judged
        return set()
