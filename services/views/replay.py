"""A replay report, printed for people."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rescind.views.operator import money


def render(report: dict, console: Console, title: str = "scenario") -> None:
    mems = report["memories"]
    out = {k: v for k, v in mems.items() if v["status"] == "OUT"}
    console.print(f"[bold]Rescind replay of {title}[/bold]: {len(mems)} memories, "
                  f"{len(out)} OUT, {len(mems) - len(out)} IN")
    table = Table(title="Memories", show_lines=False)
    for col in ("id", "status", "cause", "hops"):
        table.add_column(col)
    for mid, st in sorted(mems.items(), key=lambda kv: (kv[1]["status"], kv[1]["hops"] or 0, kv[0])):
        colour = "red" if st["status"] == "OUT" else "green"
        table.add_row(mid, f"[{colour}]{st['status']}[/{colour}]", st["cause"] or "",
                      "" if st["hops"] is None else str(st["hops"]))
    console.print(table)
    if replaced := report.get("replaced"):
        console.print("[bold]No longer current[/bold] (updated or deleted; status unchanged): "
                      + escape(", ".join(f"{m} ({why})" for m, why in replaced.items())))
    if report["gates"]:
        console.print("[bold]Gate decisions[/bold]")
        for g in report["gates"]:
            verdict = "[green]allowed[/green]" if g["allowed"] else "[red]refused[/red]"
            console.print(f"  line {g['line']}: {g['action']} {verdict} "
                          f"(fragility {g['fragility']}) - {g['reason']}")
    console.print("[bold]Held payments[/bold]: " + (", ".join(report["held"]) or "none"))
    console.print("[bold]Recalls[/bold]" + ("" if report["recalls"] else ": none"))
    for r in report["recalls"]:
        amount = "no amount" if r["amount"] is None else money(r["amount"], r.get("currency"))
        console.print(escape(f"  {r['action']}: {amount} to {r['payee'] or 'unknown'} [{r['state']}]"))
        for line in r["draft"].splitlines():
            console.print(escape(f"    {line}"), highlight=False, soft_wrap=True)
    console.print("[bold]Fragility[/bold] (trust domains that must fall to fake each action): "
                  + ", ".join(f"{a}={f}" for a, f in report["fragility"].items()))
