"""The `rescind` command. Every command takes --url, or starts the embedded FalkorDB itself."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import redis
import typer
from rescind.contract.keys import BadTenantName
from rescind.scenario.format import ScenarioError
from rich.console import Console

app = typer.Typer(help="Rescind: what your agents believed, planned and did because of a source.",
                  no_args_is_help=True, add_completion=False)
bench_app = typer.Typer(help="Benchmarks; results go to docs/bench/ with the command that made them.")
app.add_typer(bench_app, name="bench")
recalls_app = typer.Typer(help="Drafted bank recalls of executed payments that went OUT (finance).",
                          no_args_is_help=True)
app.add_typer(recalls_app, name="recalls")
from rescind.cli.api import api_app  # noqa: E402 - FastAPI is imported only when run

app.add_typer(api_app, name="api")
out = Console()
err = Console(stderr=True)

UrlOpt = typer.Option(None, "--url", help="A running FalkorDB server (redis://host:port)",
                      envvar="RESCIND_URL")


@contextlib.contextmanager
def falkordb(url: str | None, data_dir: str | None = None) -> Iterator[str]:
    """Yield a server URL: ``url`` itself, or an embedded server stopped when we leave."""
    if url:
        yield url
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


DataDirOpt = typer.Option(Path(".rescind/data"), "--data-dir", envvar="RESCIND_DATA_DIR",
                          help="Without --url: the embedded server's data (kept between commands)")
TenantOpt = typer.Option("demo", "--tenant", envvar="RESCIND_TENANT", help="Tenant name")
JsonOpt = typer.Option(False, "--json", help="Print JSON for scripts")


@contextlib.contextmanager
def operator_server(url: str | None, data_dir: Path) -> Iterator[str]:
    """``url``, the server that owns ``data_dir``, or an embedded server started on ``data_dir``
    for this command. Operator errors exit 2 with one line."""
    from rescind.operator.decisions import OperatorError
    from rescind.operator.recalls import RecallError
    from rescind.runtime.server import DataDirInUse, EmbeddedFalkorDB, running_url

    try:
        with contextlib.ExitStack() as stack:
            if not url:
                try:
                    url = stack.enter_context(EmbeddedFalkorDB(data_dir=data_dir)).url
                except DataDirInUse:
                    url = running_url(data_dir)
            yield url
    except (OperatorError, RecallError, BadTenantName) as exc:
        err.print(str(exc))
        raise typer.Exit(2) from None
    except redis.ConnectionError as exc:
        err.print(f"cannot reach FalkorDB at {url}: {exc}")
        raise typer.Exit(2) from None


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


def _emit(data, as_json: bool, render) -> None:
    if as_json:
        print(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    else:
        render(data, out)


@app.command()
def compromise(
    source: str = typer.Argument(..., help="The source, e.g. portal:northwind"),
    start: str | None = typer.Option(None, "--from", help="Window start, ISO 8601 with zone"),
    end: str | None = typer.Option(None, "--to", help="Window end (included), ISO 8601"),
    reason: str = typer.Option(..., help="Why the source is compromised"),
    commit: bool = typer.Option(False, "--commit", help="Apply it (default: preview only)"),
    rev: int | None = typer.Option(None, help="With --commit: refuse if the graph moved past "
                                   "this preview revision"),
    rid: str | None = typer.Option(None, "--id", help="Retraction id (default: generated)"),
    by: str = typer.Option("security", help="Who decides"),
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Declare a source compromised over a window: preview the blast radius, or --commit."""
    from rescind.operator import decisions as security
    from rescind.views import operator as views

    with operator_graph(url, data_dir, tenant) as graph:
        d = security.compromise(graph, source, security.parse_time(start, "--from"),
                                security.parse_time(end, "--to"), reason, by, commit, rid, rev)
    title = f"{'Committed' if d['committed'] else 'Preview'}: {source} compromised"
    _emit(d, as_json, lambda d, c: views.blast_radius(d, c, title))
    if not as_json and not d["committed"]:
        out.print(f"\nnothing changed; apply with --commit --rev {d['rev']}")


