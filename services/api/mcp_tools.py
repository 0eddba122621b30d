"""The MCP tools and resources: what each is, once ``rescind.api.mcp`` has checked that the
caller may (see there). Each tool is a job of ``rescind.api.jobs.JOBS`` (the same as its API
route's): it names that route and the permission it needs; its arguments are the route's path
and query parameters and its body's fields (``signature``)."""

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field

from rescind.api import ops
from rescind.api.auth import Principal
from rescind.api.jobs import JOBS, Job
from rescind.api.state import Api
from rescind.graph.store import TenantGraph

SCHEME = "rescind"  # resources: rescind://{tenant}/…
_KW = inspect.Parameter.KEYWORD_ONLY


@dataclass(frozen=True)
class Caller:
    """Who calls a tool (a token allowed the tool's permission), the tenant graph it acts on,
    and the transport it came through (the audit's ``via``)."""

    me: Principal
    graph: TenantGraph
    via: str
    api: Api


def tools() -> list[Job]:
    """The jobs an assistant gets: every one of a tenant's token (not the admin's)."""
    return [j for j in JOBS if j.tool]


def signature(job: Job) -> list[inspect.Parameter]:
    """A tool's arguments: the job's path (but the tenant, the token's) and query parameters
    under their tool names, then its body's fields (a field with an alias, like the window's
    ``from``, is given by it)."""
    params = [inspect.Parameter(p.tool_name, _KW, default=p.default, annotation=Annotated[
        p.type, Field(description=p.description, **p.limits)]) for p in job.params]
    for name, f in (job.body.model_fields.items() if job.body is not None else ()):
        params.append(inspect.Parameter(
            name, _KW, default=inspect.Parameter.empty if f.is_required() else f.default,
            annotation=Annotated[(f.annotation, *f.metadata, Field(
                description=f.description, alias=f.alias,
                json_schema_extra=f.json_schema_extra))]))
    return params


def arguments(job: Job, given: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """A tool call's arguments as the job takes them: its parameters by their HTTP names, and
    its body (validated: a ValidationError is the API's 422)."""
    args = {p.name: given.pop(p.tool_name, p.default) for p in job.params}
    if job.body is None:
        return args, None
    data = {}
    for name, f in job.body.model_fields.items():
        for key in (f.alias or name, name):
            if key in given:
                data[f.alias or name] = given.pop(key)
                break
    return args, job.body.model_validate(data)


def register(tool: Callable[[Job], None], resource: Callable) -> None:
    """Define every tool with ``tool(job)`` and every resource with ``resource(uri, name,
    description)``: both check the caller first."""
    for job in tools():
        tool(job)

    @resource(f"{SCHEME}://{{tenant}}/recalls", "recalls", "The tenant's recalls: executed "
              "payments that went OUT, each with its drafted (or approved) bank recall")
    def recalls_resource(c: Caller) -> list[dict]:
        return ops.recalls(c.graph)

    @resource(f"{SCHEME}://{{tenant}}/recalls/{{memory}}", "recall", "One payment's recall "
              "(the payment's id or name, percent-encoded)")
    def recall_resource(c: Caller, memory: str) -> dict:
        return ops.recall(c.graph, memory)

    @resource(f"{SCHEME}://{{tenant}}/payments/held", "held_payments", "The tenant's held "
              "payments: pending payments that rest on something OUT (the gate refuses them)")
    def held_resource(c: Caller) -> list[dict]:
        return [p for p in ops.pending_payments(c.graph) if p["held"]]

    @resource(f"{SCHEME}://{{tenant}}/payments/pending", "pending_payments", "The tenant's "
              "pending payments, each with its fragility and whether it is held")
    def pending_resource(c: Caller) -> list[dict]:
        return ops.pending_payments(c.graph)
