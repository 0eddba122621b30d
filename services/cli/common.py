"""What every `rescind` command shares: consoles, options, and finding the FalkorDB server."""

from __future__ import annotations

import contextlib
import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import redis
import typer
from rich.console import Console

from rescind.contract import layout
from rescind.contract.errors import Unavailable

out = Console()
err = Console(stderr=True)

UrlOpt = typer.Option(None, "--url", help="A running FalkorDB server (redis://host:port)",
                      envvar="RESCIND_URL")
DataDirOpt = typer.Option(Path(".rescind/data"), "--data-dir", envvar="RESCIND_DATA_DIR",
                          help="Without --url: the embedded server's data (kept between commands)")
TenantOpt = typer.Option("demo", "--tenant", envvar="RESCIND_TENANT", help="Tenant name")
JsonOpt = typer.Option(False, "--json", help="Print JSON for scripts")
PartitionsOpt = typer.Option(None, "--partitions", min=1, help="Event stream partitions (default "
                             f"RESCIND_PARTITIONS or {layout.PARTITIONS}); the agents' must match")
DataDirOpt = typer.Option(Path(".rescind/data"), "--data-dir", envvar="RESCIND_DATA_DIR",
                          help="Without --url: the embedded server's data (kept between commands)")
TenantOpt = typer.Option("demo", "--tenant", envvar="RESCIND_TENANT", help="Tenant name")
JsonOpt = typer.Option(False, "--json", help="Print JSON for scripts")


@contextlib.contextmanager
def reaching(url: str | None) -> Iterator[None]:
    """Redis's connection error, told once in Rescind's terms (``Unavailable``, exit 2)."""
    try:
        yield
    except redis.ConnectionError as exc:
        raise Unavailable(f"cannot reach FalkorDB at {url}: {exc}") from exc


def ready(url: str) -> str:
    """``url`` once its server answers graph commands: a server loading its data is waited for
    (progress on stderr); one that refuses connections is Unavailable at once."""
    from rescind.runtime.server import Progress, wait_ready

    wait_ready(url, on_progress=Progress(url))
    return url


@contextlib.contextmanager
def falkordb(url: str | None, data_dir: str | None = None) -> Iterator[str]:
    """Yield a server URL: ``url`` itself, or an embedded server stopped when we leave."""
    if url:
        with reaching(url):
            yield ready(url)
        return
    from rescind.runtime.server import EmbeddedFalkorDB

    def terminate(signum, frame):  # SIGTERM ends us like Ctrl-C, so the server is stopped too
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        with EmbeddedFalkorDB(data_dir=data_dir) as server:
            yield server.url
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def operator_server(url: str | None, data_dir: Path) -> Iterator[str]:
    """``url``, the server that owns ``data_dir``, or an embedded server started on ``data_dir``
    for this command. Each is waited for while it loads its data, and the owner's server while
    its owner restarts it."""
    from rescind.runtime.server import DataDirInUse, EmbeddedFalkorDB, ServerGone, reach

    with contextlib.ExitStack() as stack:
        if url:
            url = ready(url)
        for attempt in range(2):  # the owner may stop between our two looks: start our own
            try:
                url = url or stack.enter_context(EmbeddedFalkorDB(data_dir=data_dir)).url
                break
            except DataDirInUse:
                try:
                    url = reach(data_dir)
                    break
                except ServerGone:
                    if attempt:
                        raise
        with reaching(url):
            yield url


@contextlib.contextmanager
def operator_graph(url: str | None, data_dir: Path, tenant: str):
    """The tenant's graph on the server ``operator_server`` finds."""
    from rescind.graph.store import TenantGraph, connect

    with operator_server(url, data_dir) as server_url:
        yield TenantGraph(connect(server_url), tenant)


@contextlib.contextmanager
def line_progress(what: str):
    """A progress bar on stderr (stdout stays clean for --json), shown only to a person at a
    terminal; yields advance(done, total)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    if not err.is_terminal:
        yield lambda done, total: None
        return
    with Progress(TextColumn(what), BarColumn(), MofNCompleteColumn(), console=err,
                  transient=True) as progress:
        task = progress.add_task(what, total=None)

        def advance(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        yield advance


def emit(data, as_json: bool, render) -> None:
    """``data`` as JSON on stdout for scripts, or rendered for a person."""
    if as_json:
        print(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    else:
        render(data, out)


def refuse(message: str) -> NoReturn:
    """Stop the command before it starts anything: one line on stderr, exit 2."""
    err.print(message, soft_wrap=True)  # one line, however narrow the terminal
    raise typer.Exit(2)
