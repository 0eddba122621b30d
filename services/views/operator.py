"""How the operator commands print: blast radius, justification trees, fragility, recalls."""

from __future__ import annotations

from functools import cache

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.table import Column, Table
from rich.text import Text
from rich.tree import Tree

from rescind.core.shapes import BLAST_GROUPS

LABELS = {"observations": "Observations", "beliefs": "Beliefs", "plans": "Plans",
          "answers": "Answers", "executed_actions": "Executed actions",
          "pending_actions": "Pending actions"}


def counted(n: int, plural: str) -> str:
    """``n`` of a thing, in the number it takes: "1 observation", "2 observations"."""
    return f"{n} {plural[:-1] if n == 1 and plural.endswith('s') else plural}"


@cache
def base_currency() -> str:
    """The currency of an amount that names none: the gate's (RESCIND_GATE_CURRENCY)."""
    from rescind.runtime.settings import Settings

    return Settings().gate_currency


def money(amount: float | None, currency: str | None = None) -> str:
    """The one way every command prints an amount: ``2,400.00 USD`` (an amount that names no
    currency is in the gate's); ``-`` for none."""
    if amount is None:
        return "-"
    return f"{amount:,.2f} {currency or base_currency()}"


def at(iso: str | None) -> str:
    """A stored time (ISO 8601, UTC) as people read it: ``2026-11-20 10:00 UTC``."""
    return f"{iso[:16].replace('T', ' ')} UTC" if iso else "-"


# -- tables that stay readable at any width ----------------------------------------------------
KEY, TEXT = "key", "text"  # a cell printed whole (ids, amounts, times), or prose that wraps
_TEXT_MIN = 16  # a prose column narrower than this is no longer readable


def fitted(console: Console, title: str, columns: list[tuple[str, str, str]],
           rows: list[list[str]], *, lead: int = 1) -> None:
    """``rows`` as a table when it fits ``console``'s width with every KEY cell whole and each
    TEXT column at least 16 wide; else one block per row (its first ``lead`` cells on one line,
    the others as indented ``header: value`` lines that wrap). Neither cuts an id or an amount.
    ``columns``: (header, KEY or TEXT, justify)."""
    widths = [max([len(header), *(len(line) for r in rows for line in r[i].split("\n"))])
              if kind == KEY else _TEXT_MIN for i, (header, kind, _) in enumerate(columns)]
    if sum(widths) + 3 * len(columns) + 1 <= console.width:
        table = Table(*(Column(header, justify=justify, no_wrap=kind == KEY,
                               min_width=w if kind == KEY else None,
                               overflow="fold", ratio=1 if kind == TEXT else None)
                        for (header, kind, justify), w in zip(columns, widths, strict=True)),
                      title=title, box=box.SIMPLE_HEAVY)
        for r in rows:
            table.add_row(*(Text(cell) for cell in r))
        console.print(table)
        return
    console.print(Text(title, style="bold"))
    for r in rows:
        lead_cells = [c.replace("\n", " ") for c in r[:lead] if c]
        if len("  ".join(lead_cells)) > console.width:  # a long id on a line of its own
            console.print(Text(lead_cells[0]))
            lead_cells = ["  ", *lead_cells[1:]]
        console.print(Text("  ".join(lead_cells)))
        for (header, _, _), cell in zip(columns[lead:], r[lead:], strict=True):
            if cell and cell != "-":
                console.print(Padding(Text(f"{header}: {cell.replace(chr(10), '; ')}"),
                                      (0, 0, 0, 4), expand=False))


def short(text: str | None, width: int = 90) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


