"""The four scenarios of `rescind bench rules`, as plain timelines of writes and retractions.

- ``demo``: the reference agents' week (``services.demo``), read back from the graph at Thursday
  09:00, just before security acts, with security's retraction of Northwind's portal.
- ``precision``: constructed. Vendors' portals read over four weeks, notes taken from each read,
  payment plans, payments and answers built on the notes; five portals compromised, each over a
  window of its own; about 40% of the notes taken from a compromised read are also confirmed by
  the signed contract, an independent trust domain. It exists to test whether telling those
  apart matters; it is not a measurement of the world.
- ``real``: real retractions (``../shared/data/retractions``), replayed on their dates (see
  ``real_cases`` for the mapping and what is skipped).
- ``scale``: the agent-like generator of the engine benchmark, one whole source retracted at a
  time.
"""

from __future__ import annotations

import csv
import json
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from rescind.bench import rules_queries as rq
from rescind.bench.generator import agent_like, plain_clusters
from rescind.contract.events import to_micros
from rescind.engine.retraction import Retract
from rescind.engine.writes import Write


@dataclass
class Batch:
    """Writes applied together (in one engine call)."""

    writes: list[Write]


@dataclass
class Checkpoint:
    """Retractions applied at one moment; then every rule is scored against the truth."""

    label: str
    at: int
    retractions: list[Retract]
    score: bool = True


@dataclass
class Case:
    name: str
    sources: list[dict]
    events: list[Batch | Checkpoint] | None = None
    stream: object = None  # for large cases: a callable yielding the events lazily
    params: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)
    scored_rule2: bool = True  # False where rule 2 runs on stand-in vectors

    def timeline(self) -> Iterator[Batch | Checkpoint]:
        if self.events is not None:
            yield from self.events
        else:
            yield from self.stream()

    @property
    def size(self) -> int:
        return self.params.get("memories") or sum(
            len(e.writes) for e in self.events or () if isinstance(e, Batch))


def retraction_data() -> Path:
    """Where the retraction records are read from (never copied): $RESCIND_RETRACTIONS_DATA, the
    shared folder beside the repository, or the development machines' /work/shared."""
    if os.environ.get("RESCIND_RETRACTIONS_DATA"):
        return Path(os.environ["RESCIND_RETRACTIONS_DATA"])
    beside = Path(__file__).resolve().parents[3] / "shared" / "data" / "retractions"
    for candidate in (beside, Path("/work/shared/data/retractions")):
        if (candidate / "covid_citation_graph_nodes.csv").is_file():
            return candidate
    return beside


def micros(day: date | datetime, hour: int = 0) -> int:
    if isinstance(day, datetime):
        return to_micros(day)
    return to_micros(datetime(day.year, day.month, day.day, hour, tzinfo=UTC))


# -- the demo week ---------------------------------------------------------------------------
def demo_case(url: str, tenant: str = "bench-rules-demo-week") -> Case:
    """Run the demo week (deterministic policy) and keep its graph as it stood at Thursday
    09:00, before security's retraction; the scenario is that graph plus that retraction."""
    from rescind.agents.llm import PolicyModel
    from rescind.demo import week as demo
    from rescind.graph.store import TenantGraph, connect
    from rescind.operator import decisions as security

    graph = TenantGraph(connect(url), tenant)
    seen: dict = {}

    def on_event(kind, data):
        if kind == "step" and data["name"] == "security/thursday":
            seen["rows"] = [graph.rows(q) for q in (rq.DEMO_SOURCES, rq.DEMO_MEMORIES,
                                                      rq.DEMO_GROUNDINGS, rq.DEMO_JUSTIFICATIONS)]

    summary = demo.run(url, tenant, model=PolicyModel(), on_event=on_event)
    graph.delete()
    sources, mems, grounds, justs = seen["rows"]
    facts = {r[0]: r for r in mems}
    writes = []
    for gid, sid, mid, at in grounds:
        _, kind, text, *_ = facts[mid]
        writes.append(Write(gid, mid, kind, text, at, source=sid))
    for jid, mid, at, premises in justs:
        _, kind, text, _, names, executed, amount, payee = facts[mid]
        extra = {"amount": amount, "payee": payee, "executed": bool(executed)} \
            if kind == "action" else {}
        writes.append(Write(jid, mid, kind, text, at, name=(names or [None])[0],
                            premises=tuple(sorted(premises)), extra=extra))
    writes.sort(key=lambda w: (w.at, w.source is None))
    start, end = (security.parse_time(t, "window") for t in demo.ATTACK)
    op = Retract("r-northwind-portal", demo.COMPROMISED, start, end, reason=demo.REASON)
    thursday = micros(datetime(2026, 11, 19, 9, tzinfo=UTC))
    return Case(
        name="demo", sources=[{"id": s, "kind": k, "name": n, "domain": d}
                              for s, k, n, d in sources],
        events=[Batch(writes), Checkpoint("Thu 19 Nov 09:00: portal:northwind compromised "
                                          "16 Nov 08:00 - 18 Nov 12:00", thursday, [op])],
        params={"model": "deterministic policy", "retraction": {
            "source": demo.COMPROMISED, "window": list(demo.ATTACK)}},
        notes={"the demo's own commit took OUT": summary["out"]})


