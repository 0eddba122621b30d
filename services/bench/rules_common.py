"""The names `rescind bench rules` shares between the runner, the tables and the report: the five
rules, their labels and colours, rule 2's threshold, and the four scenarios. Nothing else lives
here, so every module of the benchmark can import it without importing another's machinery."""

from __future__ import annotations

RULES = ("r1", "r2", "r3", "r4", "r5")
TITLES = {
    "r1": "1. delete the source's observations",
    "r2": "2. delete similar text (embeddings)",
    "r3": "3. invalidate one hop downstream",
    "r4": "4. taint everything downstream",
    "r5": "5. Rescind (well-founded)",
}
SHORT = {"r1": "1 source only", "r2": "2 similar text", "r3": "3 one hop",
         "r4": "4 all downstream", "r5": "5 Rescind"}
COLOURS = {"r1": "#9e9e9e", "r2": "#e6a100", "r3": "#4f8fd6", "r4": "#c0392b", "r5": "#2e8b57"}

# Rule 2's cosine threshold, chosen once on the precision scenario and held fixed for every
# other scenario: the threshold of the sweep with the best F2 (recall of the contaminated counts
# twice as much as precision: leaving contamination in service is the worse error). The fewest
# errors there is at 1.0, where rule 2 is rule 1; the README says so.
THRESHOLD = 0.75
SWEEP = [round(0.30 + 0.025 * i, 3) for i in range(29)]  # 0.300 .. 1.000

SCENARIOS = ("demo", "precision", "real", "scale")
