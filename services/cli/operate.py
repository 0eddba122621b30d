"""What security and finance do from a terminal: compromise, reinstate, explain, fragility,
audit order, recalls. Every decision (previews included) and every refusal of one is audited,
signed with ``--by`` or the OS user."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import typer

from rescind.cli.common import (
    ByOpt,
    DataDirOpt,
    JsonOpt,
    Line,
    Reason,
    TenantOpt,
    UrlOpt,
    audited,
    checked,
    counts,
    decider,
    emit,
    operator_graph,
    out,
    refuse,
    shell_time,
)

gate_app = typer.Typer(help="The payment gate's decisions (security, finance).",
                       no_args_is_help=True)
recalls_app = typer.Typer(help="Drafted bank recalls of executed payments that went OUT (finance).",
                          no_args_is_help=True)



def compromise(
    source: str = typer.Argument(..., help="The source, e.g. portal:northwind", callback=Line),
    start: str | None = typer.Option(None, "--from", help="Window start, ISO 8601 (e.g. "
                                     "2026-11-16T08:00Z; without a zone: UTC)",
                                     callback=checked(64)),
    end: str | None = typer.Option(None, "--to", help="Window end (included), ISO 8601 "
                                   "(without a zone: UTC)", callback=checked(64)),
    all_time: bool = typer.Option(False, "--all-time", help="No window: everything the source "
                                  "ever said (required when neither --from nor --to is given)"),
    reason: str = typer.Option(..., help="Why the source is compromised", callback=Reason),
    commit: bool = typer.Option(False, "--commit", help="Apply it (default: preview only)"),
    rev: int | None = typer.Option(None, help="With --commit: refuse if the graph moved past "
                                   "this preview revision"),
    rid: str | None = typer.Option(None, "--id", help="Retraction id (default: generated)",
                                   callback=Line),
    force: bool = typer.Option(False, "--force", help="With --commit: commit even though a "
                               "retraction of the source over an overlapping window is in force"),
    by: str | None = ByOpt,
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Declare a source compromised over a window: preview the blast radius, or --commit.

    The window is --from and/or --to; with neither, --all-time must say that everything the
    source ever said goes. A commit is refused, naming the retraction, while the source is
    already retracted over an overlapping window (unless --force)."""
    from rescind.operator import decisions
    from rescind.views import operator as views

    if all_time and (start or end):
        refuse("--all-time is no window at all: give it, or --from/--to, not both")
    if not (all_time or start or end):
        refuse(f"no window: say when {source} was compromised with --from and/or --to (e.g. "
               "--from 2026-11-16T08:00Z), or --all-time to take out everything it ever said")
    start, end = shell_time(start, "--from"), shell_time(end, "--to")
    by = decider(by)
    with operator_graph(url, data_dir, tenant) as graph:
        d = audited(graph.conn, graph.tenant, by,
                    "retraction.commit" if commit else "retraction.preview", source,
                    lambda: decisions.compromise(
                        graph, source, decisions.parse_time(start, "--from"),
                        decisions.parse_time(end, "--to"), reason, by, commit, rid, rev,
                        force=force), counts)
    named = d.get("source", source)  # the source the spelling resolved to
    title = (f"{'Committed' if d['committed'] else 'Preview'}: {named} compromised "
             f"{window(decisions.parse_time(start, '--from'), decisions.parse_time(end, '--to'))}"
             + (f" (you wrote {source!r})" if named != source else ""))
    emit(d, as_json, lambda d, c: views.blast_radius(d, c, title),
         "commit_retraction" if commit else "preview_retraction")
    if not as_json and not d["committed"]:
        for t in d.get("duplicates", []):
            out.print(f"\n[yellow]already retracted over an overlapping window by {t['id']} "
                      f"({t['from'] or 'open'} to {t['to'] or 'open'}); a commit is refused "
                      "unless --force[/yellow]")
        span = window(decisions.parse_time(start, "--from"), decisions.parse_time(end, "--to"))
        again = "--all-time " if all_time else ""
        out.print(f"\nnothing changed; to retract {named} {span}, run it again with "
                  f"{again}--commit --rev {d['rev']}", markup=False)


