"""The MCP server: Rescind's questions and decisions as tools for an assistant.

It acts with the caller's API token, and so within one tenant and one role: a viewer's
assistant can read, explain and search; only a security token can preview, commit or reinstate
a retraction. The token is checked again on every call (a revoked token stops working at once),
decisions and refusals are written to the tenant's audit log (``via: mcp``; refusals counted
per principal, tool and minute), and decisions are published on the status stream like the
API's. It runs over stdio: ``rescind api mcp --token …`` (or ``python -m rescind.api.mcp`` with
RESCIND_URL and RESCIND_TOKEN).
"""

import functools
import sys
from collections.abc import Callable
from typing import Annotated, Any

import redis
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field, ValidationError

from rescind.api import ops
from rescind.api.auth import Principal, TokenStore, authorize
from rescind.api.models import Compromise, CompromiseCommit, Ident
from rescind.api.state import Api
from rescind.contract import text as tx
from rescind.contract.errors import Forbidden, Invalid, RescindError, Unauthenticated
from rescind.contract.kinds import AnyKind
from rescind.graph.store import TenantGraph, connect
from rescind.operator.audit import Actor
from rescind.runtime.settings import Settings

INSTRUCTIONS = """Rescind records why every memory of an organisation's agents exists (which
observations and memories justified it). Ask what rests on a source, explain a memory down to
its sources, see how many trust domains must fall to fake a payment, and (with a security
token) preview, commit or reinstate the retraction of a compromised source. Always preview
before committing, and commit at the revision the preview returned."""

__all__ = ["create_server", "main"]

# The window, named as everywhere else (`from`, `to`); `start` and `end` are the names it had
# before, accepted for one more release.
From = Annotated[str | None, Field(alias="from", description="Window start, ISO 8601 with zone "
                                   "(open when left out)")]
To = Annotated[str | None, Field(description="Window end, included (open when left out)")]
Start = Annotated[str | None, Field(description="Deprecated: use `from`",
                                    json_schema_extra={"deprecated": True})]
End = Annotated[str | None, Field(description="Deprecated: use `to`",
                                  json_schema_extra={"deprecated": True})]


