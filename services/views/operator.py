"""How the operator commands print: blast radius, justification trees, fragility, recalls."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.tree import Tree

from rescind.core.shapes import BLAST_GROUPS

LABELS = {"observations": "Observations", "beliefs": "Beliefs", "plans": "Plans",
          "answers": "Answers", "executed_actions": "Executed actions",
          "pending_actions": "Pending actions"}


def money(amount: float | None) -> str:
    return "-" if amount is None else f"${amount:,.2f}"


def short(text: str | None, width: int = 90) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


def blast_radius(d: dict, console: Console, title: str) -> None:
    verb = "would go" if not d.get("committed", True) else "went"
    console.print(f"[bold]{title}[/bold]  (retraction {d['retraction']}, graph revision "
                  f"{d['rev']})")
    counts = ", ".join(f"{d['counts'][k]} {LABELS[k].lower()}" for k in BLAST_GROUPS
                       if d["counts"][k])
    console.print(f"{sum(d['counts'].values())} {verb} {d['direction']}: {counts or 'nothing'}")
    for k in BLAST_GROUPS:
        if not d[k]:
            continue
        console.print(f"\n[bold]{LABELS[k]}[/bold]")
        for item in d[k]:
            amount = f" {money(item['amount'])}" if item.get("amount") is not None else ""
            hop = f"hop {item['hops']}: " if item.get("hops") is not None else ""  # IN: none
            console.print(f"  {hop}{escape(short(item['text']))}{amount}  "
                          f"[dim]{escape(item['id'])}[/dim]")
    if d.get("to_hold"):
        console.print("\n[bold yellow]Pending payments to hold[/bold yellow]")
        for a in d["to_hold"]:
            console.print(f"  {money(a['amount'])} to {a['payee']}  ({a['name'] or a['id']})")
    if d.get("to_recall"):
        console.print("\n[bold red]Executed payments to recall (drafts for finance)[/bold red]")
        for a in d["to_recall"]:
            console.print(f"  {money(a['amount'])} to {a['payee']}  ({a['name'] or a['id']})")
    if d.get("kept"):
        console.print("\n[bold green]Reached but kept IN (an independent reason remains)"
                      "[/bold green]")
        for k in d["kept"]:
            amount = f" {money(k['amount'])}" if k.get("amount") is not None else ""
            console.print(f"  {escape(short(k['text']))}{amount}  [dim]{escape(k['id'])}[/dim]")
            for why in k.get("kept_by") or []:
                console.print(f"    kept IN by: {escape(kept_reason(why))}")


def reinstated(d: dict, console: Console, title: str) -> None:
    """A reinstatement: what came back IN, then what finance must pull from the outbox (a
    payment back IN whose recall was approved)."""
    blast_radius(d, console, title)
    if d.get("recalls_to_pull"):
        console.print("\n[bold yellow]Approved recalls to pull from the outbox[/bold yellow]")
        for p in d["recalls_to_pull"]:
            console.print(f"  {escape(p['outbox'])}  {money(p['amount'])}  ({escape(p['name'])})")
        for w in d.get("warnings", []):
            console.print(f"[yellow]warning:[/yellow] {escape(w)}")


def _source(s: dict) -> str:
    name = s.get("name")
    return f"{name} ({s['source']})" if name and name != s["source"] else s["source"]


def kept_reason(why: dict) -> str:
    """One reason a memory stays IN, for a person: "Acme master services agreement
    (contract:acme), through: Acme remit address: 1 Dock Road, Leeds"."""
    if "premises" not in why:
        return f"{_source(why)} still says it"
    sources = ", ".join(_source(s) for s in why["sources"]) or "no valid source"
    through = "; ".join(short(p.get("name") if p.get("kind") == "action" and p.get("name")
                              else p.get("text"), 60) for p in why["premises"])
    return f"{sources}, through: {through}"


def memories(page: dict, console: Console, title: str) -> None:
    """A page of memories (``GET /memories``): name or id, kind, status (and why OUT), text."""
    if not page["items"]:
        console.print("no memories match")
        return
    table = Table(title=title)
    for col in ("memory", "kind", "status", "text", "amount"):
        table.add_column(col, justify="right" if col == "amount" else "left")
    for m in page["items"]:
        status = m["status"] + (f" ({m['cause']})" if m.get("cause") else "")
        table.add_row(m.get("name") or m["id"], m["kind"], status, short(m["text"], 70),
                      money(m["amount"]) if m.get("amount") is not None else "")
    console.print(table)
    if page.get("next_skip") is not None:
        console.print(f"more: --skip {page['next_skip']}")


