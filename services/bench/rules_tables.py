"""The tables of `rescind bench rules`: one row per scenario and rule, for the terminal (rich)
and for the markdown report."""

from __future__ import annotations

from rescind.bench.rules_common import RULES, SCENARIOS, SHORT, TITLES


def rows(results: dict, only: str | None = None) -> list[tuple[str, str, dict | None, dict]]:
    """(scenario label, rule, final metrics or None, times) for the tables."""
    out = []
    sc = results.get("scenarios", {})
    for name in SCENARIOS:
        if name not in sc or (only and name != only):
            continue
        e = sc[name]
        parts = []
        if name == "real":
            parts = [(f"real: {k}", v) for k, v in e.get("readings", {}).items()]
        elif name == "scale":
            parts = [(f"scale {int(k):,}", v) for k, v in e.get("sizes", {}).items()]
        else:
            parts = [(name, e)]
        for label, v in parts:
            final = v.get("final")
            for r in RULES:
                m = final["rules"][r] if final else None
                if m is not None and r == "r2" and not v.get("rule2_scored", True):
                    m = None
                out.append((label, r, m, v["times"].get(r, {})))
    return out


def console_table(results: dict, only: str | None = None):
    from rich.table import Table

    t = Table(title="retraction rules: final state", title_justify="left")
    for col in ("scenario", "rule", "contam. left", "collateral", "recalled/missed",
                "held/wrongly", "ms"):
        t.add_column(col, justify="left" if col in ("scenario", "rule") else "right")
    for label, r, m, tm in rows(results, only):
        ms = f"{tm['median_ms']:.1f}" if tm else ""
        if m is None:
            t.add_row(label, SHORT[r], "", "", "", "", ms)
        else:
            t.add_row(label, SHORT[r], f"{m['contamination_left']} of {m['contaminated']}",
                      str(m["collateral"]),
                      f"{m['recalled'] - m['recalled_wrongly']}/{m['recalls_missed']}",
                      f"{m['held'] - m['held_wrongly']}/{m['held_wrongly']}", ms)
    return t


def table_text(results: dict, only: str | None = None) -> str:
    lines = ["| scenario | rule | contamination left | collateral | recalled / missed | "
             "held / wrongly held | ms per retraction (median) |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for label, r, m, t in rows(results, only):
        ms = f"{t['median_ms']:.1f}" if t else ""
        if m is None:
            lines.append(f"| {label} | {TITLES[r]} | | | | | {ms} |")
            continue
        lines.append(
            f"| {label} | {TITLES[r]} | {m['contamination_left']} of {m['contaminated']} | "
            f"{m['collateral']} | {m['recalled'] - m['recalled_wrongly']} / {m['recalls_missed']} |"
            f" {m['held'] - m['held_wrongly']} / {m['held_wrongly']} | {ms} |")
    return "\n".join(lines)
