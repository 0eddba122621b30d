"""The MCP server: every job the HTTP API allows a tenant's token, as tools an assistant calls.

It acts with the caller's API token, and so within one tenant and one role, with the API's
permissions (``rescind.api.auth.PERMISSIONS``): a viewer's, a security's or a finance token's
assistant reads (sources, memories and their trees, history, as-of, fragility, payments,
retractions, gate decisions, recalls); only security previews, commits and reinstates
retractions, withdraws and corrects (and reads the audit log); only finance approves recalls; an
agent's token asks the gate and sends events. Every tool lists the route it does the job of and
the permission it needs (``_meta``: ``rescind/route``, ``rescind/permission``). The recalls and
the held and pending payments of the caller's tenant are also resources
(``rescind://{tenant}/recalls``, ``…/recalls/{memory}``, ``…/payments/held``,
``…/payments/pending``).

The token is checked again on every call (a revoked token stops working at once); decisions and
refusals are written to the tenant's audit log (``via: mcp``, or ``mcp-http``; refusals counted
per principal, tool and minute), and decisions are published on the status stream like the
API's. Two transports:

- stdio, one token for the process: ``rescind api mcp --token …`` (or ``python -m
  rescind.api.mcp`` with RESCIND_URL and RESCIND_TOKEN);
- streamable HTTP, each request with its own ``Authorization: Bearer`` token (the API's tokens):
  ``rescind api mcp --http`` (``http_app``). A request without a known token is answered 401, and
  an admin's token 403 (the tools act on one tenant), before any MCP message is read; each such
  refusal is audited in the server's log. A session belongs to the token that opened it.
"""

import functools
import inspect
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import anyio
import redis
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import Resource
from pydantic import Field, ValidationError
from starlette.authentication import AuthCredentials
from starlette.datastructures import Headers

from rescind.api import ops
from rescind.api.auth import PERMISSIONS, Principal, TokenStore, authorize
from rescind.api.models import (
    MAX_EVENTS,
    MAX_PREMISES,
    AgentEvent,
    Compromise,
    CompromiseCommit,
    Correction,
    CorrectionCommit,
    EventBatch,
    GateAsk,
    Ident,
    Text,
    Withdrawal,
    WithdrawalCommit,
)
from rescind.api.state import Api
from rescind.contract import text as tx
from rescind.contract.errors import Forbidden, Invalid, RescindError, Unauthenticated
from rescind.contract.kinds import AnyKind, StatusName
from rescind.graph.store import TenantGraph, connect
from rescind.operator.audit import Actor
from rescind.runtime.settings import Settings

INSTRUCTIONS = """Rescind records why every memory of an organisation's agents exists (which
observations and memories justified it). Ask what rests on a source, explain a memory down to
its sources, see its history or what was believed at a past time, see how many trust domains
must fall to fake a payment, list pending and held payments, the gate's decisions, retractions
and recalls. With a security token: preview, commit or reinstate the retraction of a compromised
source, withdraw or correct a memory (always preview first, and commit at the revision the
preview returned). With a finance token: approve a drafted recall."""

__all__ = ["VIA", "VIA_HTTP", "create_server", "http_app", "main"]

VIA, VIA_HTTP = "mcp", "mcp-http"  # the audit's `via` for stdio (and in-process) and for HTTP
SCHEME = "rescind"  # resources: rescind://{tenant}/…
READS = ("read", "whoami", "audit")  # permissions of the tools that change nothing

# The window, named as everywhere else (`from`, `to`); `start` and `end` are the names it had
# before, accepted for one more release.
From = Annotated[str | None, Field(alias="from", description="Window start, ISO 8601 with zone "
                                   "(open when left out)")]
To = Annotated[str | None, Field(description="Window end, included (open when left out)")]
Start = Annotated[str | None, Field(description="Deprecated: use `from`",
                                    json_schema_extra={"deprecated": True})]
End = Annotated[str | None, Field(description="Deprecated: use `to`",
                                  json_schema_extra={"deprecated": True})]
Memory = Annotated[Ident, Field(description="A memory id, or the name its writer gave it (e.g. "
                                "a payment's name)")]
