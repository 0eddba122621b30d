"""The time part of `rescind bench fidelity`: playing a program wrapped, timing it plain and
wrapped side by side, and profiling where the wrapped time goes (see ``fidelity``)."""

from __future__ import annotations

import cProfile
import pstats
import threading
import time
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rescind.contract import layout
from rescind.graph import tenants
from rescind.graph.store import connect
from rescind.middleware import ConfigWarning, InterceptConfig, Recorder, UserSource, instrument

from .fidelity_programs import Program, Runner


def config_for(program: Program, tenant: str, url: str, spool: Path) -> InterceptConfig:
    extra: dict[str, Any] = {}
    if program.users is not None:
        extra["users"] = UserSource(**program.users)
    return InterceptConfig(tenant=tenant, url=url, sources=program.sources, spool_dir=spool,
                           **extra)


def wrapper(config: InterceptConfig, shared: dict | None = None) -> Callable[[Any], Any]:
    """Instrument each graph handed over; every graph after the first shares the first's
    recorder (and a ``shared`` dict keeps it across plays)."""
    held = shared if shared is not None else {}

    def wrap(graph: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConfigWarning)
            if "recorder" in held:
                return instrument(graph, config, recorder=held["recorder"])
            graph = instrument(graph, config)
        held["recorder"] = graph.rescind
        return graph

    return wrap




# -- time -----------------------------------------------------------------------------------------


class KeptEvents:
    """A publisher that encodes each event, as the real one does, and keeps it in a list: no
    spool file, no sending thread. Timing a wrapped play with it separates the recording done
    in the agent's thread from the cost of spooling and sending."""

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.before_flush: Callable[[float], bool] | None = None  # the recorder's steps

    def publish(self, event: Any, durable: bool = False) -> None:
        self.events.append(layout.encode_event(event))

    def stream_of(self, tenant: str) -> str:
        return layout.tenant_stream(tenant)

    def flush(self, timeout: float = 10.0) -> bool:
        done = self.before_flush is None or self.before_flush(timeout)
        self.events.clear()
        return done

    def close(self, timeout: float = 10.0) -> None:
        self.events.clear()


def _play_timed(program: Program, wrap: Callable[[Any], Any],
                after: Callable[[], Any] = lambda: None) -> tuple[float, float, float, int]:
    """(wall ms per invoke, CPU ms per invoke, the same with ``after`` (a flush) done, invokes)
    of one play."""
    runner = Runner(wrap)
    began = time.process_time()
    program.play(runner)
    cpu = time.process_time() - began
    after()
    every = time.process_time() - began
    return (runner.seconds * 1000 / runner.invokes, cpu * 1000 / runner.invokes,
            every * 1000 / runner.invokes, runner.invokes)


def measure_time(program: Program, result: Any, url: str, tenant: str, spool: Path,
                 rounds: int) -> None:
    """Plain, wrapped, and wrapped with its events kept in memory (``KeptEvents``), alternated
    (the order flips every round), after one of each to warm up. The CPU time counts the whole
    play (building the graph too) over its invokes."""
    conn = connect(url)
    tenants.create(conn, tenant, by="bench")
    shared: dict = {}
    wrap = wrapper(config_for(program, tenant, url, spool), shared)

    def plain() -> None:
        ms, cpu, _, result.invokes = _play_timed(program, lambda g: g)
        result.plain_ms.append(ms)
        result.plain_cpu_ms.append(cpu)

    def wrapped() -> None:
        # its recording and sends are not left to the next play
        ms, cpu, every, result.invokes = _play_timed(
            program, wrap, lambda: shared["recorder"].publisher.flush(30))
        result.wrapped_ms.append(ms)
        result.wrapped_cpu_ms.append(cpu)
        result.wrapped_all_cpu_ms.append(every)

    config = config_for(program, tenant, url, spool)
    kept_recorder = Recorder(config, publisher=KeptEvents())  # type: ignore[arg-type]
    wrap_kept = wrapper(config, {"recorder": kept_recorder})

    def kept() -> None:
        ms, _, _, _ = _play_timed(program, wrap_kept, kept_recorder.publisher.flush)
        result.kept_ms.append(ms)

    plain(), wrapped(), kept()
    for times in (result.plain_ms, result.wrapped_ms, result.plain_cpu_ms,
                  result.wrapped_cpu_ms, result.wrapped_all_cpu_ms, result.kept_ms):
        times.clear()
    for i in range(rounds):
        for step in ((plain, wrapped, kept) if i % 2 == 0 else (kept, wrapped, plain)):
            step()
    shared["recorder"].close()
    if kept_recorder.later is not None:
        kept_recorder.later.close()
    kept_recorder.status.close()


class _ThreadProfiles:
    """cProfile in this thread and in every thread started while it is on."""

    def __init__(self) -> None:
        self.main = cProfile.Profile()
        self.others: list[cProfile.Profile] = []
        self._lock = threading.Lock()

    def _start(self, frame: Any, event: str, arg: Any) -> None:
        profile = cProfile.Profile()
        with self._lock:
            self.others.append(profile)
        profile.enable()

    def __enter__(self) -> _ThreadProfiles:
        threading.setprofile(self._start)
        self.main.enable()
        return self

    def __exit__(self, *exc: object) -> None:
        self.main.disable()
        threading.setprofile(None)

    def around(self) -> _ThreadProfiles:
        return self

    def stats(self) -> pstats.Stats:
        stats = pstats.Stats(self.main)
        for p in self.others:
            p.disable()
            stats.add(p)
        return stats


