"""How `rescind bench rules` writes its results: rules.json, a markdown report and PNG plots
(matplotlib, imported here only, with the Agg backend), each carrying the command that made it."""

from __future__ import annotations

import json
from pathlib import Path

from rescind.bench.rules_common import COLOURS, RULES, SHORT
from rescind.bench.rules_tables import table_text


def write(results: dict, out: Path) -> None:
    """``rules.json``, ``rules.md`` and the plots, into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "rules.json").write_text(json.dumps(results, indent=1) + "\n")
    (out / "rules.md").write_text(markdown(results, table_text(results)))
    plots(results, out)


def _made_by(sc: dict) -> str:
    by: dict[str, list[str]] = {}
    for name, e in sc.items():
        by.setdefault(e["command"], []).append(name)
    return "; ".join(f"`{c}` ({', '.join(names)})" for c, names in by.items())


def markdown(results: dict, table: str) -> str:
    sc = results.get("scenarios", {})
    lines = ["# Benchmark of retraction rules\n",
             "Made by " + _made_by(sc) + ".  ",
             f"Machine: {results.get('machine')}  ",
             f"Rule 2: {results.get('embedder')}, cosine threshold **{results.get('threshold')}** "
             "(chosen on the precision scenario, see its sweep below; held fixed elsewhere).\n",
             "Contaminated: IN before the retractions, and every reason it has now rests on "
             "sources no longer trusted (not: false). Collateral: taken OUT although an "
             "independent reason keeps it IN. Recalled / missed: executed payments taken OUT that "
             "rested only on the retracted source / such payments left IN. Held / wrongly held: "
             "pending payments taken OUT that should be / that keep an independent reason. Times "
             "are medians per retraction, each rule timed from its first read to its last write.\n",
             "## Final state, every scenario\n", table, ""]
    if "demo" in sc:
        lines += _kinds_section("The demo week (Thursday's retraction)", sc["demo"])
        lines.append(f"The demo's own commit took OUT: "
                     f"{sc['demo']['notes'].get(next(iter(sc['demo']['notes']), ''))}\n")
    if "precision" in sc:
        p = sc["precision"]
        lines += [f"## Precision (constructed): parameters {p['params']}\n",
                  f"{p['notes']}\n"]
        lines += _kinds_section("Precision, after the five retractions", p)
        lines += _steps_table(p)
        if p.get("threshold_sweep"):
            lines += ["### Rule 2 threshold sweep (the calibration)\n",
                      "| threshold | contamination left | collateral | errors |",
                      "|---:|---:|---:|---:|"]
            lines += [f"| {r['threshold']:.3f} | {r['contamination_left']} | {r['collateral']} | "
                      f"{r['errors']} |" for r in p["threshold_sweep"]]
            lines.append("")
    if "real" in sc:
        lines += _real_section(sc["real"])
    if "scale" in sc:
        lines += ["## Scale: time per retraction (ms)\n",
                  "| graph | rule | median | p90 | runs |", "|---|---|---:|---:|---:|"]
        for size, v in sc["scale"].get("sizes", {}).items():
            for r in RULES:
                t = v["times"].get(r)
                if t:
                    lines.append(f"| {int(size):,} | {SHORT[r]} | {t['median_ms']} | "
                                 f"{t['p90_ms']} | {t['runs']} |")
        lines.append("\nRule 2 at scale scans random unit vectors (the generator's labels mean "
                     "nothing to a sentence model, and embedding a million of them takes about half "
                     "an hour here); its OUT sets there are not scored.\n")
    lines += ["## Plots\n", "![errors](rules_errors.png)", "![real timeline](rules_real.png)",
              "![time](rules_time.png)", "![threshold](rules_threshold.png)", ""]
    return "\n".join(lines) + "\n"


def steps_of(e: dict) -> list[dict]:
    """The checkpoints of a scenario as a list of dicts (stored by column)."""
    st = e.get("steps")
    if not st:
        return []
    n = len(st["label"])
    return [{**{k: st[k][i] for k in ("label", "at", "retractions", "memories", "reached")},
             "truth": {k: v[i] for k, v in st["truth"].items()},
             "rules": {r: {k: v[i] for k, v in m.items()} for r, m in st["rules"].items()}}
            for i in range(n)]


def _kinds_section(title: str, e: dict) -> list[str]:
    final = e.get("final")
    if not final:
        return []
    lines = [f"### {title}: by kind\n",
             "| rule | OUT | contamination left (by kind) | collateral (by kind) | "
             "recalled $ | missed $ |", "|---|---:|---|---|---:|---:|"]
    for r in RULES:
        m = final["rules"][r]
        lines.append(f"| {SHORT[r]} | {m['out']} | {_fmt(m['contamination_left_by_kind'])} | "
                     f"{_fmt(m['collateral_by_kind'])} | {m['recalled_amount']:,.0f} | "
                     f"{m['missed_amount']:,.0f} |")
    return lines + [""]


def _fmt(d: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in d.items()) or "0"


def _steps_table(e: dict) -> list[str]:
    if not e.get("steps"):
        return []
    lines = ["### After each retraction: contamination left / collateral\n",
             "| retraction | " + " | ".join(SHORT[r] for r in RULES) + " |",
             "|---" + "|---:" * len(RULES) + "|"]
    for s in steps_of(e):
        cells = [f"{s['rules'][r]['contamination_left']} / {s['rules'][r]['collateral']}"
                 for r in RULES]
        lines.append(f"| {s['label']} | " + " | ".join(cells) + " |")
    return lines + [""]


def _real_section(e: dict) -> list[str]:
    lines = ["## Real retractions\n", f"Data read from `{e.get('data')}` (not copied).\n",
             "| mapping | |", "|---|---|"]
    for k, v in e.get("mapping", {}).items():
        if isinstance(v, dict):
            for why, n in v.items():
                lines.append(f"| skipped: {why} | {n} |")
        elif isinstance(v, list):
            lines.append(f"| {k} | {len(v)}: {', '.join(v)} |")
        else:
            lines.append(f"| {k} | {v} |")
    lines.append("")
    readings = e.get("readings", {})
    if readings:
        lines += ["### Both readings side by side: at the end, and the worst along the way\n",
                  "| rule | " + " | ".join(
                      f"{n}: left at end | {n}: worst left | {n}: worst collateral"
                      for n in readings) + " |",
                  "|---" + "|---:|---:|---:" * len(readings) + "|"]
        for r in RULES:
            cells = []
            for v in readings.values():
                w = v.get("worst_along_the_way", {}).get(r, {})
                cells.append(f"{v['final']['rules'][r]['contamination_left']} | "
                             f"{w.get('contamination_left', '')} | {w.get('collateral', '')}")
            lines.append(f"| {SHORT[r]} | " + " | ".join(cells) + " |")
        lines.append("")
        lines += ["### Memories written after one of their papers was retracted: born OUT\n",
                  "| reading | written late | should be born OUT | " +
                  " | ".join(SHORT[r] for r in RULES) + " |",
                  "|---|---:|---:" + "|---:" * len(RULES) + "|"]
        for name, v in readings.items():
            b = v.get("born") or {}
            if not b:
                continue
            cells = [f"{b['rules'][r]['born_out']} ({b['rules'][r]['born_out_wrongly']} wrongly)"
                     for r in RULES]
            lines.append(f"| {name} | {b['written_after_a_source_was_retracted']} | "
                         f"{b['truly_born_out']} | " + " | ".join(cells) + " |")
        lines.append("")
    for name, v in readings.items():
        lines += _kinds_section(f"Real data, {name}, at the end", v)
        steps = [s for s in steps_of(v) if s["reached"]]
        if not steps:
            continue
        lines += [f"### Real data, {name}: each retraction date that reached a memory\n",
                  "Reached: the retracted papers' observations and everything downstream of "
                  "them. Per rule: taken out at this date (of which collateral) / reached memories "
                  "left IN (of which contaminated).\n",
                  "| date | papers | reached | contaminated / kept | " +
                  " | ".join(SHORT[r] for r in RULES) + " |",
                  "|---|---:|---:|---:" + "|---" * len(RULES) + "|"]
        for s in steps:
            cells = []
            for r in RULES:
                m = s["rules"][r]
                stays_bad = m["reached_stays_contaminated"]
                cells.append(f"{m['taken_now']} ({m['taken_now_collateral']}) / "
                             f"{m['reached_stays_in']} ({stays_bad})")
            lines.append(f"| {s['label']} | {len(s['retractions'])} | {s['reached']} | "
                         f"{s['truth']['reached_contaminated']} / {s['truth']['reached_kept']} | "
                         + " | ".join(cells) + " |")
        lines.append("")
    return lines


# -- plots --------------------------------------------------------------------------------------
def plots(results: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sc = results.get("scenarios", {})
    footer = "made by " + _made_by(results.get("scenarios", {})).replace("`", "")

    panels = []
    for name in ("demo", "precision"):
        if name in sc and sc[name].get("final"):
            panels.append((name, sc[name]))
    for reading, v in sc.get("real", {}).get("readings", {}).items():
        if v.get("final"):
            panels.append((f"real: {reading}, worst along the way", v))
    if panels:
        fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4), squeeze=False)
        for ax, (label, v) in zip(axes[0], panels, strict=True):
            fin = v.get("worst_along_the_way") if "worst" in label else v["final"]["rules"]
            xs = range(len(RULES))
            ax.bar([x - 0.2 for x in xs], [fin[r]["contamination_left"] for r in RULES], 0.4,
                   label="contamination left IN", color="#c0392b")
            ax.bar([x + 0.2 for x in xs], [fin[r]["collateral"] for r in RULES], 0.4,
                   label="collateral (taken OUT, still justified)", color="#4f8fd6")
            ax.set_xticks(list(xs), [SHORT[r].replace(" ", "\n", 1) for r in RULES], fontsize=8)
            ax.set_title(f"{label}\n({v['final']['truth']['contaminated']} contaminated)",
                         fontsize=10)
        axes[0][0].set_ylabel("memories")
        axes[0][0].legend(fontsize=8)
        _save(fig, out / "rules_errors.png", footer)

    readings = sc.get("real", {}).get("readings", {})
    if readings:
        import datetime as dt

        fig, axes = plt.subplots(2, len(readings), figsize=(7 * len(readings), 6.5),
                                 squeeze=False, sharex=True)
        epoch = dt.datetime(1970, 1, 1)
        for col, (name, v) in enumerate(readings.items()):
            steps = steps_of(v) or ([v["final"]] if v.get("final") else [])
            days = [epoch + dt.timedelta(microseconds=s["at"]) for s in steps]
            for row, key in enumerate(("contamination_left", "collateral")):
                ax = axes[row][col]
                for r in RULES:
                    ax.step(days, [s["rules"][r][key] for s in steps], where="post",
                            color=COLOURS[r], label=SHORT[r], linewidth=2.6 if r == "r3" else 1.3,
                            linestyle=":" if r == "r3" else "-")  # 3 often lies under 4 and 5
                ax.set_title(f"real data, {name}: {key.replace('_', ' ')}", fontsize=10)
                ax.tick_params(axis="x", labelsize=8, rotation=30)
            axes[0][col].set_ylabel("memories left IN, all reasons retracted", fontsize=8)
            axes[1][col].set_ylabel("memories taken OUT, still justified", fontsize=8)
        axes[0][0].legend(fontsize=8)
        _save(fig, out / "rules_real.png", footer)

    bars = []
    for name in ("demo", "precision"):
        if name in sc:
            bars.append((name, sc[name]["times"]))
    for reading, v in readings.items():
        bars.append((f"real: {reading}", v["times"]))
    for size, v in sc.get("scale", {}).get("sizes", {}).items():
        bars.append((f"scale {int(size):,}", v["times"]))
    if bars:
        fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(bars)), 4))
        w = 0.16
        for i, r in enumerate(RULES):
            ax.bar([x + (i - 2) * w for x in range(len(bars))],
                   [t.get(r, {}).get("median_ms", 0) for _, t in bars], w, label=SHORT[r],
                   color=COLOURS[r])
        ax.set_xticks(range(len(bars)), [b[0] for b in bars], fontsize=8)
        ax.set_yscale("log")
        ax.set_ylabel("ms per retraction (median)")
        ax.legend(fontsize=8)
        _save(fig, out / "rules_time.png", footer)

    sweep = sc.get("precision", {}).get("threshold_sweep")
    if sweep:
        fig, ax = plt.subplots(figsize=(6, 4))
        th = [r["threshold"] for r in sweep]
        for key, colour in (("contamination_left", "#c0392b"), ("collateral", "#4f8fd6"),
                            ("errors", "#333333")):
            ax.plot(th, [r[key] for r in sweep], color=colour, label=key.replace("_", " "))
        ax.axvline(results.get("threshold", 0), color="#e6a100", linestyle=":",
                   label=f"chosen {results.get('threshold')}")
        ax.set_xlabel("cosine threshold (rule 2)")
        ax.set_ylabel("memories (precision scenario)")
        if "f2" in sweep[0]:
            ax2 = ax.twinx()
            ax2.plot(th, [r["f2"] for r in sweep], color="#2e8b57", linestyle="--", label="F2")
            ax2.set_ylabel("F2 (the criterion)")
            ax2.legend(fontsize=8, loc="center right")
        ax.legend(fontsize=8)
        _save(fig, out / "rules_threshold.png", footer)


def _save(fig, path: Path, footer: str) -> None:
    fig.text(0.01, 0.005, footer, fontsize=6, color="#555555")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, dpi=110)
    import matplotlib.pyplot as plt

    plt.close(fig)
