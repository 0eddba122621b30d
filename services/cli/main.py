"""The `rescind` command: every command takes --url, or starts the embedded FalkorDB itself.

Commands live by who uses them (``operate``: security and finance; ``run``: the services;
``api``: the HTTP API, tokens, MCP; ``harness``: the demo and benchmarks). An error of
``rescind.contract.errors`` is told here, once, for every command: its message on stderr, exit 2;
so is a RESCIND_* setting that does not validate, by its name.
"""

from __future__ import annotations

import typer
from pydantic import ValidationError
from typer.core import TyperGroup

from rescind.cli import harness, operate, run
from rescind.cli.api import api_app
from rescind.cli.audit import audit_app
from rescind.cli.cluster import cluster_app
from rescind.cli.health import health_app
from rescind.cli.memories import memories_app
from rescind.cli.sources import sources_app
from rescind.cli.tenant import tenant_app
from rescind.contract.errors import RescindError


class _Commands(TyperGroup):
    """The top command group; every subcommand runs inside its ``invoke``."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except RescindError as exc:
            typer.echo(exc.message, err=True)
            raise typer.Exit(2) from None
        except ValidationError as exc:  # a RESCIND_* setting: named, not a traceback
            if exc.title != "Settings":
                raise
            for err in exc.errors():
                name = "RESCIND_" + "_".join(str(p) for p in err["loc"]).upper()
                typer.echo(f"{name}: {err['msg']} (got {err.get('input')!r})", err=True)
            raise typer.Exit(2) from None


app = typer.Typer(help="Rescind: what your agents believed, planned and did because of a source.",
                  no_args_is_help=True, add_completion=False, cls=_Commands)
for command in (operate.compromise, operate.reinstate, operate.explain, operate.fragility):
    app.command()(command)
app.command("audit-order")(operate.audit_order)
for command in (harness.demo, harness.record, run.replay, run.worker, run.up, run.asyncapi):
    app.command()(command)
app.command("config-schema")(run.config_schema)
app.add_typer(harness.bench_app, name="bench")
app.add_typer(memories_app, name="memories")
app.add_typer(operate.recalls_app, name="recalls")
app.add_typer(operate.gate_app, name="gate")
app.add_typer(api_app, name="api")
app.add_typer(audit_app, name="audit")
app.add_typer(tenant_app, name="tenant")
app.add_typer(sources_app, name="sources")
app.add_typer(cluster_app, name="cluster")
app.add_typer(health_app, name="health")
