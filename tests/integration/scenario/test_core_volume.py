"""The randomised comparison's volume, on the pure core: the properties of
tests/unit/core/test_belief_reference.py on 1,000 generated graphs and 300 operation sequences
(the unit half runs ten of each). No server needed, none used: the engine on FalkorDB is
compared with the reference on a sample of the same generators (test_properties.py)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings

from tests.support.strategies import operation_sequences, scenario_graphs
from tests.unit.core.test_belief_reference import check_core_against_reference

GRAPHS = int(os.environ.get("RESCIND_CORE_EXAMPLES") or 1000)
SEQUENCES = int(os.environ.get("RESCIND_CORE_EXAMPLES") or 300)


def _volume(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.timeout(3600)
@_volume(GRAPHS)
@given(text=scenario_graphs())
def test_the_core_agrees_with_the_reference_on_1000_graphs(text):
    """On each of 1,000 random graphs the core's IN set after every line and every action's
    fragility are the reference's."""
    check_core_against_reference(text)


@pytest.mark.timeout(3600)
@_volume(SEQUENCES)
@given(text=operation_sequences())
def test_the_core_agrees_with_the_reference_on_300_operation_sequences(text):
    """On each of 300 random operation sequences the core's IN set after every line and every
    action's fragility are the reference's."""
    check_core_against_reference(text)
