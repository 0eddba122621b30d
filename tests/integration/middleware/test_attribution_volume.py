"""The attribution properties of tests/unit/middleware/test_attribution.py on many more
examples: the unit half runs a sample of each, this half the volume (no server used)."""

from __future__ import annotations

from hypothesis import given, settings

from tests.unit.middleware import test_attribution as unit


@settings(max_examples=60, deadline=None)
@given(*unit.X_Y_RENDERED)
def test_a_value_built_from_x_and_y_never_rests_on_z_on_60_draws(items, ri, rw):
    """The account of X and the invoice of Y, any rendering: X and Y, never Z (60 draws)."""
    unit.test_a_value_built_from_x_and_y_never_rests_on_z_whatever_the_rendering.hypothesis \
        .inner_test(items, ri, rw)


@settings(max_examples=40, deadline=None)
@given(unit.three_items())
def test_every_rendering_of_the_same_items_gives_the_same_premises_on_40_draws(items):
    """Every rendering of the same items and written facts: one answer (40 draws)."""
    unit.test_every_rendering_of_the_same_items_gives_the_same_premises.hypothesis \
        .inner_test(items)


@settings(max_examples=200, deadline=None)
@given(**unit.NEAR_DIGITS)
def test_looking_near_the_digits_finds_what_scanning_everything_finds_on_200(**drawn):
    """The fast path gives the premises a full scan gives (200 draws)."""
    unit.test_looking_near_the_digits_finds_what_scanning_everything_finds.hypothesis \
        .inner_test(**drawn)
