"""Running Rescind: the workers, `up` (server, workers and API in one process), replay, and
the generated documents (the AsyncAPI document, the configuration table)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from pathlib import Path

import typer

from rescind.cli.common import (
    TERMINATING,
    ByOpt,
    JsonOpt,
    PartitionsOpt,
    UrlOpt,
    audited,
    decider,
    emit,
    falkordb,
    line_progress,
    out,
    reaching,
    ready,
    refuse,
    sigterm_as_interrupt,
)


def replay(
    file: Path = typer.Argument(..., help="A scenario file (JSONL, see docs/scenario-format.md)"),
    url: str | None = UrlOpt,
    tenant: str | None = typer.Option(None, help="Tenant name; default: a fresh one"),
    as_json: bool = typer.Option(False, "--json", help="Print the JSON report"),
    via_streams: bool = typer.Option(False, "--via-streams",
                                     help="Send every line through streams and workers"),
    by: str | None = ByOpt,
) -> None:
    """Apply a scenario to a fresh tenant and report what is IN, OUT, held and recalled.

    `gate` lines judge with RESCIND_GATE_THRESHOLD and RESCIND_GATE_MIN_DOMAINS, as the
    workers do. The replay is one entry of the new tenant's audit log (signed with --by or
    the OS user), not one per line: its lines are a story's past, stamped with its own times."""
    from rescind.contract.layout import check_tenant
    from rescind.engine.gate import GatePolicy
    from rescind.graph.store import connect
    from rescind.runtime.settings import Settings
    from rescind.scenario.replay import fresh_tenant, replay_text
    from rescind.scenario.via_streams import replay_via_streams
    from rescind.views.replay import render

    settings = Settings()
    limits = {"gate": GatePolicy.from_settings(settings)}
    by = decider(by)
    tenant = check_tenant(tenant) if tenant is not None else fresh_tenant()

    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        refuse(f"cannot read {file}: {exc.strerror}")

    def run(server_url: str, advance) -> dict:
        if via_streams:
            return replay_via_streams(text, server_url, tenant, settings.partitions,
                                      on_progress=advance, **limits)
        return replay_text(text, server_url, tenant, on_progress=advance, **limits)

    with falkordb(url) as server_url, line_progress("replaying") as advance:
        report = audited(connect(server_url), tenant, by, "scenario.replay", file.name,
                         lambda: run(server_url, advance),
                         lambda r: {"memories": len(r["memories"]), "gates": len(r["gates"]),
                                    "recalls": len(r["recalls"]), "via_streams": via_streams})
    if as_json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        render(report, out, title=file.name)


ROLES = ("writer", "retraction", "reaper", "gate")
BEAT_S = 5.0  # how often a worker touches its --heartbeat file


def worker(
    roles: list[str] = typer.Argument(..., help="writer, retraction, reaper and/or gate"),
    url: str | None = UrlOpt,
    worker_id: str = typer.Option(None, "--id", help="Consumer name suffix; default: host name and "
                                  "pid (containers all run as pid 1)"),
    partitions: int | None = PartitionsOpt,
    batch: int = typer.Option(500, help="Writer batch size"),
    reaper_idle_ms: int = typer.Option(30_000, help="Claim entries pending this long"),
    heartbeat: Path | None = typer.Option(None, "--heartbeat", help="Touch this file every "
                                          f"{BEAT_S:g} s while the workers' loop runs: "
                                          "`rescind health worker --heartbeat` reads it"),
) -> None:
    """Run workers against a FalkorDB server until SIGTERM or Ctrl-C."""
    unknown = [r for r in roles if r not in ROLES]
    if unknown or not url:
        refuse(f"unknown role(s) {unknown}; choose from {ROLES}" if unknown else
               "a worker needs --url (or RESCIND_URL): the server `rescind up` started")
    import socket

    with reaching(url):
        ready(url)  # a server loading its data is waited for
    from rescind.runtime import priority
    from rescind.runtime.settings import Settings

    if nice := priority.for_roles(roles, Settings().worker_nice):  # RESCIND_WORKER_NICE
        priority.lower(nice)  # before the workers start their threads: they inherit it
    _serve(url, tuple(roles), worker_id or f"{socket.gethostname()}-{os.getpid()}", partitions,
           heartbeat=heartbeat, batch=batch, reaper_idle_ms=reaper_idle_ms)


