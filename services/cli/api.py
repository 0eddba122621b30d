"""`rescind api …`: serve the API and console, manage tokens, run the MCP server (stdio or HTTP).

Heavy imports happen inside the commands, so that `rescind --help` stays fast.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from rescind.cli.common import (
    ByOpt,
    DataDirOpt,
    Line,
    TenantOpt,
    UrlOpt,
    audited,
    decider,
    operator_server,
    out,
    refuse,
)

api_app = typer.Typer(help="The HTTP API and browser console (served when no command is given), "
                      "API tokens, the MCP server.", invoke_without_command=True)
token_app = typer.Typer(help="API tokens: each bound to one tenant and one role.",
                        no_args_is_help=True)
api_app.add_typer(token_app, name="token")

HostOpt = typer.Option(None, "--host", help="Listen address (default RESCIND_API_HOST or 127.0.0.1)")
PortOpt = typer.Option(None, "--port", help="Port (default RESCIND_API_PORT or 8765)")


@api_app.callback()
def api(ctx: typer.Context, url: str | None = UrlOpt, data_dir: Path = DataDirOpt,
        host: str | None = HostOpt, port: int | None = PortOpt) -> None:
    """`rescind api` alone serves the API and console in the foreground, until Ctrl-C."""
    if ctx.invoked_subcommand is None:
        _serve(url, data_dir, host, port)


@api_app.command("serve")
def serve(url: str | None = UrlOpt, data_dir: Path = DataDirOpt, host: str | None = HostOpt,
          port: int | None = PortOpt) -> None:
    """The API and console (at /console/) in the foreground, until Ctrl-C."""
    _serve(url, data_dir, host, port)


def _serve(url: str | None, data_dir: Path, host: str | None, port: int | None) -> None:
    from rescind.api.serve import serve_forever
    from rescind.runtime.settings import Settings

    settings = Settings()
    host, port = host or settings.api_host, port if port is not None else settings.api_port
    with operator_server(url, data_dir) as server_url:
        out.print(f"API and console on http://{host}:{port}/console/ (FalkorDB {server_url})")
        serve_forever(server_url, host, port, settings)


@token_app.command("create")
def token_create(
    role: str = typer.Option(..., help="agent, security, finance, viewer, or admin"),
    who: str = typer.Option(..., help="Whose token (signs decisions and the audit log)",
                          callback=Line),
    tenant: str = TenantOpt, url: str | None = UrlOpt, data_dir: Path = DataDirOpt,
    by: str | None = ByOpt,
    as_json: bool = typer.Option(False, "--json", help="Print JSON for scripts"),
) -> None:
    """Make a token (the tenant is registered if new); the secret is printed once."""
    from rescind.api.auth import ADMIN, TokenStore
    from rescind.graph.store import connect

    by = decider(by)
    with operator_server(url, data_dir) as server_url:
        store = TokenStore(connect(server_url))
        token, record = audited(store.conn, None if role == ADMIN else tenant, by,
                                "token.create", f"{role}:{who}",
                                lambda: store.create(tenant, role, who, by=by, register=True),
                                lambda made: {"id": made[1]["id"], "role": role, "who": who})
    if as_json:
        print(json.dumps({**record, "token": token}, indent=2))
    else:
        scope = f"tenant {record['tenant']}" if record["tenant"] else "every tenant"
        out.print(f"{role} token for {who} ({scope}), id {record['id']}; shown once:")
        print(token)


@token_app.command("list")
def token_list(tenant: str = TenantOpt, url: str | None = UrlOpt,
               data_dir: Path = DataDirOpt,
               as_json: bool = typer.Option(False, "--json", help="Print JSON for scripts")) -> None:
    """The tenant's tokens: id, role, who, when (never the secrets)."""
    from rescind.api.auth import TokenStore
    from rescind.graph.store import connect

    with operator_server(url, data_dir) as server_url:
        tokens = TokenStore(connect(server_url)).tokens(tenant)
    if as_json:
        print(json.dumps(tokens, indent=2))
        return
    for t in tokens:
        out.print("  ".join(f"{k}={v}" for k, v in t.items()), markup=False)
    if not tokens:
        out.print(f"no tokens in tenant {tenant}")


@token_app.command("revoke")
def token_revoke(token_id: str = typer.Argument(..., help="The token's id (16 hex digits)"),
                 tenant: str = TenantOpt, url: str | None = UrlOpt,
                 data_dir: Path = DataDirOpt, by: str | None = ByOpt,
                 as_json: bool = typer.Option(False, "--json", help="Print JSON for scripts")) -> None:
    """Revoke a token at once."""
    from rescind.api.auth import TokenStore
    from rescind.graph.store import connect

    by = decider(by)
    with operator_server(url, data_dir) as server_url:
        store = TokenStore(connect(server_url))
        audited(store.conn, tenant, by, "token.revoke", token_id,
                lambda: store.revoke(tenant, token_id))
    if as_json:
        print(json.dumps({"revoked": token_id}))
    else:
        out.print(f"revoked {token_id}")


@api_app.command("mcp")
def mcp(url: str | None = UrlOpt, data_dir: Path = DataDirOpt,
        token: str | None = typer.Option(None, "--token", envvar="RESCIND_TOKEN",
                                         help="Over stdio: the caller's API token (its tenant "
                                              "and role)"),
        http: bool = typer.Option(False, "--http", help="Serve streamable HTTP at /mcp "
                                  "instead of stdio: each request acts with its own bearer "
                                  "token (the API's tokens)"),
        host: str | None = typer.Option(None, "--host", help="With --http: listen address "
                                        "(default RESCIND_API_HOST or 127.0.0.1)"),
        port: int | None = typer.Option(None, "--port", help="With --http: port (default "
                                        "RESCIND_MCP_PORT or 8766)")) -> None:
    """The MCP server: over stdio acting with one token (and only what its role may), or over
    streamable HTTP (--http) acting with each request's bearer token."""
    if http:
        if token:
            out.print("(--token and RESCIND_TOKEN are for stdio: over HTTP each request acts "
                      "with its own bearer token)")
        from rescind.api.serve import serve_mcp_forever
        from rescind.runtime.settings import Settings

        settings = Settings()
        host, port = host or settings.api_host, port if port is not None else settings.mcp_port
        with operator_server(url, data_dir) as server_url:
            serve_mcp_forever(server_url, host, port, settings, lambda endpoint: out.print(
                f"MCP (streamable HTTP) on {endpoint} (FalkorDB {server_url}); each request "
                "sends 'Authorization: Bearer <token>'", soft_wrap=True))
        return
    if host or port is not None:
        refuse("--host and --port are for --http")
    if not token:
        refuse("the MCP server needs the caller's token: --token or RESCIND_TOKEN (or --http, "
               "where each request brings its own)")
    from rescind.api.mcp import stdio_server

    with operator_server(url, data_dir) as server_url:
        server = stdio_server(server_url, token)  # a bad token stops here, not per call
        server.run("stdio")
