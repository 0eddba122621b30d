"""`rescind tenant …`: tenants exist only when created (here, by an admin's API call, or by a
token made for a new tenant); the writer dead-letters the events of any other."""

from __future__ import annotations

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
    refuse,
)

tenant_app = typer.Typer(help="Tenants: each has a graph of its own; the events of a tenant "
                         "never created are dead-lettered.", no_args_is_help=True)


@tenant_app.command("create")
def create(
    name: str = typer.Argument(..., help="1 to 64 characters from a-z, 0-9, '_' and '-'"),
    by: str | None = typer.Option(None, "--by", help="Who creates it: a note beside the OS user, who signs",
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
        f"created tenant {name}" if created else f"tenant {name} exists already"),
        "create_tenant")


@tenant_app.command("settings")
def settings(
    name: str = typer.Argument(..., help="The tenant"),
    organisation_name: str | None = typer.Option(
        None, "--organisation-name", help="The organisation's legal name as its bank knows it "
        "(camt.056 Assgnr/Pty/Nm)"),
    organisation_id: str | None = typer.Option(
        None, "--organisation-id", help="The id the bank knows the organisation by, e.g. its "
        "customer number (Assgnr/Pty/Id/OrgId/Othr/Id)"),
    organisation_lei: str | None = typer.Option(
        None, "--organisation-lei", help="The organisation's LEI (Assgnr/Pty/Id/OrgId/LEI)"),
    bank_bic: str | None = typer.Option(
        None, "--bank-bic", help="The BIC of the bank recalls go to (Assgne/Agt/FinInstnId)"),
    bank_name: str | None = typer.Option(None, "--bank-name", help="That bank's name"),
    by: str | None = typer.Option(None, "--by", help="Who changes them: a note beside the OS "
                                  "user, who signs", callback=Line),
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, as_json: bool = JsonOpt,
) -> None:
    """Show, or change (the options given; '' clears one), what the tenant's bank files say of
    it: a recall's camt.056 names the organisation and the bank from these. Until the name and
    the BIC are set, a camt.056 export is refused unless --allow-placeholders."""
    from rescind.graph import tenant_settings as ts
    from rescind.graph import tenants
    from rescind.graph.store import connect

    given = {"organisation_name": organisation_name, "organisation_id": organisation_id,
             "organisation_lei": organisation_lei, "bank_bic": bank_bic, "bank_name": bank_name}
    changes = {k: v for k, v in given.items() if v is not None}
    with operator_server(url, data_dir) as server_url:
        conn = connect(server_url)
        if not tenants.known(conn, name):
            raise tenants.UnknownTenant(name)
        if changes:
            who = decider(by)
            d = audited(conn, name, who, "tenant.settings", ", ".join(sorted(changes)),
                        lambda: ts.update(conn, name, changes).to_dict(),
                        lambda r: {"changed": {k: r[k] for k in changes},
                                   "placeholders": r["placeholders"]})
        else:
            d = ts.bank_file(conn, name).to_dict()

    def render(d: dict, c) -> None:
        for k in ts.NAMES:
            c.print(f"{k.replace('_', ' ')}: {d[k] or '(not set)'}", markup=False)
        for p in d["placeholders"]:
            c.print(f"a camt.056 would hold a placeholder for {p}", markup=False)

    emit(d, as_json, render, "set_tenant_settings" if changes else "tenant_settings")


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
        emit(rows, True, None, "tenants")
        return
    for r in rows:
        typer.echo(f"{r['name']}  created {r['created_at'] or '?'} by {r['created_by'] or '?'}")
    if not rows:
        typer.echo("no tenants")


@tenant_app.command("move")
def move(
    name: str = typer.Argument(..., help="The tenant to move"),
    to: str = typer.Option(..., "--to", help="The master to move it to, host:port"),
    max_pause: float | None = typer.Option(
        None, "--max-pause", min=0.0,
        help="Refuse when the graph's MIGRATE is expected to block the masters longer than "
             "this many seconds (default: half the cluster-node-timeout)"),
    by: str | None = typer.Option(None, "--by", help="Who moves it: a note beside the OS user, who signs",
                                  callback=Line),
    url: str | None = typer.Option(..., "--url", envvar="RESCIND_URL",
                                   help="A node of the Redis Cluster (redis://host:port)"),
    as_json: bool = JsonOpt,
) -> None:
    """Move a tenant (its hash slot, every key in it) to another master of a Redis Cluster,
    while it serves: CLUSTER SETSLOT IMPORTING/MIGRATING, MIGRATE, SETSLOT NODE. Its graph is
    moved in one MIGRATE that blocks both masters meanwhile (docs/scaling.md, "Moving a
    tenant")."""
    from rescind.graph import tenants
    from rescind.graph.store import connect
    from rescind.runtime import move as mv
    from rescind.transport import connection

    who = decider(by)
    conn = connect(url)
    if not connection.clustered(conn):
        refuse(f"{url} is a single server: a tenant moves between masters of a Redis Cluster")
    tenants.require(conn, name)
    report = audited(conn, name, who, "tenant.move", to,
                     lambda: mv.move_tenant(conn, name, to, max_pause_s=max_pause),
                     lambda r: r.as_dict())
    emit(report.as_dict(), as_json, lambda d, c: c.print(
        f"moved tenant {name} (slot {d['slot']}, {d['keys']} key(s)) from {d['source']} to "
        f"{d['target']} in {d['seconds']:.2f} s; its graph's MIGRATE blocked both for "
        f"{d['graph_migrate_s']:.2f} s"))