Rid = Annotated[Ident, Field(description="A retraction, withdrawal or correction id")]
Rev = Annotated[int, Field(ge=0, le=2**53, description="The graph revision the preview returned; "
                           "the commit is refused if the graph moved since")]
At = Annotated[tx.line(64) | None, Field(description="A time, ISO 8601 with zone (give `at` or "
                                         "`rev`)")]
AtRev = Annotated[int | None, Field(ge=0, le=2**53, description="A graph revision (give `at` or "
                                    "`rev`)")]
Skip = Annotated[int, Field(ge=0, le=10**9, description="How many to skip (paging)")]
Limit = Annotated[int, Field(ge=1, le=1000, description="Page size (capped by the server's "
                             "limit)")]
Reason = Annotated[tx.text(2000, min_length=1), Field(description="Why: kept with the decision "
                                                      "and in the audit log")]


@dataclass(frozen=True)
class Caller:
    """Who calls a tool (a token allowed the tool's permission), the tenant graph it acts on,
    and the transport it came through (the audit's ``via``)."""

    me: Principal
    graph: TenantGraph
    via: str
    api: Api

    def audited(self, action: str, target: str | None, run: Callable[[], Any],
                summary: Callable[[Any], Any] | None = None,
                outcome: Callable[[Any], str] | None = None) -> Any:
        return self.api.audited(self.me, self.me.tenant, action, target, run, summary,
                                via=self.via, outcome=outcome)

    def cap(self, limit: int) -> int:
        return min(limit, self.api.settings.api_max_list)


