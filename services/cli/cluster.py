"""`rescind cluster …`: forming a Redis Cluster of FalkorDB nodes in a deployment (the
Kubernetes bootstrap Job and the compose profile run it; `rescind up --cluster` forms its local
one the same way)."""

from __future__ import annotations

import typer

from rescind.cli.common import JsonOpt, emit

cluster_app = typer.Typer(help="A Redis Cluster of FalkorDB nodes: forming it.",
                          no_args_is_help=True)


@cluster_app.command("bootstrap")
def bootstrap(
    nodes: str = typer.Option(..., "--nodes", help="Every node, masters first: "
                              "host:port,... or host:port@busport,... (bus port default: port + 10000)"),
    replicas: int = typer.Option(1, "--replicas", min=0, help="Replicas per master"),
    timeout: float = typer.Option(300.0, "--timeout", min=1.0, help="Seconds each wait may "
                                  "last (for the nodes to answer, to meet, to be ok)"),
    password: str | None = typer.Option(None, "--password", envvar="FALKORDB_PASSWORD",
                                        show_default=False, help="The nodes' requirepass "
                                        "(better in FALKORDB_PASSWORD than on a command line)"),
    as_json: bool = JsonOpt,
) -> None:
    """Assign the slots to the masters in equal ranges, meet, make each replica follow its
    master, and wait for cluster_state:ok. Only what is missing is done: on a formed cluster
    (even after a failover) it changes nothing."""
    from rescind.runtime.bootstrap import bootstrap as form
    from rescind.runtime.bootstrap import masters_of, parse_nodes

    given = parse_nodes(nodes)
    masters = masters_of(len(given), replicas)
    changed = form(given, replicas, password, timeout, say=lambda s: typer.echo(s, err=True))
    shape = f"{masters} master(s) with {replicas} replica(s) each"
    emit({"masters": masters, "replicas": replicas, "changes": changed}, as_json,
         lambda d, c: c.print(f"cluster formed: {shape}, {len(changed)} change(s)" if changed
                              else f"nothing to do: the cluster of {shape} is formed",
                              markup=False))
