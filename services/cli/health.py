"""`rescind health api|mcp|worker`: one look at a running Rescind process, for a container's
health check or a Kubernetes exec probe. Exit 0 healthy, 1 not (the reason on stderr).

Only the standard library is imported here: a probe runs every few seconds in every container,
and must not cost the start-up of the whole command (redis, pydantic models, the engine).
"""

from __future__ import annotations

import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import typer

health_app = typer.Typer(help="Is a Rescind process healthy? For container health checks and "
                         "probes: exit 0 yes, 1 no.", no_args_is_help=True)

TimeoutOpt = typer.Option(3.0, "--timeout", min=0.1, help="Seconds to wait for an answer")
JsonOpt = typer.Option(False, "--json", help='Print {"healthy": ..., "detail": ...}')


def _status(url: str, timeout: float) -> int:
    """The HTTP status ``url`` answers with (an error status too); 0 for no answer at all."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as res:  # noqa: S310 (http only)
            return res.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, OSError, ValueError):
        return 0


def _verdict(healthy: bool, why: str, as_json: bool = False) -> None:
    """Exit 0 when healthy, else 1 with ``why`` on stderr (and as JSON on stdout, if asked)."""
    if as_json:
        import json

        print(json.dumps({"healthy": healthy, "detail": "ok" if healthy else why}))
    if not healthy:
        print(why, file=sys.stderr)
        raise typer.Exit(1)


@health_app.command("api")
def api(url: str = typer.Option("http://127.0.0.1:8000", "--url",
                                help="The API's base URL, as seen from where the check runs"),
        timeout: float = TimeoutOpt, as_json: bool = JsonOpt) -> None:
    """The API answers /api/health with 200: it serves, and its FalkorDB server answers graph
    commands (503 while the server is down, loading or restarting)."""
    status = _status(url.rstrip("/") + "/api/health", timeout)
    _verdict(status == 200, f"{url}/api/health: " + (f"HTTP {status}" if status else
                                                     "no answer"), as_json)


@health_app.command("mcp")
def mcp(url: str = typer.Option("http://127.0.0.1:8766", "--url",
                                help="The MCP server's base URL (rescind api mcp --http)"),
        timeout: float = TimeoutOpt, as_json: bool = JsonOpt) -> None:
    """The MCP server (streamable HTTP) answers at /mcp: any HTTP answer below 500 (without a
    token it is 401, which is the server refusing as it should)."""
    status = _status(url.rstrip("/") + "/mcp", timeout)
    _verdict(0 < status < 500, f"{url}/mcp: " + (f"HTTP {status}" if status else "no answer"),
             as_json)


@health_app.command("worker")
def worker(heartbeat: Path = typer.Option(..., "--heartbeat", help="The file the worker "
                                          "touches (rescind worker --heartbeat)"),
           max_age: float = typer.Option(30.0, "--max-age", min=1.0, help="Seconds since its "
                                         "last beat after which the worker is stuck"),
           as_json: bool = JsonOpt) -> None:
    """The worker's event loop beat within --max-age seconds: it runs and is not stuck (a
    worker waiting for a FalkorDB server that is away still beats: restarting it would not
    bring the server back)."""
    try:
        age = time.time() - heartbeat.stat().st_mtime
    except OSError:
        _verdict(False, f"{heartbeat}: no heartbeat yet (the worker has not started its loop)",
                 as_json)
        return
    _verdict(age <= max_age, f"{heartbeat}: last beat {age:.0f} s ago (more than {max_age:.0f})",
             as_json)
