"""The second blind programs of `rescind bench fidelity` (``group="blind2"``): LangGraph
programs that nobody tunes the attribution against, scored apart from the other groups.
(Being written: the programs follow.)"""

from __future__ import annotations

from .fidelity_programs import Program

BLIND2 = "blind2"

BLIND2_PROGRAMS: dict[str, Program] = {}

__all__ = ["BLIND2", "BLIND2_PROGRAMS"]
