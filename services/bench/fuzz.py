"""`rescind bench fuzz`: agent-shaped hostile events through the real workers, for a while.

Several tenants at once; source names, store keys and texts in every spelling a model or an
attacker may send (case, white space at either end, no-break, zero-width and bidi marks,
full-width letters, NFC against NFD, lengths up to and past the limits); identical texts under
different keys, updates, deletes, compromises, withdrawals and reinstatements interleaved; some
events sent twice. Each event is built as the middleware builds it (the contract's models: what
they refuse is counted as refused at the edge, with the reason) and published to the real
streams, where the real FastStream workers apply it to the embedded FalkorDB. At the end every
published event is accounted for: applied (its grounding or justification found in the graph, or
its decision acknowledged) or dead-lettered with a reason; and the server's deaths are counted
(it is started again on its data if it dies, so a death does not end the run).
"""

from __future__ import annotations

import json
import random
import re
import tempfile
import time
import unicodedata
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import redis
from pydantic import ValidationError

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.graph import tenants
from rescind.graph.store import TenantGraph, connect
from rescind.middleware.publisher import Publisher
from rescind.runtime.server import EmbeddedFalkorDB
from rescind.scenario.via_streams import wait_idle
from rescind.workers.app import WorkerSettings, WorkerThread

VENDORS = ["northwind", "acme", "münchen-gmbh", "fabrikam", "zoë"]
FACTS = ["bank account: GB82 WEST 1234 5698 7654 32", "remit address: 4 Elm Court, York",
         "meeting at 09:30", "invoice INV-5 for 15,000.00 USD", "تم تغيير الحساب"]
_EID = re.compile(r"fz\d+-\d+")
_ZERO_WIDTH, _RTL = "\u200b", "\u200f"


def _fullwidth(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in s)


# Every way of spelling one name (each a function of the name and a random generator).
SPELLINGS = (
    lambda s, r: s, lambda s, r: s.upper(), lambda s, r: s.title(), lambda s, r: s + " ",
    lambda s, r: " " + s, lambda s, r: s + "\u00a0", lambda s, r: s + "\t",
    lambda s, r: s[:2] + _ZERO_WIDTH + s[2:], lambda s, r: _RTL + s, lambda s, r: _fullwidth(s),
    lambda s, r: unicodedata.normalize("NFD", s), lambda s, r: unicodedata.normalize("NFC", s),
    lambda s, r: s + "\u3000", lambda s, r: s * r.randint(20, 60),  # past 200 characters: refused
    lambda s, r: s + "\x00",  # NUL: refused at the edge
)


def spell(name: str, rng: random.Random) -> str:
    return rng.choice(SPELLINGS)(name, rng)


@dataclass
class FuzzResult:
    seconds: float
    tenants: int
    seed: int
    published: Counter = field(default_factory=Counter)  # by event type
    resent: int = 0  # events published twice (same event id): applied once
    refused_at_edge: Counter = field(default_factory=Counter)  # the contract's reason
    applied: int = 0
    dead_lettered: Counter = field(default_factory=Counter)  # the workers' reason (its start)
    dead_by_tenant: Counter = field(default_factory=Counter)
    unaccounted: list[str] = field(default_factory=list)  # neither applied nor dead-lettered
    server_deaths: int = 0
    crash_lines: list[str] = field(default_factory=list)
    command: str = ""

    def as_dict(self) -> dict:
        out = asdict(self)
        for k in ("published", "refused_at_edge", "dead_lettered", "dead_by_tenant"):
            out[k] = dict(sorted(getattr(self, k).items()))
        out["unaccounted"] = self.unaccounted[:20]
        out["published_total"] = sum(self.published.values())
        return out


class _Tenant:
    """What one tenant's fuzzing knows: the memories it published, by key, and its sources."""

    def __init__(self, name: str, index: int) -> None:
        self.name, self.index = name, index
        self.n = 0
        self.mems: list[str] = []  # memory ids published (premises for later writes)
        self.versions: dict[str, str] = {}  # store key -> its current version's memory id
        self.sources: list[str] = []
        self.retractions: list[str] = []
        self.kinds: dict[str, str] = {}  # event id -> its kind of effect (grounding, ...)

    def eid(self) -> str:
        self.n += 1
        return f"fz{self.index}-{self.n}"


