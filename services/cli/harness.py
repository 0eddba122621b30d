"""The harness commands: the demo week, its recording, and the benchmarks. They import
``rescind.demo`` and ``rescind.bench`` inside each command; nothing else in the product does."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import typer
from rich.console import Console

from rescind.cli.common import (
    DataDirOpt,
    JsonOpt,
    TenantOpt,
    UrlOpt,
    emit,
    err,
    falkordb,
    out,
    refuse,
    shared_or_own_server,
)

bench_app = typer.Typer(help="Benchmarks; results go to docs/bench/ with the command that made them.")



def demo(
    mode: str | None = typer.Option(None, help="gemini | replay | policy (default: gemini when "
                                    "GOOGLE_API_KEY or GEMINI_API_KEY is set, else replay)"),
    recording: Path | None = typer.Option(None, help="Recording to replay (default: the committed "
                                          "agents/recordings/week.json)"),
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    replace: bool = typer.Option(False, "--replace", help="Replace the tenant's week even on a "
                                 "server another process serves (`rescind up`, or --url)"),
    as_json: bool = JsonOpt,
) -> None:
    """The reference agents' week through the real event path, told as a story. The week starts
    its tenant afresh; on a server that something else serves (`rescind up` on the same data
    directory, or --url) a tenant that already exists is refused unless --replace."""
    from rescind.agents.llm import GeminiUnavailable, RecordingMiss, chat_model
    from rescind.contract.layout import check_tenant
    from rescind.demo import week as week
    from rescind.demo.story import tell

    tenant = check_tenant(tenant)
    try:  # a bad mode or an unreadable recording: refused before anything is touched
        model = chat_model(mode, recording)
    except (GeminiUnavailable, ValueError, OSError) as exc:
        refuse(f"{type(exc).__name__}: {exc}")
    try:
        with shared_or_own_server(url, data_dir) as (server_url, own):
            if not own and not replace:
                _refuse_to_reset(server_url, tenant, url, data_dir)
            with out.status("the week is running…"):
                summary = week.run(server_url, tenant, model=model)
    except (RecordingMiss, GeminiUnavailable) as exc:  # the recording or Gemini ran out mid-week
        err.print(f"{type(exc).__name__}: {exc}")
        raise typer.Exit(2) from None
    summary["next"] = next_commands(summary, url, data_dir, own)
    emit(summary, as_json, tell)


def _refuse_to_reset(server_url: str, tenant: str, url: str | None, data_dir: Path) -> None:
    """Stop before the week deletes a tenant that a server someone else runs holds: its
    decisions, approvals and tokens' work would vanish under whoever is using them."""
    from rescind.contract.layout import graph_key
    from rescind.graph import tenants
    from rescind.graph.store import connect

    conn = connect(server_url)
    if not tenants.known(conn, tenant) and not conn.exists(graph_key(tenant)):
        return
    where = (f"the server at {url}" if url else
             f"the server another process (`rescind up`?) runs on {data_dir}")
    stop = "" if url else "stop that process and run the demo again, "
    refuse(f"tenant {tenant!r} already exists on {where}, and the demo would reset it (its "
           f"retractions, approvals and audit trail would no longer match): {stop}play the week "
           f"into a new tenant beside it (`rescind demo --tenant {tenant}-2`), or replace it "
           "anyway with --replace.")


def next_commands(summary: dict, url: str | None, data_dir: Path, own: bool) -> list[dict]:
    """What to run after the week, spelled as this command was invoked (`.venv/bin/rescind`
    from `make demo`) with the options that reach the same tenant."""
    import shlex

    from rescind.cli.common import DataDirOpt

    opts = []
    if summary["tenant"] != "demo":
        opts += ["--tenant", summary["tenant"]]
    if url:
        opts += ["--url", url]
    elif data_dir != DataDirOpt.default:
        opts += ["--data-dir", str(data_dir)]
    tail = " ".join(shlex.quote(o) for o in opts)
    recall = summary["recalls"][0]["name"] if summary.get("recalls") else "payment:INV-1001"
    retraction = (summary.get("compromise") or {}).get("retraction") or "r-northwind-portal"
    steps = [
        (f"recalls list {tail}", "finance: the payments to recall"),
        (f"recalls show {recall} {tail}", "the drafted recall and its evidence"),
        (f"recalls approve {recall} {tail}", "finance approves it (to the outbox; signed by "
         "your OS user)"),
        (f"explain {recall} {tail}", "why the payment went out, and why it is OUT now"),
        (f"fragility payment:INV-2001 {tail}", "the trust domains an attacker would need"),
        (f"reinstate {retraction} {tail}", "preview undoing it (--commit applies)"),
    ]
    if own:  # the API and console on the data directory (no `rescind up` serves it yet)
        steps.append((f"up{' --data-dir ' + shlex.quote(str(data_dir)) if '--data-dir' in opts else ''}",
                      "the HTTP API and console on this data (http://127.0.0.1:8765/console/)"))
    me = invoked_as()
    return [{"command": f"{me} {c}".strip(), "what": w} for c, w in steps]


