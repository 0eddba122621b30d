"""`rescind audit …`: the audit log, live and archived, as JSON lines."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from rescind.cli.common import (
    DataDirOpt,
    JsonOpt,
    UrlOpt,
    answer,
    emit,
    err,
    operator_server,
    refuse,
    shell_audit,
    shell_time,
)

audit_app = typer.Typer(help="The audit log: every decision and refusal, from every surface.",
                        no_args_is_help=True)


@audit_app.command("list")
def list_(
    tenant: str | None = typer.Option(None, "--tenant", help="One tenant's log (default: the "
                                      "server's own: unknown tokens, refusals outside a tenant)"),
    limit: int = typer.Option(20, "--limit", min=1, max=1000, help="Entries on a page"),
    before: str | None = typer.Option(None, "--before", help="The next page: the entries older "
                                      "than this entry id (printed at the end of a page)"),
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, as_json: bool = JsonOpt,
) -> None:
    """The newest entries, as sentences a person reads: who, what, on what, why, with counts
    and amounts; a page at a time."""
    import re

    from rescind.contract.layout import check_tenant
    from rescind.graph.store import connect

    if before is not None and not re.fullmatch(r"[0-9]{1,20}-[0-9]{1,20}", before):
        refuse(f"--before {before!r} is not an entry id (like 1796164660877-0)")
    scope = check_tenant(tenant) if tenant is not None else None
    with operator_server(url, data_dir) as server_url:
        log = shell_audit(connect(server_url))
        rows = log.entries(scope, limit + 1, before)  # one more: is there a next page?
        total = log.total(scope)
    rows, more = rows[:limit], len(rows) > limit
    page = {"entries": answer("audit_log", rows) if as_json else rows,  # as the API has each
            "total": total, "next_before": rows[-1]["id"] if more else None}

    def render(d: dict, c) -> None:
        for e in d["entries"]:
            c.print(f"{e['at'].replace('T', ' ').replace('Z', ' UTC')}  {e['summary']}",
                    markup=False, highlight=False)
        more = (f"; older: --before {d['next_before']}" if d["next_before"] else "")
        c.print(f"{len(d['entries'])} of {d['total']} entries{more}", markup=False,
                highlight=False, style="dim")

    emit(page, as_json, render)


@audit_app.command("export")
def export(
    since: str = typer.Option(..., "--since", help="From this time on (ISO 8601; "
                              "without a zone: UTC)"),
    until: str | None = typer.Option(None, "--until", help="Up to this time, included "
                                     "(default: the newest entry; without a zone: UTC)"),
    tenant: str | None = typer.Option(None, "--tenant", help="One tenant's log; default: every "
                                      "tenant's and the server's"),
    out_file: Path | None = typer.Option(None, "--out", help="Write here (default: stdout)"),
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt,
    as_json: bool = typer.Option(False, "--json", help="With --out: print what was written as "
                                 "JSON (the entries are JSON lines either way)"),
) -> None:
    """Write the audit log's entries, archived and live, oldest first, one JSON object a line
    (each with its tenant; null for the server's own log)."""
    from rescind.contract.events import from_micros
    from rescind.contract.layout import check_tenant
    from rescind.graph.store import connect
    from rescind.operator.audit import to_ms
    from rescind.operator.decisions import parse_time

    since, until = shell_time(since, "--since"), shell_time(until, "--until")
    start = from_micros(parse_time(since, "--since"))
    end = from_micros(parse_time(until, "--until")) if until else None
    if end is not None and to_ms(end) < to_ms(start):
        refuse(f"--until {until} is before --since {since}")
    scopes = [check_tenant(tenant)] if tenant is not None else None

    written = 0
    with operator_server(url, data_dir) as server_url:
        log = shell_audit(connect(server_url))
        sink = out_file.open("w", encoding="utf-8") if out_file else sys.stdout
        try:
            for entry in log.export(scopes, start, end):
                sink.write(json.dumps(entry, ensure_ascii=False) + "\n")
                written += 1
        finally:
            if out_file:
                sink.close()
            else:
                sink.flush()
    if as_json and out_file:
        print(json.dumps({"file": str(out_file), "entries": written}))
    else:
        err.print(f"{written} audit entries" + (f" written to {out_file}" if out_file else ""))
