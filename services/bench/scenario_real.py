"""The real-data scenario of `rescind bench rules`: retracted papers and the papers citing them,
replayed on their dates, read in place from a folder outside the repository.

Where that folder is: ``--data DIR``, else the setting ``RESCIND_RETRACTIONS_DATA``, both taken
relative to the current directory like any path given to a command; else ``DEFAULT_DATA``,
``../shared/data/retractions`` beside the repository, that is relative to the checkout the
``rescind`` package runs from (an editable install), or to the current directory when it runs
from an installed wheel. The data is never copied into the repository, and the results name the
folder relative to the checkout, so that they carry no folder of the machine that made them.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from rescind.bench.scenarios import Batch, Case, Checkpoint, micros, stamp
from rescind.engine.retraction import Retract
from rescind.engine.writes import Write
from rescind.runtime.settings import Settings

DEFAULT_DATA = Path("..", "shared", "data", "retractions")
FILES = ("covid_citation_graph_nodes.csv", "covid_citation_graph_edges.csv",
         "rw_covid_records_2024-07.csv")


def checkout() -> Path | None:
    """The repository the ``rescind`` package runs from: the folder holding ``pyproject.toml``
    above the package's own folder; None when the package is installed from a wheel."""
    root = Path(__file__).resolve().parents[2]  # <root>/services/bench/this file
    return root if (root / "pyproject.toml").is_file() else None


def retraction_data(given: Path | None = None) -> Path:
    """The folder the real scenario reads: ``given``, the setting, or the default (see above)."""
    if given is None and (setting := Settings().retractions_data):
        given = Path(setting)
    if given is not None:
        return Path(os.path.abspath(given))  # relative to the current directory
    return Path(os.path.abspath((checkout() or Path.cwd()) / DEFAULT_DATA))


def data_problem(data: Path) -> str | None:
    """Why ``data`` cannot serve the real scenario, as one line with the way out; None if it can."""
    fix = "pass --data DIR or set RESCIND_RETRACTIONS_DATA"
    if not data.is_dir():
        return f"no retraction data: {data} is not a directory; {fix}"
    missing = [name for name in FILES if not (data / name).is_file()]
    if missing:
        return f"no retraction data in {data}: {', '.join(missing)} missing; {fix}"
    return None


def shown(data: Path) -> str:
    """``data`` as the results name it: relative to the checkout (or the current directory)."""
    try:
        return os.path.relpath(data, checkout() or Path.cwd())
    except ValueError:  # another drive
        return str(data)


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
        events.append(Checkpoint(f"end ({stamp(last)[:10]})", last + 1, []))  # later writes too
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