def _api(url: str | None, conn: redis.Redis | None, settings: Settings | None) -> Api:
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
    api = api or _api(url, conn, settings)
    settings = api.settings
    token = token or (settings.token.get_secret_value() if settings.token else None)
    conn = api.conn

    def credentials(ctx: Context | None) -> tuple[str | None, str, str]:
        """The token of this request, how it came (``via``), and who to name it if unknown."""
        request = _http_request(ctx)
        if request is None:
            return token, VIA, "anonymous"
        host = request.client.host if request.client else "unknown"
        return _bearer(request.headers), VIA_HTTP, f"anonymous ({host})"

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

    server = MCPServer("rescind", instructions=INSTRUCTIONS,
                       middleware=[_ListTenantResources(lambda ctx: _reader_tenant(
                           api, credentials(ctx)[0]))])

    def tool(permission: str, route: str) -> Callable:
        """Register ``fn`` as a tool that first checks the caller may use ``permission``;
        ``route`` names the API endpoint whose job it does."""
        assert permission in PERMISSIONS

        def register(fn: Callable) -> Callable:
            @functools.wraps(fn)
            def guarded(*args: Any, mcp_context: Context, **kwargs: Any) -> Any:
                if "from" in kwargs:  # the window's `from`, a Python keyword: `from_` in here
                    kwargs["from_"] = kwargs.pop("from")
                action = f"mcp.{fn.__name__}"
                try:
                    c = caller(permission, action, mcp_context)
                except RescindError as exc:
                    raise ToolError(exc.message) from None
                try:
                    return fn(c, *args, **kwargs)
                except RescindError as exc:
                    raise ToolError(exc.message) from None
                except ValidationError as exc:  # a body the API would answer 422
                    if permission not in READS:  # a change refused for its input is audited
                        api.audit.refused(c.me.tenant, c.me.actor(c.via), action, None, 422,
                                          _invalid(exc))
                    raise ToolError(_invalid(exc)) from None

            # The tool's schema is the function's own, without the caller (filled here), and
            # with the SDK's request context (its type is how the SDK finds it).
            sig = inspect.signature(fn)
            params = list(sig.parameters.values())[1:]
            guarded.__signature__ = sig.replace(parameters=[*params, inspect.Parameter(
                "mcp_context", inspect.Parameter.KEYWORD_ONLY, annotation=Context)])
            guarded.__annotations__ = {**{p.name: p.annotation for p in params},
                                       "mcp_context": Context, "return": sig.return_annotation}
            del guarded.__wrapped__
            server.add_tool(guarded, meta={"rescind/permission": permission,
                                           "rescind/roles": list(PERMISSIONS[permission]),
                                           "rescind/route": route})
            return fn

        return register

    def _counts(d: dict) -> dict:
        return {"retraction": d.get("retraction"), "counts": d.get("counts"), "rev": d.get("rev")}

    T = "/api/v1/tenants/{tenant}"

    # -- who ------------------------------------------------------------------------------
    @tool("whoami", "GET /api/v1/me")
    def whoami(c: Caller) -> dict:
        """Who this token is: its tenant, role and name (what the tools act with)."""
        return {"tenant": c.me.tenant, "role": c.me.role, "who": c.me.who,
                "token": c.me.token_id}

    # -- reading (viewer, security, finance) ----------------------------------------------
    @tool("read", f"GET {T}/revision")
    def revision(c: Caller) -> dict:
        """The tenant's graph revision: it moves with every write and decision."""
        return ops.revision(c.graph)

    @tool("read", f"GET {T}/sources")
    def list_sources(c: Caller) -> list[dict]:
        """Every source (vendor portal, contract, inbox, reviewer) with its trust domain."""
        return ops.sources(c.graph)

    @tool("read", f"GET {T}/memories")
    def search_memories(c: Caller, query: tx.line(200) = "", kind: AnyKind | None = None,
                        include_out: bool = False, status: StatusName | None = None,
                        skip: Skip = 0, limit: Annotated[int, Field(ge=1, le=200)] = 20
                        ) -> list[dict]:
        """Memories whose text contains ``query`` (case-insensitive; every memory when left
        out), newest first. Memories that are OUT (retracted, withdrawn, or resting on something
        that is) are left out unless ``include_out`` is true; ``status`` IN or OUT gives only
        those. Page with ``skip``."""
        if include_out and status is not None:
            raise Invalid("give status or include_out, not both")
        wanted = status if status is not None else (None if include_out else "IN")
        return ops.memories(c.graph, kind, wanted, query or None, skip, c.cap(limit))["items"]

    @tool("read", f"GET {T}/memories/{{memory}}")
    def explain(c: Caller, memory: Memory) -> dict:
        """The justification tree of a memory (id or name, e.g. a payment's name) down to the
        sources that said it, with every status on the way."""
        return ops.memory(c.graph, memory)

    @tool("read", f"GET {T}/memories/{{memory}}/history")
    def memory_history(c: Caller, memory: Memory) -> dict:
        """Every status the memory has had, oldest first, each with its cause (the retraction,
        withdrawal or correction), who decided and the graph revision; for a payment, also
        every time the gate was asked about it."""
        return ops.history(c.graph, memory)

    @tool("read", f"GET {T}/memories/{{memory}}/as-of")
    def memory_as_of(c: Caller, memory: Memory, at: At = None, rev: AtRev = None) -> dict:
        """The memory's status at a past time (``at``) or graph revision (``rev``), why, and its
        justification tree with each status as it stood then."""
        return ops.memory_as_of(c.graph, memory, at, rev)

    @tool("read", f"GET {T}/as-of")
    def as_of(c: Caller, at: At = None, rev: AtRev = None, kind: AnyKind | None = None,
              status: StatusName | None = None, skip: Skip = 0, limit: Limit = 100) -> dict:
        """What was believed at a past time (``at``) or graph revision (``rev``): each memory
        that existed then with its status then and why."""
        return ops.as_of(c.graph, at, rev, kind, status, skip, c.cap(limit))

    @tool("read", f"GET {T}/memories/{{memory}}/fragility")
    def fragility(c: Caller, memory: Memory) -> dict:
        """How many independent trust domains an attacker must control to fake this memory or
        payment, and one smallest set of domains that would do it."""
        return ops.fragility(c.graph, memory)

    @tool("read", f"GET {T}/payments")
    def pending_payments(c: Caller, held: bool | None = None) -> list[dict]:
        """Payments not executed yet, largest first, each with its fragility and whether it is
        held (OUT: it rests on something retracted, and the gate will refuse it). ``held``
        true: only the held ones; false: only those not held."""
        rows = ops.pending_payments(c.graph)
        return rows if held is None else [r for r in rows if r["held"] is held]

    @tool("read", f"GET {T}/audit-order")
    def audit_order(c: Caller) -> list[dict]:
        """Sources ranked by the value of what rests on them alone: audit these first."""
        return ops.audit_order(c.graph)

    @tool("read", f"GET {T}/retractions")
    def retraction_list(c: Caller) -> list[dict]:
        """Retractions of sources, withdrawals and corrections of memories: each with its
        state (committed or reinstated), source and window (``from``/``to``) or memory, reason,
        who decided and when."""
        return ops.retractions(c.graph)

    @tool("read", f"GET {T}/retractions/{{rid}}")
    def retraction(c: Caller, retraction: Rid) -> dict:
        """One retraction, withdrawal or correction by its id, with what it took OUT (and, once
        reinstated, what came back)."""
        return ops.retraction(c.graph, retraction)

    @tool("read", f"GET {T}/gates")
    def gate_log(c: Caller, action: Memory | None = None, limit: Limit = 100) -> list[dict]:
        """The payment gate's decisions, newest first (only ``action``'s when given): amount,
        account, allowed or refused, why, fragility, and what was already allowed to the same
        account or payee."""
        return ops.gates(c.graph, action, limit)

    @tool("read", f"GET {T}/recalls")
    def recall_list(c: Caller) -> list[dict]:
        """Executed payments that went OUT, with their drafted bank recalls, largest first."""
        return ops.recalls(c.graph)

    @tool("read", f"GET {T}/recalls/{{memory}}")
    def recall(c: Caller, memory: Memory) -> dict:
        """One payment's recall (by the payment's id or name) with its draft."""
        return ops.recall(c.graph, memory)

    @tool("audit", f"GET {T}/audit")
    def audit_log(c: Caller, limit: Limit = 100) -> list[dict]:
        """Security: the tenant's audit log, newest first: every decision, gate decision and
        refusal, from every surface."""
        return c.api.audit.entries(c.graph.tenant, c.cap(limit))

    # -- deciding (security) --------------------------------------------------------------
    @tool("decide", f"POST {T}/retractions/preview")
    def preview_retraction(c: Caller, source: Ident, reason: Reason, from_: From = None,
                           to: To = None, start: Start = None, end: End = None) -> dict:
        """Security: what would go OUT if ``source`` is declared compromised between ``from``
        and ``to`` (ISO 8601 with zone; open when left out), and what it reaches but leaves
        IN, with what still holds it (``kept``). Changes nothing; returns the graph revision
        to commit at, and names any retraction of the source in force over an overlapping
        window (``duplicates``)."""
        body = Compromise(source=source, reason=reason, from_=from_, to=to, start=start, end=end)
        return _brief(c.audited("retraction.preview", source,
                                lambda: ops.compromise_preview(c.graph, body, c.me.who), _counts))

    @tool("decide", f"POST {T}/retractions")
    def commit_retraction(c: Caller, source: Ident, reason: Reason, rev: Rev,
                          from_: From = None, to: To = None, id: Ident | None = None,
                          force: bool = False, start: Start = None, end: End = None) -> dict:
        """Security: commit the retraction previewed at revision ``rev`` (refused if the graph
        changed since: preview again). Holds pending payments, drafts recalls. Refused, naming
        it, while a retraction of the source over an overlapping window is in force, unless
        ``force``."""
        body = CompromiseCommit(source=source, reason=reason, from_=from_, to=to, start=start,
                                end=end, rev=rev, id=id, force=force)
        return _brief(c.audited("retraction.commit", source,
                                lambda: ops.compromise_commit(conn, c.graph, body, c.me.who),
                                _counts))

    @tool("decide", f"POST {T}/retractions/{{rid}}/reinstate")
    def reinstate(c: Caller, retraction: Rid) -> dict:
        """Security: undo a retraction, withdrawal or correction by its id; what it took OUT
        comes back unless something else still keeps it out."""
        return _brief(c.audited("retraction.reinstate", retraction,
                                lambda: ops.reinstate(conn, c.graph, retraction, c.me.who),
                                _counts))

    @tool("decide", f"POST {T}/withdrawals/preview")
    def preview_withdrawal(c: Caller, memory: Memory, reason: Reason) -> dict:
        """Security: what would go OUT if this one memory is withdrawn (it was wrong, whatever
        its sources said), and the revision to commit at. Changes nothing."""
        body = Withdrawal(memory=memory, reason=reason)
        return _brief(c.audited("withdrawal.preview", memory,
                                lambda: ops.change_preview(c.graph, body, c.me.who), _counts))

    @tool("decide", f"POST {T}/withdrawals")
    def commit_withdrawal(c: Caller, memory: Memory, reason: Reason, rev: Rev,
                          id: Ident | None = None) -> dict:
        """Security: withdraw the memory as previewed at revision ``rev`` (refused if the graph
        changed since). Undo it with ``reinstate`` and the returned id."""
        body = WithdrawalCommit(memory=memory, reason=reason, rev=rev, id=id)
        return _brief(c.audited("withdrawal.commit", memory,
                                lambda: ops.change_commit(conn, c.graph, body, c.me.who),
                                _counts))

    @tool("decide", f"POST {T}/corrections/preview")
    def preview_correction(c: Caller, memory: Memory, text: Text,
                           reason: Reason, reviewer: Ident | None = None,
                           name: Ident | None = None) -> dict:
        """Security: what would change if the memory is replaced by ``text`` (vouched for by
        ``reviewer``, default the token's name): the old one goes OUT with what rests on it
        alone. Changes nothing; returns the revision to commit at."""
        body = Correction(memory=memory, text=text, reason=reason, reviewer=reviewer, name=name)
        return _brief(c.audited("correction.preview", memory,
                                lambda: ops.change_preview(c.graph, body, c.me.who), _counts))

    @tool("decide", f"POST {T}/corrections")
    def commit_correction(c: Caller, memory: Memory, text: Text,
                          reason: Reason, rev: Rev, reviewer: Ident | None = None,
                          name: Ident | None = None, id: Ident | None = None) -> dict:
        """Security: correct the memory as previewed at revision ``rev`` (refused if the graph
        changed since). Undo it with ``reinstate`` and the returned id."""
        body = CorrectionCommit(memory=memory, text=text, reason=reason, reviewer=reviewer,
                                name=name, id=id, rev=rev)
        return _brief(c.audited("correction.commit", memory,
                                lambda: ops.change_commit(conn, c.graph, body, c.me.who),
                                _counts))

    # -- approving (finance) --------------------------------------------------------------
    @tool("approve", f"POST {T}/recalls/{{memory}}/approve")
    def approve_recall(c: Caller, memory: Memory) -> dict:
        """Finance: approve the drafted recall of an executed payment (by its id or name): it
        goes to the outbox for the bank. Only a drafted recall can be approved."""
        return c.audited("recall.approve", memory,
                         lambda: ops.approve(c.graph, memory, c.me.who),
                         lambda r: {"action": r["action"], "amount": r["amount"]})

    # -- agents ---------------------------------------------------------------------------
    @tool("gate", f"POST {T}/gate")
    def ask_gate(c: Caller, action: Memory,
                 premises: Annotated[list[Ident] | None, Field(
                     min_length=1, max_length=MAX_PREMISES, description="For a payment not "
                     "stored yet: the memories it rests on")] = None,
                 amount: float | None = None, account: Ident | None = None,
                 payee: Ident | None = None, currency: str | None = None) -> dict:
        """Agent: ask the payment gate about a payment before making it: a stored proposal by
        id or name (with the call's amount, account, payee), or a new one with ``premises`` and
        ``amount``. The decision is recorded like the agents' own."""
        body = GateAsk(action=action, premises=premises, amount=amount, account=account,
                       payee=payee, currency=currency)
        return c.audited("gate", action, lambda: ops.gate(c.graph, body, c.api.gate),
                         lambda d: {"action": d["action"], "reason": d["reason"],
                                    "fragility": d["fragility"]},
                         lambda d: "allowed" if d["allowed"] else "blocked")

    @tool("send", f"POST {T}/events")
    def send_events(c: Caller, events: Annotated[list[AgentEvent], Field(
            min_length=1, max_length=MAX_EVENTS)]) -> dict:
        """Agent: send agents' events (sources, observations, memories written, actions
        proposed and executed) to the tenant's stream, where the writers apply them in order.
        Every event must name this token's tenant."""
        batch = EventBatch(events=events)
        return c.audited("events.send", f"{len(events)} event(s)",
                         lambda: ops.ingest(conn, c.graph.tenant, batch, settings.partitions),
                         lambda r: {"accepted": r["accepted"]})

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


