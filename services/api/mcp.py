"""The MCP server: every job the HTTP API allows a tenant's token, as tools an assistant calls.

It acts with the caller's API token, and so within one tenant and one role, with the API's
permissions (``rescind.api.auth.PERMISSIONS``): a viewer's, a security's or a finance token's
assistant reads (sources, memories and their trees, history, as-of, fragility, payments,
retractions, gate decisions, recalls); only security previews, commits and reinstates
retractions, withdraws and corrects (and reads the audit log); only finance approves, rejects,
annotates and exports recalls; an
agent's token asks the gate and sends events. Every tool lists the route it does the job of and
the permission it needs (``_meta``: ``rescind/route``, ``rescind/permission``). The recalls and
the held and pending payments of the caller's tenant are also resources
(``rescind://{tenant}/recalls``, ``…/recalls/{memory}``, ``…/payments/held``,
``…/payments/pending``). This module checks who calls and serves them; each tool is a job of
``rescind.api.jobs`` (its route's), made a tool in ``rescind.api.mcp_tools``, like the resources.

Over stdio the token is checked when the server starts (``stdio_server``): an unknown, revoked
or admin's token stops it there, with what to do, before any client connects. It is checked again
on every call (a revoked token stops working at once); decisions and
refusals are written to the tenant's audit log (``via: mcp``, or ``mcp-http``; refusals counted
per principal, tool and minute), and decisions are published on the status stream like the
API's. Two transports:

- stdio, one token for the process: ``rescind api mcp --token …`` (or ``python -m
  rescind.api.mcp`` with RESCIND_URL and RESCIND_TOKEN);
- streamable HTTP, each request with its own ``Authorization: Bearer`` token (the API's tokens):
  ``rescind api mcp --http`` (``rescind.api.mcp_http``). A request without a known token is answered 401, and
  an admin's token 403 (the tools act on one tenant), before any MCP message is read; each such
  refusal is audited in the server's log. A session belongs to the token that opened it.

Answers are typed, with the models the routes answer (``rescind.api.answers``): each tool
publishes an ``outputSchema`` and answers ``structuredContent`` (a list as ``{"result": [...]}``)
beside one text block of the same JSON.
The server's version is the package's.
"""

import inspect
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import anyio
import redis
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import CallToolResult, Resource, TextContent
from pydantic import TypeAdapter, ValidationError

from rescind.api import mcp_tools
from rescind.api.auth import PERMISSIONS, Principal, TokenStore, authorize
from rescind.api.jobs import Call, Job, perform
from rescind.api.mcp_tools import SCHEME, Caller
from rescind.api.state import Api
from rescind.contract.errors import Forbidden, RescindError, Unauthenticated
from rescind.graph.store import connect
from rescind.operator.audit import Actor
from rescind.runtime.settings import Settings

INSTRUCTIONS = """Rescind records why every memory of an organisation's agents exists (which
observations and memories justified it). Ask what rests on a source, explain a memory down to
its sources, see its history or what was believed at a past time, see how many trust domains
must fall to fake a payment, list pending and held payments, the gate's decisions, retractions
and recalls. With a security token: preview, commit or reinstate the retraction of a compromised
source, withdraw or correct a memory (always preview first, and commit at the revision the
preview returned). With a finance token: approve or reject (with a reason) a drafted recall,
annotate a recall, export an approved one as CSV or an ISO 20022 camt.056 message."""

__all__ = ["VIA", "VIA_HTTP", "VERSION", "create_server", "main", "stdio_server"]

VIA, VIA_HTTP = "mcp", "mcp-http"  # the audit's `via` for stdio (and in-process) and for HTTP
READS = ("read", "whoami", "audit")  # permissions of the tools that change nothing


def _version() -> str:
    try:
        return metadata.version("rescind")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


VERSION = _version()  # what the server answers as its version at initialize


def api_of(url: str | None, conn: redis.Redis | None, settings: Settings | None) -> Api:
    settings = settings or Settings()
    conn = conn or connect(url or settings.url)
    admin = settings.admin_token.get_secret_value() if settings.admin_token else None
    return Api(settings, conn, TokenStore(conn, admin))


