"""`rescind bench engine`, the gate rows: the payment gate's decision while justified writes run.

What is timed is what the gate worker does for each GateAsked (``rescind.workers.gate``,
``_judge``): ``judge`` and then ``record``, the decision kept in the gate's ledger (Redis)
before the answer. As the worker does, its copy into the gate log (a FalkorDB graph) is made
after, by a thread of its own (``rescind.engine.gate.LogCopier``), untimed but running beside
the asks.
Two kinds of ask, alternated: a new payment (the premises it would rest on) and the release of
a stored proposal (``premises=None``). Each payment is an action on a plan, on an agent's
confirmation of a note, on the note, which two observations of two trust domains (the vendor's
portal and the signed contracts) state, account included: the demo's Acme payment.

The live load is a process of its own, as the writer worker is: it sends justified writes
through the engine's write path (``rescind.engine.writes.Pipeline``, as the writer does) at a
steady rate, in the batches the writer would take from its stream (a blocking read hands it
whatever arrived meanwhile). Asks are due at a steady rate, as payments arrive, and are timed
in blocks that alternate with the load running and paused, so that each figure has its quiet
twin measured beside it.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import random
import time
from dataclasses import dataclass

from schwifty import IBAN

from rescind.bench.generator import MIX
from rescind.core.shapes import Mutation
from rescind.engine import gate
from rescind.engine.writes import Pipeline, Write, record
from rescind.graph import gate_state
from rescind.graph.store import TenantGraph, connect
from rescind.runtime import priority

AT = 1_795_000_000_000_000  # November 2026, in epoch µs: when the payments are asked about
BLOCK = 25  # asks per block; blocks alternate between the load paused and running
# The two asks, and a bare PING to the server the gate's state is on, at the same pace in blocks
# of its own: under the writes FalkorDB commits a write holding the graph's server's lock (a
# relation's merge included), so beside the graph the PING's tail is the floor of any gate that
# reads or records there; on a server of its own, the floor of that server.
KINDS = ("new", "release", "ping")
OBSERVED = round(100 * MIX["observation"])  # observations of each generated vendor (o0, o1, …)


@dataclass(frozen=True)
class Payment:
    """One payment and the two calls about it the gate is asked."""

    new: gate.GateCall  # a payment not yet in the graph, resting on its plan
    release: gate.GateCall  # the release of the payment's stored proposal (by its own id)


def payments(graph: TenantGraph, n: int, amount: float = 12_000.0, tag: str = ""
             ) -> list[Payment]:
    """Write ``n`` payments' support (and a stored proposal each) through the engine; ``tag``
    names them apart from those written before on the same graph."""
    sources, writes, out = [], [], []
    for k in range(n):
        vendor, account = f"{tag}payee{k}", IBAN.generate(
            "GB", bank_code="BUKB202015", account_code=f"{k:08d}").formatted
        portal, contract = f"gate-portal:{vendor}", f"gate-contract:{vendor}"
        sources += [{"id": portal, "kind": "vendor_portal", "name": portal, "domain": portal},
                    {"id": contract, "kind": "signed_contract", "name": contract,
                     "domain": "signed-contracts"}]
        o1, o2 = f"{vendor}/portal", f"{vendor}/contract"
        note, confirmed, plan = f"{vendor}/note", f"{vendor}/confirmed", f"{vendor}/plan"
        writes += [
            Write(f"e:{o1}", o1, "observation", f"{vendor} portal\nBank account: {account}",
                  AT - 10, source=portal),
            Write(f"e:{o2}", o2, "observation", f"MASTER AGREEMENT {vendor}\nBank account: "
                  f"{account}", AT - 9, source=contract),
            Write(f"e1:{note}", note, "belief", f"{vendor} bank account: {account}", AT - 8,
                  premises=(o1,), agent="ap"),
            Write(f"e2:{note}", note, "belief", f"{vendor} bank account: {account}", AT - 8,
                  premises=(o2,), agent="ap"),
            Write(f"e:{confirmed}", confirmed, "belief", f"confirmed: {vendor} bank account "
                  f"{account}", AT - 7, premises=(note,), agent="confirmer"),
            Write(f"e:{plan}", plan, "plan", f"pay {vendor} {amount:,.2f} to {account}", AT - 6,
                  premises=(confirmed,), agent="payments"),
            Write(f"e:{vendor}/proposed", f"{vendor}/proposed", "action",
                  f"schedule_payment({vendor}, {amount})", AT - 5, premises=(plan,),
                  agent="payments", extra={"amount": amount, "payee": vendor,
                                           "account": account, "executed": False,
                                           "seq": AT - 5}),
        ]
        out.append(Payment(
            new=gate.GateCall(action=f"{vendor}/paid", premises=(plan,), amount=amount,
                              account=account, payee=vendor, at=AT),
            release=gate.GateCall(action=f"{vendor}/proposed", premises=None, amount=amount,
                                  account=account, payee=vendor, at=AT)))
    graph.apply(Mutation(op="source", sources=sources), graph.revision())
    record(graph, writes)
    return out


def ask(graph: TenantGraph, call: gate.GateCall, policy: gate.GatePolicy,
        copier: gate.LogCopier | None = None) -> tuple[float, bool, float]:
    """One ask as the gate worker answers it: judged, then recorded (and, untimed, its copy
    into the gate log asked of ``copier``, as the worker does after its answer). (seconds,
    allowed, the seconds of the record alone)"""
    t = time.perf_counter()
    d = gate.judge(graph, call, policy)
    judged = time.perf_counter()
    d = gate.record(graph, call, d, call.action, None)
    done = time.perf_counter()
    if copier is not None:
        copier.wake(graph.tenant)
    return done - t, d.allowed and d.fragility == 2, done - judged


def _ping(graph: TenantGraph) -> tuple[float, bool, float]:
    conn = gate_state.of(graph.conn)  # the server the gate's state is on
    t = time.perf_counter()
    conn.ping()
    return time.perf_counter() - t, True, 0.0


def _write(k: int, tag: str, vendors: int, rng: random.Random) -> Write:
    """The ``k``th live write: a vendor's new observation (a fifth of them), else a note on
    one or two of the observations the generator gave that vendor."""
    v = rng.randrange(vendors)
    if k % 5 == 0:
        mid = f"{tag}/o{k}"
        return Write(f"e:{mid}", mid, "observation", f"vendor{v} says live fact {k}", AT + k,
                     source=f"vendor{v}")
    prem = tuple(f"vendor{v}/o{i}" for i in rng.sample(range(OBSERVED), rng.choice((1, 1, 2))))
    return Write(f"e:{tag}/b{k}", f"{tag}/b{k}", "belief", f"live note {k} on vendor{v}", AT + k,
                 premises=prem, agent="ap")


def _writer(url: str, tenant: str, vendors: int, rate: float, tag: str, idle, running,
            stop, landed, busy, batches, settle: bool = True, nice: int = 0,
            sched_batch: bool = False, seen=None) -> None:
    """The live load, in a process of its own: while ``running`` is set, the writes that
    arrived (at ``rate`` a second) while the last batch was written are the next batch, sent
    and waited for, as the writer worker does with what one blocking read of its stream hands
    it (a partial batch is flushed at once). ``landed`` counts the writes in the graph,
    ``busy`` the seconds spent writing them and ``batches`` the batches;
    ``idle`` is set while nothing is being written; ``settle``: the writer reads what the gate
    reads after each batch, as the writer worker does (``rescind.engine.writes.settle``);
    ``nice``: its CPU priority, as the writer worker's (``rescind.runtime.priority``), set before
    it starts a thread; ``sched_batch``: Linux's SCHED_BATCH too; ``seen``: the niceness it
    then runs at."""
    if nice:
        priority.lower(nice)
    if sched_batch:
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    if seen is not None:
        seen.value = priority.nice_of()
    graph = TenantGraph(connect(url), tenant)
    graph.ensure_schema()
    pipeline, rng, k = Pipeline(settle=settle), random.Random(5), 0
    idle.set()
    try:
        while not stop.is_set():
            if not running.wait(0.05):
                continue
            idle.clear()
            start, sent = time.perf_counter(), 0
            while running.is_set() and not stop.is_set():
                due = int((time.perf_counter() - start) * rate) - sent
                if due <= 0:  # the writer blocks on its stream until an entry arrives
                    time.sleep(1 / rate)
                    continue
                batch = [_write(k + i, tag, vendors, rng) for i in range(due)]
                k, sent = k + due, sent + due
                t = time.perf_counter()
                pipeline.record(graph, batch)
                pipeline.flush()
                with landed.get_lock():
                    landed.value += due
                    busy.value += time.perf_counter() - t
                    batches.value += 1
            idle.set()
    finally:
        pipeline.close()


class LiveWrites:
    """The writer process; ``run()``/``pause()`` switch the load, ``landed`` counts writes."""

    def __init__(self, url: str, tenant: str, vendors: int, rate: float, tag: str,
                 settle: bool = True, nice: int = 0, sched_batch: bool = False) -> None:
        ctx = multiprocessing.get_context("spawn")  # no fork of a process running threads
        self.idle, self.running, self.stop = ctx.Event(), ctx.Event(), ctx.Event()
        self.counter, self.busy, self.batches = ctx.Value("q", 0), ctx.Value("d", 0.0), \
            ctx.Value("q", 0)
        self.nice_seen = ctx.Value("i", 0)  # the niceness the writer process runs at
        self.process = ctx.Process(target=_writer, daemon=True, args=(
            url, tenant, vendors, rate, tag, self.idle, self.running, self.stop, self.counter,
            self.busy, self.batches, settle, nice, sched_batch, self.nice_seen))

    def __enter__(self) -> LiveWrites:
        self.process.start()
        deadline = time.monotonic() + 120
        while not self.idle.wait(0.2):
            if not self.process.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the live writer process did not start")
        return self

    def run(self) -> None:
        self.running.set()

    def pause(self) -> None:
        """Stop sending, and wait until what was sent has landed."""
        self.running.clear()
        time.sleep(0.05)
        if not self.process.is_alive():  # its traceback is on stderr
            raise RuntimeError("the live writer process stopped while the gate was timed")
        if not self.idle.wait(60):
            raise RuntimeError("the live writer did not finish its batch in 60 s")

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.running.clear()
        self.process.join(60)
        if self.process.is_alive():
            self.process.terminate()

    @property
    def landed(self) -> int:
        return self.counter.value

    @property
    def writing(self) -> tuple[int, float, int]:
        """(writes landed, seconds spent writing them, batches), so far."""
        with self.counter.get_lock():
            return self.counter.value, self.busy.value, self.batches.value


def _stats(waited: list[float], spent: list[float], recorded: list[float]) -> dict:
    """Nearest-rank percentiles in ms: from when each ask was due, of the ask alone, and of
    its record alone."""
    def rank(xs: list[float], p: float) -> float:
        return round(xs[min(len(xs) - 1, math.ceil(p * len(xs)) - 1)] * 1000, 2)

    w, s, r = sorted(waited), sorted(spent), sorted(recorded)
    return {"median_ms": rank(w, 0.5), "p90_ms": rank(w, 0.9), "p99_ms": rank(w, 0.99),
            "max_ms": rank(w, 1.0), "service_median_ms": rank(s, 0.5),
            "service_p99_ms": rank(s, 0.99), "record_median_ms": rank(r, 0.5),
            "record_p99_ms": rank(r, 0.99), "runs": len(w)}


def measure(url: str, graph: TenantGraph, vendors: int, samples: int, rate: float,
            asks_per_s: float = 20.0, warmup_s: float = 0.5, settle: bool = True,
            kept_facts: bool = True, state_url: str | None = None, writer_nice: int = 0,
            server_nice: int = 0, sched_batch: bool = False) -> dict:
    """``_measure`` with the gate's state (its kept facts and its ledger) on the server at
    ``state_url`` (``rescind.graph.gate_state``; the writer process too), or, if None, beside
    the graph on its own server. ``writer_nice``: the writer process's CPU priority (and
    ``sched_batch``, Linux's SCHED_BATCH); ``server_nice``: the graph's server's, on this
    machine, while the asks are timed (its niceness is put back after)."""
    before = os.environ.get(gate_state.ENV)
    if state_url:
        os.environ[gate_state.ENV] = state_url
    else:
        os.environ.pop(gate_state.ENV, None)
    graph.gate_log_ready = False  # its ledger is seeded where it is now kept
    server = graph.conn.info("server")["process_id"]
    was = priority.lower(server_nice, server) if server_nice else None
    try:
        out = _measure(url, graph, vendors, samples, rate, asks_per_s, warmup_s, settle,
                       kept_facts, writer_nice, sched_batch)
        out["graph_server_nice_seen"] = priority.nice_of(server)  # as the asks ended
    finally:
        if was is not None:
            priority.lower(was, server)
        if before is None:
            os.environ.pop(gate_state.ENV, None)
        else:
            os.environ[gate_state.ENV] = before
        graph.gate_log_ready = False
    out.update(gate_state="own server" if state_url else "the graph's server",
               writer_nice=writer_nice, writer_sched_batch=sched_batch,
               graph_server_nice=server_nice)
    return out


def _measure(url: str, graph: TenantGraph, vendors: int, samples: int, rate: float,
             asks_per_s: float, warmup_s: float, settle: bool, kept_facts: bool,
             writer_nice: int = 0, sched_batch: bool = False) -> dict:
    """``samples`` asks of each kind with the load running and as many with it paused, in
    alternating blocks; the write rate is what landed while asks were timed under load.
    ``vendors``: the generator's sources ``vendor0`` … in the graph (the writes rest on them).

    Asks are due at a steady ``asks_per_s``, as payments arrive whatever the gate is doing,
    and each is timed from when it was due: one that waits behind a slow one counts its wait
    (timed from its own start only, a stall of the server would count once, however many
    payments arrived during it). Both are reported.

    ``kept_facts``: the gate reads each cone from the facts the writer keeps
    (``rescind.graph.gate_facts``, as the gate worker does), else from the graph alone."""
    pays = payments(graph, max(1, min(samples, 500)), tag=f"g{time.time_ns()}-")
    reads_before, gate.KEPT_FACTS = dict(gate.READS), kept_facts
    policy, copier = gate.GatePolicy(), gate.LogCopier(lambda tenant: graph)
    waited: dict[tuple[str, bool], list[float]] = {
        (kind, live): [] for kind in KINDS for live in (False, True)}
    spent: dict[tuple[str, bool], list[float]] = {key: [] for key in waited}
    recorded: dict[tuple[str, bool], list[float]] = {key: [] for key in waited}
    ok, live_s, live_writes, i, busy_s, batches = True, 0.0, 0, 0, 0.0, 0
    with LiveWrites(url, graph.tenant, vendors, rate, f"live{time.time_ns()}",
                    settle, writer_nice, sched_batch) as load:
        # Quiet asks, live asks, quiet PINGs, live PINGs, and again: the PINGs in blocks of
        # their own, so that none waits behind a slow ask of ours.
        for block in range(4 * math.ceil(samples / BLOCK)):
            live, pinging = block % 2 == 1, block // 2 % 2 == 1
            if live:
                load.run()
                time.sleep(warmup_s)  # the load in its stride before the clock
                before = load.landed
                busy_before = load.writing
            t0, n = time.perf_counter(), 0
            for _ in range(BLOCK):
                p = pays[i % len(pays)]
                i += 0 if pinging else 1
                for kind, call in (("ping", None),) * 2 if pinging else (
                        ("new", p.new), ("release", p.release)):
                    due = t0 + n / asks_per_s
                    n += 1
                    time.sleep(max(0.0, due - time.perf_counter()))
                    if call is None:  # the floor: what any command to this server waits
                        took, allowed, kept = _ping(graph)
                    else:
                        took, allowed, kept = ask(graph, call, policy, copier)
                    spent[kind, live].append(took)
                    recorded[kind, live].append(kept)
                    waited[kind, live].append(time.perf_counter() - due)
                    ok = ok and allowed
            if live:
                if not pinging:  # the write rate is the one the asks met
                    live_s += time.perf_counter() - t0
                    live_writes += load.landed - before
                    now = load.writing
                    busy_s += now[1] - busy_before[1]
                    batches += now[2] - busy_before[2]
                load.pause()  # the batch in flight lands before a quiet block
    copier.drain(60)
    gate.copy_log(graph)  # whatever the copier had not done: the log holds every decision
    out = {f"{kind}_{'live' if live else 'quiet'}": _stats(
        ts[:samples], spent[kind, live][:samples], recorded[kind, live][:samples])
        for (kind, live), ts in waited.items()}
    # The writer's own load: the share of the time it spent writing (planning, the batch's
    # round trip and, with ``settle``, the read after it; it takes whatever arrived meanwhile
    # as its next batch, so near 1 it is as busy as it can be), and a batch's mean time.
    gate.KEPT_FACTS = True
    kept = {k: gate.READS[k] - reads_before[k] for k in gate.READS}
    out.update(write_rate_target=rate, writes_per_s=round(live_writes / live_s), settle=settle,
               writer_nice_seen=load.nice_seen.value,
               kept_facts=kept_facts, cones_read_from_kept_facts=kept["kept"],
               cones_read_from_the_graph=kept["graph"],
               writer_busy_share=round(busy_s / live_s, 2) if live_s else None,
               writer_batch_mean_ms=round(1000 * busy_s / batches, 2) if batches else None,
               asks_per_s=asks_per_s, payments=len(pays), all_allowed_on_two_domains=ok)
    return out


def table(results: dict[str, dict], beside: dict[str, dict] | None = None,
          at_0: dict[str, dict] | None = None) -> list[str]:
    """The markdown rows of ``measure``'s results, by graph size (``beside``: the same with
    the gate's state beside the graph, each size's rows after the first's; ``at_0``: on its
    own server with no process's CPU priority lowered, after those)."""
    rows = [(size, r) for size, r in results.items()]
    rows += [(size, r) for size, r in (beside or {}).items()]
    rows += [(size, r) for size, r in (at_0 or {}).items()]
    rows.sort(key=lambda x: int(x[0]))
    paced = next(iter(results.values()))["asks_per_s"]
    lines = ["\n## The payment gate's decision while justified writes run\n",
             "What the gate worker does for each question: `judge` then `record` (the decision "
             "kept in the gate's ledger, in Redis, before the answer; copied into the gate log "
             "after it, untimed, by a thread beside the asks). *New*: a $12,000 payment not yet in the "
             "graph, on its plan; *release*: the release of a stored proposal. Each rests on a "
             "plan, a confirmation and a note that two observations of two trust domains state, "
             "account included (fragility 2: allowed). *Ping*: a bare `PING` to the server "
             "the gate's state is on, at the same pace in blocks of its own: the floor of any "
             "gate whose state is kept there. "
             "*Live*: while another process sends "
             "justified writes through the engine's write path; *quiet*: the same, in blocks "
             f"of {BLOCK} asks of each kind alternating with the live ones. Asks are due at a "
             f"steady {paced:g} a second and timed from when each was "
             "due, so that one arriving during a stall of the server counts its wait; *the ask "
             "alone* is timed from its start.\n",
             "*The record*: the `record` alone, under the writes (the decision kept in the "
             "gate's ledger with the aggregate's check, one Lua script). "
             "*The writer*: the share of the time the writer process spent writing (planning, "
             "the batch, and the read after it; it takes what arrived meanwhile as its next "
             "batch), and its mean batch time, while the asks were timed.\n",
             "*The gate's state*: where the gate's kept facts and its ledger are "
             "(`RESCIND_GATE_STATE_URL`, `rescind.graph.gate_state`): on a server of their own "
             "(the same binary, on which no graph is written), or beside the graph on its "
             "server, whose lock FalkorDB holds while it commits each write. *At n*: the "
             "process's CPU niceness (the writer's is `RESCIND_WORKER_NICE`'s; the gate and the "
             "gate's own server stay at 0; *none lowered*: every process at 0).\n",
             "| graph (memories) | ask | the gate's state | live: median / p90 / p99 ms | live, "
             "the ask alone: median / p99 ms | live, the record: median / p99 ms | quiet: median "
             "/ p90 / p99 ms | runs each | writes/s during the live asks | the writer: busy "
             "share, mean batch ms |",
             "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|"]

    def kept(kind: str, live: dict) -> str:  # a PING records nothing; older runs had no split
        if kind == "ping" or "record_median_ms" not in live:
            return "-"
        return f"{live['record_median_ms']} / {live['record_p99_ms']}"

    def where(r: dict) -> str:  # older runs lowered no process
        lowered = [f"{who} at {r[key]}" for who, key in (
            ("the writer", "writer_nice"), ("the graph's server", "graph_server_nice"))
            if r.get(key)]
        return r.get("gate_state", "-") + (f"; {', '.join(lowered)}" if lowered else
                                           "; none lowered" if "writer_nice" in r else "")

    for size, r in rows:
        for kind in (k for k in KINDS if f"{k}_live" in r):  # runs before the PING had none
            live, quiet = r[f"{kind}_live"], r[f"{kind}_quiet"]
            lines.append(f"| {int(size):,} | {kind} | {where(r)} | "
                         f"{live['median_ms']} / {live['p90_ms']} / "
                         f"**{live['p99_ms']}** | {live['service_median_ms']} / "
                         f"{live['service_p99_ms']} | {kept(kind, live)} | {quiet['median_ms']} / "
                         f"{quiet['p90_ms']} / {quiet['p99_ms']} | {live['runs']} | "
                         f"{r['writes_per_s']:,} | {r.get('writer_busy_share') or '-'}, "
                         f"{r.get('writer_batch_mean_ms') or '-'} |")
    for size, r in rows:  # runs before the kept facts had none of this
        if "kept_facts" in r:
            lines.append(f"\nAt {int(size):,}, the gate's state on {where(r)}: "
                         f"the gate read its cones from the facts the writer keeps: "
                         f"{'yes' if r['kept_facts'] else 'no'}; cones read there "
                         f"{r['cones_read_from_kept_facts']:,}, from the graph "
                         f"{r['cones_read_from_the_graph']:,}.")
    return lines + [""]