def _bearer(headers: Any) -> str | None:
    value = headers.get("authorization") or ""
    scheme, _, secret = value.partition(" ")
    return secret.strip() or None if scheme.lower() == "bearer" else None


def _invalid(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(x) for x in first["loc"]) or "input"
    return f"invalid {where}: {first['msg']}"


def _brief(d: dict) -> dict:
    """A blast radius without the drawing data (the console's graph) an assistant does not need."""
    return {k: v for k, v in d.items() if k != "graph"}


# -- streamable HTTP ------------------------------------------------------------------------
def http_app(url: str | None = None, *, conn: redis.Redis | None = None,
             settings: Settings | None = None, host: str = "127.0.0.1", path: str = "/mcp"):
    """The MCP server over streamable HTTP at ``path``, each request acting with its own bearer
    token (the API's). Run it with its lifespan (it runs the sessions). ``host`` is where it
    listens: on a loopback address the SDK also refuses other Host and Origin headers (DNS
    rebinding)."""
    # no token of the process's own: a request acts with its bearer token or not at all
    settings = (settings or Settings()).model_copy(update={"token": None})
    api = _api(url, conn, settings)
    server = create_server(api=api)
    inner = server.streamable_http_app(streamable_http_path=path, host=host,
                                       max_request_body_size=api.settings.api_max_body)
    return BearerGate(inner, api)


