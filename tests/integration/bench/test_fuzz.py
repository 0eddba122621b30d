"""`rescind bench fuzz`, bounded: hostile agent-shaped events through the real workers on an
embedded server of its own leave the server up and every event accounted for."""

from __future__ import annotations

import random

from rescind.bench.fuzz import SPELLINGS, run_fuzz
from rescind.contract.identity import text as canonical_text


def test_a_bounded_fuzz_run_kills_no_server_and_loses_no_event():
    """For a few seconds over three tenants: every spelling of every name, updates, deletes,
    compromises, withdrawals, reinstatements and resends; no server death, each published
    event applied or dead-lettered with a reason, and the contract refused what it must."""
    result = run_fuzz(6.0, tenants_n=3, seed=7, rate=150)
    assert result.server_deaths == 0, result.crash_lines
    assert result.unaccounted == []
    published = sum(result.published.values())
    assert published > 300
    assert result.applied + sum(result.dead_lettered.values()) >= published
    # Compromises of sources nobody read and withdrawals of unknown memories are refused by
    # the engine: dead letters, each counted under its reason.
    assert result.dead_lettered and all(reason for reason in result.dead_lettered)
    assert "unknown source" in result.dead_lettered
    # NUL and over-long names are refused by the contract, naming the field.
    assert any(k.endswith("control_character") for k in result.refused_at_edge)
    assert any(k.endswith("string_too_long") for k in result.refused_at_edge)
    assert {"observation_recorded", "memory_written", "memory_deleted", "source_compromised",
            "memory_withdrawn", "retraction_reinstated"} <= set(result.published)


def test_the_spellings_are_of_one_name():
    """Each spelling the fuzz sends (bar the refused ones) canonicalises to the name it spells,
    so the fuzz exercises spellings of one source, not unrelated names."""
    rng = random.Random(3)
    for spelling in SPELLINGS:
        s = spelling("northwind", rng)
        if "\x00" in s or "\t" in s or len(s) > 200:
            continue
        assert canonical_text(s) == "northwind", repr(s)