def window(start_us: int | None, end_us: int | None) -> str:
    """A compromise's window in words, restated in every preview and commit."""
    from rescind.operator.decisions import when

    if start_us is None and end_us is None:
        return "over ALL TIME (everything it ever said)"
    if end_us is None:
        return f"from {when(start_us)} on (open end)"
    if start_us is None:
        return f"up to {when(end_us)} (open start)"
    return f"from {when(start_us)} to {when(end_us)}"


def reinstate(
    retraction: str = typer.Argument(..., help="The id of a retraction, withdrawal or correction",
                                     callback=Line),
    reason: str | None = typer.Option(None, help="Why it is undone (kept with the retraction, "
                                      "shown in the payments' timelines)", callback=Reason),
    commit: bool = typer.Option(False, "--commit", help="Apply it (default: preview only)"),
    rev: int | None = typer.Option(None, help="With --commit: refuse if the graph moved past "
                                   "this revision (the preview's)"),
    by: str | None = ByOpt,
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Undo a retraction: what it took out comes back, unless something else keeps it out.
    Previews by default (what comes back, the held payments it releases, the recalls it
    withdraws); --commit applies it."""
    from rescind.operator import decisions
    from rescind.views import operator as views

    by = decider(by)
    with operator_graph(url, data_dir, tenant) as graph:
        d = audited(graph.conn, graph.tenant, by,
                    "retraction.reinstate" if commit else "retraction.reinstate.preview",
                    retraction, lambda: decisions.reinstate(graph, retraction, by,
                                                            commit=commit, rev=rev,
                                                            reason=reason), counts)
    title = f"{'Reinstated' if d['committed'] else 'Preview: reinstate'} {retraction}"

    def render(d: dict, c) -> None:
        views.blast_radius(d, c, title)
        _money_moves(d, c)
        if not d["committed"]:
            c.print(f"\nnothing changed; apply with --commit --rev {d['rev']}", markup=False)

    emit(d, as_json, render, "reinstate" if commit else "preview_reinstatement")


def _money_moves(d: dict, c) -> None:
    """What a reinstatement does (or would do) with money, in words."""
    if d.get("to_release") or d.get("recalls_to_withdraw") or d.get("recalls_to_pull"):
        c.print(f"\nMoney: {len(d.get('to_release', []))} held payment(s) released, "
                f"{len(d.get('recalls_to_withdraw', []))} recall(s) withdrawn, "
                f"{len(d.get('recalls_to_pull', []))} to pull from the outbox", markup=False)
    for w in d.get("warnings", []):
        c.print(f"warning: {w}", markup=False)


def _show(url: str | None, data_dir: Path, tenant: str, as_json: bool, read, render,
          job: str | None = None) -> None:
    """A read-only command: ``read`` the tenant's graph, then print it as JSON (the API's
    ``job``'s answer) or ``render``."""
    with operator_graph(url, data_dir, tenant) as graph:
        d = read(graph)
    emit(d, as_json, render, job)


def explain(
    memory: str = typer.Argument(..., help="A memory id, a name (an action's name), or a store "
                                 "key (namespace/key: its current version)", callback=checked(1000)),
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """The justification tree of a memory, down to its sources. --json: the memory and its
    tree, as the API answers."""
    from rescind.api import ops
    from rescind.views import operator as views

    _show(url, data_dir, tenant, as_json, lambda graph: ops.memory(graph, memory),
          lambda d, c: views.justification_tree(d["tree"], c), "explain")


def fragility(
    action: str = typer.Argument(..., help="An action (or any memory): id or name", callback=Line),
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """How many trust domains an attacker must control to fake it, and which would do."""
    from rescind.operator import decisions
    from rescind.views import operator as views

    _show(url, data_dir, tenant, as_json, lambda graph: decisions.fragility(graph, action),
          views.fragility, "fragility")


def audit_order(
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Sources ranked by the value of what rests on them alone: audit these first."""
    from rescind.operator import decisions
    from rescind.views import operator as views

    _show(url, data_dir, tenant, as_json, lambda graph: decisions.audit_order(graph),
          views.audit_order, "audit_order")


@recalls_app.command("list")
def recalls_list(
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Executed payments that went OUT, largest first (payments without an amount last)."""
    from rescind.operator.recalls import recall_list
    from rescind.views import operator as views

    with operator_graph(url, data_dir, tenant) as graph:
        rows = [r.to_dict() for r in recall_list(graph)]
    emit(rows, as_json, views.recalls, "recall_list")


@recalls_app.command("show")
def recalls_show(
    action: str = typer.Argument(..., help="The payment: id or name", callback=Line),
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """The recall of one payment: its state, the payee, the bank's date and reference, the
    whole evidence chain and finance's notes."""
    from rescind.operator import decisions
    from rescind.operator.recalls import find

    with operator_graph(url, data_dir, tenant) as graph:
        row = find(graph, decisions.resolve(graph, action)).to_dict()
    emit(row, as_json, _draft, "recall")


def _draft(r: dict, c) -> None:
    c.print(f"[{r['state']}]\n{r['draft']}", markup=False, soft_wrap=True)


def _decide(action: str, by: str | None, url, data_dir, tenant, what: str, decide,
            summary=None) -> dict:
    """A finance decision on one recall, at the shell: signed, audited, linearised."""
    from rescind.contract.events import to_micros
    from rescind.operator import decisions

    by = decider(by)
    with operator_graph(url, data_dir, tenant) as graph:
        return audited(graph.conn, graph.tenant, by, what, action,
                       lambda: decide(graph, decisions.resolve(graph, action), by,
                                      to_micros(datetime.now(UTC))),
                       summary or (lambda r: {"action": r["action"], "amount": r["amount"]}))


FinanceBy = typer.Option(None, "--by", help="Who in finance decides, as a note beside the "
                         "signature: decisions are signed by the OS user", callback=Line)


@recalls_app.command("approve")
def recalls_approve(
    action: str = typer.Argument(..., help="The payment: id or name", callback=Line),
    by: str | None = FinanceBy,
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Approve a drafted recall: it is written to the outbox for the bank; nothing else."""
    from rescind.operator.recalls import approve
    from rescind.views.operator import money

    row = _decide(action, by, url, data_dir, tenant, "recall.approve",
                  lambda g, a, by, at: approve(g, a, by, at).to_dict())
    emit(row, as_json, lambda r, c: c.print(
        f"approved by {r['approved']['by']}: recall of {money(r['amount'], r.get('currency'))} "
        f"to "
        f"{r['payee_name'] or r['payee']} is in the outbox ({r['outbox']})"
        if r["amount"] is not None else
        f"approved by {r['approved']['by']}: the recall is in the outbox ({r['outbox']})",
        markup=False), "approve_recall")


@recalls_app.command("reject")
def recalls_reject(
    action: str = typer.Argument(..., help="The payment: id or name", callback=Line),
    reason: str = typer.Option(..., help="Why the recall is not to be sent", callback=Reason),
    by: str | None = FinanceBy,
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Reject a drafted recall, saying why: it is never sent (an approved one cannot be)."""
    from rescind.operator.recalls import reject

    row = _decide(action, by, url, data_dir, tenant, "recall.reject",
                  lambda g, a, by, at: reject(g, a, by, at, reason).to_dict(),
                  lambda r: {"action": r["action"], "reason": r["rejected"]["reason"]})
    emit(row, as_json, lambda r, c: c.print(
        f"rejected by {r['rejected']['by']}: the recall of {r['name']} will not be sent "
        f"({r['rejected']['reason']})", markup=False), "reject_recall")


@recalls_app.command("annotate")
def recalls_annotate(
    action: str = typer.Argument(..., help="The payment: id or name", callback=Line),
    text: str = typer.Argument(..., help="The note", callback=Reason),
    by: str | None = FinanceBy,
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Add a note to a recall (any state), signed and dated; notes are shown with the draft."""
    from rescind.operator.recalls import annotate

    row = _decide(action, by, url, data_dir, tenant, "recall.annotate",
                  lambda g, a, by, at: annotate(g, a, by, at, text).to_dict(),
                  lambda r: {"action": r["action"], "notes": len(r["notes"])})
    emit(row, as_json, lambda r, c: c.print(
        f"noted on the recall of {r['name']} ({len(r['notes'])} note(s))", markup=False),
        "annotate_recall")


@recalls_app.command("export")
def recalls_export(
    action: str = typer.Argument(..., help="The payment: id or name", callback=Line),
    fmt: str = typer.Option("camt.056", "--format", help="csv, or camt.056 (ISO 20022 XML)"),
    out_path: Path | None = typer.Option(None, "--out", help="Write the file here (default: "
                                         "stdout)"),
    allow_placeholders: bool = typer.Option(
        False, "--allow-placeholders", help="Export a camt.056 even while the tenant's "
        "settings leave placeholders in it (see `rescind tenant settings`)"),
    by: str | None = FinanceBy,
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Export an approved recall for the bank, as CSV or an ISO 20022 camt.056 message; the
    recall is marked exported (who, when, format)."""
    from rescind.operator.recalls import export
    from rescind.runtime.settings import Settings

    currency = Settings().gate_currency

    def run(g, a, by, at) -> dict:
        r, file = export(g, a, by, at, fmt, currency, allow_placeholders)
        return {**r.to_dict(), "file": file}

    row = _decide(action, by, url, data_dir, tenant, "recall.export", run,
                  lambda r: {"action": r["action"], "format": fmt})
    _deliver(row, out_path, as_json, f"the recall of {row['name']} as {fmt} by "
                                     f"{row['exports'][-1]['by']}", "export_recall")


def _deliver(row: dict, out_path: Path | None, as_json: bool, what: str, job: str) -> None:
    """An exported file: to ``out_path`` (saying so) or to stdout; the whole row with --json
    (the API's ``job``'s answer)."""
    file = row["file"]
    if out_path is not None:
        out_path.write_text(file["content"], encoding="utf-8")
    if as_json:
        emit(row, True, None, job)
    elif out_path is None:
        print(file["content"], end="")
    else:
        out.print(f"exported {what} to {out_path}", markup=False)


@recalls_app.command("notice-approve")
def recalls_notice_approve(
    action: str = typer.Argument(..., help="The payment: id or name", callback=Line),
    by: str | None = FinanceBy,
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Approve the withdrawal notice of an exported recall whose payment is IN again (the
    letter asking the bank to disregard the request): it goes to the outbox, to be exported."""
    from rescind.operator.recalls import approve_notice

    row = _decide(action, by, url, data_dir, tenant, "recall.notice.approve",
                  lambda g, a, by, at: approve_notice(g, a, by, at).to_dict())
    emit(row, as_json, lambda r, c: c.print(
        f"approved by {r['notice']['approved']['by']}: the withdrawal notice of {r['name']} is "
        f"in the outbox ({r['notice']['outbox']}); export it for the bank with "
        f"`rescind recalls notice-export {r['name']}`", markup=False),
        "approve_withdrawal_notice")


@recalls_app.command("notice-export")
def recalls_notice_export(
    action: str = typer.Argument(..., help="The payment: id or name", callback=Line),
    fmt: str = typer.Option("text", "--format", help="text (the letter) or csv"),
    out_path: Path | None = typer.Option(None, "--out", help="Write the file here (default: "
                                         "stdout)"),
    by: str | None = FinanceBy,
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Export an approved withdrawal notice for the bank; it is marked exported."""
    from rescind.operator.recalls import export_notice

    def run(g, a, by, at) -> dict:
        r, file = export_notice(g, a, by, at, fmt)
        return {**r.to_dict(), "file": file}

    row = _decide(action, by, url, data_dir, tenant, "recall.notice.export", run,
                  lambda r: {"action": r["action"], "format": fmt})
    _deliver(row, out_path, as_json, f"the withdrawal notice of {row['name']} as {fmt}",
             "export_withdrawal_notice")


@gate_app.command("log")
def gate_log(
    action: str | None = typer.Option(None, "--action", help="Only this action's (id or name)",
                                      callback=Line),
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Every decision of the payment gate, newest first, with why (the API's ``gate_log``)."""
    from rescind.api import ops
    from rescind.views import operator as views

    _show(url, data_dir, tenant, as_json, lambda g: ops.gates(g, action), views.gate_log,
          "gate_log")
