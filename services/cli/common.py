"""What every `rescind` command shares: consoles, options, and finding the FalkorDB server."""

from __future__ import annotations

import contextlib
import functools
import json
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer
from rich.console import Console

from rescind.contract import layout
from rescind.contract.errors import Unavailable

if TYPE_CHECKING:
    import redis

out = Console()
err = Console(stderr=True)

UrlOpt = typer.Option(None, "--url", help="A running FalkorDB server (redis://host:port)",
                      envvar="RESCIND_URL")
DEFAULT_DATA_DIR = Path(".rescind/data")
DataDirOpt = typer.Option(DEFAULT_DATA_DIR, "--data-dir", envvar="RESCIND_DATA_DIR",
                          help="Without --url: the embedded server's data (kept between commands)")
TenantOpt = typer.Option("demo", "--tenant", envvar="RESCIND_TENANT", help="Tenant name")
JsonOpt = typer.Option(False, "--json", help="Print JSON for scripts")
PartitionsOpt = typer.Option(None, "--partitions", min=1, help="Event stream partitions (default "
                             f"RESCIND_PARTITIONS or {layout.PARTITIONS}); the agents' must match")


def os_user() -> str:
    """The login name the operating system gives this process; its uid when it has none (a
    container's user without a passwd entry)."""
    import getpass
    import os

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}"


def decider(by: str | None) -> str:
    """Who signs a decision made at the shell: the OS user, which the machine vouches for.
    ``--by`` is what the person says of themselves: recorded beside it as a note, ``sam (--by
    fran@example.com)``, never in its place (anyone at a shell can type any name; see
    docs/operating.md, "Who signs a decision at the shell")."""
    user = os_user()
    if by is None:
        return user
    if not by.strip():
        refuse("--by is empty: say who decides, or leave it out to sign as the OS user")
    by = by.strip()
    return user if by == user else f"{user} (--by {by})"


def shell_audit(conn: redis.Redis):
    """The audit log, with the bound the services use (RESCIND_AUDIT_MAX_LIVE)."""
    from rescind.operator.audit import AuditLog
    from rescind.runtime.settings import Settings

    return AuditLog(conn, Settings().audit_max_live)


def audited(conn: redis.Redis, tenant: str | None, by: str, action: str, target: str | None,
            run, summary=None):
    """Run a decision made at the shell and audit it (``via: cli``, role ``operator``: whoever
    can reach the server), refusals included."""
    from rescind.contract.errors import BadTenantName
    from rescind.operator.audit import Actor

    try:
        layout.check_tenant(tenant) if tenant is not None else None
    except BadTenantName:
        tenant = None  # refused for its name: logged with the server's
    return shell_audit(conn).audited(tenant, Actor(by, "operator", "", "cli"), action, target,
                                     run, summary)


def counts(d: dict) -> dict:
    """What the audit keeps of a blast radius: which, why, counts, the payments it moves."""
    from rescind.operator.audit_text import radius

    return radius(d)


def checked(max_length: int = 200, one_line: bool = True):
    """A typer ``callback`` that checks an argument or option as the models check a field
    (``rescind.contract.text``: no NUL, no control characters, at most ``max_length``
    characters): before anything reaches the graph, else a usage error naming it (exit 2)."""
    from rescind.contract import text

    def callback(value: str | None) -> str | None:
        if value is None:
            return value
        try:
            return text.check(value, max_length, one_line)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None

    return callback


def shell_time(text: str | None, option: str) -> str | None:
    """A time typed at the shell, as ISO 8601 with its zone. One without a zone
    (``2026-11-16 08:00``, ``2026-11-01``) is read as UTC, and the command says so on stderr
    with the time it took; one that is no time at all is left for ``parse_time`` to refuse."""
    from datetime import UTC, datetime

    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        return text
    if moment.tzinfo is not None:
        return text
    moment = moment.replace(tzinfo=UTC)
    err.print(f"{option} {text} has no zone: read as UTC, "
              f"{moment.strftime('%Y-%m-%d %H:%M:%S')} UTC", soft_wrap=True, markup=False)
    return moment.isoformat()


Line = checked()  # an id, a name, a source, `by`
Reason = checked(2000, one_line=False)
ByOpt = typer.Option(None, "--by", help="Who you are, as a note beside the signature: "
                     "decisions are signed by the OS user, e.g. 'sam (--by fran@example.com)'",
                     callback=Line)