def justification_tree(t: dict, console: Console) -> None:
    root = Tree(_label(t))
    _grow(root, t)
    console.print(root)


def _label(n: dict) -> str:
    colour = "green" if n.get("status") == "IN" else "red"
    cause = f" (cause {n['cause']})" if n.get("cause") else ""
    amount = f" {money(n['amount'])}" if n.get("amount") is not None else ""
    return (f"[{colour}]{n.get('status')}[/{colour}]{cause} {n.get('kind')}: "
            f"{short(n.get('text'), 80)}{amount} [dim]{n['id']}[/dim]")


def _grow(branch: Tree, n: dict) -> None:
    if n.get("see_above"):
        branch.add("[dim](its reasons are shown above)[/dim]")
        return
    for s in n.get("said_by", []):
        mark = "valid" if s["valid"] else "[red]retracted[/red]"
        branch.add(f"said by [bold]{s['source']}[/bold] (trust domain {s['domain']}) at "
                   f"{s['at']}: {mark}")
    rules = n.get("justification_rules") or []
    for i, premises in enumerate(n.get("justifications", []), 1):
        rule = f" ({rules[i - 1]})" if i <= len(rules) and rules[i - 1] else ""
        j = branch.add(f"justification {i}{rule}: needs all of")
        for p in premises:
            _grow(j.add(_label(p)), p)


def fragility(d: dict, console: Console) -> None:
    console.print(f"{short(d['text'])} {money(d.get('amount'))}  [dim]{d['id']}[/dim]")
    console.print(f"status {d['status']}; fragility [bold]{d['fragility']}[/bold]: compromising "
                  f"{' + '.join(d['would_fake_it']) or 'nothing more'} would fake it")
    console.print(f"trust domains it draws on: {', '.join(d['domains']) or 'none'}")


def audit_order(rows: list[dict], console: Console) -> None:
    table = Table(title="Audit order: what rests on each source alone")
    for col in ("#", "source", "domain", "value at risk", "payments", "memories"):
        table.add_column(col, justify="right" if col in ("#", "value at risk", "payments",
                                                         "memories") else "left")
    for i, r in enumerate(rows, 1):
        table.add_row(str(i), r["source"], r["domain"], money(r["value_at_risk"]),
                      str(r["payments"]), str(r["memories"]))
    console.print(table)


def recalls(rows: list[dict], console: Console) -> None:
    if not rows:
        console.print("no recalls: no executed payment rests on anything retracted")
        return
    table = Table(title="Recall list (largest first)")
    for col in ("action", "payee", "amount", "paid on", "bank ref", "state", "by"):
        table.add_column(col, justify="right" if col == "amount" else "left")
    for r in rows:
        table.add_row(r.get("name") or r["action"], escape(r.get("payee_name") or r["payee"]
                                                           or "-"),
                      money(r["amount"]), (r.get("paid_on") or "-")[:10],
                      r.get("bank_reference") or "-", r["state"], escape(_decided(r)))
    console.print(table)


def _decided(r: dict) -> str:
    """Who decided a recall's state, and when."""
    d = {"approved": r.get("approved"), "rejected": r.get("rejected")}.get(r["state"])
    if r["state"] == "exported" and r.get("exports"):
        d = r["exports"][-1]
    return f"{d['by']}, {(d['at'] or '')[:16].replace('T', ' ')}" if d else "-"


def gate_log(rows: list[dict], console: Console) -> None:
    if not rows:
        console.print("no gate decisions yet")
        return
    table = Table(title="Payment gate decisions (newest first)")
    for col in ("at", "action", "amount", "account", "decision", "fragility", "would fall",
                "reason"):
        table.add_column(col, justify="right" if col in ("amount", "fragility") else "left")
    for r in rows:
        amount = money(r["amount"]) + (f" {r['currency']}" if r.get("currency") else "")
        table.add_row(r["at"][:16].replace("T", " "), r.get("name") or r["action"], amount,
                      r.get("account") or "-", "allowed" if r["allowed"] else "refused",
                      str(r["fragility"]), ", ".join(r.get("would_fall") or []) or "-",
                      r["reason"])
    console.print(table)