# -- precision (constructed) -------------------------------------------------------------------
PRECISION = {"seed": 2026, "vendors": 20, "compromised": 5, "days": 28, "reads": 12,
             "invoices": 4, "answers": 3, "confirm_share": 0.53, "window_days": (3, 6)}
FIRST = ("Alder", "Birch", "Cedar", "Dunmore", "Elm", "Fairhaven", "Granite", "Holloway",
         "Ironside", "Juniper", "Kestrel", "Larch", "Marlow", "Norcross", "Oakridge", "Pinecrest",
         "Quarry", "Redfern", "Saltmarsh", "Thornbury", "Upland", "Verity", "Westgate", "Yarrow")
SECOND = ("Supplies", "Logistics", "Components", "Packaging", "Metals", "Textiles", "Foods",
          "Chemicals", "Freight", "Tooling")
STREETS = ("Harbor Lane", "Mill Road", "Station Street", "Quay Side", "Market Row", "Canal Walk")
TOWNS = ("Portsmouth, ME 03801", "Salem, MA 01970", "Bristol, RI 02809", "Mystic, CT 06355")
TERMS = ("net 30", "net 45", "net 60", "2% 10 net 30")


def _account(rng: random.Random) -> str:
    letters = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(4))
    return (f"ZZ{rng.randint(10, 99)} {letters} 0000 {rng.randint(1000, 9999)} "
            f"{rng.randint(1000, 9999)} {rng.randint(10, 99)}")


