"""Run the API with uvicorn: in the foreground (`rescind api serve`), or in a thread beside the
workers (`rescind up`); and the MCP server over streamable HTTP (`rescind api mcp --http`). The
port is bound here first, so a taken port is one clear error."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator

import uvicorn

from rescind.api.app import create_app
from rescind.contract.errors import Unavailable
from rescind.runtime.readiness import ServerStatus
from rescind.runtime.settings import Settings


class ApiPortError(Unavailable):
    """The API's port could not be bound (taken, or not ours to take)."""


def bind(host: str, port: int, what: str = "the API",
         option: str = "--api-port (or RESCIND_API_PORT)") -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ApiPortError(f"cannot start {what}: cannot listen on {host}:{port}: {exc.strerror}; "
                           f"choose another with {option}") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def _server(url: str, settings: Settings | None,
            server_status: Callable[[], ServerStatus] | None = None) -> uvicorn.Server:
    settings = (settings or Settings()).model_copy(update={"url": url})
    return uvicorn.Server(uvicorn.Config(create_app(settings, server_status=server_status),
                                         log_level="warning", lifespan="off", access_log=False))


def serve_forever(url: str, host: str, port: int, settings: Settings | None = None) -> None:
    """Until Ctrl-C or SIGTERM (uvicorn handles both in the main thread)."""
    sock = bind(host, port)
    try:
        _server(url, settings).run(sockets=[sock])
    finally:
        sock.close()


@contextlib.contextmanager
def api_thread(url: str, host: str, port: int, settings: Settings | None = None,
               timeout: float = 15.0,
               server_status: Callable[[], ServerStatus] | None = None) -> Iterator[str]:
    """The API in a background thread for the duration of the block; yields its base URL.
    ``server_status``: what health says of the server (see ``create_app``)."""
    sock = bind(host, port)
    with _in_thread(_server(url, settings, server_status), sock, host, "the API",
                    timeout) as base:
        yield base


# -- the MCP server over streamable HTTP -------------------------------------------------------
MCP_PORT_OPTION = "--port (or RESCIND_MCP_PORT)"


def _mcp_server(url: str, host: str, settings: Settings | None) -> uvicorn.Server:
    from rescind.api.mcp_http import http_app

    settings = (settings or Settings()).model_copy(update={"url": url})
    # lifespan on: the MCP app's lifespan runs its sessions' task group
    return uvicorn.Server(uvicorn.Config(http_app(settings=settings, host=host),
                                         log_level="warning", lifespan="on", access_log=False,
                                         timeout_graceful_shutdown=5))


def serve_mcp_forever(url: str, host: str, port: int, settings: Settings | None = None,
                      announce: Callable[[str], None] | None = None) -> None:
    """The MCP server over streamable HTTP at /mcp, until Ctrl-C or SIGTERM; ``announce`` is
    told its endpoint's URL once the port is bound (port 0: the one the system chose)."""
    sock = bind(host, port, "the MCP server", MCP_PORT_OPTION)
    if announce is not None:
        announce(f"http://{host if ':' not in host else f'[{host}]'}:{sock.getsockname()[1]}/mcp")
    try:
        _mcp_server(url, host, settings).run(sockets=[sock])
    finally:
        sock.close()


@contextlib.contextmanager
def mcp_thread(url: str, host: str, port: int, settings: Settings | None = None,
               timeout: float = 15.0) -> Iterator[str]:
    """The MCP server over streamable HTTP in a background thread for the duration of the
    block; yields its endpoint's URL (``…/mcp``)."""
    sock = bind(host, port, "the MCP server", MCP_PORT_OPTION)
    with _in_thread(_mcp_server(url, host, settings), sock, host, "the MCP server",
                    timeout) as base:
        yield f"{base}/mcp"


@contextlib.contextmanager
def _in_thread(server: uvicorn.Server, sock: socket.socket, host: str, what: str,
               timeout: float) -> Iterator[str]:
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]},
                              name="rescind-mcp" if "MCP" in what else "rescind-api",
                              daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            port = sock.getsockname()[1]
            sock.close()
            raise ApiPortError(f"{what} did not start on {host}:{port}")
        time.sleep(0.02)
    bound = sock.getsockname()[1]
    try:
        yield f"http://{host if ':' not in host else f'[{host}]'}:{bound}"
    finally:
        server.should_exit = True
        thread.join(timeout)
        sock.close()
