"""What a job of the API is: ``Param``, ``Audit``, ``Job``, ``Call`` and ``perform``, how one is
done. The table of jobs is ``rescind.api.jobs.JOBS``; the HTTP routes (``rescind.api.routes``)
and the MCP tools (``rescind.api.mcp_tools``) are made from its rows.

A ``Job`` names its HTTP method and path (under ``/api/v1``), the permission its caller needs
(``auth.PERMISSIONS``), its path and query parameters (``Param``), its request body (a model of
``rescind.api.models``), its answer (a model of ``rescind.api.answers``, or a list of one), how
its decision is audited (``Audit``; a read is not), the commit of a preview (``commit``), and
``run``: what it does, given the ``Call`` (who, which tenant, the arguments, the body), mostly
one function of ``rescind.api.ops``. A tool takes the path and query parameters and the body's
fields as its arguments. See docs/architecture.md, "How to add a tenant job".
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from fastapi import Response
from pydantic import BaseModel

from rescind.api.auth import Principal
from rescind.api.models import MAX_REV
from rescind.api.state import Api
from rescind.contract import text as tx
from rescind.contract.kinds import AnyKind, StatusName

REQUIRED = inspect.Parameter.empty
T = "/tenants/{tenant}"


@dataclass(frozen=True)
class Param:
    """A path or query parameter: its type, default, limits (``ge``, ``le``, ``pattern``) and
    description; ``tool`` renames it for the MCP tool (``rid`` is a tool's ``retraction``)."""

    name: str
    type: Any
    default: Any = REQUIRED
    description: str | None = None
    where: Literal["path", "query"] = "query"
    limits: dict[str, Any] = field(default_factory=dict)
    tool: str | None = None

    @property
    def tool_name(self) -> str:
        return self.tool or self.name


@dataclass(frozen=True)
class Audit:
    """How a decision is audited: its action, its target, what its entry keeps of the answer
    (``detail``), its outcome (default ok), and the log it goes in (default the tenant's)."""

    action: str
    target: Callable[[Call], str | None]
    summary: Callable[[Call, Any], Any] | None = None
    outcome: Callable[[Any], str] | None = None
    scope: Callable[[Call], str | None] | None = None


@dataclass(frozen=True)
class Job:
    """One job of the API: a route and (unless ``tool`` is False) an MCP tool of the same
    name. ``http`` False: a tool only (it names the route whose job it does)."""

    name: str
    method: str
    path: str
    permission: str
    answer: Any
    run: Callable[[Call], Any]
    summary: str
    doc: str = ""
    tag: str = "read"
    params: tuple[Param, ...] = ()
    body: type[BaseModel] | None = None
    body_optional: bool = False
    audit: Audit | None = None
    commit: str | None = None  # a preview's: the job that commits it at the preview's rev
    status: int = 200
    files: dict[str, str] | None = None  # a file over HTTP: media types; the tool answers JSON
    responses: dict[int, Any] | None = None
    tool: bool = True
    http: bool = True
    tool_omits: tuple[str, ...] = ()  # answer fields an assistant does not get

    @property
    def route(self) -> str:
        """The HTTP route, as the MCP tool names it (``rescind/route``)."""
        return f"{self.method} /api/v1{self.path}"

    @property
    def tenant(self) -> bool:
        return self.path.startswith(T)


@dataclass
class Call:
    """One call of a job: who calls (allowed its permission), on which tenant (the path's, or
    the token's over MCP), through which surface (the audit's ``via``), with which arguments
    (by their HTTP names) and body; ``response`` over HTTP, for headers."""

    job: Job
    me: Principal
    api: Api
    tenant: str | None
    via: str
    args: dict[str, Any]
    body: Any = None
    response: Response | None = None

    def __getitem__(self, name: str) -> Any:
        return self.args[name]

    @property
    def graph(self):
        return self.api.graph(self.tenant)

    def cap(self, limit: int) -> int:
        return min(limit, self.api.settings.api_max_list)


def perform(c: Call) -> Any:
    """Do the job: run it, audited when it decides. A body that used a deprecated name is
    answered with a Deprecation header (RFC 9745) over HTTP."""
    if c.response is not None and getattr(c.body, "deprecated_names", None):
        c.response.headers["Deprecation"] = "true"
    job, audit = c.job, c.job.audit
    if audit is None:
        return job.run(c)
    summary = (lambda r: audit.summary(c, r)) if audit.summary else None
    return c.api.audited(c.me, audit.scope(c) if audit.scope else c.tenant, audit.action,
                         audit.target(c), lambda: job.run(c), summary, via=c.via,
                         outcome=audit.outcome)


# -- the parameters many jobs take, a page of the audit log, a preview and its commit -------
ID = tx.line(200, min_length=1)  # NUL, control characters: 422 (rescind.contract.text)
MEMORY = Param("memory", ID, where="path", description="A memory id, or the name its writer "
               "gave it (e.g. a payment's name)")
RID = Param("rid", ID, where="path", tool="retraction",
            description="A retraction, withdrawal or correction id")
LIMIT = Param("limit", int, 100, "Page size (capped by the server's limit)",
              limits={"ge": 1, "le": 1000})
SKIP = Param("skip", int, 0, "How many to skip (paging)", limits={"ge": 0, "le": 10**9})
KIND = Param("kind", AnyKind | None, None, "Only memories of this kind")
STATUS = Param("status", StatusName | None, None, "Only memories IN, or OUT")
AT = Param("at", tx.line(64) | None, None, "A time, ISO 8601 with zone (give `at` or `rev`)")
REV = Param("rev", int | None, None, "A graph revision (give `at` or `rev`)",
            limits={"ge": 0, "le": MAX_REV})
BEFORE = Param("before", str | None, None, "The next page: the entries older than this entry "
               "id (the X-Next-Before header of the page before; over MCP, the last entry's "
               "id)", limits={"pattern": r"^[0-9]{1,20}-[0-9]{1,20}$"})
TOKEN_ID = Param("token_id", str, where="path", limits={"pattern": r"^[0-9a-f]{16}$"})


PAGING = {200: {"headers": {
    "X-Total-Count": {"description": "Entries in the log, live and archived",
                      "schema": {"type": "integer"}},
    "X-Next-Before": {"description": "The `before` of the next page (absent on the last page)",
                      "schema": {"type": "string"}}}}}


def audit_page(c: Call, scope: str | None) -> list[dict]:
    """One page of a scope's log, newest first; over HTTP the total and the next page's cursor
    in the headers (the body stays the list of entries)."""
    size = c.cap(c["limit"])
    page = c.api.audit.entries(scope, size + 1, c["before"])  # one more: is there a next page?
    if c.response is not None:
        c.response.headers["X-Total-Count"] = str(c.api.audit.total(scope))
        if len(page) > size:
            c.response.headers["X-Next-Before"] = page[size - 1]["id"]
    return page[:size]


def decision(preview: str, commit: str, path: str, actions: tuple[str, str], body: type,
             commit_body: type, target: Callable[[Call], str | None],
             runs: tuple[Callable[[Call], Any], Callable[[Call], Any]],
             summaries: tuple[str, str], docs: tuple[str, str], params: tuple = (),
             body_optional: bool = False, *, answer: Any, summary: Callable) -> tuple[Job, Job]:
    """A preview and its commit (security's): the same body with ``rev``, audited alike (what
    the entry keeps: ``summary``), answering ``answer``, without the console's drawing (its
    ``graph``) for an assistant."""
    common = {"method": "POST", "permission": "decide", "answer": answer,
              "tag": "security", "params": params, "tool_omits": ("graph",)}
    return (Job(preview, path=f"{path}/preview", body=body, body_optional=body_optional,
                audit=Audit(actions[0], target, summary), run=runs[0], summary=summaries[0],
                doc=docs[0], commit=commit, **common),
            Job(commit, path=path, body=commit_body, audit=Audit(actions[1], target, summary),
                run=runs[1], summary=summaries[1], doc=docs[1], **common))


__all__ = ["AT", "BEFORE", "ID", "KIND", "LIMIT", "MEMORY", "PAGING", "REQUIRED", "REV", "RID",
           "SKIP", "STATUS", "T", "TOKEN_ID", "Audit", "Call", "Job", "Param", "audit_page",
           "decision", "perform"]