def up(
    data_dir: Path | None = typer.Option(Path(".rescind/data"), help="AOF persistence here"),
    port: int | None = typer.Option(None, help="Port for the embedded server"),
    partitions: int | None = PartitionsOpt,
    api_port: int | None = typer.Option(None, help="HTTP API and console port (default "
                                        "RESCIND_API_PORT or 8765; 0: no API)"),
    cluster: int = typer.Option(0, "--cluster", min=0, max=16, help="A local Redis Cluster of "
                                "this many masters instead of one server (data under "
                                "<data-dir>/cluster)"),
    replicas: int = typer.Option(0, "--replicas", min=0, max=3,
                                 help="With --cluster: replicas per master"),
) -> None:
    """The embedded FalkorDB, every worker and the HTTP API with its console, in one process;
    Ctrl-C stops all cleanly. A server that dies is started again on its data (RESCIND_RESTART_*);
    after repeated failures `up` stops and exits non-zero. With --cluster, a local Redis Cluster
    of embedded servers (each node supervised the same way)."""
    from rescind.api.serve import api_thread
    from rescind.contract.errors import Unavailable
    from rescind.runtime.cluster import EmbeddedCluster
    from rescind.runtime.readiness import ServerError
    from rescind.runtime.server import EmbeddedFalkorDB
    from rescind.runtime.settings import Settings
    from rescind.runtime.supervisor import RestartPolicy, Supervisor, Supervisors

    if replicas and not cluster:
        refuse("--replicas needs --cluster N")
    if cluster and port is not None:
        refuse("--port is for one server; a cluster's nodes take free ports (kept in "
               "<data-dir>/cluster/cluster.json)")
    settings = Settings()
    api_port = settings.api_port if api_port is None else api_port
    policy = RestartPolicy.from_settings(settings)
    failure = None
    # Stopped while starting (the server may still be loading its data): as cleanly as later.
    with contextlib.suppress(KeyboardInterrupt), sigterm_as_interrupt(), \
            contextlib.ExitStack() as stack:
        if cluster:
            where = data_dir / "cluster" if data_dir else None
            server = stack.enter_context(EmbeddedCluster(cluster, replicas, where))
            supervisor = stack.enter_context(Supervisors(server.nodes, policy))
        else:
            server = stack.enter_context(EmbeddedFalkorDB(data_dir=data_dir, port=port))
            supervisor = stack.enter_context(Supervisor(server, policy))
        said = f"FalkorDB: {server.where}" if cluster else \
            f"FalkorDB on {server.url} (data in {data_dir})"
        out.print(f"{said}; workers: {', '.join(ROLES)}")
        base = None
        if api_port:
            base = stack.enter_context(api_thread(server.url, settings.api_host, api_port,
                                                  settings, server_status=supervisor.status))
            out.print(f"API on {base}/api/v1, console on {base}/console/")
        from rescind.cli.serving import announced, exports

        entry = stack.enter_context(announced(None if cluster else data_dir, server.url, base))
        out.print("In other shells, for `rescind` commands to use this server (not start "
                  "their own):\n  " + "\n  ".join(exports(entry)), markup=False, soft_wrap=True)
        try:
            _serve(server.url, ROLES, f"up-{os.getpid()}", partitions, supervisor=supervisor)
        except Unavailable:  # the workers' last flush met the dead server: say why it died
            if not supervisor.failure:
                raise
        failure = supervisor.failure
    if failure:
        raise ServerError(f"rescind up stopped: {failure}")


async def beat(path: Path, stop, every_s: float = BEAT_S) -> None:
    """Touch ``path`` every ``every_s`` seconds until ``stop`` is set: the file's age is how
    long the event loop has not run (a stuck loop stops beating; a server away does not)."""
    import asyncio

    path.parent.mkdir(parents=True, exist_ok=True)
    while not stop.is_set():
        path.touch()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every_s)


def _serve(url: str, roles: tuple[str, ...], worker_id: str, partitions: int | None,
           supervisor=None, heartbeat: Path | None = None, **tuning: int) -> None:
    """The workers until SIGINT or SIGTERM, or until ``supervisor`` gives up on the server;
    with ``heartbeat``, a file touched while the loop runs."""
    import asyncio

    from rescind.engine.gate import GatePolicy
    from rescind.runtime import telemetry
    from rescind.runtime.settings import Settings
    from rescind.workers.app import WorkerSettings, serve

    config = Settings()
    telemetry.configure(config.otel, config.otlp_endpoint, config.metric_interval_ms)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        if TERMINATING.is_set():  # told to stop before these handlers, the interrupt lost
            stop.set()
        if supervisor is not None:
            supervisor.on_give_up = lambda why: loop.call_soon_threadsafe(stop.set)
            if supervisor.failure:
                stop.set()
        settings = WorkerSettings(url=url, worker_id=worker_id,
                                  partitions=config.partitions if partitions is None else partitions,
                                  gate=GatePolicy.from_settings(config),
                                  audit_max_live=config.audit_max_live, **tuning)
        beating = asyncio.create_task(beat(heartbeat, stop)) if heartbeat else None
        try:
            await serve(settings, roles, stop)
        finally:
            if beating is not None:
                stop.set()
                await beating

    with reaching(url):
        asyncio.run(main())
    out.print("workers stopped")


def asyncapi(out_file: Path = typer.Option(Path("docs/asyncapi.json"), "--out"),
             as_json: bool = JsonOpt) -> None:
    """Write the AsyncAPI document of the events (generated by FastStream)."""
    from rescind.workers.spec import document

    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text(document(), encoding="utf-8")
    emit({"file": str(out_file)}, as_json, lambda d, c: c.print(f"wrote {d['file']}"))


def config_schema(
    write: Path | None = typer.Option(None, "--write", help="Regenerate the table between the "
                                      "schema markers of this file (docs/wrapping.md)"),
    as_json: bool = JsonOpt,
) -> None:
    """Print the configuration reference of `instrument` (InterceptConfig), as a Markdown
    table; --write puts it in a document."""
    from rescind.views import config_schema as schema

    if write is None:
        if as_json:
            print(json.dumps(schema.rows(), indent=2, ensure_ascii=False))
        else:
            print(schema.markdown(), end="")
        return
    try:
        text = write.read_text(encoding="utf-8")
    except OSError as exc:
        refuse(f"cannot read {write}: {exc.strerror}")
    try:
        updated = schema.replaced(text)
    except ValueError as exc:
        refuse(f"{write}: {exc}")
    write.write_text(updated, encoding="utf-8")
    emit({"file": str(write), "changed": updated != text}, as_json,
         lambda d, c: c.print(f"{'updated' if d['changed'] else 'unchanged'}: {d['file']}"))