@contextlib.contextmanager
def reaching(url: str | None) -> Iterator[None]:
    """Redis's connection error, told once in Rescind's terms (``Unavailable``, exit 2)."""
    import redis

    try:
        yield
    except redis.ConnectionError as exc:
        raise Unavailable(f"cannot reach FalkorDB at {url}: {exc}") from exc


def ready(url: str) -> str:
    """``url`` once its server answers graph commands: a server loading its data is waited for
    (progress on stderr); one that refuses connections is Unavailable at once."""
    from rescind.runtime.readiness import Progress, wait_ready

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

    with sigterm_as_interrupt(), EmbeddedFalkorDB(data_dir=data_dir) as server:
        yield server.url


# Set by SIGTERM (and kept): an interrupt that lands while Python runs a finalizer is printed
# as "Exception ignored" and lost, and `up` then served on after its stop (CI saw it hang).
# The workers' loop reads this once its own signal handlers are in place.
TERMINATING = threading.Event()


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM ends us like Ctrl-C, so an embedded server we started is stopped too."""
    def terminate(signum, frame):
        TERMINATING.set()
        raise KeyboardInterrupt

    TERMINATING.clear()

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def operator_server(url: str | None, data_dir: Path) -> Iterator[str]:
    """``url``, the server that owns ``data_dir``, or an embedded server started on ``data_dir``
    for this command. Each is waited for while it loads its data, and the owner's server while
    its owner restarts it."""
    with shared_or_own_server(url, data_dir) as (url, _own):
        yield url


@contextlib.contextmanager
def shared_or_own_server(url: str | None, data_dir: Path) -> Iterator[tuple[str, bool]]:
    """As ``operator_server``, with whether the server is this command's own (started here on
    ``data_dir``, so nothing else serves its tenants) rather than ``url`` or another process's
    (``rescind up`` on the same data directory)."""
    from rescind.runtime.readiness import DataDirInUse, ServerGone, owned, reach
    from rescind.runtime.server import EmbeddedFalkorDB

    with contextlib.ExitStack() as stack:
        own = False
        if url:
            url = ready(url)
        elif not owned(data_dir):  # never a second server beside the one `rescind up` runs
            from rescind.cli.serving import second_server

            if why := second_server(data_dir, DEFAULT_DATA_DIR):
                refuse(why)
        for attempt in range(2):  # the owner may stop between our two looks: start our own
            try:
                if not url:
                    url, own = stack.enter_context(EmbeddedFalkorDB(data_dir=data_dir)).url, True
                break
            except DataDirInUse:
                try:
                    url = reach(data_dir)
                    break
                except ServerGone:
                    if attempt:
                        raise
        with reaching(url):
            yield url, own


@contextlib.contextmanager
def operator_graph(url: str | None, data_dir: Path, tenant: str):
    """The tenant's graph on the server ``operator_server`` finds; UnknownTenant (exit 2) for
    a tenant never created, whose graph a command would otherwise start."""
    from rescind.graph import tenants
    from rescind.graph.store import TenantGraph, connect

    with operator_server(url, data_dir) as server_url:
        conn = connect(server_url)
        yield TenantGraph(conn, tenants.require(conn, tenant))


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


def emit(data, as_json: bool, render, job: str | None = None) -> None:
    """``data`` as JSON on stdout for scripts, or rendered for a person. ``job``: the API's job
    (``rescind.api.jobs``) this command does too; its JSON is then that job's ``answer``."""
    if as_json:
        print(json.dumps(answer(job, data) if job else data, indent=2, ensure_ascii=False,
                         default=str))
    else:
        render(data, out)


def answer(job: str, data):
    """``data`` as the API answers job ``job``: validated against the job's answer model
    (``rescind.api.answers``; a ValidationError when it does not fit) and serialised as its
    route serialises it: the fields given, each as its model types it."""
    adapter = _answer_adapter(job)
    return adapter.dump_python(adapter.validate_python(data), mode="json", exclude_unset=True)


@functools.cache
def _answer_adapter(job: str):
    from pydantic import TypeAdapter

    from rescind.api.jobs import BY_NAME

    return TypeAdapter(BY_NAME[job].answer)


def refuse(message: str) -> NoReturn:
    """Stop the command before it starts anything: one line on stderr, exit 2."""
    err.print(message, soft_wrap=True)  # one line, however narrow the terminal
    raise typer.Exit(2)