def precision_case(**overrides) -> Case:
    """Vendors' portals read over ``days``; notes from each read; plans, payments, answers.

    Per vendor: a signed contract (domain ``signed-contracts``) stating its remit address, terms
    and contact; ``reads`` reads of its portal (one observation each, the page as read that day);
    from each read four notes (bank account, remit address, terms, contact; dated, so one note per
    read). A note other than the bank account is also confirmed by the contract with probability
    ``confirm_share`` (a second justification, another trust domain); the bank account never is:
    during a compromise the page shows the attacker's account, which no contract states.
    ``invoices`` invoices per vendor: a plan on the latest bank-account and remit notes, then a
    payment on the plan, executed when due before the retractions (else pending). ``answers``
    replies per vendor (where to send paper mail) on the latest remit and terms notes.
    ``compromised`` vendors each get a window of ``window_days`` days; the retractions are applied
    one by one after the last day.
    """
    p = {**PRECISION, **overrides}
    rng = random.Random(p["seed"])
    t0 = datetime(2026, 10, 1, tzinfo=UTC)
    end = t0 + timedelta(days=p["days"])
    names = rng.sample([f"{a} {b}" for a in FIRST for b in SECOND], p["vendors"])
    compromised = set(rng.sample(range(p["vendors"]), p["compromised"]))
    sources = [{"id": "contracts", "kind": "signed_contract", "name": "Signed contracts",
                "domain": "signed-contracts"}]
    writes: list[Write] = []
    retractions: list[Retract] = []
    touched = confirmed = 0
    for v, name in enumerate(names):
        slug = name.lower().replace(" ", "-")
        portal = f"portal:{slug}"
        sources.append({"id": portal, "kind": "vendor_portal", "name": f"{name} portal",
                        "domain": portal})
        facts = {"bank account": _account(rng),
                 "remit address": f"{rng.randint(10, 990)} {rng.choice(STREETS)}, "
                                  f"{rng.choice(TOWNS)}",
                 "payment terms": rng.choice(TERMS),
                 "contact": f"ar@{slug}.example"}
        attacker = _account(rng)
        window = None
        if v in compromised:
            length = rng.randint(*p["window_days"])
            first = rng.randint(3, p["days"] - length - 2)
            window = (t0 + timedelta(days=first, hours=8), t0 + timedelta(days=first + length))
            retractions.append(Retract(f"r-{slug}", portal, micros(window[0]), micros(window[1]),
                                       reason=f"{name}'s portal was taken over"))
        contract_obs = {}
        for k in ("remit address", "payment terms", "contact"):
            mid = f"{slug}/contract/{k.replace(' ', '-')}"
            contract_obs[k] = mid
            writes.append(Write(f"e:{mid}", mid, "observation",
                                f"Signed contract with {name}: {k} {facts[k]}",
                                micros(t0 - timedelta(days=60)), source="contracts"))
        days = set(rng.sample(range(1, p["days"]), p["reads"] - 1)) | {0}
        if window is not None:  # a compromised portal is read at least twice while it is
            span = range(first, first + length)
            days |= set(rng.sample(span, 2))
        days = sorted(days)
        latest: dict[str, str] = {}
        timeline: list[tuple[datetime, str, dict]] = []
        for d in days:
            at = t0 + timedelta(days=d, hours=rng.randint(8, 16), minutes=rng.randint(0, 59))
            timeline.append((at, "read", {}))
        for i in range(p["invoices"]):
            at = t0 + timedelta(days=rng.randint(1, p["days"] - 1), hours=rng.randint(9, 17))
            lag = rng.choice((0, 0, 7, 14))
            timeline.append((at, "invoice", {"n": i, "due": at + timedelta(days=lag)}))
        for i in range(p["answers"]):
            at = t0 + timedelta(days=rng.randint(1, p["days"] - 1), hours=rng.randint(9, 17))
            timeline.append((at, "answer", {"n": i}))
        for at, what, info in sorted(timeline, key=lambda x: x[0]):
            day = at.strftime("%Y-%m-%d")
            if what == "read":
                inside = window is not None and window[0] <= at <= window[1]
                shown = {**facts, "bank account": attacker if inside else facts["bank account"]}
                obs = f"{slug}/read/{day}"
                page = (f"{name} supplier portal, {day}: bank account {shown['bank account']}; "
                        f"remit to {shown['remit address']}; terms {shown['payment terms']}; "
                        f"contact {shown['contact']}")
                writes.append(Write(f"e:{obs}", obs, "observation", page, micros(at),
                                    source=portal))
                for k, value in shown.items():
                    mid = f"{slug}/note/{k.replace(' ', '-')}/{day}"
                    note_at = micros(at + timedelta(minutes=5))
                    text = f"{name} {k} as of {day}: {value}"
                    writes.append(Write(f"e:{mid}", mid, "belief", text, note_at,
                                        premises=(obs,), agent="ap"))
                    backed = k != "bank account" and rng.random() < p["confirm_share"]
                    if backed:
                        writes.append(Write(f"e2:{mid}", mid, "belief", text, note_at,
                                            premises=(contract_obs[k],), agent="ap"))
                    if inside:
                        touched += 1
                        confirmed += backed
                    latest[k] = mid
            elif what == "invoice":
                inv = f"INV-{v + 1:02d}{info['n'] + 1:02d}"
                amount = float(rng.choice((800, 2400, 6000, 12000, 34500)))
                plan = f"{slug}/plan/{inv}"
                writes.append(Write(f"e:{plan}", plan, "plan",
                                    f"Plan: pay {inv} to {name}, ${amount:,.2f} to the account "
                                    f"in the latest note, remit advice to the latest address",
                                    micros(at), premises=(latest["bank account"],
                                                          latest["remit address"]),
                                    agent="payments"))
                pay = f"{slug}/payment/{inv}"
                writes.append(Write(f"e:{pay}", pay, "action", f"pay {inv}",
                                    micros(at + timedelta(minutes=1)), name=f"payment:{inv}",
                                    premises=(plan,), agent="payments",
                                    extra={"amount": amount, "payee": slug,
                                           "executed": info["due"] <= end}))
            else:
                ans = f"{slug}/answer/{info['n']}"
                writes.append(Write(f"e:{ans}", ans, "answer",
                                    f"Paper mail for {name} goes to the remit address on file, "
                                    f"on its payment terms (asked on {day})", micros(at),
                                    premises=(latest["remit address"], latest["payment terms"]),
                                    agent="ap"))
    writes.sort(key=lambda w: w.at)
    after = micros(end + timedelta(hours=9))
    events: list[Batch | Checkpoint] = [Batch(writes)]
    for i, op in enumerate(sorted(retractions, key=lambda r: r.start)):
        events.append(Checkpoint(f"{op.source} compromised {_day(op.start)} - {_day(op.end)}",
                                 after + i * 3_600_000_000, [op]))
    return Case(name="precision", sources=sources, events=events,
                params={**p, "window_days": list(p["window_days"])},
                notes={"notes taken from a compromised read": touched,
                       "of which also confirmed by the contract": confirmed,
                       "confirmed share": round(confirmed / touched, 3) if touched else None})