@app.command()
def reinstate(
    retraction: str = typer.Argument(..., help="The id of a retraction, withdrawal or correction"),
    by: str = typer.Option("security", help="Who decides"),
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Undo a retraction: what it took out comes back, unless something else keeps it out."""
    from rescind.operator import decisions as security
    from rescind.views import operator as views

    with operator_graph(url, data_dir, tenant) as graph:
        d = security.reinstate(graph, retraction, by)
    _emit(d, as_json, lambda d, c: views.blast_radius(d, c, f"Reinstated {retraction}"))


@app.command()
def explain(
    memory: str = typer.Argument(..., help="A memory id, or a name (an action's name)"),
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """The justification tree of a memory, down to its sources."""
    from rescind.operator import decisions as security
    from rescind.views import operator as views

    with operator_graph(url, data_dir, tenant) as graph:
        d = security.explain(graph, memory)
    _emit(d, as_json, views.justification_tree)


@app.command()
def fragility(
    action: str = typer.Argument(..., help="An action (or any memory): id or name"),
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """How many trust domains an attacker must control to fake it, and which would do."""
    from rescind.operator import decisions as security
    from rescind.views import operator as views

    with operator_graph(url, data_dir, tenant) as graph:
        d = security.fragility(graph, action)
    _emit(d, as_json, views.fragility)


@app.command("audit-order")
def audit_order(
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Sources ranked by the value of what rests on them alone: audit these first."""
    from rescind.operator import decisions as security
    from rescind.views import operator as views

    with operator_graph(url, data_dir, tenant) as graph:
        d = security.audit_order(graph)
    _emit(d, as_json, views.audit_order)


@recalls_app.command("list")
def recalls_list(
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Executed payments that went OUT, largest first (payments without an amount last)."""
    from rescind.operator.recalls import recall_list
    from rescind.views import operator as views

    with operator_graph(url, data_dir, tenant) as graph:
        rows = recall_list(graph)
    _emit(rows, as_json, views.recalls)


@recalls_app.command("show")
def recalls_show(
    action: str = typer.Argument(..., help="The payment: id or name"),
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """The drafted bank recall of one payment, with its evidence chain."""
    from rescind.operator import decisions as security
    from rescind.operator.recalls import find

    with operator_graph(url, data_dir, tenant) as graph:
        row = find(graph, security.resolve(graph, action))
    _emit(row, as_json, lambda r, c: c.print(f"[{r['state']}]\n{r['draft']}", markup=False))


@recalls_app.command("approve")
def recalls_approve(
    action: str = typer.Argument(..., help="The payment: id or name"),
    by: str = typer.Option(..., help="Who in finance approves"),
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Approve a drafted recall: it is written to the outbox for the bank; nothing else."""
    from datetime import UTC, datetime

    from rescind.contract.events import to_micros
    from rescind.operator import decisions as security
    from rescind.operator.recalls import approve

    with operator_graph(url, data_dir, tenant) as graph:
        row = approve(graph, security.resolve(graph, action), by, to_micros(datetime.now(UTC)))
    _emit(row, as_json, lambda r, c: c.print(
        f"approved by {by}: recall of {r['amount']:,.2f} to {r['payee']} is in the outbox"
        if r["amount"] is not None else f"approved by {by}: the recall is in the outbox"))


@app.command()
def demo(
    mode: str | None = typer.Option(None, help="gemini | replay | policy (default: gemini when "
                                    "GOOGLE_API_KEY or GEMINI_API_KEY is set, else replay)"),
    recording: Path | None = typer.Option(None, help="Recording to replay (default: the committed "
                                          "agents/recordings/week.json)"),
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """The reference agents' week through the real event path, told as a story."""
    from rescind.agents.llm import GeminiUnavailable, RecordingMiss, chat_model
    from rescind.demo import week as week
    from rescind.demo.story import tell

    try:  # a bad mode or an unreadable recording: refused before anything is touched
        model = chat_model(mode, recording)
    except (GeminiUnavailable, ValueError, OSError) as exc:
        _refuse(f"{type(exc).__name__}: {exc}")
    try:
        with operator_server(url, data_dir) as server_url, out.status("the week is running…"):
            summary = week.run(server_url, tenant, model=model)
    except (RecordingMiss, GeminiUnavailable) as exc:  # the recording or Gemini ran out mid-week
        err.print(f"{type(exc).__name__}: {exc}")
        raise typer.Exit(2) from None
    _emit(summary, as_json, tell)


@app.command()
def record(
    policy: bool = typer.Option(False, "--policy", help="Record the deterministic policy "
                                "(no key needed); default: Gemini, which needs a key"),
    out_file: Path = typer.Option(Path("agents/recordings/week.json"), "--out"),
    url: str | None = UrlOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Remake the recording that `rescind demo` replays offline, by running the demo week."""
    from rescind.agents.llm import GeminiModel, PolicyModel, RecordingModel, gemini_key
    from rescind.demo import week as week

    if not policy and not gemini_key():
        err.print("recording Gemini needs GOOGLE_API_KEY or GEMINI_API_KEY; or pass --policy to "
                  "record the deterministic policy")
        raise typer.Exit(2)
    inner = PolicyModel() if policy else GeminiModel()
    model = RecordingModel(inner, out_file, fresh=True,
                           note="made by `rescind record`: the demo week, wrapped by Rescind")
    with falkordb(url) as server_url, err.status("recording the week…"):
        week.run(server_url, "record", model=model)
    done = {"file": str(out_file), "calls": len(json.loads(out_file.read_text())["calls"]),
            "made_with": model.made_with}
    _emit(done, as_json, lambda d, c: c.print(f"wrote {d['file']} ({d['calls']} calls, made with "
                                              f"{d['made_with']})"))


@app.command()
def replay(
    file: Path = typer.Argument(..., help="A scenario file (JSONL, see SCENARIO-FORMAT)"),
    url: str | None = UrlOpt,
    tenant: str | None = typer.Option(None, help="Tenant name; default: a fresh one"),
    as_json: bool = typer.Option(False, "--json", help="Print the JSON report"),
    via_streams: bool = typer.Option(False, "--via-streams",
                                     help="Send every line through streams and workers"),
) -> None:
    """Apply a scenario to a fresh tenant and report what is IN, OUT, held and recalled."""
    from rescind.scenario.replay import replay_text
    from rescind.scenario.via_streams import replay_via_streams
    from rescind.views.replay import render

    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        err.print(f"cannot read {file}: {exc.strerror}")
        raise typer.Exit(2) from None
    try:
        with falkordb(url) as server_url, line_progress("replaying") as advance:
            run = replay_via_streams if via_streams else replay_text
            report = run(text, server_url, tenant, on_progress=advance)
    except ScenarioError as exc:
        for line, why in exc.errors:
            print(f"line {line}: {why}", file=sys.stderr)
        raise typer.Exit(2) from None
    except BadTenantName as exc:
        err.print(str(exc))
        raise typer.Exit(2) from None
    except redis.ConnectionError as exc:
        err.print(f"cannot reach FalkorDB at {url}: {exc}")
        raise typer.Exit(2) from None
    if as_json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        render(report, out, title=file.name)


ROLES = ("writer", "retraction", "reaper", "gate")


@app.command()
def worker(
    roles: list[str] = typer.Argument(..., help="writer, retraction, reaper and/or gate"),
    url: str | None = UrlOpt,
    worker_id: str = typer.Option(None, "--id", help="Consumer name suffix; default: host name and "
                                  "pid (containers all run as pid 1)"),
    partitions: int = typer.Option(4, help="Event stream partitions"),
    batch: int = typer.Option(500, help="Writer batch size"),
    reaper_idle_ms: int = typer.Option(30_000, help="Claim entries pending this long"),
) -> None:
    """Run workers against a FalkorDB server until SIGTERM or Ctrl-C."""
    unknown = [r for r in roles if r not in ROLES]
    if unknown or not url:
        err.print(f"unknown role(s) {unknown}; choose from {ROLES}" if unknown else
                  "a worker needs --url (or RESCIND_URL): the server `rescind up` started")
        raise typer.Exit(2)
    import socket

    _serve(url, tuple(roles), worker_id or f"{socket.gethostname()}-{os.getpid()}", partitions,
           batch=batch, reaper_idle_ms=reaper_idle_ms)


@app.command()
def up(
    data_dir: Path | None = typer.Option(Path(".rescind/data"), help="AOF persistence here"),
    port: int | None = typer.Option(None, help="Port for the embedded server"),
    partitions: int = typer.Option(4, help="Event stream partitions"),
    api_port: int | None = typer.Option(None, help="HTTP API and console port (default "
                                        "RESCIND_API_PORT or 8765; 0: no API)"),
) -> None:
    """The embedded FalkorDB, every worker and the HTTP API with its console, in one process;
    Ctrl-C stops all cleanly."""
    from rescind.api.serve import ApiPortError, api_thread
    from rescind.runtime.server import EmbeddedFalkorDB, ServerError
    from rescind.runtime.settings import Settings

    settings = Settings()
    api_port = settings.api_port if api_port is None else api_port
    try:
        with EmbeddedFalkorDB(data_dir=data_dir, port=port) as server, contextlib.ExitStack() as api:
            out.print(f"FalkorDB on {server.url} (data in {data_dir}); workers: "
                      f"{', '.join(ROLES)}")
            if api_port:
                base = api.enter_context(api_thread(server.url, settings.api_host, api_port,
                                                    settings))
                out.print(f"API on {base}/api/v1, console on {base}/console/")
            _serve(server.url, ROLES, f"up-{os.getpid()}", partitions)
    except ServerError as exc:
        err.print(f"cannot start the embedded FalkorDB: {exc}")
        raise typer.Exit(2) from None
    except ApiPortError as exc:
        err.print(f"cannot start the API: {exc}")
        raise typer.Exit(2) from None


def _serve(url: str, roles: tuple[str, ...], worker_id: str, partitions: int,
           **tuning: int) -> None:
    import asyncio

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
        settings = WorkerSettings(url=url, worker_id=worker_id, partitions=partitions,
                                  gate_threshold=config.gate_threshold,
                                  gate_min_domains=config.gate_min_domains, **tuning)
        await serve(settings, roles, stop)

    try:
        asyncio.run(main())
    except redis.ConnectionError as exc:
        err.print(f"cannot reach FalkorDB at {url}: {exc}")
        raise typer.Exit(2) from None
    out.print("workers stopped")


@app.command()
def asyncapi(out_file: Path = typer.Option(Path("docs/asyncapi.json"), "--out"),
             as_json: bool = JsonOpt) -> None:
    """Write the AsyncAPI document of the events (generated by FastStream)."""
    from rescind.workers.spec import document

    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text(document(), encoding="utf-8")
    _emit({"file": str(out_file)}, as_json, lambda d, c: c.print(f"wrote {d['file']}"))


def _refuse(message: str) -> NoReturn:
    err.print(message, soft_wrap=True)  # one line, however narrow the terminal
    raise typer.Exit(2)


def _bench_sizes(text: str, least: int, why: str) -> list[int]:
    """``--sizes`` as whole numbers of at least ``least``; checked before any server starts."""
    try:
        sizes = [int(x) for x in text.split(",")]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < least:
        _refuse(f"--sizes takes comma-separated whole numbers of at least {least:,} ({why}), "
                f"not {text!r}")
    return sizes


def _at_least(option: str, value: int, least: int) -> None:
    if value < least:
        _refuse(f"{option} must be at least {least:,}, not {value}")


def _writable(out: Path) -> Path:
    """The results folder, made before the run: a bad path fails now, not after the run."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _refuse(f"cannot write results to {out}: {exc.strerror or exc}")
    if not os.access(out, os.W_OK):
        _refuse(f"cannot write results to {out}: not writable")
    return out


@bench_app.command("engine")
def bench_engine(
    url: str | None = UrlOpt,
    sizes: str = typer.Option("10000,100000,1000000", help="Graph sizes in memories"),
    samples: int = typer.Option(31, help="Retractions timed per graph size"),
    batch: int = typer.Option(5000, help="Writes per batched load query"),
    out: Path = typer.Option(Path("docs/bench"), help="Where results are written"),
    as_json: bool = JsonOpt,
) -> None:
    """Retraction latency vs graph size and region size, and bulk-load throughput."""
    from rescind.bench.engine import run as run_bench

    _at_least("--samples", samples, 1)
    _at_least("--batch", batch, 1)
    # Two sets of ``samples`` sources of 100 memories each are retracted in every graph.
    graph_sizes = _bench_sizes(sizes, 200 * samples, f"two sets of {samples} sources of 100 "
                               "memories each are retracted in every graph")
    _writable(out)
    command = "rescind bench engine " + " ".join(sys.argv[3:]) if len(sys.argv) > 3 else \
        "rescind bench engine"
    with falkordb(url) as server_url:  # progress on stderr with --json, so stdout stays JSON
        run_bench(server_url, graph_sizes, samples, batch, out, command,
                  err if as_json else out_console())
    if as_json:
        print((out / "engine.json").read_text())
    else:
        out_console().print(f"results written to {out}/engine.json and {out}/engine.md")


@bench_app.command("ingest")
def bench_ingest(
    url: str | None = UrlOpt,
    events: int = typer.Option(20_000, help="Events published"),
    batch: int = typer.Option(500, help="Writer batch size"),
    repeats: int = typer.Option(3, help="Alternating end-to-end and raw runs; medians reported"),
    out_dir: Path = typer.Option(Path("docs/bench"), "--out", help="Where results are written"),
    as_json: bool = JsonOpt,
) -> None:
    """End-to-end writes/s through streams and workers, beside raw UNWIND; store latency."""
    from rescind.bench.ingest import run as run_ingest

    if events < 2 or events % 2:
        _refuse(f"--events must be an even number of at least 2 (each observation is followed "
                f"by a belief resting on it), not {events}")
    _at_least("--batch", batch, 1)
    if repeats < 1 or repeats % 2 == 0:
        _refuse(f"--repeats must be odd, so that the median is one of the runs, not {repeats}")
    _writable(out_dir)
    command = "rescind bench ingest " + " ".join(sys.argv[3:])
    err.print("publishing, writing, measuring…")  # no spinner: its thread would take a core
    with falkordb(url) as server_url:
        result = run_ingest(server_url, events, batch, out_dir, command.strip(), repeats)
    if as_json:
        print(json.dumps(result, indent=2))
    else:
        out.print((out_dir / "ingest.md").read_text(), markup=False)


@bench_app.command("rules")
def bench_rules(
    url: str | None = UrlOpt,
    scenario: str = typer.Option("all", help="demo | precision | real | scale | all"),
    data: Path | None = typer.Option(
        None, "--data", metavar="DIR", help="Real scenario: the retraction data, read in place "
        "(default: $RESCIND_RETRACTIONS_DATA, else ../shared/data/retractions beside the "
        "repository; a relative DIR is taken from the current directory)"),
    sizes: str = typer.Option("100000,1000000", help="Scale scenario: graph sizes in memories"),
    samples: int = typer.Option(15, help="Scale scenario: retractions timed per size"),
    out_dir: Path = typer.Option(Path("docs/bench"), "--out", help="Where results are written"),
    as_json: bool = JsonOpt,
) -> None:
    """Five retraction rules on the demo week, a constructed case, real retractions and scale."""
    from rescind.bench.rules import SCENARIOS
    from rescind.bench.rules import run as run_rules
    from rescind.bench.scenario_real import data_problem, retraction_data

    chosen = list(SCENARIOS) if scenario == "all" else [scenario]
    data = retraction_data(data)
    if scenario != "all" and scenario not in SCENARIOS:
        err.print(f"unknown scenario {scenario!r}; choose from {', '.join(SCENARIOS)} or all")
        raise typer.Exit(2)
    if "real" in chosen and (problem := data_problem(data)):
        _refuse(problem)
    graph_sizes: list[int] = []
    if "scale" in chosen:
        _at_least("--samples", samples, 1)
        graph_sizes = _bench_sizes(sizes, 100, "the graph is made of sources of 100 memories")
    _writable(out_dir)
    earlier = out_dir / "rules.json"  # the new results are merged into it
    if earlier.exists():
        try:
            json.loads(earlier.read_text())
        except (OSError, ValueError):
            _refuse(f"{earlier} is not a readable results file; move it or choose another --out")
    command = " ".join(["rescind bench rules", *sys.argv[3:]])
    with falkordb(url) as server_url:  # table and progress on stderr with --json
        run_rules(server_url, chosen, data, graph_sizes, samples, out_dir, command,
                  err if as_json else out_console())
    if as_json:
        print((out_dir / "rules.json").read_text())
    else:
        out_console().print(f"results written to {out_dir}/rules.json, rules.md and rules_*.png")


def out_console() -> Console:
    return out


def main() -> None:  # pragma: no cover - console script entry
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