def create_server(url: str | None = None, token: str | None = None, *,
                  conn: redis.Redis | None = None, settings: Settings | None = None) -> MCPServer:
    """An MCP server acting with ``token`` on the FalkorDB server at ``url`` (or ``conn``)."""
    settings = settings or Settings()
    conn = conn or connect(url or settings.url)
    token = token or (settings.token.get_secret_value() if settings.token else None)
    admin = settings.admin_token.get_secret_value() if settings.admin_token else None
    api = Api(settings, conn, TokenStore(conn, admin))
    server = MCPServer("rescind", instructions=INSTRUCTIONS)

    def caller(permission: str, tool_name: str) -> tuple[Principal, TenantGraph]:
        """The caller, if its token may use ``permission``; each refusal is audited (counted
        per principal, tool and minute), in the tenant's log or, for a token that names none,
        the server's."""
        action = f"mcp.{tool_name}"
        try:
            me = api.tokens.verify(token)
        except Unauthenticated as exc:
            api.audit.refused(None, Actor("anonymous", "", "", "mcp"), action, None, 401,
                              exc.message)
            raise
        if me.tenant is None:
            why = "the MCP tools act on one tenant: use a tenant's token, not an admin's"
            api.audit.refused(None, me.actor("mcp"), action, None, 403, why)
            raise ToolError(why)
        try:
            authorize(me, me.tenant, permission)
        except Forbidden as exc:
            api.audit.refused(me.tenant, me.actor("mcp"), action, me.tenant, 403, exc.message)
            raise
        return me, api.graph(me.tenant)

    def tool(permission: str) -> Callable:
        """Register ``fn`` as a tool that first checks the caller may use ``permission``."""

        def register(fn: Callable) -> Callable:
            @functools.wraps(fn)
            def guarded(*args: Any, **kwargs: Any) -> Any:
                if "from" in kwargs:  # the window's `from`, a Python keyword: `from_` in here
                    kwargs["from_"] = kwargs.pop("from")
                try:
                    me, graph = caller(permission, fn.__name__)
                    return fn(me, graph, *args, **kwargs)
                except RescindError as exc:
                    raise ToolError(exc.message) from None
                except ValidationError as exc:
                    first = exc.errors()[0]
                    where = ".".join(str(x) for x in first["loc"])
                    raise ToolError(f"invalid {where}: {first['msg']}") from None

            # The tool's schema is the function's own, without the two arguments filled here.
            guarded.__signature__ = _without_caller(fn)
            del guarded.__wrapped__
            server.add_tool(guarded)
            return fn

        return register

    def decided(me: Principal, action: str, target: str, run: Callable[[], dict]) -> dict:
        return api.audited(me, me.tenant, action, target, run,
                           lambda d: {"retraction": d.get("retraction"),
                                      "counts": d.get("counts")}, via="mcp")

    @tool("read")
    def list_sources(me: Principal, graph: TenantGraph) -> list[dict]:
        """Every source (vendor portal, contract, inbox, reviewer) with its trust domain."""
        return ops.sources(graph)

    @tool("read")
    def explain(me: Principal, graph: TenantGraph, memory: Ident) -> dict:
        """The justification tree of a memory (id or name, e.g. a payment's name) down to the
        sources that said it, with every status on the way."""
        return ops.memory(graph, memory)

    @tool("read")
    def fragility(me: Principal, graph: TenantGraph, memory: Ident) -> dict:
        """How many independent trust domains an attacker must control to fake this memory or
        payment, and one smallest set of domains that would do it."""
        return ops.fragility(graph, memory)

    @tool("decide")
    def preview_retraction(me: Principal, graph: TenantGraph, source: str, reason: str,
                           from_: From = None, to: To = None, start: Start = None,
                           end: End = None) -> dict:
        """Security: what would go OUT if ``source`` is declared compromised between ``from``
        and ``to`` (ISO 8601 with zone; open when left out), and what it reaches but leaves
        IN, with what still holds it (``kept``). Changes nothing; returns the graph revision
        to commit at, and names any retraction of the source in force over an overlapping
        window (``duplicates``)."""
        body = Compromise(source=source, reason=reason, from_=from_, to=to, start=start, end=end)
        return _brief(decided(me, "retraction.preview", source,
                              lambda: ops.compromise_preview(graph, body, me.who)))

    @tool("decide")
    def commit_retraction(me: Principal, graph: TenantGraph, source: str, reason: str, rev: int,
                          from_: From = None, to: To = None, id: str | None = None,
                          force: bool = False, start: Start = None, end: End = None) -> dict:
        """Security: commit the retraction previewed at revision ``rev`` (refused if the graph
        changed since: preview again). Holds pending payments, drafts recalls. Refused, naming
        it, while a retraction of the source over an overlapping window is in force, unless
        ``force``."""
        body = CompromiseCommit(source=source, reason=reason, from_=from_, to=to, start=start,
                                end=end, rev=rev, id=id, force=force)
        return _brief(decided(me, "retraction.commit", source,
                              lambda: ops.compromise_commit(conn, graph, body, me.who)))

    @tool("decide")
    def reinstate(me: Principal, graph: TenantGraph, retraction: Ident) -> dict:
        """Security: undo a retraction by its id; what it took OUT comes back unless something
        else still keeps it out."""
        return _brief(decided(me, "retraction.reinstate", retraction,
                              lambda: ops.reinstate(conn, graph, retraction, me.who)))

    @tool("read")
    def recall_list(me: Principal, graph: TenantGraph) -> list[dict]:
        """Executed payments that went OUT, with their drafted bank recalls, largest first."""
        return ops.recalls(graph)

    @tool("read")
    def gate_log(me: Principal, graph: TenantGraph, action: Ident | None = None) -> list[dict]:
        """The payment gate's decisions, newest first: amount, account, allowed or refused,
        why, fragility, and what was already allowed to the same account or payee."""
        return ops.gates(graph, action)

    @tool("read")
    def audit_order(me: Principal, graph: TenantGraph) -> list[dict]:
        """Sources ranked by the value of what rests on them alone: audit these first."""
        return ops.audit_order(graph)

    @tool("read")
    def search_memories(me: Principal, graph: TenantGraph, query: tx.line(200) = "",
                        kind: AnyKind | None = None, include_out: bool = False,
                        limit: int = 20) -> list[dict]:
        """Memories whose text contains ``query`` (case-insensitive). Memories that are OUT
        (retracted, withdrawn, or resting on something that is) are left out unless
        ``include_out`` is true."""
        if not 1 <= limit <= 200:
            raise Invalid("limit must be between 1 and 200")
        page = ops.memories(graph, kind, None if include_out else "IN", query or None, 0, limit)
        return page["items"]

    return server


def _brief(d: dict) -> dict:
    """A blast radius without the drawing data (the console's graph) an assistant does not need."""
    return {k: v for k, v in d.items() if k != "graph"}


def _without_caller(fn: Callable):
    import inspect

    sig = inspect.signature(fn)
    return sig.replace(parameters=list(sig.parameters.values())[2:])


def main() -> None:  # pragma: no cover - `python -m services.mcp_server`
    settings = Settings()
    if not settings.url or not settings.token:
        print("set RESCIND_URL (a running FalkorDB) and RESCIND_TOKEN (the caller's API token)",
              file=sys.stderr)
        raise SystemExit(2)
    create_server(settings=settings).run("stdio")


if __name__ == "__main__":  # pragma: no cover
    main()