def _day(us: int | None) -> str:
    return "open" if us is None else (datetime(1970, 1, 1, tzinfo=UTC)
                                      + timedelta(microseconds=us)).strftime("%Y-%m-%d %H:%M")


# -- real retractions ----------------------------------------------------------------------------
READINGS = ("needs-every", "any-suffices")


@dataclass
class Paper:
    key: str
    title: str
    published: date
    retracted: date | None = None
    origin: str = ""


def _date(text: str) -> date | None:
    text = (text or "").strip()[:10]
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def _rows(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def real_cases(data: Path, limit: int | None = None) -> tuple[list[Case], dict]:
    """Both readings of the real data, and the mapping with what was skipped and why.

    Mapping:
    - every retracted paper is a source ``paper:{doi}`` in a trust domain of its own, and its
      title an observation made at its publication date (12:00 UTC);
    - the 73 retracted papers of the citation graph take their dates from its node table (it
      agrees with the 2024 Retraction Watch records for 56 of the 60 that join); the other
      Retraction Watch records of nature "Retraction" add papers with no citing paper in the
      graph (their earliest notice counts);
    - each citing paper with a publication date is a memory (its title) built on the retracted
      papers it cites, written at its publication date (12:00 UTC), or at the latest cited
      paper's publication date when the data dates the citing paper earlier;
    - each retraction applies at 00:00 UTC of its date, to every reading of the paper (an open
      window), interleaved with the writes in time order.
    ``limit`` keeps the least cited graph papers and the papers citing them (for tests).
    """
    nodes = _rows(data / "covid_citation_graph_nodes.csv")
    edges = _rows(data / "covid_citation_graph_edges.csv")
    rw = _rows(data / "rw_covid_records_2024-07.csv")
    skipped: dict[str, int] = {}

    def skip(why: str, n: int = 1) -> None:
        skipped[why] = skipped.get(why, 0) + n

    papers: dict[str, Paper] = {}
    citing_rows: dict[str, dict] = {}
    for n in nodes:
        key = n["doi"].strip().lower()
        if n["retracted"] == "True":
            papers[key] = Paper(key, n["title"].strip(), _date(n["publication_date"]),
                                _date(n["retraction_date"]), "citation graph")
        else:
            citing_rows[key] = n
    if limit is not None:  # the least cited papers: a small graph for tests
        cited_by: dict[str, int] = {}
        for e in edges:
            t = e["target_doi"].strip().lower()
            cited_by[t] = cited_by.get(t, 0) + 1
        keep = sorted(papers.values(), key=lambda p: (cited_by.get(p.key, 0), p.key))[:limit]
        papers = {p.key: p for p in keep}
    else:
        notices: dict[str, dict] = {}
        for r in rw:
            if r["RetractionNature"] != "Retraction":
                skip(f"2024 records of nature {r['RetractionNature']!r} (not a retraction)")
                continue
            doi = r["OriginalPaperDOI"].strip().lower()
            key = doi if doi and doi != "unavailable" else f"rw-{r['Record ID']}"
            if key in papers and papers[key].origin == "citation graph":
                continue
            if key in notices and notices[key]["RetractionDate"] <= r["RetractionDate"]:
                skip("2024 records repeating an earlier notice of the same paper")
                continue
            if key in notices:
                skip("2024 records repeating an earlier notice of the same paper")
            notices[key] = r
        for key, r in notices.items():
            pub, ret = _date(r["OriginalPaperDate"]), _date(r["RetractionDate"])
            if pub is None or ret is None:
                skip("2024 records without a usable date")
                continue
            papers[key] = Paper(key, r["Title"].strip(), pub, ret, "Retraction Watch 2024")
    cites: dict[str, list[str]] = {}
    for e in edges:
        s, t = e["source_doi"].strip().lower(), e["target_doi"].strip().lower()
        if t not in papers:
            if limit is None:
                skip("citations of a paper not retracted in the data")
            continue
        cites.setdefault(s, []).append(t)
    memories: list[tuple[str, str, date, list[str]]] = []
    shifted = 0
    for s, targets in cites.items():
        row = citing_rows.get(s) or next((n for n in nodes if n["doi"].strip().lower() == s), None)
        when = _date(row["publication_date"]) if row else None
        if when is None:
            skip("citing papers without a publication date ('undefined')")
            skip("citations from citing papers without a publication date", len(targets))
            continue
        latest = max(papers[t].published for t in targets)
        if latest > when:
            shifted += 1
            when = latest
        memories.append((s, row["title"].strip(), when, sorted(set(targets))))

    sources = [{"id": f"paper:{p.key}", "kind": "paper", "name": p.title[:120],
                "domain": f"paper:{p.key}"} for p in papers.values()]
    cases = []
    for reading in READINGS:
        timed: list[tuple[int, int, object]] = []
        for p in papers.values():
            timed.append((micros(p.published, 12), 0, Write(
                f"said:{p.key}", f"obs:{p.key}", "observation", p.title, micros(p.published, 12),
                source=f"paper:{p.key}")))
        for key, title, when, targets in memories:
            at = micros(when, 12)
            if reading == "needs-every":
                timed.append((at, 1, Write(f"cites:{key}", f"cites:{key}", "belief", title, at,
                                           premises=tuple(f"obs:{t}" for t in targets))))
            else:
                for t in targets:
                    timed.append((at, 1, Write(f"cites:{key}>{t}", f"cites:{key}", "belief",
                                               title, at, premises=(f"obs:{t}",))))
        by_day: dict[date, list[str]] = {}
        for p in papers.values():
            by_day.setdefault(p.retracted, []).append(p.key)
        for day, keys in by_day.items():
            ops = [Retract(f"r:{k}", f"paper:{k}", None, None, reason=f"retracted {day}")
                   for k in sorted(keys)]
            timed.append((micros(day), -1, Checkpoint(day.isoformat(), micros(day), ops)))
        timed.sort(key=lambda x: (x[0], x[1]))
        events: list[Batch | Checkpoint] = []
        for _, _, item in timed:
            if isinstance(item, Checkpoint):
                events.append(item)
            elif events and isinstance(events[-1], Batch) and len(events[-1].writes) < 2000:
                events[-1].writes.append(item)
            else:
                events.append(Batch([item]))
        last = max(x[0] for x in timed)
        events.append(Checkpoint(f"end ({_day(last)[:10]})", last + 1, []))  # later writes too
        cases.append(Case(name=f"real/{reading}", sources=sources, events=events,
                          params={"reading": reading}))
    mapping = {
        "retracted papers": len(papers),
        "from the citation graph": sum(p.origin == "citation graph" for p in papers.values()),
        "from the 2024 Retraction Watch records only": sum(
            p.origin == "Retraction Watch 2024" for p in papers.values()),
        "citing papers (memories)": len(memories),
        "citations (premises)": sum(len(t) for *_, t in memories),
        "citing papers citing more than one retracted paper": sum(
            len(t) > 1 for *_, t in memories),
        "citing papers written at a cited paper's later publication date": shifted,
        "retraction dates": len({p.retracted for p in papers.values()}),
        "skipped": skipped,
    }
    reinstated = sorted({r["OriginalPaperDOI"].strip().lower() for r in rw
                         if r["RetractionNature"] == "Reinstatement"} & set(papers))
    mapping["retracted papers with a later Reinstatement record (kept retracted)"] = reinstated
    return cases, mapping


# -- scale ---------------------------------------------------------------------------------------
def scale_case(memories: int, samples: int, batch: int = 5000, seed: int = 11) -> Case:
    """The engine benchmark's agent-like graph; ``samples`` whole sources retracted one by one."""
    clusters = plain_clusters(memories)
    tenant = f"bench-rules-scale-{memories}"
    targets = random.Random(seed).sample([c.source for c in clusters], min(samples, len(clusters)))

    def stream() -> Iterator[Batch | Checkpoint]:
        pending: list[Write] = []
        for writes in agent_like(tenant, clusters):
            pending.extend(writes)
            if len(pending) >= batch:
                yield Batch(pending)
                pending = []
        if pending:
            yield Batch(pending)
        last = len(targets) - 1
        for i, s in enumerate(targets):
            yield Checkpoint(f"{s} compromised", 10**15 + i,
                             [Retract(f"r-{s}", s, reason="bench")], score=i == last)

    return Case(name=f"scale/{memories}", stream=stream,
                sources=[{"id": c.source, "kind": "portal", "name": c.source, "domain": c.source}
                         for c in clusters],
                params={"memories": memories, "retractions": len(targets), "seed": seed,
                        "cluster": clusters[0].size if clusters else 0},
                scored_rule2=False)


def load_json(path: Path) -> dict:
    """Earlier results the new ones are merged into; none yet is an empty start (the command
    refuses a file that is not JSON before it runs, rather than write over it)."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return {}