class BearerGate:
    """ASGI middleware in front of the MCP transport: a request without a known token is
    answered 401, an admin's 403, each audited in the server's log (counted per principal and
    minute); a tenant's token passes, as the session's owner (the SDK answers a session opened
    by another token as unknown). Which tools it may use is checked on each call."""

    def __init__(self, app: Any, api: Api) -> None:
        self.app, self.api = app, api

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        secret = _bearer(Headers(scope=scope))
        client = scope.get("client")
        try:
            me = await anyio.to_thread.run_sync(self.api.tokens.verify, secret)
        except Unauthenticated as exc:
            actor = Actor(f"anonymous ({client[0] if client else 'unknown'})", "", "", VIA_HTTP)
            await anyio.to_thread.run_sync(self.api.audit.refused, None, actor, "mcp.http",
                                           scope["path"], 401, exc.message)
            return await _deny(send, 401, exc.message)
        except redis.ConnectionError:
            return await _deny(send, 503, "FalkorDB is unreachable; try again")
        if me.tenant is None:
            why = "the MCP tools act on one tenant: use a tenant's token, not an admin's"
            await anyio.to_thread.run_sync(self.api.audit.refused, None, me.actor(VIA_HTTP),
                                           "mcp.http", scope["path"], 403, why)
            return await _deny(send, 403, why)
        user = AuthenticatedUser(AccessToken(token=me.token_id, client_id=me.token_id,
                                             scopes=[me.role], subject=me.who))
        await self.app({**scope, "user": user, "auth": AuthCredentials([me.role])}, receive, send)


async def _deny(send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def main() -> None:  # pragma: no cover - `python -m rescind.api.mcp`
    settings = Settings()
    if not settings.url or not settings.token:
        print("set RESCIND_URL (a running FalkorDB) and RESCIND_TOKEN (the caller's API token)",
              file=sys.stderr)
        raise SystemExit(2)
    create_server(settings=settings).run("stdio")


if __name__ == "__main__":  # pragma: no cover
    main()
