"""The properties of tests/unit/contract/test_identity.py on many more examples: the unit half
runs a sample of each, this half the volume (no server needed, none used)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rescind.contract import identity as ident
from tests.unit.contract import test_identity as unit


@pytest.mark.parametrize("kind", ident.NORMALISERS)
@settings(max_examples=400, deadline=None)
@given(value=st.text())
def test_every_normaliser_is_idempotent_on_400_texts(kind, value):
    """f(f(x)) == f(x) for any text, as the unit test checks, on 400 texts per normaliser."""
    unit.test_every_normaliser_is_idempotent.hypothesis.inner_test(kind, value)


@settings(max_examples=300, deadline=None)
@given(**unit.SPELLINGS)
def test_a_family_of_spellings_maps_to_one_name_on_300_families(**spelling):
    """Every spelling of a word is the word in lower case, as the unit test checks, on 300."""
    unit.test_a_family_of_spellings_maps_to_one_name.hypothesis.inner_test(**spelling)