class Fuzzer:
    def __init__(self, publisher: Publisher, tenant_names: list[str], rng: random.Random,
                 result: FuzzResult) -> None:
        self.publisher, self.rng, self.result = publisher, rng, result
        self.tenants = [_Tenant(t, i) for i, t in enumerate(tenant_names)]
        self.clock = datetime(2026, 11, 16, 8, tzinfo=UTC)
        self.sent: list[ev.Event] = []

    def _publish(self, t: _Tenant, make, effect: str) -> ev.Event | None:
        try:
            event = make()
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            self.result.refused_at_edge[f"{where}: {first['type']}"] += 1
            return None
        self.publisher.publish(event)
        self.result.published[event.type] += 1
        t.kinds[event.event_id] = effect
        self.sent.append(event)
        return event

    def step(self) -> None:
        rng, t = self.rng, self.rng.choice(self.tenants)
        self.clock += timedelta(seconds=rng.randint(1, 90))
        base = {"tenant": t.name, "at": self.clock}
        roll = rng.random()
        vendor = rng.choice(VENDORS)
        if roll < 0.35 or not t.mems:
            source, fact = f"portal:{spell(vendor, rng)}", rng.choice(FACTS)
            text = spell(f"{vendor} {fact}", rng) if rng.random() < 0.5 else f"{vendor} {fact}"
            e = self._publish(t, lambda: ev.ObservationRecorded(
                **base, event_id=t.eid(), source=source, source_kind="vendor_portal",
                text=text), "grounding")
            if e is not None:
                t.mems.append(ev.memory_id(t.name, "observation", e.text))
                t.sources.append(e.source)
        elif roll < 0.75:
            key = f"notes/u-{rng.randint(1, 3)}/{spell(vendor, rng)}"
            text = rng.choice([f"{vendor} {rng.choice(FACTS)}", spell(rng.choice(FACTS), rng)])
            premises = rng.sample(t.mems, k=min(len(t.mems), rng.randint(1, 3)))
            old = t.versions.get(key) if rng.random() < 0.6 else None
            e = self._publish(t, lambda: ev.MemoryWritten(
                **base, event_id=t.eid(), kind="belief", text=text, premises=premises,
                agent=spell("ap_agent", rng), key=key, supersedes=old, rule="matched"),
                "justification")
            if e is not None:
                t.versions[key] = e.memory()
                t.mems.append(e.memory())
        elif roll < 0.82 and t.versions:
            key = rng.choice(sorted(t.versions))
            self._publish(t, lambda: ev.MemoryDeleted(
                **base, event_id=t.eid(), memory=t.versions[key], key=key, agent="ap_agent"),
                "delete")
        elif roll < 0.90 and t.sources:
            rid = t.eid()
            name = rng.choice(t.sources)
            source = name if rng.random() < 0.7 else spell(name, rng)
            if rng.random() < 0.1:  # a source nobody read: the engine refuses it (a dead letter)
                source = f"portal:never-read-{rng.randint(1, 10**6)}"
            e = self._publish(t, lambda: ev.SourceCompromised(
                **base, event_id=rid, retraction=f"r-{rid}", source=source, reason="fuzz",
                by=spell("sam@harborfinch.example", rng)), "decision")
            if e is not None:
                t.retractions.append(e.retraction)
        elif roll < 0.94 and t.mems:
            rid = t.eid()
            target = rng.choice(t.mems) if rng.random() < 0.9 else f"bel-{rng.getrandbits(80):020x}"
            self._publish(t, lambda: ev.MemoryWithdrawn(
                **base, event_id=rid, retraction=f"w-{rid}", memory=target,
                reason="fuzz", by="sam"), "decision")
        elif roll < 0.97 and t.retractions:
            self._publish(t, lambda: ev.RetractionReinstated(
                **base, event_id=t.eid(), retraction=t.retractions.pop(0), by="sam"),
                "decision")
        elif self.sent:  # a redelivery: the same event, id and all
            again = rng.choice(self.sent[-50:])
            self.publisher.publish(again)
            self.result.resent += 1


BACKLOG = 2_000  # entries the workers may have unread or unacknowledged before the fuzz waits


def _backlog(conn: redis.Redis, streams: list[str]) -> int:
    try:
        return sum((g.get("pending") or 0) + (g.get("lag") or 0)
                   for s in streams for g in conn.xinfo_groups(s))
    except redis.RedisError:
        return 0


def _dead_since(conn: redis.Redis, start: str) -> list[tuple[str, str, str]]:
    """(event id, tenant, reason) of each dead letter after ``start``."""
    out = []
    for _, fields in conn.xrange(layout.DEAD, min=start):
        body = fields.get(b"body", b"").decode(errors="replace")
        reason = fields.get(b"reason", b"").decode(errors="replace")
        found = _EID.search(body)
        tenant = re.search(r'tenant\\*"\s*:\s*\\*"([a-z0-9_-]+)', body)
        out.append((found.group() if found else "", tenant.group(1) if tenant else "?", reason))
    return out


