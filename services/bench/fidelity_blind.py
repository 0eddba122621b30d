"""The blind programs of `rescind bench fidelity` (being written)."""

from __future__ import annotations

from .fidelity_programs import Program

BLIND = "blind"

BLIND_PROGRAMS: dict[str, Program] = {}

__all__ = ["BLIND", "BLIND_PROGRAMS"]
