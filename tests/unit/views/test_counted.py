"""What the shell prints of a blast radius reads as English: one of a thing is singular."""

from __future__ import annotations

import io

from rich.console import Console

from rescind.core.shapes import BLAST_GROUPS
from rescind.views.operator import blast_radius, counted


def test_one_thing_is_singular_and_more_are_plural():
    """1 observation, 2 observations, 0 plans, 1 executed action."""
    assert counted(1, "observations") == "1 observation"
    assert counted(2, "observations") == "2 observations"
    assert counted(0, "plans") == "0 plans"
    assert counted(1, "executed actions") == "1 executed action"


def test_a_blast_radius_line_counts_in_words():
    """The line under a preview's title: '2 went OUT: 1 observation, 1 belief'."""
    counts = {k: 0 for k in BLAST_GROUPS}
    counts.update(observations=1, beliefs=1)
    d = {"retraction": "r1", "rev": 3, "direction": "OUT", "committed": True, "counts": counts,
         **{k: [] for k in BLAST_GROUPS}}
    buf = io.StringIO()
    blast_radius(d, Console(file=buf, width=100), "portal:acme compromised")
    assert "2 went OUT: 1 observation, 1 belief" in buf.getvalue()
