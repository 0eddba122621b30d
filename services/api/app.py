"""``create_app(settings)``: the FastAPI application, its limits, its errors and the console."""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Callable
from pathlib import Path

import redis
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field

from rescind.api import routes
from rescind.api.auth import TokenStore
from rescind.api.state import Api, Guard, kind, tenant_or_none
from rescind.contract import layout
from rescind.contract.errors import Duplicate, RescindError, Unauthenticated, http_status
from rescind.graph.cypher import CypherError
from rescind.graph.store import connect
from rescind.runtime.readiness import ServerStatus, probe
from rescind.runtime.settings import Settings
from rescind.transport import connection

log = logging.getLogger("rescind.api")
STATIC = Path(__file__).with_name("static")
REFERENCE = Path(__file__).with_name("reference")  # /docs: the page; its assets from the wheel
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


def create_app(settings: Settings | None = None, conn: redis.Redis | None = None,
               server_status: Callable[[], ServerStatus] | None = None) -> FastAPI:
    """The API on the FalkorDB server at ``settings.url`` (or on ``conn``). ``server_status``
    is what health reports of the server (`rescind up`'s supervisor knows it is restarting);
    by default a look at it."""
    settings = settings or Settings()
    if conn is None:
        if not settings.url:
            raise ValueError("the API needs a FalkorDB server: set RESCIND_URL or pass --url")
        conn = connect(settings.url)
    admin = settings.admin_token.get_secret_value() if settings.admin_token else None
    app = FastAPI(title="Rescind", version="1", openapi_url="/api/openapi.json",
                  docs_url=None, redoc_url=None,
                  description="What your agents believed, planned and did because of a source: "
                              "retract it, hold and recall payments, reinstate. Every endpoint "
                              "needs a bearer token bound to one tenant and one role.")
    app.state.api = Api(settings, conn, TokenStore(conn, admin))
    app.include_router(routes.router)
    _errors(app)

    # A stuck server must not hold health for the API's long timeout (on a cluster: a master).
    looks = _short(connection.primaries(conn)[0])
    server_status = server_status or (lambda: probe(looks))

    @app.get("/api/health", tags=["health"], response_model=Health,
             response_model_exclude_none=True,
             responses={503: {"model": Health, "description": "The server is not up"}},
             summary="Liveness, the FalkorDB server (up, loading and how far, restarting, "
             "down; its restarts and whether it is in a crash loop, with its last crash line), "
             "and writes waiting for a premise that has not arrived")
    def health() -> Health | JSONResponse:
        server = server_status()
        loop = server.restarts is not None and server.restarts.crash_loop
        said = (f"; crash loop: FalkorDB died {server.restarts.recent} times in the last "
                f"{server.restarts.window_s:.0f} s, last: {server.restarts.last_crash}"
                if loop else "")
        if not server.ok:
            return _unhealthy(Health(ok=False, server=server, crash_loop=loop,
                                     detail=server.detail + said))
        try:
            waiting = [int(v) for v in conn.hvals(layout.WAITING)]
        except redis.ConnectionError:
            return _unhealthy(Health(ok=False, server=ServerStatus(state="down",
                                                                   restarts=server.restarts),
                                     crash_loop=loop, detail="FalkorDB unreachable" + said))
        return Health(ok=True, server=server, crash_loop=loop, detail=server.detail + said,
                      premises_awaited=len(waiting),
                      longest_wait_s=int(time.time()) - min(waiting) if waiting else 0)

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse("/console/")

    app.mount("/console", StaticFiles(directory=STATIC, html=True), name="console")
    # The API reference at /docs, from local files only: FastAPI's default page loads Swagger UI
    # from a CDN, so it is off (docs_url=None) and the assets come from fastapi-offline's wheel.
    app.mount("/docs/assets", StaticFiles(directory=swagger_assets()), name="docs-assets")
    app.mount("/docs", StaticFiles(directory=REFERENCE, html=True), name="docs")
    app.add_middleware(Limits, max_body=settings.api_max_body)
    return app


class Health(BaseModel):
    """What ``/api/health`` says: whether the server answers now, what it is doing, and, under
    `rescind up`, how often it was restarted and whether it is in a crash loop (with its last
    crash line). A crash loop is reported while the server is up between two deaths, too."""

    ok: bool
    server: ServerStatus
    crash_loop: bool = Field(False, description="The server died restarts.loop_after times or "
                             "more within restarts.window_s (known under `rescind up`)")
    detail: str = ""
    premises_awaited: int | None = Field(None, description="Writes waiting for a premise")
    longest_wait_s: int | None = Field(None, description="The longest such wait")


def _unhealthy(health: Health) -> JSONResponse:
    return JSONResponse(health.model_dump(mode="json", exclude_none=True), 503)


def swagger_assets() -> Path:
    """The folder of Swagger UI's bundle and stylesheet that the fastapi-offline wheel ships."""
    import fastapi_offline

    return Path(fastapi_offline.__file__).with_name("static")


