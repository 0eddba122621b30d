"""`rescind tenant …`: tenants exist only when created (here, by an admin's API call, or by a
token made for a new tenant); the writer dead-letters the events of any other."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from rescind.cli.common import (
    DataDirOpt,
    JsonOpt,
    Line,
    UrlOpt,
    audited,
    decider,
    emit,
    operator_server,
)

tenant_app = typer.Typer(help="Tenants: each has a graph of its own; the events of a tenant "
                         "never created are dead-lettered.", no_args_is_help=True)


@tenant_app.command("create")
def create(
    name: str = typer.Argument(..., help="1 to 64 characters from a-z, 0-9, '_' and '-'"),
    by: str | None = typer.Option(None, "--by", help="Who creates it (default: the OS user)",
                                  callback=Line),
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, as_json: bool = JsonOpt,
) -> None:
    """Create a tenant: register it and create its graph (nothing changes if it exists)."""
    from rescind.graph import tenants
    from rescind.graph.store import connect

    who = decider(by)
    with operator_server(url, data_dir) as server_url:
        conn = connect(server_url)
        created = audited(conn, name, who, "tenant.create", name,
                          lambda: tenants.create(conn, name, who), lambda made: {"created": made})
    emit({"name": name, "created": created}, as_json, lambda d, c: c.print(
        f"created tenant {name}" if created else f"tenant {name} exists already"))


@tenant_app.command("list")
def list_(url: str | None = UrlOpt, data_dir: Path = DataDirOpt,
          as_json: bool = JsonOpt) -> None:
    """Every tenant, with when and by whom it was created."""
    from rescind.graph import tenants
    from rescind.graph.store import connect

    with operator_server(url, data_dir) as server_url:
        conn = connect(server_url)
        tenants.adopt_graphs(conn)
        rows = [{"name": n, **r} for n, r in sorted(tenants.registered(conn).items())]
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    for r in rows:
        typer.echo(f"{r['name']}  created {r['created_at'] or '?'} by {r['created_by'] or '?'}")
    if not rows:
        typer.echo("no tenants")
