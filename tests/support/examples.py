"""How many examples a property test draws: its full count, or a sample of it when the run is
the unit half alone.

``pytest -m unit`` (``make test-unit``), the quick loop, draws a fifth of each property's count
(at least ten, never more than the full count) and 20 for a property that names no count;
every other run, ``make test``'s first half among them, draws the full counts, so the volume
still runs in every ``make test``. ``RESCIND_HYPOTHESIS=sample`` or ``thorough`` chooses
either way; tests/conftest.py decides once per process (``choose``), before a test module is
imported. Hypothesis itself is imported only for a sample (the xdist controller, which runs
no test, never imports it)."""

from __future__ import annotations

import os

SAMPLE_DEFAULT = 20  # a property naming no count: hypothesis's 100 in a thorough run

_mode = "thorough"


def mode(unit_alone: bool) -> str:
    """RESCIND_HYPOTHESIS if set, else a sample when the run selects the unit tests alone."""
    chosen = os.environ.get("RESCIND_HYPOTHESIS") or ("sample" if unit_alone else "thorough")
    if chosen not in ("sample", "thorough"):
        raise ValueError(f"RESCIND_HYPOTHESIS is sample or thorough, not {chosen!r}")
    return chosen


def choose(unit_alone: bool) -> str:
    """Set this process's mode; for a sample, load hypothesis's profile of SAMPLE_DEFAULT
    examples (a thorough run keeps hypothesis's defaults)."""
    global _mode
    _mode = mode(unit_alone)
    if _mode == "sample":
        from hypothesis import settings

        settings.register_profile("sample", settings(max_examples=SAMPLE_DEFAULT))
        settings.load_profile("sample")
    return _mode


def examples(full: int) -> int:
    """``full`` in a thorough run; in a sample, a fifth of it (at least ten, at most ``full``)."""
    if _mode == "thorough":
        return full
    return min(full, max(10, full // 5))
