"""The demo week as a readable narrative, printed from the summary that `rescind demo --json`
prints (so both show the same run)."""

from __future__ import annotations

from datetime import datetime

from rich.console import Console
from rich.rule import Rule

from rescind.views import operator as views

SHOWN_TOOLS = {"read_vendor_portal": "vendor", "read_contract": "vendor",
               "read_invoice": "invoice", "check_fragility": "invoice",
               "release_payment": "invoice"}


def tell(d: dict, console: Console) -> None:
    console.print(Rule("[bold]The week at Harbor & Finch, wrapped by Rescind[/bold]"))
    console.print("Three agents (accounts payable, a confirmer, payments) run unmodified; Rescind "
                  "records what each\nmemory rests on. Northwind's supplier portal shows an "
                  f"attacker's bank account from {_t(d['compromise']['window'][0])}\nto "
                  f"{_t(d['compromise']['window'][1])}; nobody knows yet.\n"
                  if d.get("compromise") else "")
    day = None
    for step in d["steps"]:
        when = datetime.fromisoformat(step["when"])
        if when.date() != day:
            day = when.date()
            console.print(f"\n[bold underline]{when:%A %d %B}[/bold underline]")
        if step["agent"] is None:
            _security(d, console)
            continue
        calls = [_call(c) for c in step["calls"] if c["tool"] != "save_note"]
        if step["outcome"] == "error" and not calls:  # the run ended inside the gate
            calls = [f"tried to run {g['action']}" for g in d["gates"]
                     if g["at"] == step["when"] and not g["allowed"]]
        saved = [c["args"]["text"] for c in step["calls"] if c["tool"] == "save_note"]
        console.print(f"[dim]{when:%H:%M}[/dim] [cyan]{step['agent']}[/cyan]: "
                      f"{', '.join(calls) or 'no tool calls'}")
        for text in saved:
            console.print(f"        noted: {views.short(text, 100)}")
        if step["outcome"] == "error":
            console.print(f"        [bold red]stopped[/bold red]: "
                          f"{step['error'].split(': ', 1)[-1]}")
        elif step["answer"]:
            console.print(f"        [green]→[/green] {views.short(step['answer'], 110)}")
    _ending(d, console)


def _t(iso: str) -> str:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).strftime("%a %H:%M")


def _call(c: dict) -> str:
    arg = SHOWN_TOOLS.get(c["tool"])
    if c["tool"] in ("pay_invoice", "schedule_payment"):
        extra = f", for {c['args'].get('on')}" if c["tool"] == "schedule_payment" else ""
        return (f"{c['tool']}({c['args'].get('invoice')}, "
                f"{views.money(c['args'].get('amount'))}{extra})")
    return f"{c['tool']}({c['args'].get(arg, '')})" if arg else f"{c['tool']}()"


def _security(d: dict, console: Console) -> None:
    c = d.get("compromise")
    if not c:
        return
    console.print(f"[dim]09:00[/dim] [bold magenta]security[/bold magenta]: `rescind compromise "
                  f"{c['source']} --from {c['window'][0]} --to {c['window'][1]}`")
    console.print(f"        preview at revision {c['previewed_at_rev']}, then --commit:")
    views.blast_radius({**c, "committed": True}, console, f"{c['source']} compromised")


def _ending(d: dict, console: Console) -> None:
    console.print(Rule("[bold]Where things stand[/bold]"))
    out = ", ".join(f"{n} {k}" for k, n in d["out"].items() if n)
    console.print(f"OUT: {out or 'nothing'}")
    console.print(f"Held payments: {', '.join(d['held']) or 'none'}")
    console.print("\n[bold]Gate decisions[/bold]")
    for g in d["gates"]:
        verdict = "[green]allowed[/green]" if g["allowed"] else "[red]refused[/red]"
        console.print(f"  {_t(g['at'])}  {g['action']:<18} {verdict}  "
                      f"{views.short(g['reason'].split(': ', 1)[-1], 100)}")
    console.print("\n[bold]Bank[/bold]")
    for p in d["bank"]:
        console.print(f"  {p['invoice']}  {views.money(p['amount']):>12}  {p['status']:<9} "
                      f"to {p['account']}")
    console.print("\n[bold]Recalls drafted for finance[/bold]" + ("" if d["recalls"] else ": none"))
    for r in d["recalls"]:
        console.print(f"[{r['state']}]\n{r['draft']}", markup=False)
    if d.get("next"):  # the command adds them: spelled as it was invoked
        console.print(f"\n[bold]Next[/bold] (the week is in tenant {d['tenant']}):")
        for n in d["next"]:  # whole lines, so each command can be copied as it is
            console.print(f"  [dim]# {n['what']}[/dim]\n  {n['command']}", soft_wrap=True,
                          highlight=False)