def create_server(url: str | None = None, token: str | None = None, *,
                  conn: redis.Redis | None = None, settings: Settings | None = None,
                  api: Api | None = None) -> MCPServer:
    """An MCP server on the FalkorDB server at ``url`` (or ``conn``). Over stdio (and
    in-process) it acts with ``token`` (default RESCIND_TOKEN); a request that came over HTTP
    acts with the bearer token it carries, never with ``token``."""
    api = api or api_of(url, conn, settings)
    settings = api.settings
    token = token or (settings.token.get_secret_value() if settings.token else None)
    conn = api.conn

    def credentials(ctx: Context | None) -> tuple[str | None, str, str]:
        """The token of this request, how it came (``via``), and who to name it if unknown."""
        request = _http_request(ctx)
        if request is None:
            return token, VIA, "anonymous"
        host = request.client.host if request.client else "unknown"
        return bearer(request.headers), VIA_HTTP, f"anonymous ({host})"

    def caller(permission: str, action: str, ctx: Context | None,
               tenant: str | None = None) -> Caller:
        """The caller, if its token may use ``permission`` (on ``tenant``, when a resource names
        one); each refusal is audited (counted per principal, tool and minute), in the tenant's
        log or, for a token that names none, the server's."""
        secret, via, anonymous = credentials(ctx)
        try:
            me = api.tokens.verify(secret)
        except Unauthenticated as exc:
            api.audit.refused(None, Actor(anonymous, "", "", via), action, None, 401, exc.message)
            raise
        if me.tenant is None:
            why = "the MCP tools act on one tenant: use a tenant's token, not an admin's"
            api.audit.refused(None, me.actor(via), action, None, 403, why)
            raise Forbidden(why)
        try:
            authorize(me, tenant or me.tenant, permission)
        except Forbidden as exc:
            api.audit.refused(me.tenant, me.actor(via), action, tenant or me.tenant, 403,
                              exc.message)
            raise
        return Caller(me, api.graph(me.tenant), via, api)

    server = MCPServer("rescind", version=VERSION, instructions=INSTRUCTIONS,
                       middleware=[_ListTenantResources(lambda ctx: _reader_tenant(
                           api, credentials(ctx)[0]))])

    def tool(job: Job) -> None:
        """Register ``job`` as a tool that first checks the caller may use its permission, then
        does it (``jobs.perform``) as the caller, through this transport."""

        def guarded(mcp_context: Context, **given: Any) -> Any:
            action = f"mcp.{job.name}"
            try:
                c = caller(job.permission, action, mcp_context)
                args, body = mcp_tools.arguments(job, given)
                result = perform(Call(job, c.me, api, c.me.tenant, c.via, args, body))
            except RescindError as exc:
                raise ToolError(exc.message) from None
            except ValidationError as exc:  # a body the API would answer 422
                if job.permission not in READS:  # a change refused for its input is audited
                    api.audit.refused(c.me.tenant, c.me.actor(c.via), action, None, 422,
                                      _invalid(exc))
                raise ToolError(_invalid(exc)) from None
            return _answer({k: v for k, v in result.items() if k not in job.tool_omits}
                           if job.tool_omits else result, answer, listed)

        # The tool's schema is the job's arguments, with the SDK's request context (its type
        # is how the SDK finds it); its answer the job's.
        params = mcp_tools.signature(job)
        answer = TypeAdapter(job.answer)
        listed = getattr(job.answer, "__origin__", None) is list
        guarded.__signature__ = inspect.Signature([*params, inspect.Parameter(
            "mcp_context", inspect.Parameter.KEYWORD_ONLY, annotation=Context)],
            return_annotation=job.answer)
        guarded.__annotations__ = {**{p.name: p.annotation for p in params},
                                   "mcp_context": Context, "return": job.answer}
        guarded.__name__ = guarded.__qualname__ = job.name
        guarded.__doc__ = job.doc or job.summary
        server.add_tool(guarded, meta={"rescind/permission": job.permission,
                                       "rescind/roles": list(PERMISSIONS[job.permission]),
                                       "rescind/route": job.route,
                                       **({"rescind/commit": job.commit} if job.commit else {})})

    # -- resources: the tenant's recalls and payments -------------------------------------
    def resource(uri: str, name: str, description: str) -> Callable:
        def register(fn: Callable) -> Callable:
            def read(mcp_context: Context, **params: str) -> str:
                try:
                    c = caller("read", f"mcp.resource.{name}", mcp_context, params.pop("tenant"))
                    return json.dumps(fn(c, **params), indent=1, default=str)
                except RescindError as exc:
                    raise ResourceError(exc.message) from None

            names = [p for p in inspect.signature(fn).parameters][1:]
            read.__signature__ = inspect.Signature([
                inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY, annotation=str)
                for p in ("tenant", *names)] + [inspect.Parameter(
                    "mcp_context", inspect.Parameter.KEYWORD_ONLY, annotation=Context)])
            read.__annotations__ = {**{p: str for p in ("tenant", *names)},
                                    "mcp_context": Context, "return": str}
            read.__name__ = name
            server.resource(uri, name=name, description=description,
                            mime_type="application/json")(read)
            return fn

        return register

    mcp_tools.register(tool, resource)
    return server


# The resources of one tenant that resources/list names for a reader of it (the templates
# cover every tenant; these are the caller's own, concrete).
TENANT_RESOURCES = (
    ("recalls", "recalls", "The tenant's recalls with their drafts"),
    ("payments/held", "held_payments", "The tenant's held payments"),
    ("payments/pending", "pending_payments", "The tenant's pending payments"),
)