def invoked_as() -> str:
    """`rescind` when that is the one on PATH, else the path it was run by (relative to the
    working directory when under it), or `python -m rescind.cli`."""
    import shutil

    argv0 = Path(sys.argv[0])
    if argv0.name != "rescind":
        return f"{_shown(Path(sys.executable))} -m rescind.cli"
    found = shutil.which("rescind")
    if found and argv0.exists() and os.path.samefile(found, argv0):
        return "rescind"
    return _shown(argv0)


def _shown(path: Path) -> str:
    try:
        return str(path.absolute().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


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
    emit(done, as_json, lambda d, c: c.print(f"wrote {d['file']} ({d['calls']} calls, made with "
                                              f"{d['made_with']})"))


def _bench_sizes(text: str, least: int, why: str) -> list[int]:
    """``--sizes`` as whole numbers of at least ``least``; checked before any server starts."""
    try:
        sizes = [int(x) for x in text.split(",")]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < least:
        refuse(f"--sizes takes comma-separated whole numbers of at least {least:,} ({why}), "
                f"not {text!r}")
    return sizes


def _at_least(option: str, value: int, least: int) -> None:
    if value < least:
        refuse(f"{option} must be at least {least:,}, not {value}")


def _writable(out: Path) -> Path:
    """The results folder, made before the run: a bad path fails now, not after the run."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        refuse(f"cannot write results to {out}: {exc.strerror or exc}")
    if not os.access(out, os.W_OK):
        refuse(f"cannot write results to {out}: not writable")
    return out


@bench_app.command("engine")
def bench_engine(
    url: str | None = UrlOpt,
    sizes: str = typer.Option("10000,100000,1000000", help="Graph sizes in memories"),
    samples: int = typer.Option(31, help="Retractions timed per graph size"),
    batch: int = typer.Option(5000, help="Writes per batched load query"),
    out: Path = typer.Option(Path("docs/bench"), help="Where results are written"),
    gate_samples: int = typer.Option(400, help="Gate asks timed per kind, live and quiet, "
                                               "per graph size (0: none)"),
    write_rate: int = typer.Option(1000, help="Justified writes per second while the gate "
                                              "is asked or a retraction timed"),
    live_samples: int = typer.Option(30, help="Retractions timed per graph size while justified "
                                              "writes run (half of them with the writes paused; "
                                              "0: none)"),
    as_json: bool = JsonOpt,
) -> None:
    """Retraction latency vs graph size and region size (also while justified writes run),
    bulk-load throughput, and the payment gate's decision while justified writes run."""
    from rescind.bench.engine import run as run_bench

    _at_least("--samples", samples, 1)
    _at_least("--batch", batch, 1)
    _at_least("--gate-samples", gate_samples, 0)
    _at_least("--write-rate", write_rate, 1)
    _at_least("--live-samples", live_samples, 0)
    # Two sets of ``samples`` sources of 100 memories each, and ``live_samples`` more, are
    # retracted in every graph.
    graph_sizes = _bench_sizes(sizes, 100 * (2 * samples + live_samples),
                               f"{2 * samples + live_samples} sources of 100 memories each are "
                               "retracted in every graph")
    _writable(out)
    command = "rescind bench engine " + " ".join(sys.argv[3:]) if len(sys.argv) > 3 else \
        "rescind bench engine"
    with falkordb(url) as server_url:  # progress on stderr with --json, so stdout stays JSON
        run_bench(server_url, graph_sizes, samples, batch, out, command,
                  err if as_json else out_console(), gate_samples, write_rate, live_samples)
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
        refuse(f"--events must be an even number of at least 2 (each observation is followed "
                f"by a belief resting on it), not {events}")
    _at_least("--batch", batch, 1)
    if repeats < 1 or repeats % 2 == 0:
        refuse(f"--repeats must be odd, so that the median is one of the runs, not {repeats}")
    _writable(out_dir)
    command = "rescind bench ingest " + " ".join(sys.argv[3:])
    err.print("publishing, writing, measuring…")  # no spinner: its thread would take a core
    with falkordb(url) as server_url:
        result = run_ingest(server_url, events, batch, out_dir, command.strip(), repeats)
    if as_json:
        print(json.dumps(result, indent=2))
    else:
        out.print((out_dir / "ingest.md").read_text(), markup=False)


@bench_app.command("fuzz")
def bench_fuzz(
    minutes: float = typer.Option(10.0, help="How long to publish hostile events"),
    tenants: int = typer.Option(3, help="Tenants fuzzed at once"),
    rate: int = typer.Option(400, help="Events a second (about)"),
    seed: int = typer.Option(0, help="The random generator's seed (the run is repeatable)"),
    out_dir: Path = typer.Option(Path("docs/bench"), "--out", help="Where results are written"),
    as_json: bool = JsonOpt,
) -> None:
    """Agent-shaped hostile events (every spelling, length and Unicode form) through the real
    workers on an embedded server of its own: events applied, dead-lettered (with reasons),
    refused at the edge, and the server's deaths (must be 0)."""
    from rescind.bench.fuzz import run_fuzz, write

    _at_least("--tenants", tenants, 1)
    _at_least("--rate", rate, 1)
    if minutes <= 0:
        refuse(f"--minutes must be more than 0, not {minutes}")
    _writable(out_dir)
    command = " ".join(["rescind bench fuzz", *sys.argv[3:]])
    err.print(f"fuzzing {tenants} tenant(s) for {minutes:g} min…")
    result = run_fuzz(minutes * 60, tenants, seed, rate, command.strip())
    path = write(result, out_dir)
    if as_json:
        print(path.read_text())
    else:
        d = result.as_dict()
        out.print(f"published {d['published_total']} (and {d['resent']} sent twice), applied "
                  f"{d['applied']}, dead-lettered {sum(result.dead_lettered.values())}, refused "
                  f"at the edge {sum(result.refused_at_edge.values())}, unaccounted "
                  f"{len(result.unaccounted)}; server deaths {result.server_deaths}; in {path}",
                  markup=False)
    if result.server_deaths or result.unaccounted:
        raise typer.Exit(1)


@bench_app.command("fidelity")
def bench_fidelity(
    programs: str = typer.Option("", help="Comma-separated programs (default: all: the eight "
                                          "tuned ones, functional, map_reduce, two_tools, "
                                          "langmem, semantic, checkpointer, ten_users, profile, "
                                          "and the six held out, support, research, triage, "
                                          "travel, manager, rag, and the four sets of six "
                                          "written blind)"),
    group: str = typer.Option("", help="Only the programs of one group: tuned, held-out, "
                                       "blind, blind2, blind3 or blind4 (with --programs: "
                                       "both must hold)"),
    rounds: int = typer.Option(21, help="Timed plays of each program, plain and wrapped "
                                        "alternated (0: no timing)"),
    profile_rounds: int = typer.Option(5, help="Plays of each program under cProfile, plain "
                                               "and wrapped (0: no profile)"),
    out_dir: Path = typer.Option(Path("docs/bench"), "--out", help="Where results are written"),
    as_json: bool = JsonOpt,
) -> None:
    """LangGraph programs wrapped on an embedded server of their own, against the truth
    labelled by hand: premise precision, recall, exact matches, IN/OUT after each
    single-source retraction, the wrapped store's serving, and wrapped/plain time per invoke
    with where the time goes; the eight the attribution was tuned on and the six held out
    from it are scored apart."""
    from rescind.bench.fidelity import GROUPS, PROGRAMS, SUMMARIES, run, write

    names = [n.strip() for n in programs.split(",") if n.strip()]
    unknown = [n for n in names if n not in PROGRAMS]
    if unknown:
        refuse(f"unknown program(s) {', '.join(unknown)}; the programs: {', '.join(PROGRAMS)}")
    if group:
        if group not in GROUPS:
            refuse(f"unknown group {group!r}; the groups: {', '.join(GROUPS)}")
        names = [n for n in (names or PROGRAMS) if PROGRAMS[n].group == group]
        if not names:
            refuse(f"no program of --programs is in the group {group}")
    _at_least("--rounds", rounds, 0)
    _at_least("--profile-rounds", profile_rounds, 0)
    _writable(out_dir)
    command = " ".join(["rescind bench fidelity", *sys.argv[3:]])
    doc = run(names or None, rounds, profile_rounds, command.strip(), log=err.print)
    js, md = write(doc, out_dir)
    if as_json:
        print(js.read_text())
    else:
        for name, s in ((g, doc[key]) for g, key in SUMMARIES.items()):
            if not s["writes"]:
                continue
            ratio = f", wrapped/plain {s['ratio_median']}x (median)" if "ratio_median" in s else ""
            out.print(f"{name}: {s['writes']} writes: precision {s['precision']}, recall "
                      f"{s['recall']}, exact {s['exact']}/{s['writes']}; IN/OUT "
                      f"{s['inout_right']}/{s['inout_checked']}; serving {s['serving_right']}/"
                      f"{s['serving_checked']}{ratio}; errors {s['errors']}", markup=False)
        out.print(f"in {md}", markup=False)


@bench_app.command("cluster")
def bench_cluster(
    events: int = typer.Option(10_000, help="Events published per ingest run"),
    batch: int = typer.Option(500, help="Writer batch size"),
    repeats: int = typer.Option(3, help="Runs per topology; medians reported"),
    engine_json: Path = typer.Option(Path("docs/bench/engine.json"), "--engine-results",
                                     help="The engine benchmark's results (RAM per memory)"),
    out_dir: Path = typer.Option(Path("docs/bench"), "--out", help="Where results are written"),
    as_json: bool = JsonOpt,
) -> None:
    """Ingest on one server, on 3 masters, and on 3 masters with replicas (with and without
    waiting for a replica); what a tenant costs; the capacity table of docs/scaling.md. Starts
    its own servers and clusters."""
    from rescind.bench.cluster import run as run_cluster

    if events < 2 or events % 2:
        refuse(f"--events must be an even number of at least 2, not {events}")
    _at_least("--batch", batch, 1)
    if repeats < 1 or repeats % 2 == 0:
        refuse(f"--repeats must be odd, so that the median is one of the runs, not {repeats}")
    if not engine_json.is_file():
        refuse(f"no engine results at {engine_json}: run `rescind bench engine` first, or "
               "pass --engine-results")
    _writable(out_dir)
    command = "rescind bench cluster " + " ".join(sys.argv[3:])
    result = run_cluster(events, batch, repeats, engine_json, out_dir, command.strip(),
                         lambda line: err.print(line, markup=False))
    if as_json:
        print(json.dumps(result, indent=2))
    else:
        out.print((out_dir / "cluster.md").read_text(), markup=False)


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
        refuse(f"unknown scenario {scenario!r}; choose from {', '.join(SCENARIOS)} or all")
    if "real" in chosen and (problem := data_problem(data)):
        refuse(problem)
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
            refuse(f"{earlier} is not a readable results file; move it or choose another --out")
    command = " ".join(["rescind bench rules", *sys.argv[3:]])
    with falkordb(url) as server_url:  # table and progress on stderr with --json
        run_rules(server_url, chosen, data, graph_sizes, samples, out_dir, command,
                  err if as_json else out_console())
    if as_json:
        print((out_dir / "rules.json").read_text())
    else:
        out_console().print(f"results written to {out_dir}/rules.json, rules.md and rules_*.png")


@bench_app.command("restart")
def bench_restart(
    sizes: str = typer.Option("100000,1000000", help="Memories loaded before the day of events"),
    events: int = typer.Option(100_000, help="A day of justified writes through the event path"),
    repeats: int = typer.Option(3, help="Restarts timed per size; the median is reported"),
    batch: int = typer.Option(5000, help="Writes per batched load query"),
    threshold: bool = typer.Option(True, help="Also time restarts with the AOF's commands at "
                                   "the size that starts a rewrite (the most a restart finds)"),
    work_dir: Path | None = typer.Option(None, "--work-dir", help="Where the data directories "
                                         "are made (deleted after; default: the system's temp)"),
    out_dir: Path = typer.Option(Path("docs/bench"), "--out", help="Where results are written"),
    as_json: bool = JsonOpt,
) -> None:
    """How long the embedded FalkorDB takes to come back on N memories and a day of events."""
    from rescind.bench.restart import run as run_restart

    graph_sizes = _bench_sizes(sizes, 100, "the graph is made of sources of 100 memories")
    if events < 2 or events % 2:
        refuse(f"--events must be an even number of at least 2 (each observation is followed "
               f"by a note resting on it), not {events}")
    _at_least("--repeats", repeats, 1)
    _at_least("--batch", batch, 1)
    _writable(out_dir)
    command = " ".join(["rescind bench restart", *sys.argv[3:]])
    result = run_restart(graph_sizes, events, repeats, batch, out_dir, command,
                         err if as_json else out_console(), work_dir, threshold)
    if as_json:
        print(json.dumps(result, indent=2))
    else:
        out.print((out_dir / "restart.md").read_text(), markup=False)


def out_console() -> Console:
    return out