def _short(conn: redis.Redis) -> redis.Redis:
    """A client of the same server whose commands give up within seconds."""
    pool = conn.connection_pool
    kwargs = {**pool.connection_kwargs, "socket_timeout": 2.0, "socket_connect_timeout": 1.0}
    return redis.Redis(connection_pool=redis.ConnectionPool(
        connection_class=pool.connection_class, max_connections=4, **kwargs))


def permission_of(route) -> str | None:
    """The permission a route's Guard checks (None for the unguarded health check)."""
    dependant = getattr(route, "dependant", None)
    for dep in dependant.dependencies if dependant is not None else []:
        if isinstance(dep.call, Guard):
            return dep.call.permission
    return None


def api_routes() -> list:
    """Every endpoint under /api/v1 (what the security tests walk)."""
    return list(routes.router.routes)


def _errors(app: FastAPI) -> None:
    @app.exception_handler(RescindError)
    def api_error(request: Request, exc: RescindError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if isinstance(exc, Unauthenticated) else None
        body = {"detail": exc.message}
        if isinstance(exc, Duplicate):  # the retractions it duplicates, for a client to show
            body["existing"] = exc.existing
        return JSONResponse(body, http_status(exc), headers=headers)

    @app.exception_handler(RequestValidationError)
    def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [{"loc": [str(x) for x in e["loc"]], "msg": e["msg"]} for e in exc.errors()[:20]]
        text = "; ".join(f"{'.'.join(e['loc'])}: {e['msg']}" for e in errors[:5])
        _audit_invalid(request, f"invalid request: {text}")
        return JSONResponse({"detail": f"invalid request: {text}", "errors": errors}, 422)

    @app.exception_handler(redis.ConnectionError)
    def unreachable(request: Request, exc: redis.ConnectionError) -> JSONResponse:
        api = request.app.state.api
        if connection.clustered(api.conn):  # a master failed over: find the new one next time
            api.forget(request.path_params.get("tenant"))
            with contextlib.suppress(redis.RedisError):
                api.conn.nodes_manager.initialize()
        return JSONResponse({"detail": "FalkorDB is unreachable; try again"}, 503)

    @app.exception_handler(CypherError)
    @app.exception_handler(redis.ResponseError)
    def refused(request: Request, exc: Exception) -> Response:
        """A redirection (the tenant's slot moved to another master, or is moving) is a
        moment's unavailability: 503, and the tenant's graph is found again next time. Anything
        else FalkorDB refuses is our error: 500, logged."""
        api = request.app.state.api
        if connection.redirected(api.conn, exc):
            api.forget(request.path_params.get("tenant"))
            return JSONResponse({"detail": "the tenant is moving between FalkorDB masters; "
                                           "try again"}, 503, headers={"Retry-After": "1"})
        log.error("FalkorDB refused a request's query", exc_info=exc)
        return PlainTextResponse("Internal Server Error", 500)

    @app.exception_handler(UnicodeEncodeError)
    def unencodable(request: Request, exc: UnicodeEncodeError) -> JSONResponse:
        return JSONResponse({"detail": "text must be valid Unicode (no lone surrogates)"}, 422)


def _audit_invalid(request: Request, detail: str) -> None:
    """A change refused for its input (422) is audited like any refusal, once its caller is
    known; a read with a bad query is not."""
    me = getattr(request.state, "principal", None)
    if me is None or request.method == "GET":
        return
    scope = me.tenant if me.tenant is not None else tenant_or_none(
        request.path_params.get("tenant"))
    request.app.state.api.audit.refused(scope, me.actor(), kind(request), request.url.path, 422,
                                        detail)


class Limits:
    """ASGI middleware: bodies over ``max_body`` bytes answer 413 before the app reads them, and
    every response gets security headers (a strict Content-Security-Policy on the console and
    the API reference)."""

    def __init__(self, app, max_body: int) -> None:
        self.app, self.max_body = app, max_body

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_body):
            return await self._too_large(send)
        seen, started, rejected = 0, False, False

        async def counted():
            nonlocal seen, rejected
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body and not rejected:
                    rejected = True
                    if not started:
                        await self._too_large(send)
                    return {"type": "http.disconnect"}  # the app stops reading; we answered
            return message

        async def secured(message):
            nonlocal started
            if rejected:
                return
            if message["type"] == "http.response.start":
                started = True
                headers = list(message.get("headers", []))
                headers += [(b"x-content-type-options", b"nosniff"),
                            (b"referrer-policy", b"no-referrer")]
                if scope["path"].startswith(("/console", "/docs")):
                    headers += [(b"content-security-policy", CSP.encode()),
                                (b"x-frame-options", b"DENY")]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, counted, secured)

    async def _too_large(self, send) -> None:
        body = json.dumps({"detail": f"request body too large: the limit is {self.max_body} "
                                     "bytes"}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
