"""`rescind sources resolve|check|merge`: which source a spelling names, and a graph's variant
spellings of one source (written before names were canonical) reported and merged."""

from __future__ import annotations

from pathlib import Path

import typer

from rescind.cli.common import (
    ByOpt,
    DataDirOpt,
    JsonOpt,
    Line,
    TenantOpt,
    UrlOpt,
    audited,
    decider,
    emit,
    operator_graph,
)

sources_app = typer.Typer(help="Sources by any spelling; variant spellings reported and merged.",
                          no_args_is_help=True)


@sources_app.command("resolve")
def sources_resolve(
    spelling: str = typer.Argument(..., help="A source's name, spelled any way", callback=Line),
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """The source SPELLING names (its canonical name), with its kind and trust domain; an
    unknown one exits 2 naming the near names."""
    from rescind.operator import sources

    with operator_graph(url, data_dir, tenant) as graph:
        name = sources.resolve(graph, spelling)
        found = {"asked": spelling, **(graph.source(name) or {"id": name})}
    emit(found, as_json, lambda d, c: c.print(
        f"{d['asked']!r} is source {d['id']} (kind {d.get('kind')}, trust domain "
        f"{d.get('domain')})", markup=False))


def _render(d: dict, c, title: str) -> None:
    c.print(title, markup=False)
    if not d["merged"] and not d["skipped"]:
        c.print("no variant spellings: every source is named in canonical form", markup=False)
    for g in d["merged"] + d["skipped"]:
        spelled = ", ".join(f"{m['id']!r} ({m['said']} said)" for m in g["spellings"])
        c.print(f"- {g['canonical']} (trust domain {g['domain']}): {spelled}", markup=False)
        if g.get("why"):
            c.print(f"  not merged: {g['why']}", markup=False)


@sources_app.command("check")
def sources_check(
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Report sources whose names are spellings of one canonical name (exit 1 when any is
    found, for scripts); nothing is changed."""
    from rescind.operator import sources

    with operator_graph(url, data_dir, tenant) as graph:
        d = sources.merge(graph, commit=False)
    emit(d, as_json, lambda d, c: _render(d, c, f"Variant spellings in {d['tenant']}:"))
    if d["merged"] or d["skipped"]:
        raise typer.Exit(1)


@sources_app.command("merge")
def sources_merge(
    commit: bool = typer.Option(False, "--commit", help="Apply it (default: preview only)"),
    by: str | None = ByOpt,
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Merge each group of variant spellings into its canonical source: what they said moves
    to it (preview; --commit applies it). A group a retraction in force names is left alone."""
    from rescind.operator import sources

    by = decider(by)
    with operator_graph(url, data_dir, tenant) as graph:
        d = audited(graph.conn, graph.tenant, by,
                    "sources.merge" if commit else "sources.merge.preview", None,
                    lambda: sources.merge(graph, commit=commit))
    verb = "Merged" if d["committed"] else "Preview: would merge"
    emit(d, as_json, lambda d, c: _render(d, c, f"{verb} in {d['tenant']} "
                                               f"({d['moved']} statements move):"))
    if not as_json and not d["committed"] and d["merged"]:
        typer.echo("\nnothing changed; apply with --commit")
