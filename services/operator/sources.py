"""Which source an operator means, whatever the spelling, and a graph's variant spellings merged.

A source's name is canonical (``rescind.contract.identity``): ``resolve`` turns any spelling a
person or a tool types (``portal:Northwind``, `` portal:northwind``, a full-width one) into the
source the graph holds, and an unknown one into an error that lists the near names. A graph
written before names were canonical may hold one source under several spellings: ``variants``
reports them, ``merge`` moves each variant's SAID edges to the canonical source (a preview
unless ``commit``).
"""

from __future__ import annotations

import difflib

from rescind.contract import identity
from rescind.contract.errors import Invalid, StalePreview
from rescind.graph.reads import GraphReads
from rescind.graph.store import TenantGraph


def resolve(graph: GraphReads, spelling: str) -> str:
    """The source ``spelling`` names: its canonical name when the graph has it, else the
    spelling itself when a source of that exact name exists (a graph not merged yet). Invalid
    naming the near names when neither does."""
    canonical = identity.source_name(spelling)
    for name in dict.fromkeys((canonical, spelling)):
        if name and graph.source(name) is not None:
            return name
    known = [s["id"] for s in graph.sources()]
    raise Invalid(f"unknown source {spelling!r} (canonical form {canonical!r}) in tenant "
                  f"{graph.tenant}; {_near(canonical, known)}")


def _near(canonical: str, known: list[str]) -> str:
    """A sentence naming the known sources nearest ``canonical``: the same family (what
    precedes its first ``:``) first, then any close spelling."""
    if not known:
        return "it has no sources yet"
    by_form = {identity.source_name(k): k for k in known}
    close = difflib.get_close_matches(canonical, list(by_form), n=5, cutoff=0.6)
    family = canonical.split(":", 1)[0] + ":" if ":" in canonical else None
    same = [f for f in sorted(by_form) if family and f.startswith(family)][:5]
    near = list(dict.fromkeys([*close, *same]))[:5]
    if near:
        return "did you mean " + ", ".join(repr(by_form[f]) for f in near) + "?"
    return f"known: {', '.join(sorted(known)[:20])}"


def variants(graph: GraphReads) -> list[dict]:
    """Sources whose names are spellings of one canonical name, grouped: each group is the
    canonical name, the spellings (with what each said) and whether a retraction in force
    names one of them (such a group is not merged: its window would no longer cover what
    moves). A single source not in canonical form is a group of one (it is renamed)."""
    groups: dict[str, list[dict]] = {}
    for s in graph.sources_said():
        groups.setdefault(identity.source_name(s["id"]), []).append(s)
    retracted = {r["source"] for r in graph.active_retractions() if r["kind"] == "retract"}
    out = []
    for canonical, members in sorted(groups.items()):
        if [m["id"] for m in members] == [canonical]:
            continue
        out.append({"canonical": canonical, "spellings": members,
                    "retracted": sorted({m["id"] for m in members} & retracted),
                    "domain": _domain(canonical, members)})
    return out


def _domain(canonical: str, members: list[dict]) -> str:
    """The merged source's trust domain: the canonical source's own when it exists, else the
    domain the variants had (canonical), else the name."""
    for m in sorted(members, key=lambda m: m["id"] != canonical):
        if m["domain"]:
            return identity.source_name(m["domain"] if m["domain"] != m["id"] else canonical)
    return canonical


def merge(graph: TenantGraph, commit: bool = False) -> dict:
    """Preview (default) or apply the merge of every group of variant spellings: SAID edges
    moved to the canonical source (created by renaming a variant when none has the canonical
    name). Groups with a retraction in force on a spelling are skipped and listed."""
    groups = variants(graph)
    merged, skipped = [], []
    for group in groups:
        if group["retracted"]:
            skipped.append({**group, "why": "a retraction in force names "
                            + ", ".join(group["retracted"]) + ": reinstate it first, or "
                            "compromise the canonical name"})
            continue
        merged.append(group)
        if commit:
            _merge_one(graph, group)
    return {"committed": commit, "tenant": graph.tenant, "merged": merged, "skipped": skipped,
            "moved": sum(m["said"] for g in merged for m in g["spellings"]
                         if m["id"] != g["canonical"])}


def _merge_one(graph: TenantGraph, group: dict) -> None:
    canonical = group["canonical"]
    names = [m["id"] for m in group["spellings"]]
    for variant in names:
        if variant == canonical:
            continue
        for _ in range(20):  # guarded by the revision: a write in between means try again
            rev = graph.revision()
            if graph.source(canonical) is None:
                done = graph.rename_source(rev, variant, canonical, _uid(canonical),
                                           group["domain"])
            else:
                done = graph.move_source(rev, variant, canonical)
            if done:
                break
        else:
            raise StalePreview(f"the graph kept moving while {variant!r} was merged into "
                               f"{canonical!r}; run the merge again")


def _uid(name: str) -> str | None:
    """The digest a graph that keys sources by ``uid`` finds this name by (rescind.graph.keys,
    where present); None where sources are keyed by name."""
    try:
        from rescind.graph import keys
    except ImportError:
        return None
    return keys.source_uid(name)


__all__ = ["merge", "resolve", "variants"]