def _area(func: tuple, root: str) -> str:
    """Which part of the process a profiled function belongs to, by its file (a C function:
    itself, e.g. a lock's wait)."""
    filename = func[0]
    if filename.startswith(root):
        return "rescind.middleware"
    path = Path(filename)
    parts = path.parts
    if "site-packages" in parts:
        rest = parts[parts.index("site-packages") + 1:]
        top = rest[0].split(".")[0]
        return f"{top}.{rest[1].removesuffix('.py')}" if len(rest) > 2 else top
    if filename.startswith(("~", "<")):
        return f"C: {func[2]}"
    if "services" in parts:
        return "rescind." + parts[parts.index("services") + 1].removesuffix(".py")
    return "stdlib." + path.stem


def _profiled(programs: list[Program], rounds: int, wrap_for: Callable[[Program], Callable],
              after: Callable[[], None] = lambda: None) -> tuple[dict, int, float]:
    """Plays of every program, each warmed once unprofiled, then ``rounds`` times under the
    profiler (its invocations only): (stats, invokes, wall seconds of the invocations)."""
    prof, invokes, wall = _ThreadProfiles(), 0, 0.0
    for program in programs:
        wrap = wrap_for(program)
        program.play(Runner(wrap))
        for _ in range(rounds):
            runner = Runner(wrap, around=prof.around)
            program.play(runner)
            invokes += runner.invokes
            wall += runner.seconds
            after()
    return prof.stats().stats, invokes, wall  # type: ignore[attr-defined]


def profile_wrapped(programs: list[Program], url: str, spool: Path, rounds: int) -> dict:
    """Plain and wrapped plays of every program under cProfile (every thread the agent starts):
    the middleware's functions by time per invoke (cumulative and own), the middleware's total
    entered from outside it, and each part of the process's own time, plain beside wrapped.
    What is profiled is the agent's side: the recorder's thread (started by the warm-up play)
    runs its recording steps outside the profile, mostly in the flush after each play."""
    import rescind.middleware as mw

    root = str(Path(mw.__file__).parent)
    conn = connect(url)
    recorders: list[Recorder] = []

    def wrap_for(program: Program) -> Callable:
        tenant = f"fidprof-{program.name.replace('_', '-')}"
        tenants.create(conn, tenant, by="bench")
        config = config_for(program, tenant, url, spool)
        # The recorder (its sending and status threads) is made before the profiler starts:
        # the profile covers the invocations, in the agent's threads.
        recorders.append(Recorder(config))
        return wrapper(config, {"recorder": recorders[-1]})

    plain, plain_invokes, _ = _profiled(programs, rounds, lambda p: lambda g: g)
    stats, invokes, wall = _profiled(programs, rounds, wrap_for,
                                     lambda: recorders[-1].publisher.flush(30))
    for r in recorders:
        r.close()

    def inside(func: tuple) -> bool:
        return func[0].startswith(root)

    rows, entered, inner = [], 0.0, 0.0
    for func, (_cc, calls, tottime, cumtime, callers) in stats.items():
        if not inside(func):
            # The wrapped store's inner store: the agent's own store work (plain pays it too),
            # and the read of what each put overwrites (the wrapper's).
            inner += sum(edge[3] for caller, edge in callers.items()
                         if inside(caller) and caller[2] in ("batch", "abatch")
                         and Path(caller[0]).stem == "store")
            continue
        entered += sum(edge[3] for caller, edge in callers.items() if not inside(caller))
        rows.append({"function": f"{Path(func[0]).stem}.{func[2]}",
                     "calls_per_invoke": round(calls / invokes, 1),
                     "cum_ms_per_invoke": round(cumtime * 1000 / invokes, 3),
                     "own_ms_per_invoke": round(tottime * 1000 / invokes, 3)})
    rows.sort(key=lambda r: -r["cum_ms_per_invoke"])

    def by_area(st: dict, n: int) -> Counter:
        areas: Counter = Counter()
        for func, (_cc, _nc, tottime, _ct, _callers) in st.items():
            areas[_area(func, root)] += tottime * 1000 / n
        return areas

    a_plain, a_wrapped = by_area(plain, plain_invokes), by_area(stats, invokes)
    areas = sorted(({"area": a, "plain_ms": round(a_plain[a], 3),
                     "wrapped_ms": round(a_wrapped[a], 3),
                     "added_ms": round(a_wrapped[a] - a_plain[a], 3)}
                    for a in set(a_plain) | set(a_wrapped)), key=lambda r: -r["added_ms"])
    return {"rounds": rounds, "invokes": invokes,
            "wall_ms_per_invoke_under_profile": round(wall * 1000 / invokes, 2),
            "profiled_ms_per_invoke": round(sum(a_wrapped.values()), 2),
            "plain_profiled_ms_per_invoke": round(sum(a_plain.values()), 2),
            "middleware_ms_per_invoke": round(entered * 1000 / invokes, 2),
            "inner_store_ms_per_invoke": round(inner * 1000 / invokes, 2),
            "top": rows[:20], "areas": [a for a in areas if abs(a["added_ms"]) >= 0.01]}