def _reason_class(reason: str) -> str:
    """A dead letter's reason without its particulars (ids, names), for counting."""
    head = re.split(r"[:(']", reason, maxsplit=1)[0].strip()
    return head or reason[:60]


def _applied(graph: TenantGraph, kinds: dict[str, str]) -> set[str]:
    """Which of the tenant's event ids left their mark in the graph."""
    said = {r[0] for r in graph.rows("MATCH ()-[g:SAID]->() RETURN g.id")}
    justified = {r[0] for r in graph.rows("MATCH (j:Justification) RETURN j.id")}
    decided = {r[0] for r in graph.rows(
        "MATCH (:Meta)-[r:RETRACTION]->() RETURN r.id")}
    out = set()
    for eid, effect in kinds.items():
        if (effect == "grounding" and eid in said) or (
                effect == "justification" and eid in justified) or (
                effect == "decision" and (f"r-{eid}" in decided or f"w-{eid}" in decided)):
            out.add(eid)
        elif effect in ("delete", "decision"):
            out.add(eid)  # acknowledged by the workers (drained) and not dead-lettered
    return out


class _Server:
    """The embedded server, started again on its data if it dies; its deaths counted."""

    def __init__(self, data_dir: Path) -> None:
        self.server = EmbeddedFalkorDB(data_dir=data_dir)
        self.deaths, self.lines = 0, []

    def start(self) -> None:
        self.server.start()

    def check(self) -> None:
        if self.server.process is not None and self.server.process.poll() is not None:
            self.deaths += 1
            log = self.server.log_file.read_text(errors="replace").splitlines()
            self.lines += [ln for ln in log if "crashed by signal" in ln or "ASSERTION" in ln][-1:]
            port, data = self.server.port, self.server.data_dir
            self.server = EmbeddedFalkorDB(data_dir=data, port=port)
            self.server.start()


def run_fuzz(seconds: float, tenants_n: int = 3, seed: int = 0, rate: int = 400,
             command: str = "") -> FuzzResult:
    """Fuzz for ``seconds`` at about ``rate`` events a second over ``tenants_n`` tenants."""
    rng = random.Random(seed)
    result = FuzzResult(seconds=seconds, tenants=tenants_n, seed=seed, command=command)
    with tempfile.TemporaryDirectory(prefix="rescind-fuzz-") as tmp:
        server = _Server(Path(tmp) / "data")
        server.start()
        try:
            _fuzz(server, rng, result, tenants_n, seconds, rate, Path(tmp))
        finally:
            server.server.stop()
        result.server_deaths, result.crash_lines = server.deaths, server.lines
    return result


def _fuzz(server: _Server, rng: random.Random, result: FuzzResult, tenants_n: int,
          seconds: float, rate: int, tmp: Path) -> None:
    url = server.server.url
    conn = connect(url)
    names = [f"fuzz{i}" for i in range(tenants_n)]
    for name in names:
        tenants.create(conn, name, by="bench")
    last = conn.xrevrange(layout.DEAD, count=1)
    start = "(" + last[0][0].decode() if last else "-"
    publisher = Publisher(url, spool_dir=tmp / "spool")
    fuzzer = Fuzzer(publisher, names, rng, result)
    settings = WorkerSettings(url=url, worker_id="fuzz", patience_s=30.0)
    with WorkerThread(settings, ("writer", "retraction")):
        deadline = time.monotonic() + seconds
        streams = sorted({publisher.stream_of(name) for name in names})
        while time.monotonic() < deadline:
            began = time.monotonic()
            if _backlog(conn, streams) > BACKLOG:  # correctness, not throughput: keep pace
                time.sleep(0.05)
                server.check()
                continue
            for _ in range(max(1, rate // 10)):
                fuzzer.step()
            server.check()
            time.sleep(max(0.0, 0.1 - (time.monotonic() - began)))
        publisher.flush(60)
        for name in names:
            wait_idle(conn, publisher.stream_of(name), timeout=600)
        server.check()
    publisher.close()
    dead = _dead_since(conn, start)
    dead_ids = {eid for eid, _, _ in dead}
    for _, tenant, reason in dead:
        result.dead_lettered[_reason_class(reason)] += 1
        result.dead_by_tenant[tenant] += 1
    for t in fuzzer.tenants:
        applied = _applied(TenantGraph(conn, t.name), t.kinds)
        result.applied += len(applied - dead_ids)
        result.unaccounted += sorted(set(t.kinds) - applied - dead_ids)


def write(result: FuzzResult, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "fuzz.json"
    path.write_text(json.dumps(result.as_dict(), indent=2, ensure_ascii=False) + "\n")
    return path


__all__ = ["FuzzResult", "SPELLINGS", "run_fuzz", "spell", "write"]
