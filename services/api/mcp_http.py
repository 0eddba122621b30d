"""The MCP server over streamable HTTP: each request acts with its own bearer token (the API's).

``http_app`` is the SDK's streamable HTTP app behind ``BearerGate``; ``rescind api mcp --http``
serves it (``rescind.api.serve``)."""

import json
from typing import Any

import anyio
import redis
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.authentication import AuthCredentials
from starlette.datastructures import Headers

from rescind.api.mcp import VIA_HTTP, api_of, bearer, create_server
from rescind.api.state import Api
from rescind.contract.errors import Unauthenticated
from rescind.operator.audit import Actor
from rescind.runtime.settings import Settings

__all__ = ["BearerGate", "http_app"]


def http_app(url: str | None = None, *, conn: redis.Redis | None = None,
             settings: Settings | None = None, host: str = "127.0.0.1", path: str = "/mcp"):
    """The MCP server over streamable HTTP at ``path``, each request acting with its own bearer
    token (the API's). Run it with its lifespan (it runs the sessions). ``host`` is where it
    listens: on a loopback address the SDK also refuses other Host and Origin headers (DNS
    rebinding)."""
    # no token of the process's own: a request acts with its bearer token or not at all
    settings = (settings or Settings()).model_copy(update={"token": None})
    api = api_of(url, conn, settings)
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
        secret = bearer(Headers(scope=scope))
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