class _ListTenantResources:
    """Server middleware: ``resources/list`` answers, beside the templates, the concrete
    resources of the caller's tenant (when its token may read it)."""

    def __init__(self, tenant_of: Callable[[Any], str | None]) -> None:
        self.tenant_of = tenant_of

    async def __call__(self, ctx, call_next):
        result = await call_next(ctx)
        if ctx.method != "resources/list" or not isinstance(result, dict) or \
                not isinstance(result.get("resources"), list):  # the wire form, a dict
            return result
        tenant = await anyio.to_thread.run_sync(self.tenant_of, _Ctx(ctx))
        if tenant is None:
            return result
        extra = [Resource(uri=f"{SCHEME}://{tenant}/{path}", name=name, description=text,
                          mime_type="application/json").model_dump(
                              mode="json", by_alias=True, exclude_none=True)
                 for path, name, text in TENANT_RESOURCES]
        return {**result, "resources": [*result["resources"], *extra]}


@dataclass
class _Ctx:
    """What ``_http_request`` reads of a handler's context, from a middleware's."""

    request_context: Any


def _reader_tenant(api: Api, secret: str | None) -> str | None:
    """The tenant ``secret``'s token may read, if any (a listing refuses nobody)."""
    try:
        me = api.tokens.verify(secret)
        if me.tenant is None:
            return None
        authorize(me, me.tenant, "read")
    except (Unauthenticated, Forbidden):
        return None
    return me.tenant


def _http_request(ctx: Any) -> Any:
    """The HTTP request a message came in (None over stdio and in-process)."""
    if ctx is None:
        return None
    try:
        request = ctx.request_context.request
    except ValueError:  # no request context: called outside a request
        return None
    return request if getattr(request, "headers", None) is not None else None


def bearer(headers: Any) -> str | None:
    value = headers.get("authorization") or ""
    scheme, _, secret = value.partition(" ")
    return secret.strip() or None if scheme.lower() == "bearer" else None


def _answer(result: Any, answer: TypeAdapter, listed: bool) -> CallToolResult:
    """A tool's answer as the server sends it: validated against the job's answer and given
    with the fields the job gave (as its route answers), as ``structuredContent`` (a list as
    ``{"result": [...]}``, as the SDK wraps one) and one text block of the same JSON."""
    data = answer.dump_python(answer.validate_python(result), mode="json", exclude_unset=True)
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(data, indent=1))],
                          structured_content={"result": data} if listed else data)


def check_token(api: Api, token: str | None, where: str) -> Principal:
    """The stdio server's token, checked once at start: known, not revoked, and a tenant's.
    A refusal is audited in the server's log, like a call's, and says what to do."""
    try:
        me = api.tokens.verify(token)
    except Unauthenticated as exc:
        api.audit.refused(None, Actor("anonymous", "", "", VIA), "mcp.start", None, 401,
                          exc.message)
        raise Unauthenticated(
            f"the MCP server did not start: its token (--token or RESCIND_TOKEN) is unknown or "
            f"revoked on {where}. Tokens are kept by the server they were made on: create one "
            "there (`rescind api token create --tenant T --role R --who NAME`, or the console's "
            "admin), and pass it whole") from None
    if me.tenant is None:
        why = ("the MCP server did not start: the admin token cannot use the MCP tools (they "
               "act on one tenant); pass a tenant's token")
        api.audit.refused(None, me.actor(VIA), "mcp.start", None, 403, why)
        raise Forbidden(why)
    return me


def stdio_server(url: str | None = None, token: str | None = None, *,
                 settings: Settings | None = None) -> MCPServer:
    """The server for stdio, acting with ``token`` (default RESCIND_TOKEN), checked now: an
    unknown, revoked or admin's token raises here (Unauthenticated, Forbidden), not per call."""
    api = api_of(url, None, settings)
    token = token or (api.settings.token.get_secret_value() if api.settings.token else None)
    check_token(api, token, url or api.settings.url or "this server")
    return create_server(token=token, api=api)


def _invalid(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(x) for x in first["loc"]) or "input"
    return f"invalid {where}: {first['msg']}"



def main() -> None:  # pragma: no cover - `python -m rescind.api.mcp`
    settings = Settings()
    if not settings.url or not settings.token:
        print("set RESCIND_URL (a running FalkorDB) and RESCIND_TOKEN (the caller's API token)",
              file=sys.stderr)
        raise SystemExit(2)
    try:
        server = stdio_server(settings=settings)
    except RescindError as exc:
        print(exc.message, file=sys.stderr)
        raise SystemExit(2) from None
    server.run("stdio")


if __name__ == "__main__":  # pragma: no cover
    main()