def blast_radius(d: dict, console: Console, title: str) -> None:
    verb = "would go" if not d.get("committed", True) else "went"
    console.print(f"[bold]{title}[/bold]  (retraction {d['retraction']}, graph revision "
                  f"{d['rev']})")
    counts = ", ".join(counted(d["counts"][k], LABELS[k].lower()) for k in BLAST_GROUPS
                       if d["counts"][k])
    console.print(f"{sum(d['counts'].values())} {verb} {d['direction']}: {counts or 'nothing'}")
    for k in BLAST_GROUPS:
        if not d[k]:
            continue
        console.print(f"\n[bold]{LABELS[k]}[/bold]")
        for item in d[k]:
            amount = (f" {money(item['amount'], item.get('currency'))}"
                      if item.get("amount") is not None else "")
            hop = f"hop {item['hops']}: " if item.get("hops") is not None else ""  # IN: none
            console.print(f"  {hop}{escape(short(item['text']))}{amount}  "
                          f"[dim]{escape(item['id'])}[/dim]")
    if d.get("to_hold"):
        console.print("\n[bold yellow]Pending payments to hold[/bold yellow]")
        for a in d["to_hold"]:
            console.print(f"  {money(a['amount'], a.get('currency'))} to {a['payee']}  "
                          f"({a['name'] or a['id']})")
    if d.get("to_recall"):
        console.print("\n[bold red]Executed payments to recall (drafts for finance)[/bold red]")
        for a in d["to_recall"]:
            console.print(f"  {money(a['amount'], a.get('currency'))} to {a['payee']}  "
                          f"({a['name'] or a['id']})")
    if d.get("kept"):
        console.print("\n[bold green]Reached but kept IN (an independent reason remains)"
                      "[/bold green]")
        for k in d["kept"]:
            amount = f" {money(k['amount'], k.get('currency'))}" if k.get("amount") is not None else ""
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
            console.print(f"  {escape(p['outbox'])}  {money(p['amount'], p.get('currency'))}  "
                          f"({escape(p['name'])})")
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
    """A page of memories (``GET /memories``): name or id (whole), kind, status (and why OUT),
    amount, text."""
    if not page["items"]:
        console.print("no memories match")
        return
    columns = [("memory", KEY, "left"), ("kind", KEY, "left"), ("status", KEY, "left"),
               ("amount", KEY, "right"), ("text", TEXT, "left")]
    rows = [[m.get("name") or m["id"], m["kind"],
             m["status"] + (f" ({m['cause']})" if m.get("cause") else ""),
             money(m["amount"], m.get("currency")) if m.get("amount") is not None else "",
             short(m["text"], 200)] for m in page["items"]]
    fitted(console, title, columns, rows, lead=4)
    if page.get("next_skip") is not None:
        console.print(f"more: --skip {page['next_skip']}")


def justification_tree(t: dict, console: Console) -> None:
    root = Tree(_label(t))
    _grow(root, t)
    console.print(root)


def _label(n: dict) -> str:
    colour = "green" if n.get("status") == "IN" else "red"
    cause = f" (cause {n['cause']})" if n.get("cause") else ""
    amount = f" {money(n['amount'], n.get('currency'))}" if n.get("amount") is not None else ""
    return (f"[{colour}]{n.get('status')}[/{colour}]{cause} {n.get('kind')}: "
            f"{short(n.get('text'), 80)}{amount} [dim]{n['id']}[/dim]")


def _grow(branch: Tree, n: dict) -> None:
    if n.get("see_above"):
        branch.add("[dim](its reasons are shown above)[/dim]")
        return
    if n.get("ungrounded"):
        branch.add(f"[red]ungrounded identifier[/red]: no observation states "
                   f"{', '.join(n['ungrounded'])}")
    for s in n.get("said_by", []):
        mark = "valid" if s["valid"] else "[red]retracted[/red]"
        branch.add(f"said by [bold]{s['source']}[/bold] (trust domain {s['domain']}) at "
                   f"{s['at']}: {mark}")
    rules = n.get("justification_rules") or []
    counts = n.get("justification_counts") or []
    for i, premises in enumerate(n.get("justifications", []), 1):
        rule = f" ({rules[i - 1]})" if i <= len(rules) and rules[i - 1] else ""
        times = counts[i - 1] if i <= len(counts) else 1
        again = f", recorded {times} times (the same premises)" if times > 1 else ""
        j = branch.add(f"justification {i}{rule}{again}: needs all of")
        for p in premises:
            _grow(j.add(_label(p)), p)


def fragility(d: dict, console: Console) -> None:
    console.print(f"{short(d['text'])} {money(d.get('amount'), d.get('currency'))}  [dim]{d['id']}[/dim]")
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
    columns = [("payment", KEY, "left"), ("amount", KEY, "right"), ("state", KEY, "left"),
               ("payee", TEXT, "left"), ("paid on", KEY, "left"), ("bank ref", KEY, "left"),
               ("decided by", TEXT, "left")]
    fitted(console, "Recall list (largest first)", columns, [
        [r.get("name") or r["action"], money(r["amount"], r.get("currency")), r["state"],
         r.get("payee_name") or r["payee"] or "-", (r.get("paid_on") or "-")[:10],
         r.get("bank_reference") or "-", _decided(r)] for r in rows], lead=3)


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
    from rescind.core.gate_rule import GatePolicy
    from rescind.runtime.settings import Settings
    from rescind.views.gate_words import attacker_needs, why

    policy = GatePolicy.from_settings(Settings())
    columns = [("at", KEY, "left"), ("payment", KEY, "left"), ("amount", KEY, "right"),
               ("decision", KEY, "left"), ("sources", KEY, "right"), ("account", TEXT, "left"),
               ("an attacker needs", TEXT, "left"), ("why", TEXT, "left")]
    fitted(console, "Payment gate decisions (newest first)", columns, [
        [at(r["at"]), r.get("name") or r["action"], money(r["amount"], r.get("currency")),
         "expired" if r.get("expired") else "allowed" if r["allowed"] else "refused",
         "-" if r["fragility"] is None else str(r["fragility"]), r.get("account") or "-",
         attacker_needs(r.get("would_fall")), why(r, policy)] for r in rows], lead=4)
